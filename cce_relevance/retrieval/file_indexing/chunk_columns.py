"""An index's chunks as columns: a `Chunk` is made when a position is asked for.

A large corpus has a million chunks, and a `Chunk` object costs about 300 bytes (the object, its
id string, its line and range integers) although ranking reads few of them: the hits, the
candidates of hybrid's keyword test, the chunks of a hit's file. `ChunkColumns` keeps what the
chunks of a corpus record are made of (retrieval/cache/corpus_record.py) — the ids as one ASCII
string, the numbers as one small integer array, each file's path and text once — about 45 bytes
a chunk, and makes the `SlicedChunk` of a position when it is read: the same value a list of
chunks would hold there (equal field by field, content sliced when first read).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import SupportsIndex, overload

import numpy as np

from cce_relevance.retrieval.chunking.chunk import Chunk, set_content, set_embedding, sliced_chunk
from cce_relevance.retrieval.corpus.walk import FileText
from cce_relevance.retrieval.file_indexing.file_record import ID_LENGTH, RUN_START

_BLOCK = 4096  # chunks made at a time when iterating: whole columns as lists would be larger than the chunks


def path_reader(chunks: Sequence[Chunk]) -> Callable[[int], str]:
    """The path of the chunk at a position of `chunks`: read from the columns when they are
    columns (making a `Chunk` costs a hundred times more, and hybrid ranking reads the path of
    every candidate of every query), else the chunk's own."""
    if isinstance(chunks, ChunkColumns):
        return chunks.file_path
    return lambda position: chunks[position].file_path


def _position(position: SupportsIndex, n: int) -> int:
    """`position` as an index of a sequence of `n`, counted from the end when negative, as a
    list reads it; IndexError outside it."""
    i = operator.index(position)
    if i < 0:
        i += n
    if not 0 <= i < n:
        raise IndexError("chunk position out of range")
    return i


