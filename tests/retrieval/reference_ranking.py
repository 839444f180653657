"""The straightforward ranking the fast path must reproduce bit for bit (used only by tests).

Written from §bm25–§backends as plainly as possible: every chunk's cosine, every chunk sorted
by a Python key (`-score_key`, chunk id, index) for each query; BM25 as a dict of postings summed
document by document and fully sorted; hybrid search with its candidate lists cut from those full
sorts, the keyword test searching each candidate's text, and graph expansion sorting whole files.
This is the implementation the production code had before it learnt to select the first k
without sorting everything (retrieval/ranking/topk.py, cosine.py `CosineIndex`, bm25.py), kept so that
tests/retrieval/search/test_fast_ranking.py can compare the two on real corpora.

Only parsing helpers the fast path did not change are shared: the tokenizer, the intent test and
file hints. Cosines are summed column by column (the order §numbers prescribes, proved
against a per-component Python loop in test_cosine.py).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from cce_relevance.numeric import score_key
from cce_relevance.reference import REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search.hybrid import file_hints, is_code_lookup
from cce_relevance.retrieval.tokens import ascii_lower, tokenize, unique_tokens

Ranked = list[tuple[int, float]]  # (chunk index, raw score), best first


def full_sort(scored: Sequence[tuple[int, float]], chunk_ids: Sequence[str]) -> Ranked:
    return sorted(scored, key=lambda p: (-score_key(p[1]), chunk_ids[p[0]], p[0]))


def cosines(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Left-to-right dot products, one non-zero query component at a time over all rows."""
    scores = np.zeros(matrix.shape[0])
    if query.size:
        with np.errstate(over="ignore", invalid="ignore"):
            for i in range(min(query.shape[0], matrix.shape[1])):
                if query[i] != 0.0:
                    scores = scores + query[i] * matrix[:, i]
    return scores


class ReferenceBM25:
    """§bm25 with dict postings; `rank` scores every document that has a query term and sorts them all."""

    def __init__(self, contents: Sequence[str], k1: float, b: float) -> None:
        self.k1, self.b = k1, b
        self.n = len(contents)
        self.lengths: list[int] = []
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for d, content in enumerate(contents):
            toks = tokenize(content)
            self.lengths.append(len(toks))
            for term, f in Counter(toks).items():
                self.postings.setdefault(term, []).append((d, f))
        self.avgdl = sum(self.lengths) / self.n if self.n else 0.0

    def rank(self, terms: Sequence[str], chunk_ids: Sequence[str]) -> Ranked:
        k1, b = self.k1, self.b
        scores: dict[int, float] = {}
        for term in terms:
            posting = self.postings.get(term, [])
            if not posting:
                continue
            df = float(len(posting))
            idf = math.log(1.0 + (float(self.n) - df + 0.5) / (df + 0.5))
            for d, f_int in posting:
                f = float(f_int)
                denom = f + k1 * ((1.0 - b) + ((b * self.lengths[d]) / self.avgdl))
                scores[d] = scores.get(d, 0.0) + (idf * (f * (k1 + 1.0))) / denom
        return full_sort([(d, s) for d, s in scores.items() if score_key(s) > 0], chunk_ids)


