"""Relevance judgments: which corpus chunks a case's anchors make relevant, and how relevant.

Anchors name what a good answer contains; for rank-sensitive metrics and for TREC qrels we need
the other view, the set of relevant *documents*. Here a document is a chunk of the indexed corpus,
and a chunk is relevant to a case iff it matches at least one of the case's anchors
(§anchor-matching). Its grade is the largest grade among the anchors it matches: a chunk that is both "the
file" (grade 1) and "the function" (grade 3) is as useful as the best reason it is listed for.
Without a `grades` object every anchor has grade 1 (binary relevance). A case's `irrelevant`
anchors name results a reviewer judged not relevant (grade 0): they never enter the qrels, which
list relevant chunks only, but they make those results *judged* (`judged_at_k`).

These judgments are exactly the qrels that `--trec-qrels` writes, so a metric computed from them
can be re-scored by trec_eval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cce_relevance.evaluation.anchor_index import AnchorIndex
from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.hit import Hit


def anchor_grades(case: Case) -> tuple[int, ...]:
    """The grade of each anchor: from the case's `grades`, else 1 each."""
    return case.grades if case.grades is not None else (1,) * len(case.anchors)


def grade_of(
    anchors: Sequence[Anchor],
    grades: Sequence[int],
    file_path: str,
    kind: str,
    start_line: int,
    end_line: int,
) -> int:
    """The largest grade among the anchors a span matches; 0 when it matches none."""
    return max(
        (g for a, g in zip(anchors, grades, strict=True) if a.matches(file_path, kind, start_line, end_line)),
        default=0,
    )


@dataclass(frozen=True)
class Judgments:
    """One case's relevant chunks, in index order, as (chunk id, grade ≥ 1)."""

    case: Case
    relevant: tuple[tuple[str, int], ...]

    @property
    def gains(self) -> list[int]:
        """The grades of all relevant chunks (the ideal ranking's material)."""
        return [g for _, g in self.relevant]

    def hit_gains(self, hits: Sequence[Hit]) -> list[int]:
        """The grade of each retrieved hit, in rank order (0 for a hit no anchor matches)."""
        grades = anchor_grades(self.case)
        return [
            grade_of(self.case.anchors, grades, h.file_path, h.kind, h.start_line, h.end_line) for h in hits
        ]

    def hit_judged(self, hits: Sequence[Hit], gains: Sequence[int]) -> list[bool]:
        """Whether each hit (with its `gains` from `hit_gains`) is judged: relevant, or matched by
        one of the case's `irrelevant` anchors (judged not relevant). Every other hit is one
        nobody labeled."""
        rejected = self.case.irrelevant
        return [
            g > 0 or any(a.matches(h.file_path, h.kind, h.start_line, h.end_line) for a in rejected)
            for h, g in zip(hits, gains, strict=True)
        ]


def judge(case: Case, chunks: Sequence[Chunk], anchors: AnchorIndex) -> Judgments:
    """Resolve a case's anchors against the corpus's chunks (`anchors` looks them up): each chunk
    any anchor matches, with the largest grade among those anchors (grades are at least 1)."""
    best: dict[int, int] = {}
    for anchor, grade in zip(case.anchors, anchor_grades(case), strict=True):
        for position in anchors.matching(anchor):
            if best.get(position, 0) < grade:
                best[position] = grade
    return Judgments(case, tuple((chunks[p].chunk_id, grade) for p, grade in sorted(best.items())))
