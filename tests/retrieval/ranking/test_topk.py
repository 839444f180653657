"""topk.py: vectorised score keys and the first m of a (key desc, chunk id asc) ranking.

Both are checked against the plain definitions: `numeric.score_key` one double at a time, and a
full Python sort of every entry by (-score_key, chunk id, index) — the order the reference uses.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.numeric import I64_MAX, I64_MIN, score_key
from cce_relevance.retrieval.ranking.topk import PrefixMemo, id_ranks, score_keys, top_by_key
from tests.retrieval.corpora import build

# Doubles whose product with 1e6 sits on or next to a rounding tie, at saturation, or special.
_EDGES = [
    0.0,
    -0.0,
    5e-7,
    -5e-7,
    4.999999999999999e-7,
    5.000000000000001e-7,
    1.5e-6,
    -2.5e-6,
    0.1234565,
    0.49999999999999994e-6,
    4503599627.3704955,
    4503599627.370496,
    9223372036854.775,
    9223372036854.777,
    -9223372036854.775,
    -9223372036854.777,
    1e300,
    -1e300,
    1.7976931348623157e308,
    5e-324,
    math.inf,
    -math.inf,
    math.nan,
]
_SCORES = st.one_of(
    st.floats(width=64), st.sampled_from(_EDGES), st.integers(-3000, 3000).map(lambda n: n * 5e-7)
)  # many exact and near ties


def _reference_order(scores: list[float], ids: list[str], positive_only: bool = False) -> list[int]:
    keep = [d for d in range(len(scores)) if not positive_only or score_key(scores[d]) > 0]
    return sorted(keep, key=lambda d: (-score_key(scores[d]), ids[d], d))


@given(st.lists(_SCORES, max_size=300))
@settings(max_examples=300, deadline=None)
def test_score_keys_equal_the_scalar_score_key(scores):
    got = score_keys(np.array(scores, dtype=np.float64))
    assert got.dtype == np.int64
    assert got.tolist() == [score_key(s) for s in scores]


def test_score_keys_edges_one_by_one():
    # Each edge alone (the fast path of an all-in-range array and the saturating path differ).
    for s in _EDGES:
        assert score_keys(np.array([s])).tolist() == [score_key(s)], s
    assert score_keys(np.array([math.inf, -math.inf, math.nan])).tolist() == [I64_MAX, I64_MIN, 0]
    assert score_keys(np.zeros(0)).tolist() == []


def test_id_ranks_order_by_id_then_index():
    assert id_ranks(["b", "a", "c", "a"]).tolist() == [2, 0, 3, 1]
    assert id_ranks([]).tolist() == []


def _plain_id_ranks(ids: list[str]) -> list[int]:
    """Each id's position in a Python sort of (id, index): the oracle of `id_ranks`."""
    ranks = [0] * len(ids)
    for position, i in enumerate(sorted(range(len(ids)), key=lambda i: (ids[i], i))):
        ranks[i] = position
    return ranks


@st.composite
def _hex_like_ids(draw: st.DrawFn) -> list[str]:
    """Ids of one width up to 17, mostly lowercase hexadecimal (the numpy sort's case) and now
    and then not: an uppercase or non-ASCII character, another width, digits at the ends of the
    alphabet; few distinct digits, so duplicates and long common prefixes are common."""
    width = draw(st.integers(1, 17))
    digits = draw(st.sampled_from(["0f", "09af", "0123456789abcdef", "7f8"]))
    ids = draw(st.lists(st.text(alphabet=digits, min_size=width, max_size=width), max_size=60))
    if ids and draw(st.booleans()):
        odd = draw(st.sampled_from(["A", "g", "é", "", "0", "ff", " ", "-"]))
        at = draw(st.integers(0, len(ids) - 1))
        ids[at] = (ids[at] + odd)[-max(width, 1) :] if draw(st.booleans()) else ids[at] + odd
    return ids


@given(_hex_like_ids())
@settings(max_examples=400, deadline=None)
def test_id_ranks_are_the_python_sort_of_ids_then_index(ids):
    assert id_ranks(ids).tolist() == _plain_id_ranks(ids)


def test_id_ranks_of_real_chunk_ids_are_the_python_sort():
    package = Path(__file__).resolve().parents[3] / "cce_relevance" / "retrieval"
    files = {p.relative_to(package).as_posix(): p.read_text(encoding="utf-8") for p in package.rglob("*.py")}
    ids = [c.chunk_id for c in build(files).chunks]
    assert len(set(map(len, ids))) == 1 and len(ids) > 100
    assert id_ranks(ids).tolist() == _plain_id_ranks(ids)
    assert id_ranks([*ids, ids[0], ids[3]]).tolist() == _plain_id_ranks([*ids, ids[0], ids[3]])


_IDS = st.text(alphabet="abc", min_size=1, max_size=2)  # short ids: duplicates are common


@given(
    st.lists(st.tuples(_SCORES, _IDS), max_size=400),
    st.one_of(st.none(), st.integers(-1, 450)),
    st.booleans(),
)
@settings(max_examples=400, deadline=None)
def test_top_by_key_is_the_prefix_of_the_full_sort(entries, limit, positive_only):
    scores = [s for s, _ in entries]
    ids = [i for _, i in entries]
    full = _reference_order(scores, ids, positive_only)
    want = full if limit is None else full[: max(limit, 0)]
    got = top_by_key(np.array(scores, dtype=np.float64), id_ranks(ids), limit, positive_only)
    assert got.tolist() == want


