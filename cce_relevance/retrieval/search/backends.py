"""The built-in backends as the relevance harness calls them: name + (query, k) → ranked hits
(§backends), each a `SearchFn` giving `Hit` records (retrieval/hit.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cce_relevance.errors import CceError
from cce_relevance.reference import BUILTIN_BACKENDS, REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.hit import Hit, SearchFn
from cce_relevance.strings import rust_trim

if TYPE_CHECKING:  # only searching needs numpy, the index and the rankers
    import numpy as np

    from cce_relevance.retrieval.index.model import Index
    from cce_relevance.retrieval.search.hybrid import SearchResult


def _hits(index: Index, results: list[SearchResult]) -> list[Hit]:
    out = []
    for r in results:
        c = index.chunks[r.index]
        out.append(
            Hit(r.rank, c.chunk_id, c.file_path, c.start_line, c.end_line, c.chunk_type, c.kind, r.score)
        )
    return out


def builtin_backend(
    name: str,
    index: Index,
    params: RankingParams = REFERENCE_PARAMS,
    embed: Callable[[str], np.ndarray] | None = None,
) -> SearchFn:
    """A search function for `bm25`, `vector` or `hybrid` over `index`, cut to `k` results;
    queries are embedded with `embed` (default: the hash embedder)."""
    # Imported on use so that importing this module stays cheap (see TYPE_CHECKING above).
    from cce_relevance.retrieval.embedding.embed import hash_embed
    from cce_relevance.retrieval.search.hybrid import bm25_only_search, hybrid_search, vector_search

    embed_query = hash_embed if embed is None else embed

    def search(query: str, k: int, query_id: str = "") -> list[Hit]:
        if not rust_trim(query) or not index.chunks:
            return []
        if name == "bm25":
            return _hits(index, bm25_only_search(index, query, k, params))
        if name == "vector":
            return _hits(index, vector_search(index, embed_query(query), k))
        return _hits(index, hybrid_search(index, embed_query(query), query, k, params)[:k])

    if name not in BUILTIN_BACKENDS:
        raise CceError(f"unknown backend {name!r}")
    return search
