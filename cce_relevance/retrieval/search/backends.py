"""The built-in backends as the relevance harness calls them: name + (query, k) → ranked hits
(§backends), each a `SearchFn` giving `Hit` records (retrieval/hit.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from cce_relevance.errors import CceError
from cce_relevance.reference import BUILTIN_BACKENDS, REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.hit import Hit, SearchFn
from cce_relevance.strings import rust_trim

if TYPE_CHECKING:  # only searching needs numpy, the index and the rankers
    import numpy as np

    from cce_relevance.retrieval.index.model import Index


# Each field's slot setter, in field order: `_hits` fills a new `Hit`'s slots through them, which
# takes half the time of the frozen dataclass's `__init__` (an `object.__setattr__` call per
# field). Every field is set, so the hit is the one `Hit(...)` makes (tests/retrieval/search/test_hybrid.py).
_SET_ID, _SET_PATH, _SET_START, _SET_END, _SET_TYPE, _SET_KIND, _SET_RANK, _SET_SCORE = (
    getattr(Hit, f.name).__set__ for f in dataclasses.fields(Hit)
)


def _hits(index: Index, ranked: Iterable[tuple[int, int, float]]) -> list[Hit]:
    """The hits of (rank, chunk index, score) triples."""
    out = []
    chunks = index.chunks
    new = object.__new__
    for rank, d, score in ranked:
        c = chunks[d]
        hit = new(Hit)
        _SET_RANK(hit, rank)
        _SET_ID(hit, c.chunk_id)
        _SET_PATH(hit, c.file_path)
        _SET_START(hit, c.start_line)
        _SET_END(hit, c.end_line)
        _SET_TYPE(hit, c.chunk_type)
        _SET_KIND(hit, c.kind)
        _SET_SCORE(hit, score)
        out.append(hit)
    return out


def _ranked_hits(index: Index, ranked: list[tuple[int, float]]) -> list[Hit]:
    """The hits of (chunk index, score) pairs, best first: ranked 1, 2, ..."""
    return _hits(index, ((rank, d, score) for rank, (d, score) in enumerate(ranked, 1)))


def builtin_backend(
    name: str,
    index: Index,
    params: RankingParams = REFERENCE_PARAMS,
    embed: Callable[[str], np.ndarray] | None = None,
) -> SearchFn:
    """A search function for `bm25`, `vector` or `hybrid` over `index`, cut to `k` results;
    queries are embedded with `embed` (default: the hash embedder)."""
    if name not in BUILTIN_BACKENDS:
        raise CceError(f"unknown backend {name!r}")
    return _BuiltinSearch(name, index, params, embed)


@lru_cache(maxsize=2048)
def _memoised_hash_embed(query: str) -> np.ndarray:
    """`hash_embed(query)`, kept for the most recent queries: a run embeds each query once for
    vector and again for hybrid. The vectors are shared, so they are made read-only."""
    # Imported on use so that importing this module stays cheap (see TYPE_CHECKING above).
    from cce_relevance.retrieval.embedding.embed import hash_embed

    vector = hash_embed(query)
    vector.flags.writeable = False
    return vector


class _BuiltinSearch:
    """A built-in backend as the harness calls it."""

    def __init__(
        self, name: str, index: Index, params: RankingParams, embed: Callable[[str], np.ndarray] | None
    ) -> None:
        self._name, self._index, self._params = name, index, params
        self._embed = _memoised_hash_embed if embed is None else embed

    def __call__(self, query: str, k: int, query_id: str = "") -> list[Hit]:
        from cce_relevance.retrieval.search.hybrid import bm25_only_ranked, hybrid_search, vector_ranked

        index = self._index
        if not rust_trim(query) or not index.chunks:
            return []
        if self._name == "bm25":
            return _ranked_hits(index, bm25_only_ranked(index, query, k, self._params))
        if self._name == "vector":
            return _ranked_hits(index, vector_ranked(index, self._embed(query), k))
        results = hybrid_search(index, self._embed(query), query, k, self._params)[:k]
        return _hits(index, ((r.rank, r.index, r.score) for r in results))
