"""BM25 keyword ranking over chunk contents (§bm25, §bm25-only).

Okapi BM25 with the non-negative idf `ln(1 + (N - df + 0.5)/(df + 0.5))` (Robertson & Zaragoza,
"The Probabilistic Relevance Framework: BM25 and Beyond", 2009, eq. 3.3 with the +1 variant that
Lucene uses). A document's score sums its query terms' contributions in the query's
first-occurrence order — the same sequence of IEEE operations as the reference — and documents
whose score rounds to zero at six decimals are dropped.

The postings are one array of documents and one of term frequencies, grouped by term (each
term's documents ascending). A query's terms' contributions to their documents are computed
element-wise in float64 with the reference's operation order (numpy's element-wise arithmetic is
the same IEEE arithmetic as Python's) and added, term by term, into one score array (over every
document, or over only the matched ones when there are few): each document receives its terms'
contributions in query order, the same sums as a per-document loop.

A contribution does not depend on the query, but none is kept: a thousand queries of identifiers
name thousands of terms, each once, whose kept doubles grew with the corpus (twice the bytes of
the postings they were made of, 0.13 KB a chunk), and working a term's out again costs a few
passes over its postings beside the scatter that adds them. Postings that are views of a kept
corpus's mapped record leave the resident set once a query has read them (a warm run would
otherwise end up holding the record's postings whole: the queries' terms lie on most of its pages).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from cce_relevance.memory_pages import release_array
from cce_relevance.reference import REFERENCE_PARAMS
from cce_relevance.retrieval.ranking.topk import PrefixMemo, id_ranks, top_by_key
from cce_relevance.retrieval.tokens import tokenize


@dataclass(frozen=True, slots=True)
class ChunkScore:
    """A chunk position in index order and its raw score."""

    index: int
    score: float


class BM25:
    """Inverted index of term frequencies, built once per index (never persisted)."""

    def __init__(
        self,
        contents: Sequence[str],
        chunk_ids: Sequence[str],
        k1: float = REFERENCE_PARAMS.bm25_k1,
        b: float = REFERENCE_PARAMS.bm25_b,
    ) -> None:
        """Tokenize `contents` (one document each) and build the postings from them."""
        # Every (document, term, count) in document order, then grouped by term with a stable
        # sort, so each term's documents stay ascending: one array slice per term.
        terms: list[str] = []
        counts: list[int] = []
        distinct_per_doc: list[int] = []
        doc_len: list[int] = []
        for content in contents:
            tf = Counter(tokenize(content))
            terms.extend(tf)
            counts.extend(tf.values())
            distinct_per_doc.append(len(tf))
            doc_len.append(tf.total())
        term_id = {t: i for i, t in enumerate(dict.fromkeys(terms))}
        term_ids = np.fromiter(map(term_id.__getitem__, terms), dtype=np.int64, count=len(terms))
        by_term = np.argsort(term_ids, kind="stable")
        self._set(
            term_id,
            np.concatenate(([0], np.cumsum(np.bincount(term_ids, minlength=len(term_id))))),
            np.repeat(np.arange(len(contents), dtype=np.int32), distinct_per_doc)[by_term],
            np.array(counts, dtype=np.int32)[by_term],
            np.array(doc_len, dtype=np.int64),
            chunk_ids,
            k1,
            b,
        )

    @classmethod
    def from_postings(
        cls,
        term_id: Mapping[str, int],
        indptr: np.ndarray,
        docs: np.ndarray,
        tfs: np.ndarray,
        doc_len: np.ndarray,
        chunk_ids: Sequence[str],
        k1: float = REFERENCE_PARAMS.bm25_k1,
        b: float = REFERENCE_PARAMS.bm25_b,
        *,
        id_rank: np.ndarray | None = None,
    ) -> BM25:
        """The BM25 of postings already grouped by term (retrieval/ranking/postings.py): term `t`, numbered
        by `term_id` in order of first occurrence, is in documents `docs[indptr[t]:indptr[t + 1]]`
        (ascending, int32) with frequencies `tfs` (int32; each becomes the same double in the
        arithmetic as a float64 frequency would be); `doc_len[d]` is document d's token
        count. The same postings as the tokenizing constructor's give the same object, score for
        score; the arrays are kept, not copied. `id_rank`, when the caller has it, is
        `id_ranks(chunk_ids)` already made (the index keeps one)."""
        bm25 = cls.__new__(cls)
        bm25._set(term_id, indptr, docs, tfs, doc_len, chunk_ids, k1, b, id_rank)
        return bm25

    def _set(
        self,
        term_id: Mapping[str, int],
        starts: np.ndarray,
        docs: np.ndarray,
        freqs: np.ndarray,
        doc_len: np.ndarray,
        chunk_ids: Sequence[str],
        k1: float,
        b: float,
        id_rank: np.ndarray | None = None,
    ) -> None:
        self.k1 = k1
        self.b = b
        self.n_docs = doc_len.shape[0]
        self.id_rank = id_ranks(chunk_ids) if id_rank is None else id_rank
        self.doc_len = doc_len
        self.avgdl = int(doc_len.sum()) / self.n_docs if self.n_docs else 0.0
        self._term_id = term_id
        self._docs = docs
        self._freqs = freqs
        self._starts = starts
        # The per-document half of the denominator, `(1 - b) + ((b * dl) / avgdl)`, as the reference
        # computes it inline (no document has tokens when avgdl is 0, so it is never read then).
        if self.avgdl:
            self._length_norm = (1.0 - b) + ((b * self.doc_len.astype(np.float64)) / self.avgdl)
        else:
            self._length_norm = np.zeros(self.n_docs, dtype=np.float64)
        with np.errstate(over="ignore", invalid="ignore"):  # a huge k1 overflows to inf, as in Python
            self._k1_length_norm = k1 * self._length_norm  # the `k1 * norm[d]` of every contribution
        release_array(doc_len)  # read once, for the norms (a kept corpus's: pages of its record)
        self._rankings = PrefixMemo()

    def _posting(self, term: str) -> slice | None:
        """Where `term`'s documents and counts are in `_docs` and `_freqs`; None if it occurs nowhere."""
        t = self._term_id.get(term)
        return None if t is None else slice(int(self._starts[t]), int(self._starts[t + 1]))

    def document_frequency(self, term: str) -> int:
        posting = self._posting(term)
        return 0 if posting is None else posting.stop - posting.start

    def idf(self, term: str) -> float:
        df = float(self.document_frequency(term))
        return math.log(1.0 + (float(self.n_docs) - df + 0.5) / (df + 0.5))

    def _contributions(self, term: str, posting: slice) -> np.ndarray:
        """`(idf * (f * (k1 + 1))) / (f + k1 * norm[d])` for each document of `term`'s postings."""
        # As doubles, whatever integer type they are kept in (a kept corpus's record keeps them
        # narrow): an int32 frequency becomes the same double in the arithmetic below.
        f = self._freqs[posting].astype(np.float64)
        # The same operations in place, on fewer temporaries: `k1 * norm[d]` is taken from the
        # products made once, and x * y, x + y are y * x, y + x in IEEE arithmetic.
        with np.errstate(over="ignore", invalid="ignore"):  # a huge k1 overflows to inf, as in Python
            weights = f * (self.k1 + 1.0)
            weights *= self.idf(term)
            # int32 positions: take is faster than indexing
            denominators = np.take(self._k1_length_norm, self._docs[posting])
            denominators += f
            weights /= denominators
        return weights

    def matched(self, terms: Sequence[str]) -> tuple[np.ndarray | None, np.ndarray]:
        """(documents, their scores) summed in the order of `terms`: the documents that hold a
        query term, ascending — or None and a score for every document, when the terms' postings
        are long enough that one dense array is cheaper than finding their union."""
        # `np.add.at` adds one contribution after another (a term's documents are distinct), the
        # same sums as `scores[docs] += contributions`, without converting the int32 documents
        # to index type twice (gather and scatter), which dominates on long postings.
        postings = [(term, p) for term in terms if (p := self._posting(term)) is not None]
        if sum(p.stop - p.start for _, p in postings) * _SPARSE_FRACTION >= self.n_docs:
            scores = np.zeros(self.n_docs, dtype=np.float64)
            for term, p in postings:
                np.add.at(scores, self._docs[p], self._contributions(term, p))
            self._release()
            return None, scores
        docs = np.unique(np.concatenate([self._docs[p] for _, p in postings] or [np.zeros(0, np.int64)]))
        scores = np.zeros(docs.shape[0], dtype=np.float64)
        for term, p in postings:
            np.add.at(scores, np.searchsorted(docs, self._docs[p]), self._contributions(term, p))
        self._release()
        return docs, scores

    def _release(self) -> None:
        """Drop the postings' pages from the resident set when they are views of a mapped record
        (`memory_pages.release_array`; a later query maps the pages it reads again from the page
        cache). All of them: the kernel maps a read page's neighbours with it (its block of the
        file, or the whole large folio holding it), so the pages of a query's postings alone
        would leave most of what it mapped behind."""
        release_array(self._docs)
        release_array(self._freqs)

    def rank(self, terms: Sequence[str], limit: int | None = None) -> list[ChunkScore]:
        """The first `limit` (default: all) positive-key documents by (score key desc, chunk id asc)."""
        return [ChunkScore(d, score) for d, score in self.ranked(terms, limit)]

    def ranked(self, terms: Sequence[str], limit: int | None = None) -> list[tuple[int, float]]:
        """`rank` as (document, score) pairs, which cost a fraction of the records to make: what
        the searches read, many times a query."""
        if limit is None:
            return self._rank(terms, None)
        return self._rankings.ranking(tuple(terms), max(limit, 0), lambda depth: self._rank(terms, depth))

    def _rank(self, terms: Sequence[str], limit: int | None) -> list[tuple[int, float]]:
        docs, scores = self.matched(terms)
        ranks = self.id_rank if docs is None else self.id_rank[docs]
        order = top_by_key(scores, ranks, limit, positive_only=True)
        picked = (order if docs is None else docs[order]).tolist()
        return list(zip(picked, scores[order].tolist(), strict=True))


_SPARSE_FRACTION = 16  # below N/16 postings in all, scores are kept for the matched documents only
