"""Which chunks of a corpus an anchor matches, found by lookup instead of a scan of the corpus.

An anchor names a file, a kind, or both, and maybe a line range or a symbol (§anchors–§anchor-matching);
a chunk matches when every facet the anchor has matches (`Anchor.matches`). Testing each anchor against
each chunk costs anchors × chunks: 72 million tests for 1,000 queries over the standard library.
Here the chunks are grouped by what an anchor can name: by file (`chunks_by_file`, which the
index already keeps for ranking), by file and kind (made from a file's group when first asked),
and by kind (one pass over the corpus, made the first time a `#kind` anchor is looked up). A
ranged anchor then looks in its group's chunks sorted by first line: those starting at or before
the range's end are a prefix, and the prefix's largest last line says whether any of them reaches
the range's start. So a set of anchors costs about its size plus the chunks of the files it
names, whatever the corpus's size.

tests/evaluation/test_anchor_index.py compares every answer with the plain scan.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import accumulate

from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.index.model import Index


class _Candidates:
    """Chunk positions (ascending) sharing a file and/or a kind, with their lines by first line."""

    __slots__ = ("positions", "_by_start", "_starts", "_reach")

    def __init__(self, positions: Sequence[int]) -> None:
        self.positions = positions
        self._by_start: list[tuple[int, int, int]] | None = None  # (start, end, position)
        self._starts: list[int] = []
        self._reach: list[int] = []  # the largest last line among the first i + 1 by start

    def _lines(self, chunks: Sequence[Chunk]) -> list[tuple[int, int, int]]:
        if self._by_start is None:
            self._by_start = sorted((chunks[p].start_line, chunks[p].end_line, p) for p in self.positions)
            self._starts = [start for start, _, _ in self._by_start]
            self._reach = list(accumulate((end for _, end, _ in self._by_start), max))
        return self._by_start

    def overlaps(self, chunks: Sequence[Chunk], first: int, last: int) -> bool:
        """Whether a chunk of the group has a line in `first`..`last` (inclusive)."""
        self._lines(chunks)
        before = bisect_right(self._starts, last)
        return before > 0 and self._reach[before - 1] >= first

    def overlapping(self, chunks: Sequence[Chunk], first: int, last: int) -> list[int]:
        """The positions, ascending, of the group's chunks with a line in `first`..`last`."""
        by_start = self._lines(chunks)
        before = bisect_right(self._starts, last)
        return sorted(p for _, end, p in by_start[:before] if end >= first)


_EMPTY = _Candidates(())


class AnchorIndex:
    """Lookups of anchors in one corpus's chunks (index order). `by_file` is each file's chunk
    positions, ascending (`Index.chunks_by_file`); it is worked out from `chunks` when not given."""

    def __init__(self, chunks: Sequence[Chunk], by_file: Mapping[str, Sequence[int]] | None = None) -> None:
        self._chunks = chunks
        if by_file is None:
            files: dict[str, list[int]] = {}
            for i, c in enumerate(chunks):
                files.setdefault(c.file_path, []).append(i)
            by_file = files
        self._by_file = by_file
        self._groups: dict[tuple[str | None, str | None], _Candidates] = {}
        self._by_kind: dict[str, list[int]] | None = None
        self._kinds_of: dict[str, frozenset[str]] = {}

    @classmethod
    def of_index(cls, index: Index) -> AnchorIndex:
        """Anchor lookups in `index`'s chunks, through the chunks by file that ranking keeps."""
        return cls(index.chunks, index.chunks_by_file)

    def _group(self, path: str | None, kind: str | None) -> _Candidates:
        key = (path, kind)
        group = self._groups.get(key)
        if group is None:
            if path is not None:
                in_file = self._by_file.get(path, ())
                positions = in_file if kind is None else [p for p in in_file if self._chunks[p].kind == kind]
            elif kind is not None:
                positions = self._kinds().get(kind, ())
            else:
                positions = range(len(self._chunks))
            group = _Candidates(positions) if positions else _EMPTY
            self._groups[key] = group
        return group

    def _kinds(self) -> dict[str, list[int]]:
        if self._by_kind is None:
            by_kind: dict[str, list[int]] = {}
            for i, c in enumerate(self._chunks):
                by_kind.setdefault(c.kind, []).append(i)
            self._by_kind = by_kind
        return self._by_kind

    def resolves(self, anchor: Anchor) -> bool:
        """Whether any chunk matches `anchor`."""
        group = self._group(anchor.path, anchor.kind)
        if anchor.symbol is not None:
            return bool(self.matching(anchor))
        if anchor.range is None:
            return bool(group.positions)
        return bool(group.positions) and group.overlaps(self._chunks, *anchor.range)

    def matching(self, anchor: Anchor) -> Sequence[int]:
        """The positions, ascending, of the chunks `anchor` matches."""
        group = self._group(anchor.path, anchor.kind)
        if anchor.range is None or not group.positions:
            positions = group.positions
        else:
            positions = group.overlapping(self._chunks, *anchor.range)
        if anchor.symbol is None:
            return positions
        # A symbol anchor names a file: its lines, bound in the corpus at hand, are tested on that
        # file's chunks (of its kind, in its range) one by one.
        chunks = self._chunks
        return [
            p
            for p in positions
            if anchor.matches(chunks[p].file_path, chunks[p].kind, chunks[p].start_line, chunks[p].end_line)
        ]

    def kinds_in(self, path: str) -> frozenset[str] | None:
        """The kinds of the chunks of file `path`; None when the corpus has no chunk of that path."""
        kinds = self._kinds_of.get(path)
        if kinds is None:
            positions = self._by_file.get(path)
            if not positions:
                return None
            kinds = self._kinds_of[path] = frozenset(self._chunks[p].kind for p in positions)
        return kinds
