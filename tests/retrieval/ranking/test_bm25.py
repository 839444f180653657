"""BM25 keyword store (§bm25) and BM25-only search (§bm25-only)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.numeric import score_key
from cce_relevance.reporting.numbers import format6
from cce_relevance.retrieval.ranking.bm25 import BM25, ChunkScore
from cce_relevance.retrieval.search.hybrid import bm25_only_search
from tests.retrieval.corpora import SAMPLES, build, build_dir, ref_bm25_rank, rows


@pytest.fixture(scope="module")
def samples(upstream):
    return build_dir(upstream / SAMPLES)


def test_anchor_user_login_user():
    # §bm25 anchor: docs `user login user` / `payment process`, query `user` -> only D1, 0.902322.
    # By hand: N=2, df(user)=1 -> idf = ln(1 + 1.5/1.5) = ln 2; dl1 = 3, avgdl = 5/2 = 2.5, f = 2:
    # (ln2 * (2 * 2.2)) / (2 + 1.2 * (0.25 + 0.75*3/2.5)) = ln2 * 4.4 / 3.38 = 0.9023215...
    bm = BM25(["user login user", "payment process"], ["d1", "d2"])
    assert bm.n_docs == 2 and bm.avgdl == 2.5
    assert bm.idf("user") == math.log(2.0)
    ranked = bm.rank(["user"])
    assert [r.index for r in ranked] == [0]
    assert format6(ranked[0].score) == "0.902322"
    by_hand = (math.log(2.0) * (2.0 * (1.2 + 1.0))) / (2.0 + 1.2 * ((1.0 - 0.75) + ((0.75 * 3) / 2.5)))
    assert ranked[0].score == by_hand


def test_samples_statistics(samples):
    # §sample-chunks: N = 21, avgdl = 141/21.
    bm = samples.bm25()
    assert bm.n_docs == 21
    assert sum(bm.doc_len) == 141
    assert bm.avgdl == 141 / 21 == 6.714285714285714


def test_idf_is_never_negative():
    # A term in every document: classic idf ln((N-df+0.5)/(df+0.5)) < 0; the +1 form stays > 0.
    bm = BM25(["x a", "x b", "x c"], ["1", "2", "3"])
    assert bm.idf("x") == math.log(1.0 + 0.5 / 3.5) > 0
    assert [r.index for r in bm.rank(["x"])] == [0, 1, 2]  # equal scores: chunk id ascending


def test_tie_at_4_054328_broken_by_chunk_id(samples):
    # §bm25: "two chunks tie at 4.054328 for `class Loader load`" on the samples; ties -> id ascending.
    ranked = samples.bm25().rank(["class", "loader", "load"])
    tied = [
        (pos, samples.chunk_ids[r.index]) for pos, r in enumerate(ranked) if format6(r.score) == "4.054328"
    ]
    assert len(tied) == 2
    (p1, id1), (p2, id2) = tied
    assert p2 == p1 + 1 and id1 < id2


def test_where_is_read_config_top5(samples):
    # §hybrid-examples: BM25 for `where is the read_config function` (stop words count).
    got = rows(samples, bm25_only_search(samples, "where is the read_config function", 5))
    assert got == [
        ("notes.md", 1, 3, "2.639626"),
        ("javascript.js", 3, 5, "2.137541"),
        ("python.py", 7, 8, "2.052679"),
        ("typescript.ts", 3, 5, "2.016765"),
        ("python.py", 6, 8, "1.806826"),
    ]


SAMPLE_QUERIES = [
    "where is the read_config function",
    "parse json config text",
    "build index hashmap store",
    "class Loader load",
    "sum node value struct",
    "interface Config typescript",
    "read_config path config.yml",
    "return return the",
]


@pytest.mark.parametrize("query", SAMPLE_QUERIES)
def test_samples_rank_matches_spec_oracle(samples, query):
    got = [(r.index, r.score) for r in bm25_only_search(samples, query, 100)]
    want = ref_bm25_rank([c.content for c in samples.chunks], samples.chunk_ids, query)
    assert got == want


def test_zero_score_documents_are_dropped():
    bm = BM25(["alpha beta", "gamma"], ["a", "b"])
    assert [r.index for r in bm.rank(["alpha"])] == [0]
    assert bm.rank(["missing"]) == []
    assert bm.rank([]) == []


class _FixedScores(BM25):
    """Feeds `rank` chosen raw scores, to pin its filter and sort in isolation."""

    def __init__(self, scores, ids):
        super().__init__([""] * len(ids), ids)
        self._scores = scores

    def matched(self, terms):
        return None, np.array([self._scores[d] for d in range(len(self._scores))])


def test_rank_drops_keys_at_or_below_zero_and_sorts_by_key_then_id():
    # §bm25: chunks with score_key(score) <= 0 are dropped ("zero, or below 0.0000005");
    # the rest sort by score_key desc then chunk_id asc, so a lower raw score with the same
    # six-decimal key and a smaller id comes first (§score-key); the raw score is kept.
    ids = ["e", "d", "c", "b", "a", "f"]
    scores = {0: 0.0000004, 1: 0.0000005, 2: 0.0, 3: 0.30000049, 4: 0.3000001, 5: 0.30000051}
    ranked = _FixedScores(scores, ids).rank(["t"])
    assert [ids[r.index] for r in ranked] == ["f", "a", "b", "d"]
    assert [r.score for r in ranked] == [0.30000051, 0.3000001, 0.30000049, 0.0000005]


def test_repeated_query_tokens_are_deduplicated(samples):
    once = bm25_only_search(samples, "loader", 50)
    many = bm25_only_search(samples, "loader LOADER loader", 50)
    assert once == many and once


def test_empty_documents_and_empty_corpus():
    bm = BM25([], [])
    assert bm.avgdl == 0.0 and bm.rank(["x"]) == []
    bm = BM25(["", "x"], ["a", "b"])  # an empty file has BM25 length 0 (§edge-cases)
    assert bm.doc_len.tolist() == [0, 1]
    assert [r.index for r in bm.rank(["x"])] == [1]
    bm = BM25(["", ""], ["a", "b"])  # avgdl = 0: no positive-tf term, no division (§edge-cases)
    assert bm.avgdl == 0.0 and bm.rank(["x"]) == []


def test_bm25_only_search_records():
    idx = build({"a.txt": "user login user", "b.txt": "payment process", "c.txt": "user"})
    res = bm25_only_search(idx, "user", 10)
    assert [r.rank for r in res] == [1, 2]
    # By hand: avgdl = 6/3 = 2; tf-parts (idf ln 1.6 common): a.txt f=2, dl=3 ->
    # 4.4 / (2 + 1.2*(0.25 + 1.125)) = 1.2055; c.txt f=1, dl=1 -> 2.2 / (1 + 1.2*0.625) = 1.2571.
    assert [idx.chunks[r.index].file_path for r in res] == ["c.txt", "a.txt"]
    assert all(r.score > 0 for r in res)
    assert len(bm25_only_search(idx, "user", 1)) == 1
    assert bm25_only_search(idx, "user", 0) == []  # §edge-cases top_k = 0
    assert bm25_only_search(idx, "???", 10) == []  # §bm25-only no tokens
    assert bm25_only_search(idx, "日本語", 10) == []
    assert bm25_only_search(build({}), "user", 10) == []  # §bm25-only no chunks


_VOCAB = ["alpha", "beta", "gamma", "delta", "Alpha", "x", "y1", "z_z"]


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.lists(st.sampled_from(_VOCAB + [" ", "\n", "."]), max_size=25).map(" ".join),
        min_size=1,
        max_size=8,
    ),
    query=st.lists(st.sampled_from(_VOCAB + ["nope"]), min_size=1, max_size=5).map(" ".join),
)
def test_bm25_properties(docs, query):
    ids = [f"{i:016x}"[::-1] for i in range(len(docs))]  # ids not in index order
    bm = BM25(docs, ids)
    terms = list(dict.fromkeys(query.lower().split()))
    ranked = bm.rank(terms)
    assert all(isinstance(r, ChunkScore) for r in ranked)
    assert all(r.score >= 0 and score_key(r.score) > 0 for r in ranked)
    keys = [(-score_key(r.score), ids[r.index]) for r in ranked]
    assert keys == sorted(keys)
    assert len({r.index for r in ranked}) == len(ranked)
    assert [(r.index, r.score) for r in ranked] == ref_bm25_rank(docs, ids, query)
