"""Chunking: definition nodes of a tree-sitter parse, or the whole file (§chunk-walk–§module-chunk).

A chunk is exactly one definition node's byte range (nested definitions each yield their own
chunk, outer first), or — when no pack claims the file, or the parse has no definition — one
`module` chunk holding the whole text. Chunk ids hash the location and the first 100 bytes, so
they are stable across runs and implementations.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS, PackSet, unique_names
from cce_relevance.retrieval.chunking.syntax import syntax_nodes
from cce_relevance.retrieval.corpus.walk import FileText, text_of
from cce_relevance.retrieval.hit import Span
from cce_relevance.retrieval.tokens import estimate_tokens

FALLBACK_LANGUAGE = "plaintext"
MODULE = "module"
_ID_PREFIX_BYTES = 100


@dataclass(frozen=True, slots=True)
class Chunk(Span):
    """One retrievable unit: its span, language, text and token count. Frozen like the hits made
    from it; `embedding` is the one field written later, by the index build (`set_embedding`)."""

    language: str
    content: str
    token_count: int
    embedding: np.ndarray | None = field(default=None, repr=False, compare=False)

    def passing_content(self) -> str:
        """`content`, for a reader that does not keep it: a chunk that makes its content when
        first read (`SlicedChunk`) and has not made it yet gives a fresh slice and keeps none."""
        return self.content


_CONTENT = Chunk.__dict__["content"]  # the slot a Chunk holds its content in
_EMBEDDING = Chunk.__dict__["embedding"]
_FIELDS = dataclasses.fields(Chunk)
_COMPARED = tuple(f.name for f in _FIELDS if f.compare)


class SlicedChunk(Chunk):
    """A chunk whose content is its file's text sliced by its character range, made when first
    read. A corpus record's chunks are made on every warm run, but ranking reads the content of
    few of them (hybrid's keyword test, the lines a metric weighs), and the contents of all —
    more text than the corpus, as class chunks repeat their methods — cost more to make than the
    chunks themselves. The text may also be the file's `FileText`: the file is then read again
    (its bytes checked against the walk's) when a content is first made, and a warm run holds
    the texts of the files whose chunks are read only. In every other way it is a `Chunk`: the same
    fields, equal to a `Chunk` with the same ones, and given a content (`set_content`) it keeps
    that one."""

    __slots__ = ("_text", "_start", "_end")
    _text: str | FileText
    _start: int
    _end: int

    @property
    def content(self) -> str:
        try:
            return _CONTENT.__get__(self)
        except AttributeError:
            content = text_of(self._text)[self._start : self._end]
            _CONTENT.__set__(self, content)
            return content

    @content.setter
    def content(self, value: str) -> None:  # what the dataclass `__init__` writes (`dataclasses.replace`)
        _CONTENT.__set__(self, value)

    def passing_content(self) -> str:
        try:
            return _CONTENT.__get__(self)
        except AttributeError:
            return text_of(self._text)[self._start : self._end]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Chunk):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in _COMPARED)

    def __reduce__(self) -> tuple[type[Chunk], tuple[Any, ...]]:
        """Pickled and copied as the plain `Chunk` it equals, content made: by default its slots
        would carry its whole file's text along (kilobytes for a one-line chunk)."""
        return Chunk, tuple(getattr(self, f.name) for f in _FIELDS)


def set_embedding(chunk: Chunk, embedding: np.ndarray | None) -> None:
    """Give a (frozen) chunk its embedding: the index build's one write into a made chunk."""
    _EMBEDDING.__set__(chunk, embedding)


def set_content(chunk: Chunk, content: str) -> None:
    """Give a chunk read from a corpus record the content the record keeps for it (one its file's
    text does not slice to, such as a redacted or re-decoded one)."""
    _CONTENT.__set__(chunk, content)


# A `SlicedChunk` is made on every warm run for every chunk of the corpus, so `sliced_chunk`
# fills its slots through their setters: the frozen dataclass's `__setattr__` refuses them, and
# its `__init__` (an `object.__setattr__` per field) takes a content this chunk makes later.
_new_chunk = object.__new__
(
    _SET_ID,
    _SET_PATH,
    _SET_START_LINE,
    _SET_END_LINE,
    _SET_TYPE,
    _SET_KIND,
    _SET_LANGUAGE,
    _SET_TOKENS,
) = (getattr(Chunk, f.name).__set__ for f in _FIELDS if f.name not in ("content", "embedding"))
_SET_TEXT, _SET_START, _SET_END = (SlicedChunk.__dict__[name].__set__ for name in SlicedChunk.__slots__)


def sliced_chunk(
    chunk_id: str,
    file_path: str,
    start_line: int,
    end_line: int,
    chunk_type: str,
    kind: str,
    language: str,
    text: str | FileText,
    start: int,
    end: int,
    token_count: int,
) -> SlicedChunk:
    """A `SlicedChunk` made field by field (`Chunk.__init__` takes the content itself)."""
    chunk = _new_chunk(SlicedChunk)
    _SET_ID(chunk, chunk_id)
    _SET_PATH(chunk, file_path)
    _SET_START_LINE(chunk, start_line)
    _SET_END_LINE(chunk, end_line)
    _SET_TYPE(chunk, chunk_type)
    _SET_KIND(chunk, kind)
    _SET_LANGUAGE(chunk, language)
    _SET_TOKENS(chunk, token_count)
    _SET_TEXT(chunk, text)
    _SET_START(chunk, start)
    _SET_END(chunk, end)
    _EMBEDDING.__set__(chunk, None)
    return chunk


@dataclass(frozen=True)
class ChunkedFile:
    """One file's chunks and imports, with what the batch embedder needs to tokenize it once:
    the bytes that were chunked and each chunk's byte range in them."""

    chunks: list[Chunk]
    imports: list[str]
    source: bytes = b""
    spans: list[tuple[int, int]] = field(default_factory=list)


def chunk_id(file_path: str, start_line: int, end_line: int, content: bytes) -> str:
    """First 16 hex characters of SHA-256 over `path:start:end:` and the first 100 content bytes."""
    h = hashlib.sha256(f"{file_path}:{start_line}:{end_line}:".encode("utf-8", "surrogateescape"))
    h.update(content[:_ID_PREFIX_BYTES])
    return h.hexdigest()[:16]


def _make_chunk(path: str, start: int, end: int, ctype: str, kind: str, language: str, raw: bytes) -> Chunk:
    try:
        content = raw.decode("utf-8")
        tokens = max(1, len(raw) // 4)  # valid UTF-8: the content re-encodes to exactly `raw`
    except UnicodeDecodeError:
        content = raw.decode("utf-8", "replace")
        tokens = estimate_tokens(content)
    return Chunk(chunk_id(path, start, end, raw), path, start, end, ctype, kind, language, content, tokens)


def module_chunk(path: str, text: str, language: str) -> Chunk:
    """The whole-file fallback: lines 1..(newline count + 1), kind and type `module`."""
    raw = text.encode("utf-8", "surrogateescape")
    return _make_chunk(path, 1, raw.count(b"\n") + 1, MODULE, MODULE, language, raw)


def chunk_file(path: str, text: str, packs: PackSet = REFERENCE_PACKS) -> ChunkedFile:
    """Chunks of one (already redacted) file in pre-order, and its imports for the graph.

    `packs` decides which extensions are parsed; a file none of them claims is one module chunk.
    The tree is dropped before returning: only byte ranges and texts are kept.
    """
    source = text.encode("utf-8", "surrogateescape")
    whole = [(0, len(source))]
    pack = packs.for_path(path)
    if pack is None:
        return ChunkedFile([module_chunk(path, text, FALLBACK_LANGUAGE)], [], source, whole)
    tree = pack.parser().parse(source)
    if tree is None:
        return ChunkedFile([module_chunk(path, text, pack.name)], [], source, whole)
    nodes = syntax_nodes(pack, tree.root_node)
    imports = unique_names([name for node in nodes.imports for name in pack.import_names(node)])
    chunks = []
    spans = []
    for node in nodes.definitions:
        kind = node.type
        start, end = node.start_byte, node.end_byte
        chunks.append(
            _make_chunk(
                path,
                node.start_point.row + 1,
                node.end_point.row + 1,
                pack.chunk_type(kind),
                kind,
                pack.name,
                source[start:end],
            )
        )
        spans.append((start, end))
    if not chunks:
        return ChunkedFile([module_chunk(path, text, pack.name)], imports, source, whole)
    return ChunkedFile(chunks, imports, source, spans)
