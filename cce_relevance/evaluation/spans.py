"""Token-level span metrics for cases with ranged anchors (harness.md §3.3).

Expected and retrieved spans are compared as sets of (file, line), each line weighted by the
`cce.tokens/v1` estimate of its text as the index holds it. Weights come from chunks in index
order (the first chunk covering a line wins, so an outer class keeps its indented text), and a
line no chunk covers weighs 1, the estimator's floor.

Spans are handled as merged intervals rather than explicit line sets, so an anchor such as
`f.py@1-999999999999` costs no more than `f.py@1-2`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.retrieval.backends import Hit
from cce_relevance.retrieval.chunk import Chunk
from cce_relevance.retrieval.tokens import estimate_tokens
from cce_relevance.strings import rust_lines

Intervals = dict[str, list[tuple[int, int]]]


class LineWeights:
    """Token weight of every (file, line) some chunk covers; first chunk in index order wins.

    A file's weights are worked out the first time a span in it is weighed: a run weighs the
    few files its anchors and hits name, not every line of a whole repository.
    """

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self._chunks: dict[str, list[Chunk]] = {}
        for c in chunks:
            self._chunks.setdefault(c.file_path, []).append(c)
        # Per file: sorted weighted line numbers and prefix sums of (weight - 1), so the mass of
        # any interval is its line count plus the extra weight of the weighted lines inside it.
        self._weighted: dict[str, tuple[list[int], list[int]]] = {}

    def _file(self, path: str) -> tuple[list[int], list[int]]:
        found = self._weighted.get(path)
        if found is None:
            per_line = _first_chunk_line_weights(self._chunks.get(path, []))
            numbers = sorted(per_line)
            prefix = [0, *accumulate(per_line[n] - 1 for n in numbers)]
            self._weighted[path] = found = (numbers, prefix)
        return found

    def mass(self, spans: Intervals) -> int:
        """Total weight of the lines in merged, disjoint intervals per file."""
        total = 0
        for path, intervals in spans.items():
            numbers, prefix = self._file(path)
            for lo, hi in intervals:
                total += hi - lo + 1
                total += prefix[bisect_right(numbers, hi)] - prefix[bisect_left(numbers, lo)]
        return total


def _first_chunk_line_weights(chunks: Sequence[Chunk]) -> dict[int, int]:
    """Line number → weight of that line in the first chunk covering it.

    Chunks of one file come in pre-order, so their first lines never decrease and every line up
    to the furthest one covered so far is already weighed: a nested chunk adds only the lines
    past it (usually none). Out-of-order chunks get the plain first-wins loop.
    """
    per_line: dict[int, int] = {}
    covered_to = 0
    previous_start = 0
    for c in chunks:
        if c.start_line < previous_start:
            covered_to = 0  # no longer a prefix: weigh every line, first one wins
        previous_start = c.start_line
        if c.start_line + c.content.count("\n") <= covered_to:
            continue  # even its last possible line is weighed already
        lines = rust_lines(c.content)
        skip = max(0, covered_to + 1 - c.start_line)
        if skip >= len(lines):
            continue
        rest = lines[skip:]
        weights = [(len(line) >> 2) or 1 for line in rest] if c.content.isascii() else map(estimate_tokens, rest)
        for number, weight in enumerate(weights, c.start_line + skip):
            per_line.setdefault(number, weight)
        covered_to = max(covered_to, c.start_line + len(lines) - 1)
    return per_line


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


def score_tokens(anchors: Sequence[Anchor], hits: Sequence[Hit], k: int, weights: LineWeights) -> TokenScore:
    """Overlap of expected and retrieved spans in token mass: precision, recall and IoU."""
    relevant = merge((a.path, *a.range) for a in anchors if a.path is not None and a.range is not None)
    retrieved = merge((h.file_path, h.start_line, h.end_line) for h in hits[:k])
    rel, ret = weights.mass(relevant), weights.mass(retrieved)
    ov = weights.mass(intersect(relevant, retrieved))
    union = rel + ret - ov
    return TokenScore(ov / ret if ret else 0.0, ov / rel if rel else 0.0, ov / union if union else 0.0)
