"""Cosine (§8.3) and vector ranking (§10), plus the `vector` backend's no-token behaviour (§13)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cce_relevance.numeric import score_key
from cce_relevance.reporting.numbers import format6
from cce_relevance.retrieval.backends import builtin_backend
from cce_relevance.retrieval.embed import hash_embed
from cce_relevance.retrieval.hybrid import vector_search
from cce_relevance.retrieval.vector import cosine_all, rank_by_cosine

from .corpora import SAMPLES, build, build_dir, opposite_sign_pair, ref_cosine, rows


@pytest.fixture(scope="module")
def samples(upstream):
    return build_dir(upstream / SAMPLES)


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or _bits(a) == _bits(b)


# ---------------------------------------------------------------- cosine_all (§8.3, §2.4)

_FINITE = st.floats(allow_nan=False, allow_infinity=False, width=64)
_SPARSE = st.one_of(st.just(0.0), st.just(-0.0), _FINITE, st.sampled_from([1.0, -1.0, 0.5, 1e-300, 1e300]))


@settings(max_examples=200, deadline=None)
@given(
    q=hnp.arrays(np.float64, st.integers(0, 40), elements=_FINITE),
    m=hnp.arrays(np.float64, st.tuples(st.integers(0, 6), st.integers(0, 40)), elements=_FINITE),
)
def test_cosine_all_equals_left_to_right_loop_dense(q, m):
    with np.errstate(all="ignore"):  # overflow to inf / inf - inf is part of the contract
        got = cosine_all(q, m)
    assert got.shape == (m.shape[0],)
    for r in range(m.shape[0]):
        assert _same(float(got[r]), ref_cosine(q, m[r]))


@settings(max_examples=200, deadline=None)
@given(
    q=hnp.arrays(np.float64, st.integers(0, 300), elements=_SPARSE),
    m=hnp.arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(0, 300)), elements=_SPARSE),
)
def test_cosine_all_equals_left_to_right_loop_sparse(q, m):
    with np.errstate(all="ignore"):
        got = cosine_all(q, m)
    for r in range(m.shape[0]):
        assert _same(float(got[r]), ref_cosine(q, m[r]))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="abcxyz _.", max_size=40), min_size=1, max_size=6),
       st.text("abcxyz ", max_size=30))
def test_cosine_all_on_hash_embeddings(texts, query):
    m = np.stack([hash_embed(t) for t in texts])
    q = hash_embed(query)
    got = cosine_all(q, m)
    for r in range(len(texts)):
        assert _same(float(got[r]), ref_cosine(q, m[r]))


def test_cosine_empty_vectors_give_zero():
    m = np.ones((3, 4))
    assert cosine_all(np.array([], dtype=np.float64), m).tolist() == [0.0, 0.0, 0.0]
    assert cosine_all(np.ones(4), np.zeros((0, 4))).shape == (0,)


def test_cosine_uses_min_length():
    # §8.3: plain dot product over min(len a, len b); no re-normalisation.
    m = np.array([[1.0, 2.0]])
    assert cosine_all(np.array([3.0, 4.0, 100.0]), m).tolist() == [11.0]
    assert cosine_all(np.array([3.0]), m).tolist() == [3.0]


# ---------------------------------------------------------------- rank_by_cosine (§10)


def test_rank_keeps_all_chunks_and_breaks_key_ties_by_id():
    # Query e0 makes each cosine equal to column 0. 0.1234561 and 0.12345649 share the key 123456,
    # so the smaller id wins despite the smaller raw value; negatives and zeros are kept.
    ids = ["d", "c", "b", "a", "e"]
    col = [0.12345649, 0.1234561, -0.5, 0.0, 0.0]
    m = np.zeros((5, 3))
    m[:, 0] = col
    ranked = rank_by_cosine(np.array([1.0, 0.0, 0.0]), m, ids)
    assert [ids[d] for d, _ in ranked] == ["c", "d", "a", "e", "b"]
    assert [s for _, s in ranked] == [0.1234561, 0.12345649, 0.0, 0.0, -0.5]  # raw scores kept


def test_samples_parse_json_config_text(samples):
    # §11.14: vector list for `parse json config text`.
    got = rows(samples, vector_search(samples, hash_embed("parse json config text"), 5))
    assert got == [
        ("ruby.rb", 3, 5, "0.666667"),
        ("typescript.ts", 7, 9, "0.250000"),
        ("typescript.ts", 12, 14, "0.223607"),
        ("typescript.ts", 11, 15, "0.188982"),
        ("typescript.ts", 3, 5, "0.144338"),
    ]


def test_samples_zero_ties_by_chunk_id(samples):
    # §10: cosine ties at 0.000000 are broken by chunk id: 2e676e753a19fde1 before 36ce4add58213d5c.
    ranked = rank_by_cosine(hash_embed("parse json config text"), samples.matrix, samples.chunk_ids)
    order = [samples.chunk_ids[d] for d, _ in ranked]
    scores = {samples.chunk_ids[d]: s for d, s in ranked}
    assert format6(scores["2e676e753a19fde1"]) == format6(scores["36ce4add58213d5c"]) == "0.000000"
    assert order.index("2e676e753a19fde1") < order.index("36ce4add58213d5c")
    assert len(order) == 21
    keys = [(-score_key(s), samples.chunk_ids[d]) for d, s in ranked]
    assert keys == sorted(keys)


def test_rank_matches_spec_oracle_on_samples(samples):
    for q in ["loader", "struct node", "zzzz", "config path text"]:
        qv = hash_embed(q)
        want = sorted(((d, ref_cosine(qv, c.embedding)) for d, c in enumerate(samples.chunks)),
                      key=lambda p: (-score_key(p[1]), samples.chunk_ids[p[0]]))
        got = rank_by_cosine(qv, samples.matrix, samples.chunk_ids)
        assert [(d, _bits(s)) for d, s in got] == [(d, _bits(s)) for d, s in want]


def test_negative_cosine_ranks_last():
    # An opposite-sign bucket collision gives a negative cosine; §10 keeps it.
    t1, t2 = opposite_sign_pair()
    idx = build({"a.txt": t2, "b.txt": "unrelated"})
    res = vector_search(idx, hash_embed(t1), 5)
    assert [idx.chunks[r.index].file_path for r in res][-1] == "a.txt"
    assert res[-1].score == -1.0


# ---------------------------------------------------------------- vector backend (§13, §15)


@pytest.mark.parametrize("query", ["???", "日本語", "\x1c"])
def test_tokenless_query_returns_k_zero_score_chunks_by_id(samples, query):
    # §13/§17.8: no token guard on the vector backend: the zero vector returns the first k chunks
    # by chunk id, all scoring 0. ("\x1c" is not whitespace to Rust, so the query is not empty.)
    search = builtin_backend("vector", samples)
    hits = search(query, 4)
    assert [h.chunk_id for h in hits] == sorted(samples.chunk_ids)[:4]
    assert [h.rank for h in hits] == [1, 2, 3, 4]
    assert all(h.score == 0.0 for h in hits)
    assert builtin_backend("bm25", samples)(query, 4) == []
    assert builtin_backend("hybrid", samples)(query, 4) == []


def test_vector_returns_all_chunks_when_k_is_large(samples):
    assert len(vector_search(samples, hash_embed("loader"), 1000)) == 21
    assert len(builtin_backend("vector", samples)("loader", 1000)) == 21
