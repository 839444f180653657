"""The plain anchor checks: every anchor tested against every chunk of the corpus.

This is what `evaluation/validation.py` and `judgments.judge` did before anchors were looked up
through `AnchorIndex`, kept as the oracle the lookups are compared with
(tests/evaluation/test_anchor_index.py). It is quadratic and obviously right. The messages
about symbols are the module's own: only which chunks match is under test here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.judgments import Judgments, anchor_grades, grade_of
from cce_relevance.evaluation.symbol_anchors import SymbolSource, bind_case, named_definitions
from cce_relevance.evaluation.validation import Finding, Validation, ambiguity, missing_symbol
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.strings import quoted


def plain_matching(anchor: Anchor, chunks: Sequence[Chunk]) -> list[int]:
    return [i for i, c in enumerate(chunks) if anchor.matches(c.file_path, c.kind, c.start_line, c.end_line)]


def plain_judge(case: Case, chunks: Sequence[Chunk]) -> Judgments:
    grades = anchor_grades(case)
    relevant = []
    for c in chunks:
        grade = grade_of(case.anchors, grades, c.file_path, c.kind, c.start_line, c.end_line)
        if grade:
            relevant.append((c.chunk_id, grade))
    return Judgments(case, tuple(relevant))


def plain_diagnose(anchor: Anchor, chunks: Sequence[Chunk], line_counts: Mapping[str, int],
                   symbols: SymbolSource | None) -> tuple[str, str]:
    kinds_by_file: dict[str, set[str]] = {}
    for c in chunks:
        kinds_by_file.setdefault(c.file_path, set()).add(c.kind)
    path, kind = anchor.path, anchor.kind
    if path is None:
        return "missing-kind", f"no chunk of kind {quoted(kind or '')} anywhere in the corpus"
    if path not in kinds_by_file:
        return "missing-file", f"no file {quoted(path)} in the corpus (missing, ignored, or not indexed as text)"
    present = kinds_by_file[path]
    if kind is not None and kind not in present:
        return "missing-kind", (f"{quoted(path)} has no chunk of kind {quoted(kind)} "
                                f"(its kinds: {', '.join(sorted(present))})")
    if anchor.symbol is not None:
        return "missing-symbol", missing_symbol(anchor, symbols)
    a, b = anchor.range or (0, 0)
    lines = line_counts.get(path)
    if lines is not None and a > lines:
        return "range-past-end", f"{quoted(path)} has {lines} lines; lines {a}-{b} are past its end"
    of_kind = f"chunk of kind {quoted(kind)}" if kind is not None else "chunk"
    return "no-chunk-in-range", f"no {of_kind} of {quoted(path)} overlaps lines {a}-{b}"


def plain_validate(fixtures: str, corpus: str, cases: Sequence[Case], chunks: Sequence[Chunk],
                   line_counts: Mapping[str, int], symbols: SymbolSource | None = None) -> Validation:
    findings: list[Finding] = []
    first_line: dict[str, int] = {}
    for case in cases:
        if case.id in first_line:
            findings.append(Finding("duplicate-id", case.line, case.id, None,
                                    f"the id is also used on line {first_line[case.id]}; "
                                    "comparisons pair queries by id"))
        first_line.setdefault(case.id, case.line)
        stale = 0
        for anchor in (bind_case(case, symbols).anchors if symbols is not None else case.anchors):
            if plain_matching(anchor, chunks):
                if anchor.symbol is not None and symbols is not None and len(anchor.bound) > 1:
                    findings.append(Finding("ambiguous-symbol", case.line, case.id, anchor.display(),
                                            ambiguity(anchor, named_definitions(anchor, symbols))))
                continue
            stale += 1
            code, message = plain_diagnose(anchor, chunks, line_counts, symbols)
            findings.append(Finding(code, case.line, case.id, anchor.display(), message))
        if stale == len(case.anchors):
            findings.append(Finding("unsatisfiable", case.line, case.id, None,
                                    "no backend can satisfy this case: none of its anchors resolves to a chunk"))
    return Validation(fixtures, corpus, len(cases), sum(len(c.anchors) for c in cases), tuple(findings))
