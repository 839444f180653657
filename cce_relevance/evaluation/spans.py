"""Token-level span metrics for cases with ranged anchors (§token-metrics).

Expected and retrieved spans are compared as sets of (file, line), each line weighted by the
`cce.tokens/v1` estimate of its text as the index holds it. Weights come from chunks in index
order (the first chunk covering a line wins, so an outer class keeps its indented text), and a
line no chunk covers weighs 1, the estimator's floor; retrieval/chunking/line_weights.py works them out,
when indexing or from the chunks.

Spans are handled as merged intervals rather than explicit line sets, so an anchor such as
`f.py@1-999999999999` costs no more than `f.py@1-2`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter
from typing import TYPE_CHECKING

from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.chunking.line_weights import (
    FileLineWeights,
    LineWeightRuns,
    line_runs,
    weighted_lines,
)
from cce_relevance.retrieval.hit import Hit

if TYPE_CHECKING:
    from cce_relevance.retrieval.index.model import Index

Intervals = dict[str, list[tuple[int, int]]]


class LineWeights:
    """Token weight of every (file, line) some chunk covers; first chunk in index order wins.

    A file's weights are read, or worked out, the first time a span in it is weighed: a run
    weighs the few files its anchors and hits name, not every line of a whole repository.
    `weighed` holds the weighted lines of files by path, as indexing works them out
    (`of_index`); any other file's are worked out from `chunks` (the same integers either way).
    """

    def __init__(self, chunks: Iterable[Chunk], weighed: Mapping[str, FileLineWeights] | None = None) -> None:
        self._all = chunks
        self._weighed: Mapping[str, FileLineWeights] = {} if weighed is None else weighed
        self._chunks: dict[str, list[Chunk]] | None = None  # by file, made when first needed
        self._runs: dict[str, LineWeightRuns] = {}
        self._expected: dict[tuple[Anchor, ...], tuple[Intervals, int]] = {}
        self._masses: dict[tuple[str, int, int], int] = {}  # each interval's weight, by (path, lo, hi)

    @classmethod
    def of_index(cls, index: Index) -> LineWeights:
        """The weights of an index's lines, as far as indexing worked them out."""
        return cls(index.chunks, index.weighted_lines)

    def _file(self, path: str) -> LineWeightRuns:
        found = self._runs.get(path)
        if found is None:
            lines = self._weighed.get(path)
            if lines is None:
                lines = weighted_lines(self._by_file().get(path, []))
            self._runs[path] = found = line_runs(lines)
        return found

    def _by_file(self) -> dict[str, list[Chunk]]:
        if self._chunks is None:
            self._chunks = {}
            # A file's chunks are usually consecutive: one dict update per run of them.
            for path, run in groupby(self._all, key=attrgetter("file_path")):
                self._chunks.setdefault(path, []).extend(run)
        return self._chunks

    def expected(self, anchors: tuple[Anchor, ...]) -> tuple[Intervals, int]:
        """The merged spans of a case's path anchors and their mass, worked out once per anchors:
        every backend a run scores reads the same ones. The spans are shared: never changed."""
        found = self._expected.get(anchors)
        if found is None:
            spans = relevant_spans(anchors)
            self._expected[anchors] = found = (spans, self.mass(spans))
        return found

    def mass(self, spans: Intervals) -> int:
        """Total weight of the lines in merged, disjoint intervals per file.

        Each interval's weight is kept once worked out: an interval is most often one retrieved
        chunk's lines, and the same chunks come back for many queries and every backend."""
        total = 0
        known = self._masses
        if len(known) > _MASSES_KEPT:
            known.clear()
        for path, intervals in spans.items():
            runs = None
            for lo, hi in intervals:
                weight = known.get((path, lo, hi))
                if weight is None:
                    if runs is None:
                        runs = self._file(path)
                    weight = known[path, lo, hi] = _interval_mass(runs, lo, hi)
                total += weight
        return total


_MASSES_KEPT = 1 << 17  # intervals whose weight `LineWeights.mass` keeps, at most (then it starts over)


def _interval_mass(runs: LineWeightRuns, lo: int, hi: int) -> int:
    """Total weight of the lines `lo` to `hi` of a file with these weighted runs."""
    starts, offsets, prefix = runs
    # Extra weight of the weighted lines up to `hi`, less that of those before `lo`: run r is
    # the last starting at or before the line; it may end before it.
    r = bisect_right(starts, hi) - 1
    upper = prefix[min(offsets[r] + (hi - starts[r]) + 1, offsets[r + 1])] if r >= 0 else 0
    r = bisect_right(starts, lo - 1) - 1
    lower = prefix[min(offsets[r] + (lo - starts[r]), offsets[r + 1])] if r >= 0 else 0
    return (hi - lo + 1) + upper - lower


def merge(spans: Iterable[tuple[str, int, int]]) -> Intervals:
    """Per-file union of inclusive line ranges as sorted, disjoint, non-adjacent intervals."""
    by_file: dict[str, list[tuple[int, int]]] = {}
    for path, lo, hi in spans:
        if hi >= lo:
            by_file.setdefault(path, []).append((lo, hi))
    merged: Intervals = {}
    for path, items in by_file.items():
        items.sort()
        out = [items[0]]
        for lo, hi in items[1:]:
            if lo <= out[-1][1] + 1:
                out[-1] = (out[-1][0], max(out[-1][1], hi))
            else:
                out.append((lo, hi))
        merged[path] = out
    return merged


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """Per-file intersection of two merged interval sets."""
    out: Intervals = {}
    for path, xs in a.items():
        ys = b.get(path)
        if not ys:
            continue
        i = j = 0
        both = []
        while i < len(xs) and j < len(ys):
            lo, hi = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
            if lo <= hi:
                both.append((lo, hi))
            if xs[i][1] < ys[j][1]:
                i += 1
            else:
                j += 1
        if both:
            out[path] = both
    return out


@dataclass(frozen=True)
class TokenScore:
    precision: float
    recall: float
    iou: float


def relevant_spans(anchors: Sequence[Anchor]) -> Intervals:
    """The merged line spans of a case's path anchors: the expected side of its token metrics."""
    return merge((a.path, *span) for a in anchors if a.path is not None for span in a.line_spans())


def score_tokens(anchors: Sequence[Anchor], hits: Sequence[Hit], k: int, weights: LineWeights) -> TokenScore:
    """Overlap of expected and retrieved spans in token mass: precision, recall and IoU."""
    relevant, rel = weights.expected(tuple(anchors))
    retrieved = merge((h.file_path, h.start_line, h.end_line) for h in hits[:k])
    ret = weights.mass(retrieved)
    ov = weights.mass(intersect(relevant, retrieved))
    union = rel + ret - ov
    return TokenScore(ov / ret if ret else 0.0, ov / rel if rel else 0.0, ov / union if union else 0.0)
