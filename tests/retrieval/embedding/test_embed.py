"""Hash embedder (§hash-embedder)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.embedding.embed import fnv1a64, hash_embed
from tests.retrieval.corpora import opposite_sign_pair, ref_bucket, ref_embed, ref_fnv1a64


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", 0xCBF29CE484222325),  # spec anchors (§hash-embedder)
        (b"a", 0xAF63DC4C8601EC8C),
        (b"foobar", 0x85944171F73967E8),
    ],
)
def test_fnv1a64_anchors(data, expected):
    assert fnv1a64(data) == expected
    assert ref_fnv1a64(data) == expected  # the test oracle agrees with the spec too


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64))
def test_fnv1a64_property(data):
    h = fnv1a64(data)
    assert 0 <= h < 2**64
    assert h == ref_fnv1a64(data)


def test_embed_shape_and_zero_vector_without_tokens():
    for text in ("", "???", "日本語", "  \n"):
        v = hash_embed(text)
        assert v.shape == (256,)
        assert v.dtype == np.float64
        assert not v.any()


def test_embed_single_token_a():
    # fnv1a64("a") = 0xaf63dc4c8601ec8c: bucket 0x8c = 140, bit 63 set -> -1.0; norm 1.
    v = hash_embed("a")
    expected = np.zeros(256)
    expected[140] = -1.0
    assert np.array_equal(v, expected)
    assert np.array_equal(hash_embed("A"), expected)  # lowercased before hashing
    assert np.array_equal(hash_embed("a a a"), expected)  # -3 / 3


def test_embed_two_tokens_divides_by_norm():
    # "foobar": 0x85944171f73967e8 -> bucket 0xe8 = 232, bit 63 set -> -1.0.
    # "a foobar" -> components -1 and -1, norm sqrt(2); each is DIVIDED by the norm.
    v = hash_embed("a foobar")
    expected = -1.0 / math.sqrt(2.0)
    assert v[140] == expected and v[232] == expected
    assert np.count_nonzero(v) == 2


def test_embed_repeats_count():
    # "a a foobar": (-2, -1) / sqrt(5)
    v = hash_embed("a a foobar")
    assert v[140] == -2.0 / math.sqrt(5.0)
    assert v[232] == -1.0 / math.sqrt(5.0)


def test_embed_divides_rather_than_multiplying_by_reciprocal():
    # §numbers: each component is DIVIDED by the norm. With components (-3, ±1, ±1, ±1) the norm is
    # sqrt(12), and 3 / sqrt(12) differs from 3 * (1 / sqrt(12)) in the last bit.
    toks = ["a", "foobar", "x", "y"]
    assert len({ref_bucket(t)[0] for t in toks}) == 4
    assert 3.0 / math.sqrt(12.0) != 3.0 * (1.0 / math.sqrt(12.0))
    v = hash_embed("a a a foobar x y")
    assert v[140] == -3.0 / math.sqrt(12.0)
    assert v[232] == -1.0 / math.sqrt(12.0)


def test_opposite_sign_collision_cancels():
    # §hash-embedder: distinct tokens can collide in a bucket; with opposite signs they cancel completely.
    t1, t2 = opposite_sign_pair()
    assert ref_bucket(t1)[0] == ref_bucket(t2)[0] and ref_bucket(t1)[1] != ref_bucket(t2)[1]
    assert not hash_embed(f"{t1} {t2}").any()
    v1, v2 = hash_embed(t1), hash_embed(t2)
    assert float(np.dot(v1, v2)) == -1.0


_WORDS = st.sampled_from(["a", "foo", "Bar", "user_id", "x1", "é", "日本", "(", " ", "\n", "hashPassword"])


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=80), st.lists(_WORDS, max_size=40).map("".join)))
def test_embed_bit_identical_to_spec_oracle(text):
    got = hash_embed(text)
    want = np.array(ref_embed(text), dtype=np.float64)
    assert got.tobytes() == want.tobytes()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["alpha", "beta", "gamma", "x"]), min_size=1, max_size=30).map(" ".join))
def test_embed_is_unit_norm_when_tokens_do_not_cancel(text):
    v = hash_embed(text)
    if v.any():
        assert abs(float(np.dot(v, v)) - 1.0) < 1e-12
