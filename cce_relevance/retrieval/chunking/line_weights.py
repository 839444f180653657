"""Token weights of a file's lines, the ones token-level metrics weigh spans by (§token-metrics).

A line weighs `estimate_tokens` of its text in the first chunk, in index order, that covers it
(an outer class keeps its indented text), split the way Rust's `str::lines` splits. Only the
chunks of the line's own file matter, so a file's weights are worked out from its chunks alone:
at index time, where the chunker's bytes are at hand (`file_weighted_lines`, kept with the rest
of the file's record and of the corpus's), or, for an index made some other way, from the
chunks' contents when a metric first weighs the file (`weighted_lines`). Both give the same
integers; evaluation/spans.py only reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import NamedTuple, TypeVar

import numpy as np

from cce_relevance.retrieval.chunking.chunk import Chunk, ChunkedFile

EXTRA_DTYPE = np.int32
"""A line's extra weight is under a quarter of its bytes: int32 holds it for any line shorter
than 8 GiB (a walked file is at most `config.MAX_FILE_SIZE`, 2 MiB)."""


class FileLineWeights(NamedTuple):
    """One file's weighted lines as runs of consecutive line numbers, ascending and disjoint:
    run r holds lines `starts[r]` to `starts[r] + lengths[r] - 1` (lengths are positive), whose
    weights less 1 (the weight of a line no chunk covers) are laid end to end in `extras`. A
    file has at most one run per chunk, so its runs fit in one slot per chunk of a record."""

    starts: np.ndarray
    lengths: np.ndarray
    extras: np.ndarray


class LineWeightRuns(NamedTuple):
    """`FileLineWeights` as a metric reads them: run r holds lines `starts[r]`.. with weights at
    positions `offsets[r]`..`offsets[r + 1]` of the runs' lines laid end to end, and `prefix[i]`
    is the sum of (weight - 1) of the first i of those lines. The mass of any interval is then
    its line count plus two prefix differences; lines no chunk covers weigh 1 and add nothing.

    Each is a memoryview of an int32 array: indexed (and bisected) it gives Python ints as a
    list does, without making one object per line of the file up front — a run reads a few
    lines each of a thousand files."""

    starts: Sequence[int]
    offsets: Sequence[int]
    prefix: Sequence[int]


_V = TypeVar("_V")
_RUN_DTYPE = np.int32  # what `line_runs` keeps its numbers in
NO_LINES = FileLineWeights(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, EXTRA_DTYPE))


def line_runs(lines: FileLineWeights) -> LineWeightRuns:
    """`lines` ready for a metric to read (see `LineWeightRuns`), in int32: a file's line numbers,
    its number of lines and its total extra weight (under a quarter of its bytes) are all below
    `reference.MAX_FILE_SIZE`, 2 MiB. A run keeps the runs of nearly every file its hits are in,
    and int64 prefixes held twice the bytes (8.5 MB of them at 100k chunks)."""
    offsets = np.zeros(lines.lengths.shape[0] + 1, dtype=_RUN_DTYPE)
    np.cumsum(lines.lengths, out=offsets[1:])
    prefix = np.zeros(lines.extras.shape[0] + 1, dtype=_RUN_DTYPE)
    np.cumsum(lines.extras, out=prefix[1:])
    starts = np.ascontiguousarray(lines.starts, dtype=_RUN_DTYPE)
    return LineWeightRuns(
        starts.data, offsets.data, prefix.data
    )  # `.data`: the arrays' buffers as memoryviews


class _Pieces:
    """The lines the chunks of a file add, chunk by chunk, as UTF-8 pieces that each end with an
    LF (one is appended to a piece whose last line has none, which keeps its CR)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.first_numbers: list[int] = []
        self.line_counts: list[int] = []
        self.unterminated: list[int] = []  # index of a piece's last line when it had no LF
        self.lines = 0
        self.in_order = True

    def extras(self) -> np.ndarray:
        """Each line's weight less 1, the lines of the pieces end to end: lengths in bytes, a CR
        dropped only before an LF (`str::lines`), estimate_tokens of the rest."""
        text = np.frombuffer(b"".join(self.parts), dtype=np.uint8)
        ends = np.flatnonzero(text == 10)  # every line now ends with an LF
        # No CR to drop from an empty line: before its LF comes another (for the first line,
        # index -1 reads the text's last byte, an LF).
        dropped_cr = text[ends - 1] == 13
        if self.unterminated:
            dropped_cr[self.unterminated] = False
        lengths = ends.copy()
        lengths[1:] -= ends[:-1] + 1
        lengths -= dropped_cr
        return (np.maximum(lengths >> 2, 1) - 1).astype(EXTRA_DTYPE)


