"""BM25 keyword ranking over chunk contents (pipeline.md §9, §12).

Okapi BM25 with the non-negative idf `ln(1 + (N - df + 0.5)/(df + 0.5))` (Robertson & Zaragoza,
"The Probabilistic Relevance Framework: BM25 and Beyond", 2009, eq. 3.3 with the +1 variant that
Lucene uses). A document's score sums its query terms' contributions in the query's
first-occurrence order — the same sequence of IEEE operations as the reference — and documents
whose score rounds to zero at six decimals are dropped.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from cce_relevance.config import REFERENCE_PARAMS
from cce_relevance.numeric import score_key
from cce_relevance.retrieval.tokens import tokenize


@dataclass(frozen=True)
class Scored:
    """A chunk position in index order and its raw score."""

    index: int
    score: float


class BM25:
    """Inverted index of term frequencies, built once per index (never persisted)."""

    def __init__(self, contents: Sequence[str], chunk_ids: Sequence[str],
                 k1: float = REFERENCE_PARAMS.bm25_k1, b: float = REFERENCE_PARAMS.bm25_b) -> None:
        self.k1 = k1
        self.b = b
        self.chunk_ids = list(chunk_ids)
        self.n_docs = len(contents)
        self.doc_len: list[int] = []
        self.postings: dict[str, list[tuple[int, int]]] = {}
        total = 0
        for d, content in enumerate(contents):
            toks = tokenize(content)
            self.doc_len.append(len(toks))
            total += len(toks)
            for term, f in Counter(toks).items():
                self.postings.setdefault(term, []).append((d, f))
        self.avgdl = total / self.n_docs if self.n_docs else 0.0

    def idf(self, term: str) -> float:
        df = float(len(self.postings.get(term, ())))
        return math.log(1.0 + (float(self.n_docs) - df + 0.5) / (df + 0.5))

    def raw_scores(self, terms: Sequence[str]) -> dict[int, float]:
        """Scores of every document with at least one query term, summed in term order."""
        k1, b = self.k1, self.b
        scores: dict[int, float] = {}
        for term in terms:
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = self.idf(term)
            for d, f_int in posting:
                f = float(f_int)
                denom = f + k1 * ((1.0 - b) + ((b * self.doc_len[d]) / self.avgdl))
                scores[d] = scores.get(d, 0.0) + (idf * (f * (k1 + 1.0))) / denom
        return scores

    def rank(self, terms: Sequence[str]) -> list[Scored]:
        """Positive-key documents by (score key desc, chunk id asc); callers slice."""
        keyed = [(score_key(s), d, s) for d, s in self.raw_scores(terms).items()]
        keyed = [k for k in keyed if k[0] > 0]
        keyed.sort(key=lambda k: (-k[0], self.chunk_ids[k[1]], k[1]))
        return [Scored(d, s) for _, d, s in keyed]
