"""The three ranking entry points: hybrid search, BM25-only and pure cosine (pipeline.md §10–§13).

Hybrid search fuses a cosine candidate list and a BM25 candidate list with reciprocal rank
fusion (Cormack, Clarke & Büttcher, SIGIR 2009), blends the normalised fusion score with a
confidence estimate, penalises test/doc paths, caps chunks per file, and finally appends
chunks of import-graph neighbours. Every comparison uses six-decimal score keys with chunk-id
tie-breaks, so the order is total and identical to the reference.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from cce_relevance.config import REFERENCE_PARAMS, RankingParams
from cce_relevance.numeric import score_key
from cce_relevance.retrieval.index import Index
from cce_relevance.retrieval.tokens import ascii_lower, tokenize, unique_tokens
from cce_relevance.retrieval.vector import cosine_all, rank_by_cosine
from cce_relevance.strings import rust_split_whitespace

INTENT_WORDS = frozenset({"function", "class", "method", "def"})
INTENT_EXTENSIONS = ("py", "js", "jsx", "ts", "go", "rb", "rs", "java")

QueryEmbedder = Callable[[str], np.ndarray]


@dataclass(frozen=True)
class SearchResult:
    """One ranked chunk; `score` is the raw double, rounded only for sorting and display."""

    rank: int
    index: int
    score: float


def _is_word_byte(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def _mentions_extension(lower: str, ext: str) -> bool:
    needle = "." + ext
    start = lower.find(needle)
    while start >= 0:
        after = start + len(needle)
        if after == len(lower) or not _is_word_byte(lower[after]):
            return True
        start = lower.find(needle, after)
    return False


def is_code_lookup(query: str) -> bool:
    """Whether the query reads as looking for code, which boosts BM25 in the fusion (§11.2)."""
    lower = ascii_lower(query)
    if INTENT_WORDS.intersection(tokenize(lower)):
        return True
    if any(_mentions_extension(lower, ext) for ext in INTENT_EXTENSIONS):
        return True
    if "where is " in lower or " defined" in lower:
        return True
    find = lower.find("find ")
    return find >= 0 and " function" in lower[find:]


def file_hints(query: str) -> list[str]:
    """Whitespace-separated query pieces containing a dot, ASCII-lowercased (punctuation kept)."""
    return [ascii_lower(p) for p in rust_split_whitespace(query) if "." in p]


def bm25_only_search(index: Index, query: str, top_k: int,
                     params: RankingParams = REFERENCE_PARAMS) -> list[SearchResult]:
    """Keyword-only ranking; scores are raw BM25 values (§12)."""
    terms = unique_tokens(query)
    if not terms or not index.chunks or top_k <= 0:
        return []
    ranked = index.bm25(params).rank(terms)[:top_k]
    return [SearchResult(i + 1, s.index, s.score) for i, s in enumerate(ranked)]


def vector_search(index: Index, qvec: np.ndarray, top_k: int) -> list[SearchResult]:
    """Pure cosine order over all chunks, first `top_k` (§10; no token guard, §17.8)."""
    if not index.chunks or top_k <= 0:
        return []
    ranked = rank_by_cosine(qvec, index.matrix, index.chunk_ids)[:top_k]
    return [SearchResult(i + 1, d, s) for i, (d, s) in enumerate(ranked)]


def _keyword_score(index: Index, d: int, terms: list[str], hints: list[str]) -> float:
    content = index.lower_contents[d]
    if any(t in content for t in terms):
        dist = 0.0
    else:
        path = ascii_lower(index.chunks[d].file_path)
        dist = 0.0 if any(h in path for h in hints) else 2.0
    return max(0.0, 1.0 - dist / 5.0)


def _penalised(path: str, params: RankingParams) -> bool:
    lower = ascii_lower(path)
    return any(marker in lower for marker in params.path_penalty_markers)


def rank_core(index: Index, qvec: np.ndarray, query: str, top_k: int,
              params: RankingParams = REFERENCE_PARAMS) -> list[SearchResult]:
    """RRF + confidence blend + path penalty + per-file cap (§11.1–§11.10)."""
    if not tokenize(query) or not index.chunks or top_k <= 0:
        return []
    w = params.fts_boost_code_lookup if is_code_lookup(query) else 1.0
    pool = top_k * params.candidate_multiplier
    chunk_ids = index.chunk_ids

    cosines = cosine_all(qvec, index.matrix) if qvec.size else None
    vrank: dict[int, int] = {}
    if cosines is not None:
        for pos, (d, _) in enumerate(rank_by_cosine(qvec, index.matrix, chunk_ids)[: max(pool, 1)]):
            vrank[d] = pos
    terms = unique_tokens(query)
    frank = {s.index: pos for pos, s in enumerate(index.bm25(params).rank(terms)[:pool])}

    candidates = sorted(set(vrank) | set(frank))
    rrf: dict[int, float] = {}
    for d in candidates:
        s = 0.0
        if d in vrank:
            s += 1.0 / (params.rrf_k + vrank[d])
        if d in frank:
            s += w * (1.0 / (params.rrf_k + frank[d]))
        rrf[d] = s
    max_rrf = max([0.0, *rrf.values()])
    hints = file_hints(query)
    cw = params.confidence_weight

    finals: dict[int, float] = {}
    for d in candidates:
        norm = rrf[d] / max_rrf if score_key(max_rrf) != 0 else 0.0
        cos = float(cosines[d]) if cosines is not None else 0.0
        vector_score = 1.0 - min(max((1.0 - cos) / 2.0, 0.0), 1.0)
        keyword = _keyword_score(index, d, terms, hints)
        confidence = ((params.w_vector * vector_score) + (params.w_keyword * keyword)) + (params.w_recency * 0.0)
        final = (cw * confidence) + ((1.0 - cw) * norm)
        if _penalised(index.chunks[d].file_path, params):
            final *= params.path_penalty
        finals[d] = final

    ordered = sorted(candidates, key=lambda d: (-score_key(finals[d]), chunk_ids[d], d))
    kept: list[int] = []
    per_file: dict[str, int] = {}
    for d in ordered:
        if len(kept) >= top_k:
            break
        path = index.chunks[d].file_path
        if per_file.get(path, 0) < params.max_chunks_per_file:
            per_file[path] = per_file.get(path, 0) + 1
            kept.append(d)
    return [SearchResult(i + 1, d, finals[d]) for i, d in enumerate(kept)]


def expand_graph(index: Index, qvec: np.ndarray, results: list[SearchResult],
                 params: RankingParams = REFERENCE_PARAMS) -> list[SearchResult]:
    """Append up to two chunks from each of up to two import neighbours of the top files (§11.12)."""
    if not results:
        return results
    chunks = index.chunks
    top_files = list(dict.fromkeys(chunks[r.index].file_path for r in results[:3]))
    present = {chunks[r.index].file_path for r in results}
    neighbor_files: list[str] = []
    for f in top_files:
        for n in index.graph.neighbors(f):
            if n not in present and n not in neighbor_files:
                neighbor_files.append(n)
    existing = {(chunks[r.index].file_path, chunks[r.index].start_line, chunks[r.index].end_line)
                for r in results}
    out = list(results)
    matrix = index.matrix
    for f in neighbor_files[: params.graph_max_bonus_files]:
        members = index.chunks_by_file[f]
        cos = cosine_all(qvec, matrix[members]) if qvec.size else np.zeros(len(members))
        scored = sorted(zip(members, (float(c) for c in cos), strict=True),
                        key=lambda p: (-score_key(p[1]), chunks[p[0]].chunk_id, p[0]))
        for d, c in scored[:2]:
            span = (f, chunks[d].start_line, chunks[d].end_line)
            if span in existing:
                continue
            existing.add(span)
            out.append(SearchResult(0, d, max(c, 0.0) * params.graph_bonus_chunk_scale))
    return [SearchResult(i + 1, r.index, r.score) for i, r in enumerate(out)]


def hybrid_search(index: Index, qvec: np.ndarray, query: str, top_k: int,
                  params: RankingParams = REFERENCE_PARAMS) -> list[SearchResult]:
    """The full pipeline `cce search` serves; graph expansion when the params enable it."""
    results = rank_core(index, qvec, query, top_k, params)
    if params.graph_enabled:
        results = expand_graph(index, qvec, results, params)
    return results