def _pieces(starts: Sequence[int], newlines: Sequence[int], rest: Callable[[int, int], bytes]) -> _Pieces:
    """The pieces of chunks whose first lines are `starts` and contents hold `newlines` LFs;
    `rest(i, skip)` is chunk i's content after its first `skip` lines, in UTF-8.

    Chunks of one file come in pre-order, so their first lines never decrease and every line up
    to the furthest one covered so far is already weighed: a nested chunk adds only the lines
    past it (usually none), and the pieces come in ascending, disjoint runs. Out-of-order chunks
    start that over (`in_order` turns False): every line is then weighed, the first one wins."""
    pieces = _Pieces()
    covered_to = 0
    previous_start = 0
    for i, (start, count) in enumerate(zip(starts, newlines, strict=True)):
        if start < previous_start:
            covered_to = 0
            pieces.in_order = False
        previous_start = start
        if start + count <= covered_to:
            continue  # even its last possible line is weighed already
        skip = max(0, covered_to + 1 - start)  # at most `count`, so there is a rest
        piece = rest(i, skip)
        if not piece:
            continue  # nothing but the skipped lines and their LFs
        count -= skip
        pieces.parts.append(piece)
        if piece[-1] != 10:
            count += 1
            pieces.parts.append(b"\n")
            pieces.unterminated.append(pieces.lines + count - 1)
        pieces.first_numbers.append(start + skip)
        pieces.line_counts.append(count)
        pieces.lines += count
        covered_to = max(covered_to, start + skip + count - 1)
    return pieces


def _weighed(pieces: _Pieces) -> FileLineWeights:
    """The runs of `pieces`: themselves when in order, else their lines sorted, first one kept."""
    if not pieces.parts:
        return NO_LINES
    extras = pieces.extras()
    counts = np.array(pieces.line_counts, dtype=np.int64)
    if pieces.in_order:
        return FileLineWeights(np.array(pieces.first_numbers, dtype=np.int64), counts, extras)
    offsets = np.zeros(counts.shape[0], dtype=np.int64)
    np.cumsum(counts[:-1], out=offsets[1:])
    numbers = np.repeat(np.array(pieces.first_numbers, dtype=np.int64) - offsets, counts)
    numbers += np.arange(pieces.lines, dtype=np.int64)
    order = np.argsort(numbers, kind="stable")  # equal numbers stay in chunk order: first one wins
    ordered = numbers[order]
    first = np.ones(ordered.shape[0], dtype=bool)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    numbers = ordered[first]
    bounds = np.concatenate(([0], np.flatnonzero(np.diff(numbers) != 1) + 1, [numbers.shape[0]]))
    return FileLineWeights(numbers[bounds[:-1]], np.diff(bounds), extras[order[first]])


def weighted_lines(chunks: Sequence[Chunk]) -> FileLineWeights:
    """The weighted lines of one file's chunks (in index order, any order), from their contents."""
    contents = [c.content for c in chunks]

    def rest(i: int, skip: int) -> bytes:
        text = contents[i].split("\n", skip)[skip] if skip else contents[i]
        return text.encode("utf-8", "surrogatepass")

    return _weighed(_pieces([c.start_line for c in chunks], [text.count("\n") for text in contents], rest))