class ChunkColumns(Sequence[Chunk]):
    """The chunks of files that come one after the other: file f has `per_file[f]` chunks, its
    path and text `files[f]`; chunk i's id is `ids[16 i : 16 (i + 1)]` (ASCII), its row of `rows`
    holds its start and end line, its index into `types` ((type, kind, language)), its character
    range in its file's text and its token count (the first RUN_START columns of a corpus record's
    rows); a chunk whose content is not a range of the text has it in `contents`, by position.

    Equal to any sequence of equal chunks. Chunks made from it are new objects each time: what
    one is given (`set_content`, `set_embedding`) is not kept; `attach_rows` gives every chunk
    made afterwards its row of an embedding matrix."""

    def __init__(
        self,
        ids: bytes,
        files: Sequence[tuple[str, str | FileText]],
        per_file: np.ndarray,
        types: Sequence[tuple[str, str, str]],
        rows: np.ndarray,
        contents: Mapping[int, str],
    ) -> None:
        n = rows.shape[0]
        if len(ids) != ID_LENGTH * n or len(files) != per_file.shape[0] or int(per_file.sum()) != n:
            raise ValueError("chunk columns of different lengths")
        numbers = rows[:, :RUN_START]
        fits = numbers.size == 0 or (numbers.min() >= -(2**31) and numbers.max() < 2**31)
        self._ids = ids
        self._paths = [path for path, _ in files]
        self._texts = [text for _, text in files]
        self._file = np.repeat(np.arange(len(files), dtype=np.int32), per_file)
        self._types = list(types)
        self._rows = np.ascontiguousarray(numbers, dtype=np.int32 if fits else np.int64)
        self._contents = dict(contents)
        self._vectors: np.ndarray | None = None

    def __len__(self) -> int:
        return self._rows.shape[0]

    @overload
    def __getitem__(self, position: int) -> Chunk: ...

    @overload
    def __getitem__(self, position: slice) -> list[Chunk]: ...

    def __getitem__(self, position: int | slice) -> Chunk | list[Chunk]:
        if isinstance(position, slice):
            return [self._made(i) for i in range(*position.indices(len(self)))]
        return self._made(_position(position, len(self)))

    def file_path(self, position: int) -> str:
        """The path of the chunk at `position`, without making the chunk."""
        return self._paths[self._file[position]]

    def _made(self, i: int) -> Chunk:
        start_line, end_line, triple, start, end, tokens = self._rows[i].tolist()
        f = int(self._file[i])
        chunk_type, kind, language = self._types[triple]
        chunk = sliced_chunk(
            self._ids[ID_LENGTH * i : ID_LENGTH * (i + 1)].decode("ascii"),
            self._paths[f],
            start_line,
            end_line,
            chunk_type,
            kind,
            language,
            self._texts[f],
            start,
            end,
            tokens,
        )
        self._given(chunk, i)
        return chunk

    def _given(self, chunk: Chunk, i: int) -> None:
        content = self._contents.get(i)
        if content is not None:
            set_content(chunk, content)
        if self._vectors is not None:
            set_embedding(chunk, self._vectors[i])

    def __iter__(self) -> Iterator[Chunk]:
        for lo in range(0, len(self), _BLOCK):
            yield from self._block(lo, min(lo + _BLOCK, len(self)))

    def _block(self, lo: int, hi: int) -> list[Chunk]:
        """The chunks at positions lo..hi, made column by column (a Python step per chunk, not per field)."""
        rows = self._rows[lo:hi]
        text = self._ids[ID_LENGTH * lo : ID_LENGTH * hi].decode("ascii")
        files = self._file[lo:hi].tolist()
        triples = [self._types[t] for t in rows[:, 2].tolist()]
        chunks: list[Chunk] = list(
            map(
                sliced_chunk,
                [text[k : k + ID_LENGTH] for k in range(0, len(text), ID_LENGTH)],
                [self._paths[f] for f in files],
                rows[:, 0].tolist(),
                rows[:, 1].tolist(),
                [t[0] for t in triples],
                [t[1] for t in triples],
                [t[2] for t in triples],
                [self._texts[f] for f in files],
                rows[:, 3].tolist(),
                rows[:, 4].tolist(),
                rows[:, 5].tolist(),
            )
        )
        if self._contents or self._vectors is not None:
            for i, chunk in enumerate(chunks, lo):
                self._given(chunk, i)
        return chunks

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (ChunkColumns, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # equal to lists, which are not hashable

    def __repr__(self) -> str:
        return f"ChunkColumns({len(self)} chunks)"

    @property
    def chunk_ids(self) -> ChunkIds:
        """Every chunk's id, by position, made when read."""
        return ChunkIds(self._ids)

    def attach_rows(self, vectors: np.ndarray) -> None:
        """Give every chunk made from now on its row of `vectors` (one per chunk) as its embedding."""
        if vectors.shape[0] != len(self):
            raise ValueError("embedding rows are not one per chunk")
        self._vectors = vectors


class ChunkIds(Sequence[str]):
    """Chunk ids kept as one string of ID_LENGTH ASCII characters each, an id made when read:
    a million ids as strings are 70 megabytes, as one bytes string 16."""

    def __init__(self, ids: bytes) -> None:
        self._ids = ids

    def __len__(self) -> int:
        return len(self._ids) // ID_LENGTH

    @overload
    def __getitem__(self, position: int) -> str: ...

    @overload
    def __getitem__(self, position: slice) -> list[str]: ...

    def __getitem__(self, position: int | slice) -> str | list[str]:
        if isinstance(position, slice):
            return [self[i] for i in range(*position.indices(len(self)))]
        i = _position(position, len(self))
        return self._ids[ID_LENGTH * i : ID_LENGTH * (i + 1)].decode("ascii")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, (ChunkIds, list, tuple)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]


def attach_rows(chunks: Sequence[Chunk], vectors: np.ndarray) -> None:
    """Give every chunk of `chunks` its row of `vectors` as its embedding (columns: every chunk
    made from them from now on)."""
    if isinstance(chunks, ChunkColumns):
        chunks.attach_rows(vectors)
        return
    for c, row in zip(chunks, vectors, strict=True):
        set_embedding(c, row)


def chunk_ids_of(chunks: Sequence[Chunk]) -> Sequence[str]:
    """The ids of `chunks` by position: a view of the columns' ids, or a list."""
    if isinstance(chunks, ChunkColumns):
        return chunks.chunk_ids
    return [c.chunk_id for c in chunks]
