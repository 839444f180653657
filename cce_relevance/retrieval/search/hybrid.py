"""The three ranking entry points: hybrid search, BM25-only and pure cosine (§vector–§backends).

Hybrid search fuses a cosine candidate list and a BM25 candidate list with reciprocal rank
fusion (Cormack, Clarke & Büttcher, SIGIR 2009), blends the normalised fusion score with a
confidence estimate, penalises test/doc paths, caps chunks per file, and finally appends
chunks of import-graph neighbours. Every comparison uses six-decimal score keys with chunk-id
tie-breaks, so the order is total and identical to the reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

import numpy as np

from cce_relevance.numeric import score_key
from cce_relevance.reference import REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.file_indexing.chunk_columns import path_reader
from cce_relevance.retrieval.index.model import Index, LowerContents
from cce_relevance.retrieval.ranking.topk import score_keys, top_by_key
from cce_relevance.retrieval.tokens import ascii_lower, tokenize, unique_tokens
from cce_relevance.strings import rust_split_whitespace

INTENT_WORDS = frozenset({"function", "class", "method", "def"})
INTENT_EXTENSIONS = ("py", "js", "jsx", "ts", "go", "rb", "rs", "java")

QueryEmbedder = Callable[[str], np.ndarray]


@dataclass(frozen=True, slots=True)
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
    """Whether the query reads as looking for code, which boosts BM25 in the fusion (§intent)."""
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


def bm25_only_search(
    index: Index, query: str, top_k: int, params: RankingParams = REFERENCE_PARAMS
) -> list[SearchResult]:
    """Keyword-only ranking; scores are raw BM25 values (§bm25-only)."""
    return _results(bm25_only_ranked(index, query, top_k, params))


def bm25_only_ranked(
    index: Index, query: str, top_k: int, params: RankingParams = REFERENCE_PARAMS
) -> list[tuple[int, float]]:
    """`bm25_only_search` as (chunk index, score) pairs, best first."""
    terms = unique_tokens(query)
    if not terms or not index.chunks or top_k <= 0:
        return []
    return index.bm25(params).ranked(terms, top_k)


def vector_search(index: Index, qvec: np.ndarray, top_k: int) -> list[SearchResult]:
    """Pure cosine order over all chunks, first `top_k` (§vector; no token guard:
    §oddity-vector-no-guard)."""
    return _results(vector_ranked(index, qvec, top_k))


def vector_ranked(index: Index, qvec: np.ndarray, top_k: int) -> list[tuple[int, float]]:
    """`vector_search` as (chunk index, cosine) pairs, best first."""
    if not index.chunks or top_k <= 0:
        return []
    return index.cosine.top(qvec, top_k)


def _results(ranked: list[tuple[int, float]]) -> list[SearchResult]:
    return [SearchResult(rank, d, s) for rank, (d, s) in enumerate(ranked, 1)]


def _keyword_distance(
    lower_contents: LowerContents, position: int, path: str, terms: list[str], hints: list[str]
) -> float:
    """0 when a query token occurs in the ASCII-lowercased content (of the chunk at `position`) or
    a file hint in the path, else 2.

    Tokens are lowercase ASCII words, which ASCII lowercasing leaves in place; the lowercased
    content is made once per chunk and kept, as candidates recur across queries.
    """
    if terms:
        lower = lower_contents[position]
        for t in terms:
            if t in lower:
                return 0.0
    if not hints:  # most queries name no file
        return 2.0
    lower_path = ascii_lower(path)
    return 0.0 if any(h in lower_path for h in hints) else 2.0


def _penalised(path: str, markers: tuple[str, ...]) -> bool:
    """Whether the path names tests, docs, specs or plans."""
    lower = ascii_lower(path)
    return any(marker in lower for marker in markers)


@lru_cache(maxsize=8)
def _penalised_paths(markers: tuple[str, ...]) -> dict[str, bool]:
    """`_penalised` of the paths seen so far with these markers, by path (candidates repeat
    files across queries); emptied when it holds `_PENALISED_KEPT` paths."""
    return {}


_PENALISED_KEPT = 1 << 16


def rank_core(
    index: Index, qvec: np.ndarray, query: str, top_k: int, params: RankingParams = REFERENCE_PARAMS
) -> list[SearchResult]:
    """RRF + confidence blend + path penalty + per-file cap (§hybrid-exits–§diversity-cap)."""
    if not tokenize(query) or not index.chunks or top_k <= 0:
        return []
    pool = top_k * params.candidate_multiplier
    by_bm25 = [d for d, _ in index.bm25(params).ranked(unique_tokens(query), pool)]
    if not qvec.size:
        return fuse(index, query, top_k, None, [], by_bm25, params)
    by_cosine = index.cosine.top(qvec, max(pool, 1))
    cosines = dict(by_cosine)
    others = [d for d in by_bm25 if d not in cosines]
    if others:
        cosines.update(zip(others, index.cosine.scores(qvec, others).tolist(), strict=True))
    return fuse(index, query, top_k, cosines, [d for d, _ in by_cosine], by_bm25, params)


def fuse(
    index: Index,
    query: str,
    top_k: int,
    cosines: Mapping[int, float] | None,
    by_cosine: Sequence[int],
    by_bm25: Sequence[int],
    params: RankingParams = REFERENCE_PARAMS,
) -> list[SearchResult]:
    """§intent and §hybrid-candidates–§diversity-cap, given the two candidate lists (chunk indices,
    best first: the first cosines, and the first chunks with a positive BM25 score for the
    query's tokens) and each candidate's cosine with the query (None without a query vector:
    all cosines count as 0.0)."""
    w = params.fts_boost_code_lookup if is_code_lookup(query) else 1.0
    terms = unique_tokens(query)
    rrf_k = params.rrf_k
    # Each list's term of a candidate's RRF score, by chunk index.
    by_cosine_term = {d: 1.0 / (rrf_k + pos) for pos, d in enumerate(by_cosine)}
    by_bm25_term = {d: w * (1.0 / (rrf_k + pos)) for pos, d in enumerate(by_bm25)}
    candidates = sorted(by_cosine_term.keys() | by_bm25_term.keys())
    rrf: list[float] = []
    for d in candidates:
        s = 0.0
        term = by_cosine_term.get(d)
        if term is not None:
            s += term
        term = by_bm25_term.get(d)
        if term is not None:
            s += term
        rrf.append(s)
    max_rrf = max([0.0, *rrf])
    normalise = score_key(max_rrf) != 0
    hints = file_hints(query)
    cw, w_vector = params.confidence_weight, params.w_vector
    # The doubles the formulas below take from the parameters alone, each worked out once:
    # `w_keyword * max(0.0, 1.0 - dist / 5.0)` for the two distances the keyword test gives,
    # `w_recency * 0.0` and `1.0 - cw`.
    keyword_found = params.w_keyword * max(0.0, 1.0 - 0.0 / 5.0)
    keyword_missed = params.w_keyword * max(0.0, 1.0 - 2.0 / 5.0)
    recency = params.w_recency * 0.0
    rest = 1.0 - cw
    penalised, penalty = _penalised_paths(params.path_penalty_markers), params.path_penalty
    if len(penalised) > _PENALISED_KEPT:
        penalised.clear()
    cos_list = [cosines[d] for d in candidates] if cosines is not None else [0.0] * len(candidates)
    norms = [r / max_rrf for r in rrf] if normalise else [0.0] * len(rrf)

    path_of, lower_contents = path_reader(index.chunks), index.lower_contents
    finals: list[float] = []
    paths: list[str] = []
    for d, norm, cos in zip(candidates, norms, cos_list, strict=True):
        # `min(max(x, 0.0), 1.0)` as the comparisons those builtins make (NaN stays NaN).
        half_distance = (1.0 - cos) / 2.0
        if 0.0 > half_distance:
            half_distance = 0.0
        elif 1.0 < half_distance:
            half_distance = 1.0
        path = path_of(d)
        # A BM25 candidate has a query token among its own tokens, and every token is a substring
        # of the ASCII-lowercased content: its distance is 0 without searching the text.
        if d in by_bm25_term or _keyword_distance(lower_contents, d, path, terms, hints) == 0.0:
            keyword = keyword_found
        else:
            keyword = keyword_missed
        final = (cw * (((w_vector * (1.0 - half_distance)) + keyword) + recency)) + (rest * norm)
        is_penalised = penalised.get(path)
        if is_penalised is None:
            is_penalised = penalised[path] = _penalised(path, params.path_penalty_markers)
        if is_penalised:
            final *= penalty
        finals.append(final)
        paths.append(path)

    kept: list[int] = []
    per_file: dict[str, int] = {}
    for i in top_by_key(np.array(finals), index.id_rank[candidates]).tolist():
        if len(kept) >= top_k:
            break
        path = paths[i]
        if per_file.get(path, 0) < params.max_chunks_per_file:
            per_file[path] = per_file.get(path, 0) + 1
            kept.append(i)
    return [SearchResult(rank, candidates[i], finals[i]) for rank, i in enumerate(kept, 1)]


def _distinct(items: Iterable[str]) -> Iterator[str]:
    """`items` without repeats, in first-seen order, lazily."""
    seen: set[str] = set()
    for item in items:
        if item not in seen:
            seen.add(item)
            yield item


def expand_graph(
    index: Index, qvec: np.ndarray, results: list[SearchResult], params: RankingParams = REFERENCE_PARAMS
) -> list[SearchResult]:
    """Append up to two chunks from each of up to two import neighbours of the top files (§graph-expansion).

    `results` are ranked 1, 2, ... (as `rank_core` gives them); the chunks appended continue that
    numbering."""
    if not results:
        return results
    chunks, path_of = index.chunks, path_reader(index.chunks)
    top_files = list(dict.fromkeys(path_of(r.index) for r in results[:3]))
    present = {path_of(r.index) for r in results}
    neighbours = (n for f in top_files for n in index.graph.neighbors(f) if n not in present)
    # Only the first few distinct neighbours are used; a hub file can have hundreds.
    bonus_files = list(islice(_distinct(neighbours), params.graph_max_bonus_files))
    if not bonus_files:
        return results
    out = list(results)
    # A bonus file is not among the results' files, so no result's span is one of its chunks':
    # only the spans appended here can repeat.
    existing: set[tuple[str, int, int]] = set()
    # One exact scoring of every bonus file's chunks (a row's cosine does not depend on the
    # others), each file's chunks in chunk-id order; then one stable sort of them all by (file,
    # key desc): each file's rows stay in its own block, best first and ties in id order, so its
    # two best open the block.
    groups = [index.rows_by_id[f] for f in bonus_files]
    every = groups[0] if len(groups) == 1 else np.concatenate(groups)
    every_cos = index.cosine.scores(qvec, every)
    sizes = [g.shape[0] for g in groups]
    order = np.lexsort((~score_keys(every_cos), np.repeat(np.arange(len(groups)), sizes))).tolist()
    rows, cosines = every.tolist(), every_cos.tolist()
    scale = params.graph_bonus_chunk_scale
    start = 0
    for f, size in zip(bonus_files, sizes, strict=True):
        for j in order[start : start + min(size, 2)]:
            c = chunks[rows[j]]
            span = (f, c.start_line, c.end_line)
            if span in existing:
                continue
            existing.add(span)
            out.append(SearchResult(len(out) + 1, rows[j], max(cosines[j], 0.0) * scale))
        start += size
    return out


def hybrid_search(
    index: Index, qvec: np.ndarray, query: str, top_k: int, params: RankingParams = REFERENCE_PARAMS
) -> list[SearchResult]:
    """The full pipeline `cce search` serves; graph expansion when the params enable it."""
    results = rank_core(index, qvec, query, top_k, params)
    if params.graph_enabled:
        results = expand_graph(index, qvec, results, params)
    return results
