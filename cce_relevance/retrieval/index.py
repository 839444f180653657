"""The in-memory index: chunks in index order plus everything ranking needs (pipeline.md §3).

Building walks the corpus (sorted), redacts each file, chunks it, embeds every chunk with the
hash embedder and derives BM25 statistics and the import graph. The order of `chunks` is
significant downstream (line weights, tie handling, graph expansion), so it is kept exactly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from cce_relevance.config import REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.bm25 import BM25
from cce_relevance.retrieval.chunk import Chunk, chunk_file
from cce_relevance.retrieval.embed import HASH_DOCUMENTS, HASH_EMBEDDER, DocumentEmbedder
from cce_relevance.retrieval.graph import ImportGraph
from cce_relevance.retrieval.packs import REFERENCE_PACKS, PackSet
from cce_relevance.retrieval.redact import redact
from cce_relevance.retrieval.tokens import ascii_lower, estimate_tokens
from cce_relevance.retrieval.walk import walk


@dataclass
class Index:
    """Chunks with embeddings, and the statistics derived from them on build or load."""

    chunks: list[Chunk]
    file_imports: dict[str, list[str]]
    file_tokens: dict[str, int]
    embedder: str = HASH_EMBEDDER
    walk_skipped: int = 0
    _bm25: dict[tuple[float, float], BM25] = field(default_factory=dict, repr=False)

    @cached_property
    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in self.chunks]

    @cached_property
    def matrix(self) -> np.ndarray:
        """Embeddings as one row per chunk, zero-padded to a common width."""
        width = max((c.embedding.shape[0] for c in self.chunks if c.embedding is not None), default=0)
        m = np.zeros((len(self.chunks), width), dtype=np.float64)
        for row, c in enumerate(self.chunks):
            if c.embedding is not None and c.embedding.size:
                m[row, : c.embedding.shape[0]] = c.embedding
        return m

    @cached_property
    def lower_contents(self) -> list[str]:
        return [ascii_lower(c.content) for c in self.chunks]

    @cached_property
    def chunks_by_file(self) -> dict[str, list[int]]:
        by_file: dict[str, list[int]] = {}
        for i, c in enumerate(self.chunks):
            by_file.setdefault(c.file_path, []).append(i)
        return by_file

    @cached_property
    def graph(self) -> ImportGraph:
        return ImportGraph(self.file_imports, sorted(self.chunks_by_file))

    def bm25(self, params: RankingParams = REFERENCE_PARAMS) -> BM25:
        """BM25 statistics for the given k1/b, built on first use and kept."""
        key = (params.bm25_k1, params.bm25_b)
        if key not in self._bm25:
            self._bm25[key] = BM25([c.content for c in self.chunks], self.chunk_ids, *key)
        return self._bm25[key]


def build_index(root: str | os.PathLike, protect_secrets: bool = True,
                embedder: DocumentEmbedder = HASH_DOCUMENTS, languages: PackSet = REFERENCE_PACKS) -> Index:
    """Walk, redact, chunk and embed a corpus directory, in the reference's order.

    `languages` are the packs that chunk (retrieval/languages.py `enabled_packs`); the default is
    the reference's six, which keeps every default output byte-identical to the reference.
    """
    walked = walk(root, protect_secrets=protect_secrets)
    chunks: list[Chunk] = []
    file_imports: dict[str, list[str]] = {}
    file_tokens: dict[str, int] = {}
    for f in walked.files:
        text = redact(f.text) if protect_secrets else f.text
        file_tokens[f.path] = estimate_tokens(text)
        chunked = chunk_file(f.path, text, languages)
        if chunked.imports:
            file_imports[f.path] = chunked.imports
        chunks.extend(chunked.chunks)
    for c, vector in zip(chunks, embedder.embed_all([c.content for c in chunks]), strict=True):
        c.embedding = vector
    return Index(chunks, file_imports, file_tokens, embedder.name, walked.skipped)


def index_from_parts(chunks: Sequence[Chunk], file_imports: Mapping[str, Sequence[str]],
                     file_tokens: Mapping[str, int], embedder: str) -> Index:
    """An index from already-made chunks (a loaded store); BM25 and the graph are recomputed."""
    return Index(list(chunks), {k: list(v) for k, v in file_imports.items()}, dict(file_tokens), embedder)