@pytest.mark.parametrize("limit", [1, 3, 10, 30, 100])
@pytest.mark.parametrize("seed", range(4))
def test_top_by_key_on_large_arrays_with_heavy_ties(limit, seed):
    # Large enough for the sampled threshold; values on a coarse grid, so the m-th key is shared
    # by many entries and the id tie-break decides which of them make the cut.
    rng = np.random.default_rng(seed)
    n = 20000
    scores = rng.integers(-40, 40, n) * 2.5e-7 + rng.choice([0.0, 1e-13, -1e-13], n)
    ids = [f"{x:04x}" for x in rng.integers(0, 1 << 16, n)]
    want = _reference_order(scores.tolist(), ids)[:limit]
    assert top_by_key(scores, id_ranks(ids), limit).tolist() == want
    want_pos = _reference_order(scores.tolist(), ids, positive_only=True)[:limit]
    assert top_by_key(scores, id_ranks(ids), limit, positive_only=True).tolist() == want_pos


@pytest.mark.parametrize("positives", [0, 1, 7, 8, 9, 40, 3000])
@pytest.mark.parametrize("with_nan", [False, True])
def test_positive_only_on_large_arrays_with_few_positive_entries(positives, with_nan):
    # The entries near the top of all of them are found first and only those are tested for a
    # positive key: with fewer positive entries than the limit, every one of them must still come
    # back; zeros, tiny values whose key is 0, negatives and NaN (key 0) never.
    rng = np.random.default_rng(positives)
    n = 8192
    scores = rng.choice([0.0, -0.0, 4e-7, -3e-6, -1.0, 4.999999999999999e-7], n)
    scores[rng.choice(n, positives, replace=False)] = rng.integers(1, 30, positives) * 5e-7  # heavy ties
    if with_nan:
        scores[rng.integers(0, n, 50)] = math.nan
    ids = [f"{x:04x}" for x in rng.integers(0, 1 << 16, n)]
    for limit in (1, 8, 32, 100):
        want = _reference_order(scores.tolist(), ids, positive_only=True)[:limit]
        assert top_by_key(scores, id_ranks(ids), limit, positive_only=True).tolist() == want


def test_top_by_key_with_nan_and_infinities_in_a_large_array():
    rng = np.random.default_rng(7)
    scores = rng.normal(0, 1e-6, 5000)
    scores[rng.integers(0, 5000, 300)] = math.nan  # key 0: tied with the zeros
    scores[rng.integers(0, 5000, 5)] = math.inf
    scores[rng.integers(0, 5000, 5)] = -math.inf
    ids = [f"{i:05d}" for i in rng.permutation(5000)]
    for limit in (1, 8, 40, 2600):
        want = _reference_order(scores.tolist(), ids)[:limit]
        assert top_by_key(scores, id_ranks(ids), limit).tolist() == want


def test_an_unsampled_entry_sharing_the_boundary_key_is_found():
    # The sampled threshold t (the best of every 32nd entry) has key 1000 at 1000.4e-6; an entry
    # outside the sample at 999.7e-6 (0.7 below t in key units) rounds to the same key and has
    # the smaller id, so it ranks first: candidate selection must reach a full unit below t.
    scores = np.full(4096, 1e-9)
    scores[0], scores[1] = 1000.4e-6, 999.7e-6
    ids = ["b", "a"] + [f"c{i:04d}" for i in range(4094)]
    assert score_key(scores[0]) == score_key(scores[1]) == 1000
    assert top_by_key(scores, id_ranks(ids), 1).tolist() == [1]
    assert top_by_key(scores, id_ranks(ids), 2).tolist() == [1, 0]


@pytest.mark.parametrize("nans_in_sample", [1, 2, 4, 7])
def test_nan_in_the_sample_does_not_raise_the_threshold(nans_in_sample):
    # NaN sorts above every number in a partition: with k NaNs in the sample, the sample's m-th
    # largest is the (m - k)-th largest real value, too high to guarantee m entries above it.
    scores = np.zeros(1280)
    scores[::32] = np.arange(40) * 10e-6
    scores[0 : 32 * nans_in_sample : 32] = math.nan
    ids = [f"{i:05d}" for i in range(1280)]
    for limit in (1, 5, 9):
        want = _reference_order(scores.tolist(), ids)[:limit]
        assert top_by_key(scores, id_ranks(ids), limit).tolist() == want


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 80)), max_size=60), st.integers(1, 4))
@settings(max_examples=200, deadline=None)
def test_prefix_memo_answers_like_ranking_afresh(requests, size):
    """Whatever the order and depth of requests, each answer is the ranking made for it alone."""

    def ranking(query: int, depth: int) -> list[int]:
        full = sorted(range(40 + 7 * query), key=lambda d: ((d * (query + 3)) % 17, d))  # a fixed total order
        return full[:depth]

    memo = PrefixMemo(size)
    made: list[int] = []

    def rank(query: int, depth: int) -> list[int]:
        made.append(depth)
        return ranking(query, depth)

    for query, m in requests:
        assert memo.ranking(query, m, lambda depth, q=query: rank(q, depth)) == ranking(query, m)
    assert all(depth >= PrefixMemo.MIN_DEPTH for depth in made)
    assert len(memo._kept) <= size
