"""Token-level span metrics for cases with ranged anchors (harness.md §3.3).

Expected and retrieved spans are compared as sets of (file, line), each line weighted by the
`cce.tokens/v1` estimate of its text as the index holds it. Weights come from chunks in index
order (the first chunk covering a line wins, so an outer class keeps its indented text), and a
line no chunk covers weighs 1, the estimator's floor.

Spans are handled as merged intervals rather than explicit line sets, so an anchor such as
`f.py@1-999999999999` costs no more than `f.py@1-2`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate, groupby
from operator import attrgetter
from typing import NamedTuple

import numpy as np

from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.retrieval.backends import Hit
from cce_relevance.retrieval.chunk import Chunk

Intervals = dict[str, list[tuple[int, int]]]


class LineWeights:
    """Token weight of every (file, line) some chunk covers; first chunk in index order wins.

    A file's weights are worked out the first time a span in it is weighed: a run weighs the
    few files its anchors and hits name, not every line of a whole repository.
    """

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self._chunks: dict[str, list[Chunk]] = {}
        # A file's chunks are usually consecutive: one dict update per run of them.
        for path, run in groupby(chunks, key=attrgetter("file_path")):
            self._chunks.setdefault(path, []).extend(run)
        self._weighted: dict[str, _Runs] = {}

    def _file(self, path: str) -> _Runs:
        found = self._weighted.get(path)
        if found is None:
            self._weighted[path] = found = _first_chunk_line_weights(self._chunks.get(path, []))
        return found

    def mass(self, spans: Intervals) -> int:
        """Total weight of the lines in merged, disjoint intervals per file."""
        total = 0
        for path, intervals in spans.items():
            starts, offsets, prefix = self._file(path)
            for lo, hi in intervals:
                # Extra weight of the weighted lines up to `hi`, less that of those before `lo`:
                # run r is the last starting at or before the line; it may end before it.
                r = bisect_right(starts, hi) - 1
                upper = prefix[min(offsets[r] + (hi - starts[r]) + 1, offsets[r + 1])] if r >= 0 else 0
                r = bisect_right(starts, lo - 1) - 1
                lower = prefix[min(offsets[r] + (lo - starts[r]), offsets[r + 1])] if r >= 0 else 0
                total += (hi - lo + 1) + upper - lower
        return total


class _Runs(NamedTuple):
    """One file's weighted lines as runs of consecutive line numbers: run r holds lines
    `starts[r]`.. with weights at positions `offsets[r]`..`offsets[r + 1]` of the runs' lines laid
    end to end, and `prefix[i]` is the sum of (weight - 1) of the first i of those lines. The mass
    of any interval is then its line count plus two prefix differences; lines no chunk covers
    weigh 1 and add nothing."""

    starts: list[int]
    offsets: list[int]
    prefix: list[int]


def _first_chunk_line_weights(chunks: Sequence[Chunk]) -> _Runs:
    """The weight of every line in the first chunk covering it, as runs (see `_Runs`).

    Chunks of one file come in pre-order, so their first lines never decrease and every line up
    to the furthest one covered so far is already weighed: a nested chunk adds only the lines
    past it (usually none), and the lines added come in ascending runs. Out-of-order chunks start
    that over; then lines are sorted and the first weight of a line wins. The lines are measured
    together, in UTF-8 bytes, with numpy.
    """
    pieces: list[bytes] = []
    first_numbers: list[int] = []
    line_counts: list[int] = [0]
    unterminated: list[int] = []  # index of each piece's last line when it has no LF (keeps its CR)
    lines_so_far = 0
    covered_to = 0
    previous_start = 0
    in_order = True
    for c in chunks:
        if c.start_line < previous_start:
            covered_to = 0  # no longer a prefix: weigh every line, first one wins
            in_order = False
        previous_start = c.start_line
        newlines = c.content.count("\n")
        if c.start_line + newlines <= covered_to:
            continue  # even its last possible line is weighed already
        skip = max(0, covered_to + 1 - c.start_line)  # at most `newlines`, so the split has a rest
        rest = c.content.split("\n", skip)[skip] if skip else c.content
        if not rest:
            continue  # nothing but the skipped lines and their LFs
        count = newlines - skip
        pieces.append(rest.encode("utf-8", "surrogatepass"))
        if not rest.endswith("\n"):
            count += 1
            pieces.append(b"\n")
            unterminated.append(lines_so_far + count - 1)
        first_numbers.append(c.start_line + skip)
        line_counts.append(count)
        lines_so_far += count
        covered_to = max(covered_to, c.start_line + skip + count - 1)
    if not pieces:
        return _Runs([], [0], [0])
    text = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    ends = np.flatnonzero(text == 10)  # every line now ends with an LF
    lengths = ends.copy()
    lengths[1:] -= ends[:-1] + 1
    dropped_cr = text[ends - 1] == 13
    dropped_cr &= lengths > 0
    dropped_cr[unterminated] = False  # `str::lines` drops a CR only before an LF
    lengths -= dropped_cr
    extra = np.maximum(lengths >> 2, 1) - 1  # estimate_tokens of the line, minus the floor of 1
    offsets = list(accumulate(line_counts))
    if in_order:
        return _Runs(first_numbers, offsets, _prefix_sums(extra))
    numbers = np.repeat(np.array(first_numbers, dtype=np.int64) - offsets[:-1], line_counts[1:])
    numbers += np.arange(lines_so_far, dtype=np.int64)
    order = np.argsort(numbers, kind="stable")  # equal numbers stay in chunk order: first one wins
    ordered = numbers[order]
    first = np.ones(ordered.shape[0], dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    numbers, extra = ordered[first], extra[order[first]]
    breaks = np.flatnonzero(np.diff(numbers) != 1) + 1
    return _Runs(numbers[np.concatenate(([0], breaks))].tolist(),
                 np.concatenate(([0], breaks, [numbers.shape[0]])).tolist(), _prefix_sums(extra))


def _prefix_sums(values: np.ndarray) -> list[int]:
    """[0, v0, v0 + v1, ...]."""
    sums = np.zeros(values.shape[0] + 1, dtype=np.int64)
    np.cumsum(values, out=sums[1:])
    return sums.tolist()


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
