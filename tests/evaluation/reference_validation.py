"""The plain anchor lookups: every anchor tested against every chunk of the corpus.

This is how `evaluation/validation.py` and `judgments.judge` found an anchor's chunks before
they were looked up through `AnchorIndex`, kept as the oracle the lookups are compared with
(tests/evaluation/test_anchor_index.py). It is quadratic and obviously right. `plain_validate`
runs the check's own loop over these lookups: only which chunks match is under test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.judgments import Judgments, anchor_grades, grade_of
from cce_relevance.evaluation.symbol_anchors import SymbolSource
from cce_relevance.evaluation.validation import Validation, validate_cases
from cce_relevance.retrieval.chunking.chunk import Chunk


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


class PlainLookups:
    """`AnchorIndex`'s answers, each by a scan of every chunk."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self.chunks = chunks

    def resolves(self, anchor: Anchor) -> bool:
        return bool(plain_matching(anchor, self.chunks))

    def kinds_in(self, path: str) -> frozenset[str] | None:
        kinds = frozenset(c.kind for c in self.chunks if c.file_path == path)
        return kinds or None


def plain_validate(
    fixtures: str,
    corpus: str,
    cases: Sequence[Case],
    chunks: Sequence[Chunk],
    line_counts: Mapping[str, int],
    symbols: SymbolSource | None = None,
) -> Validation:
    return validate_cases(fixtures, corpus, cases, PlainLookups(chunks), line_counts, symbols)
