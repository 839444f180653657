"""Anchor hygiene: anchors that resolve to nothing in the corpus, and cases no backend can satisfy.

An anchor is *stale* when no chunk of the indexed corpus matches it (§anchor-matching): no ranking
can ever retrieve it, so a miss on it says nothing about retrieval. Each stale anchor gets the
most specific reason, checked in this order: its file is not indexed, its kind does not occur
(in that file, or anywhere for `#kind`), its symbol names no definition of the file, its range
starts past the end of the file, or no chunk of the file (of that kind) overlaps the range. A
case whose anchors are all stale cannot be satisfied by any backend. A symbol that names
several definitions is reported too (it matches all of them; a `#kind` may tell them apart),
and so are duplicate case ids: comparisons pair queries by id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from cce_relevance.evaluation.anchor_index import AnchorIndex
from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.symbol_anchors import SymbolSource, bind_case, named_definitions
from cce_relevance.retrieval.chunking.symbols import Definition
from cce_relevance.retrieval.index.model import Index
from cce_relevance.strings import quoted

STALE_CODES = ("missing-file", "missing-kind", "missing-symbol", "range-past-end", "no-chunk-in-range")


@dataclass(frozen=True)
class AnchorFinding:
    """One problem. `anchor` is the anchor's canonical text, or None for a problem of the whole case."""

    code: str  # one of STALE_CODES, "ambiguous-symbol", "unsatisfiable" or "duplicate-id"
    line: int
    case_id: str
    anchor: str | None
    message: str


@dataclass(frozen=True)
class Validation:
    fixtures: str
    corpus: str
    cases: int
    anchors: int
    findings: tuple[AnchorFinding, ...]

    @property
    def ok(self) -> bool:
        return not self.findings

    def stale_findings(self) -> tuple[AnchorFinding, ...]:
        """The findings that are stale anchors, with line and reason."""
        return tuple(f for f in self.findings if f.code in STALE_CODES)

    def stale_anchors(self) -> dict[str, tuple[str, ...]]:
        """Query id → its stale anchors, for every query that has one (ids in fixture order).

        What a report needs to label a miss as "stale anchor" rather than "ranking miss".
        """
        stale: dict[str, tuple[str, ...]] = {}
        for f in self.findings:
            if f.code in STALE_CODES and f.anchor is not None:
                stale[f.case_id] = (*stale.get(f.case_id, ()), f.anchor)
        return stale

    def unsatisfiable(self) -> tuple[str, ...]:
        """Ids of the queries none of whose anchors resolves: every backend scores 0 on them."""
        return tuple(f.case_id for f in self.findings if f.code == "unsatisfiable")


class AnchorLookups(Protocol):
    """What the check asks of the corpus's chunks (`AnchorIndex`; tests hold it equal to a scan)."""

    def resolves(self, anchor: Anchor) -> bool: ...

    def kinds_in(self, path: str) -> frozenset[str] | None: ...


class _Corpus:
    """What the diagnosis needs to know about the indexed corpus: its anchor lookups, each file's
    number of lines and its definitions."""

    def __init__(
        self, anchors: AnchorLookups, line_counts: Mapping[str, int], symbols: SymbolSource | None
    ) -> None:
        self.anchors = anchors
        self.symbols = symbols
        self.line_counts = line_counts

    def diagnose(self, anchor: Anchor) -> tuple[str, str]:
        """(code, message) for an anchor that resolves to nothing."""
        path, kind = anchor.path, anchor.kind
        if path is None:  # `#kind`: the grammar allows no range without a path
            return "missing-kind", f"no chunk of kind {quoted(kind or '')} anywhere in the corpus"
        present = self.anchors.kinds_in(path)
        if present is None:
            return (
                "missing-file",
                f"no file {quoted(path)} in the corpus (missing, ignored, or not indexed as text)",
            )
        if kind is not None and kind not in present:
            return "missing-kind", (
                f"{quoted(path)} has no chunk of kind {quoted(kind)} "
                f"(its kinds: {', '.join(sorted(present))})"
            )
        if anchor.symbol is not None:
            return "missing-symbol", missing_symbol(anchor, self.symbols)
        a, b = anchor.range or (0, 0)  # path exists and the kind occurs in it, so the range is why
        lines = self.line_counts.get(path)
        if lines is not None and a > lines:
            return "range-past-end", f"{quoted(path)} has {lines} lines; lines {a}-{b} are past its end"
        of_kind = f"chunk of kind {quoted(kind)}" if kind is not None else "chunk"
        return "no-chunk-in-range", f"no {of_kind} of {quoted(path)} overlaps lines {a}-{b}"