def file_weighted_lines(chunked: ChunkedFile, sliced: bool) -> FileLineWeights:
    """`weighted_lines(chunked.chunks)`, from the chunker's bytes when `sliced`: every chunk's
    content is its byte range of `chunked.source`, decoded as it is, so those bytes are what
    encoding the content would give.

    Then nothing is split or encoded: a chunk's content holds (end line - start line) LFs, as
    the parser counts rows (on LF only), and its lines after the first `skip` start after its
    skip-th LF."""
    chunks, source, spans = chunked.chunks, chunked.source, chunked.spans
    if not sliced:
        return weighted_lines(chunks)

    def rest(i: int, skip: int) -> bytes:
        at, end = spans[i]
        for _ in range(skip):
            at = source.index(b"\n", at) + 1
        return source[at:end]

    return _weighed(
        _pieces([c.start_line for c in chunks], [c.end_line - c.start_line for c in chunks], rest)
    )


def check_slots(starts: np.ndarray, lengths: np.ndarray, extras: np.ndarray, firsts: np.ndarray) -> None:
    """Raise ValueError unless chunk slots hold weighted lines: lengths not negative and adding
    up to the extras, extras not negative, and each file's runs ascending and disjoint (file f
    has the slots from `firsts[f]` on, `firsts` ascending)."""
    if (lengths < 0).any() or int(lengths.sum()) != extras.shape[0]:
        raise ValueError("weighted lines do not add up")
    if extras.shape[0] and extras.min() < 0:
        raise ValueError("a line weighs less than 1")
    runs = np.flatnonzero(lengths)
    if runs.shape[0] > 1:
        file_of = np.searchsorted(firsts, runs, side="right")
        overlap = starts[runs[1:]] < starts[runs[:-1]] + lengths[runs[:-1]]
        if (overlap & (file_of[1:] == file_of[:-1])).any():
            raise ValueError("runs of weighted lines are not ascending")


def lines_in_slots(starts: np.ndarray, lengths: np.ndarray, extras: np.ndarray) -> FileLineWeights:
    """One file's weighted lines from its chunk slots (see `CorpusLineWeights`), checked."""
    check_slots(starts, lengths, extras, _ONE_FILE)
    runs = lengths > 0
    return FileLineWeights(starts[runs], lengths[runs], extras)


_ONE_FILE = np.zeros(1, dtype=np.int64)


def unique_paths(items: Iterable[tuple[str, _V]]) -> dict[str, _V]:
    """The (path, value) items by path, without the paths that come more than once: two walked
    files whose names decode to the same path are one file to a metric, weighed from both
    files' chunks, which an index then leaves to `weighted_lines`."""
    found: dict[str, _V] = {}
    repeated = set()
    for path, value in items:
        if path in found:
            repeated.add(path)
        found[path] = value
    for path in repeated:
        del found[path]
    return found


class CorpusLineWeights(Mapping[str, FileLineWeights]):
    """The weighted lines of a corpus's files kept as its record keeps them, by path: chunk
    slot j holds a run (`starts[j]`, `lengths[j]`; length 0: no run) of the file whose chunks
    include chunk j, and `extras` are the runs' lines end to end. `files` gives each path's
    chunk positions [first, end); a file is cut out of the arrays when it is asked for."""

    def __init__(
        self,
        files: Mapping[str, tuple[int, int]],
        starts: np.ndarray,
        lengths: np.ndarray,
        extras: np.ndarray,
    ) -> None:
        self._files = files
        self._starts, self._lengths, self._extras = starts, lengths, extras

    @cached_property
    def _offsets(self) -> np.ndarray:
        offsets = np.zeros(self._lengths.shape[0] + 1, dtype=np.int64)
        np.cumsum(self._lengths, out=offsets[1:])
        return offsets

    def __getitem__(self, path: str) -> FileLineWeights:
        first, end = self._files[path]
        lengths = self._lengths[first:end]
        runs = lengths > 0
        return FileLineWeights(
            self._starts[first:end][runs],
            lengths[runs],
            self._extras[self._offsets[first] : self._offsets[end]],
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)
