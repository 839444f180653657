"""Chunking: definition nodes of a tree-sitter parse, or the whole file (pipeline.md §6.3–§6.5).

A chunk is exactly one definition node's byte range (nested definitions each yield their own
chunk, outer first), or — when no pack claims the file, or the parse has no definition — one
`module` chunk holding the whole text. Chunk ids hash the location and the first 100 bytes, so
they are stable across runs and implementations.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from cce_relevance.retrieval.packs import REFERENCE_PACKS, Pack, PackSet, preorder
from cce_relevance.retrieval.tokens import estimate_tokens

FALLBACK_LANGUAGE = "plaintext"
MODULE = "module"
_ID_PREFIX_BYTES = 100


@dataclass
class Chunk:
    """One retrievable unit; `embedding` is filled by the index build."""

    chunk_id: str
    file_path: str
    start_line: int
    end_line: int
    chunk_type: str
    kind: str
    language: str
    content: str
    token_count: int
    embedding: np.ndarray | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class ChunkedFile:
    chunks: list[Chunk]
    imports: list[str]


def chunk_id(file_path: str, start_line: int, end_line: int, content: bytes) -> str:
    """First 16 hex characters of SHA-256 over `path:start:end:` and the first 100 content bytes."""
    h = hashlib.sha256(f"{file_path}:{start_line}:{end_line}:".encode("utf-8", "surrogateescape"))
    h.update(content[:_ID_PREFIX_BYTES])
    return h.hexdigest()[:16]


def _make_chunk(path: str, start: int, end: int, ctype: str, kind: str, language: str, raw: bytes) -> Chunk:
    content = raw.decode("utf-8", "replace")
    return Chunk(chunk_id(path, start, end, raw), path, start, end, ctype, kind, language, content,
                 estimate_tokens(content))


def module_chunk(path: str, text: str, language: str) -> Chunk:
    """The whole-file fallback: lines 1..(newline count + 1), kind and type `module`."""
    raw = text.encode("utf-8", "surrogateescape")
    return _make_chunk(path, 1, raw.count(b"\n") + 1, MODULE, MODULE, language, raw)


def _definition_chunks(pack: Pack, path: str, source: bytes, root) -> list[Chunk]:
    kinds = pack.chunk_kinds
    chunks = []
    for node in preorder(root):
        kind = node.type
        if kind in kinds and node.is_named:
            chunks.append(_make_chunk(path, node.start_point.row + 1, node.end_point.row + 1,
                                      pack.chunk_type(kind), kind, pack.name,
                                      source[node.start_byte:node.end_byte]))
    return chunks


def chunk_file(path: str, text: str, packs: PackSet = REFERENCE_PACKS) -> ChunkedFile:
    """Chunks of one (already redacted) file in pre-order, and its imports for the graph.

    `packs` decides which extensions are parsed; a file none of them claims is one module chunk.
    """
    pack = packs.for_path(path)
    if pack is None:
        return ChunkedFile([module_chunk(path, text, FALLBACK_LANGUAGE)], [])
    source = text.encode("utf-8", "surrogateescape")
    tree = pack.parser().parse(source)
    if tree is None:
        return ChunkedFile([module_chunk(path, text, pack.name)], [])
    root = tree.root_node
    chunks = _definition_chunks(pack, path, source, root)
    imports = pack.extract_imports(root)
    if not chunks:
        chunks = [module_chunk(path, text, pack.name)]
    return ChunkedFile(chunks, imports)