def validate_cases(
    fixtures: str,
    corpus: str,
    cases: Sequence[Case],
    anchors: AnchorLookups,
    line_counts: Mapping[str, int],
    symbols: SymbolSource | None = None,
) -> Validation:
    """Check every anchor of every case against the corpus's chunks (`anchors` looks them up,
    an `AnchorIndex`);
    `line_counts` gives each indexed file's number of lines (for the "past the end" reason) and
    `symbols` the corpus's definitions, which symbol anchors are looked up in (without it they
    resolve to nothing)."""
    index = _Corpus(anchors, line_counts, symbols)
    findings: list[AnchorFinding] = []
    first_line: dict[str, int] = {}
    for case in cases:
        if case.id in first_line:
            findings.append(
                AnchorFinding(
                    "duplicate-id",
                    case.line,
                    case.id,
                    None,
                    f"the id is also used on line {first_line[case.id]}; comparisons pair queries by id",
                )
            )
        first_line.setdefault(case.id, case.line)
        stale = 0
        for anchor in bind_case(case, symbols).anchors if symbols is not None else case.anchors:
            if anchors.resolves(anchor):
                if anchor.symbol is not None and symbols is not None and len(anchor.bound) > 1:
                    findings.append(
                        AnchorFinding(
                            "ambiguous-symbol",
                            case.line,
                            case.id,
                            anchor.display(),
                            ambiguity(anchor, named_definitions(anchor, symbols)),
                        )
                    )
                continue
            stale += 1
            code, message = index.diagnose(anchor)
            findings.append(AnchorFinding(code, case.line, case.id, anchor.display(), message))
        if stale == len(case.anchors):
            findings.append(
                AnchorFinding(
                    "unsatisfiable",
                    case.line,
                    case.id,
                    None,
                    "no backend can satisfy this case: none of its anchors resolves to a chunk",
                )
            )
    return Validation(fixtures, corpus, len(cases), sum(len(c.anchors) for c in cases), tuple(findings))


def missing_symbol(anchor: Anchor, symbols: SymbolSource | None) -> str:
    """Why a symbol resolves to nothing, with the definitions of the same last name, if any
    (a method moved to another class, a function made a method)."""
    of_kind = f" of kind {quoted(anchor.kind)}" if anchor.kind is not None else ""
    message = f"{quoted(anchor.path or '')} has no definition{of_kind} named {quoted(anchor.symbol or '')}"
    if symbols is None or anchor.path is None:
        return message
    leaf = (anchor.symbol or "").rsplit(".", 1)[-1]
    similar = [
        d
        for d in symbols.definitions(anchor.path)
        if d.symbol is not None and d.symbol.rsplit(".", 1)[-1] == leaf
    ]
    if similar:
        kinds = anchor.kind is not None
        message += (
            " (same name: "
            + ", ".join(
                f"{d.symbol}{f' ({d.kind})' if kinds else ''} at lines {d.start_line}-{d.end_line}"
                for d in similar
            )
            + ")"
        )
    return message


def ambiguity(anchor: Anchor, named: Sequence[Definition]) -> str:
    """What a symbol naming several definitions matches, and how to name one of them."""
    where = ", ".join(f"{d.kind} at lines {d.start_line}-{d.end_line}" for d in named)
    kinds = {d.kind for d in named}
    advice = (
        "a `#kind` tells them apart"
        if len(kinds) == len(named) and anchor.kind is None
        else "a line range names one of them"
    )
    return (
        f"{quoted(anchor.symbol or '')} names {len(named)} definitions of "
        f"{quoted(anchor.path or '')} ({where}); it matches all of them; {advice}"
    )


def check_indexed(
    fixtures_path: str, cases: Sequence[Case], corpus: str, index: Index, symbols: SymbolSource | None
) -> Validation:
    """`validate_cases` against an index made already of the corpus directory `corpus` (or loaded
    from a store): the files, chunks and line counts checked against are the index's own, so a
    set scored with that index is checked against exactly what was scored."""
    anchors = AnchorIndex.of_index(index)
    return validate_cases(fixtures_path, corpus, cases, anchors, index.line_counts or {}, symbols)