class ReferenceRanker:
    """The three backends over one index, each query ranked from scratch (full sorts)."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._bm25: dict[tuple[float, float], ReferenceBM25] = {}

    def bm25_ranking(self, query: str, params: RankingParams) -> Ranked:
        key = (params.bm25_k1, params.bm25_b)
        if key not in self._bm25:
            self._bm25[key] = ReferenceBM25([c.content for c in self.index.chunks], *key)
        return self._bm25[key].rank(unique_tokens(query), self.index.chunk_ids)

    def cosine_ranking(self, qvec: np.ndarray) -> Ranked:
        scores = cosines(qvec, self.index.matrix)
        return full_sort([(d, float(s)) for d, s in enumerate(scores)], self.index.chunk_ids)

    def bm25(self, query: str, k: int, params: RankingParams = REFERENCE_PARAMS) -> Ranked:
        if not tokenize(query) or not self.index.chunks or k <= 0:
            return []
        return self.bm25_ranking(query, params)[:k]

    def vector(self, qvec: np.ndarray, k: int) -> Ranked:
        if not self.index.chunks or k <= 0:
            return []
        return self.cosine_ranking(qvec)[:k]

    def hybrid(
        self, qvec: np.ndarray, query: str, k: int, params: RankingParams = REFERENCE_PARAMS
    ) -> Ranked:
        results = self._rank_core(qvec, query, k, params)
        if params.graph_enabled and results:
            results = self._expand_graph(qvec, results, params)
        return results

    def _rank_core(self, qvec: np.ndarray, query: str, k: int, params: RankingParams) -> Ranked:
        index = self.index
        if not tokenize(query) or not index.chunks or k <= 0:
            return []
        pool = k * params.candidate_multiplier
        all_cosines = cosines(qvec, index.matrix) if qvec.size else None
        vrank = {}
        if all_cosines is not None:
            vrank = {d: pos for pos, (d, _) in enumerate(self.cosine_ranking(qvec)[: max(pool, 1)])}
        frank = {d: pos for pos, (d, _) in enumerate(self.bm25_ranking(query, params)[:pool])}
        w = params.fts_boost_code_lookup if is_code_lookup(query) else 1.0
        rrf = {}
        for d in set(vrank) | set(frank):
            v = 1.0 / (params.rrf_k + vrank[d]) if d in vrank else 0.0
            f = w * (1.0 / (params.rrf_k + frank[d])) if d in frank else 0.0
            rrf[d] = v + f
        max_rrf = max(0.0, *rrf.values()) if rrf else 0.0
        terms = unique_tokens(query)
        hints = file_hints(query)
        finals = []
        for d, fused in rrf.items():
            chunk = index.chunks[d]
            norm = fused / max_rrf if score_key(max_rrf) != 0 else 0.0
            cos = float(all_cosines[d]) if all_cosines is not None else 0.0
            vector_score = 1.0 - min(max((1.0 - cos) / 2.0, 0.0), 1.0)
            content, path = ascii_lower(chunk.content), ascii_lower(chunk.file_path)
            dist = 0.0 if any(t in content for t in terms) or any(h in path for h in hints) else 2.0
            keyword = max(0.0, 1.0 - dist / 5.0)
            confidence = ((params.w_vector * vector_score) + (params.w_keyword * keyword)) + (
                params.w_recency * 0.0
            )
            final = (params.confidence_weight * confidence) + ((1.0 - params.confidence_weight) * norm)
            if any(marker in path for marker in params.path_penalty_markers):
                final *= params.path_penalty
            finals.append((d, final))
        kept: Ranked = []
        for d, final in full_sort(finals, index.chunk_ids):
            if len(kept) >= k:
                break
            path = index.chunks[d].file_path
            if sum(1 for e, _ in kept if index.chunks[e].file_path == path) < params.max_chunks_per_file:
                kept.append((d, final))
        return kept

    def _expand_graph(self, qvec: np.ndarray, results: Ranked, params: RankingParams) -> Ranked:
        chunks = self.index.chunks
        top_files: list[str] = []
        for d, _ in results[:3]:
            if chunks[d].file_path not in top_files:
                top_files.append(chunks[d].file_path)
        present = {chunks[d].file_path for d, _ in results}
        neighbours: list[str] = []
        for f in top_files:
            for n in self.index.graph.neighbors(f):
                if n not in present and n not in neighbours:
                    neighbours.append(n)
        existing = {(chunks[d].file_path, chunks[d].start_line, chunks[d].end_line) for d, _ in results}
        out = list(results)
        all_cosines = cosines(qvec, self.index.matrix)
        for f in neighbours[: params.graph_max_bonus_files]:
            members = [d for d, c in enumerate(chunks) if c.file_path == f]
            for d, cos in full_sort([(d, float(all_cosines[d])) for d in members], self.index.chunk_ids)[:2]:
                span = (f, chunks[d].start_line, chunks[d].end_line)
                if span not in existing:
                    existing.add(span)
                    out.append((d, max(cos, 0.0) * params.graph_bonus_chunk_scale))
        return out
