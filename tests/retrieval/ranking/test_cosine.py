"""Cosine (§cosine) and vector ranking (§vector), plus the `vector` backend's no-token behaviour
(§backends)."""

from __future__ import annotations

import math
import mmap
import shutil
import struct
import sysconfig
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from cce_relevance.numeric import score_key
from cce_relevance.reporting.numbers import format6
from cce_relevance.retrieval.embedding import buckets
from cce_relevance.retrieval.embedding.buckets import BucketCounts, HashEmbeddings
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.ranking.cosine import CosineIndex, _dense_row_sums, _row_sums, cosine_all
from cce_relevance.retrieval.ranking.topk import id_ranks
from cce_relevance.retrieval.search import backends
from cce_relevance.retrieval.search.backends import builtin_backend
from cce_relevance.retrieval.search.hybrid import vector_search
from tests.resident import needs_smaps, resident_kib
from tests.retrieval.corpora import SAMPLES, build, build_dir, opposite_sign_pair, ref_cosine, rows


@pytest.fixture(scope="module")
def samples(upstream):
    return build_dir(upstream / SAMPLES)


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or _bits(a) == _bits(b)


# ---------------------------------------------------------------- cosine_all (§cosine, §numbers)

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


_ANY = st.one_of(_SPARSE, st.sampled_from([math.inf, -math.inf, math.nan, 5e-324, -5e-324]))


@settings(max_examples=300, deadline=None)
@given(
    q=hnp.arrays(np.float64, st.integers(0, 12), elements=_ANY.filter(lambda x: x != 0.0)),
    rows=st.integers(0, 6),
    data=st.data(),
)
def test_row_sums_of_a_block_equal_the_left_to_right_loop(q, rows, data):
    """`cosine._row_sums` (products accumulated along each row of a small block, the sparse
    path's exact cosines) against the plain loop from 0.0, bit for bit: -0.0 products and a
    zero sum's sign, overflow, NaN and infinities included."""
    m = data.draw(hnp.arrays(np.float64, (rows, q.shape[0]), elements=_ANY))
    got = _row_sums(m, q)
    assert got.shape == (rows,) and got.dtype == np.float64
    for r in range(rows):
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


@settings(max_examples=200, deadline=None)
@given(
    q=hnp.arrays(np.float64, st.integers(0, 30), elements=_SPARSE),
    m=hnp.arrays(np.float64, st.tuples(st.integers(0, 8), st.integers(0, 30)), elements=_SPARSE),
    data=st.data(),
)
def test_cosine_all_of_some_rows_is_those_rows_of_all(q, m, data):
    """Rows as positions (a list, in any order, repeats allowed) or as a slice (a file's
    consecutive chunks) give the same doubles as scoring every row."""
    n = m.shape[0]
    positions = data.draw(st.lists(st.integers(0, n - 1), max_size=10)) if n else []
    start = data.draw(st.integers(0, n))
    stop = data.draw(st.integers(start, n))
    with np.errstate(all="ignore"):
        every = cosine_all(q, m)
        by_position = cosine_all(q, m, positions)
        by_slice = cosine_all(q, m, slice(start, stop))
    assert [_bits(x) for x in by_position.tolist()] == [_bits(x) for x in every[positions].tolist()]
    assert [_bits(x) for x in by_slice.tolist()] == [_bits(x) for x in every[start:stop].tolist()]


@settings(max_examples=200, deadline=None)
@given(
    q=hnp.arrays(np.float64, st.integers(0, 40), elements=_ANY),
    m=hnp.arrays(np.float64, st.tuples(st.integers(0, 8), st.integers(0, 40)), elements=_ANY),
    data=st.data(),
)
def test_dense_row_sums_of_some_rows_equal_the_column_loop(q, m, data):
    """`cosine._dense_row_sums` (a gathered block summed along its components, what a dense
    matrix's rows to rescore use) gives the column loop's doubles, infinities, NaNs and the sign of
    zero included, for positions and slices alike."""
    n = m.shape[0]
    positions = np.asarray(
        data.draw(st.lists(st.integers(0, n - 1), max_size=10)) if n else [], dtype=np.intp
    )
    start = data.draw(st.integers(0, n))
    stop = data.draw(st.integers(start, n))
    matrix = np.asfortranarray(m)
    with np.errstate(all="ignore"):
        for rows in (positions, slice(start, stop)):
            got = _dense_row_sums(matrix, rows, q).tolist()
            want = cosine_all(q, matrix, rows).tolist()
            assert len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want, strict=True))


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(alphabet="abcxyz _.", max_size=40), min_size=1, max_size=6),
    st.text("abcxyz ", max_size=30),
)
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
    # §cosine: plain dot product over min(len a, len b); no re-normalisation.
    m = np.array([[1.0, 2.0]])
    assert cosine_all(np.array([3.0, 4.0, 100.0]), m).tolist() == [11.0]
    assert cosine_all(np.array([3.0]), m).tolist() == [3.0]


# ---------------------------------------------------------------- cosine ranking (§vector)


def test_rank_keeps_all_chunks_and_breaks_key_ties_by_id():
    # Query e0 makes each cosine equal to column 0. 0.1234561 and 0.12345649 share the key 123456,
    # so the smaller id wins despite the smaller raw value; negatives and zeros are kept.
    ids = ["d", "c", "b", "a", "e"]
    col = [0.12345649, 0.1234561, -0.5, 0.0, 0.0]
    m = np.zeros((5, 3))
    m[:, 0] = col
    ranked = CosineIndex(m, id_ranks(ids)).top(np.array([1.0, 0.0, 0.0]))
    assert [ids[d] for d, _ in ranked] == ["c", "d", "a", "e", "b"]
    assert [s for _, s in ranked] == [0.1234561, 0.12345649, 0.0, 0.0, -0.5]  # raw scores kept


def test_samples_parse_json_config_text(samples):
    # §hybrid-examples: vector list for `parse json config text`.
    got = rows(samples, vector_search(samples, hash_embed("parse json config text"), 5))
    assert got == [
        ("ruby.rb", 3, 5, "0.666667"),
        ("typescript.ts", 7, 9, "0.250000"),
        ("typescript.ts", 12, 14, "0.223607"),
        ("typescript.ts", 11, 15, "0.188982"),
        ("typescript.ts", 3, 5, "0.144338"),
    ]


def test_samples_zero_ties_by_chunk_id(samples):
    # §vector: cosine ties at 0.000000 are broken by chunk id: 2e676e753a19fde1 before 36ce4add58213d5c.
    ranked = samples.cosine.top(hash_embed("parse json config text"))
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
        want = sorted(
            ((d, ref_cosine(qv, c.embedding)) for d, c in enumerate(samples.chunks)),
            key=lambda p: (-score_key(p[1]), samples.chunk_ids[p[0]]),
        )
        got = samples.cosine.top(qv)
        assert [(d, _bits(s)) for d, s in got] == [(d, _bits(s)) for d, s in want]


def test_negative_cosine_ranks_last():
    # An opposite-sign bucket collision gives a negative cosine; §vector keeps it.
    t1, t2 = opposite_sign_pair()
    idx = build({"a.txt": t2, "b.txt": "unrelated"})
    res = vector_search(idx, hash_embed(t1), 5)
    assert [idx.chunks[r.index].file_path for r in res][-1] == "a.txt"
    assert res[-1].score == -1.0


# ---------------------------------------------------------------- vector backend (§backends, §edge-cases)


@pytest.mark.parametrize("query", ["???", "日本語", "\x1c"])
def test_tokenless_query_returns_k_zero_score_chunks_by_id(samples, query):
    # §backends/§oddity-vector-no-guard: no token guard on the vector backend: the zero vector returns
    # the first k chunks
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


# -------------------------------------------------- CosineIndex.top: float32 selection, exact result


def _full_order(q, m, ids):
    """The reference ranking: every cosine exact, every chunk sorted by (-key, id, index)."""
    scores = [ref_cosine(q, row) for row in m] if len(m) < 300 else cosine_all(q, m).tolist()
    order = sorted(range(len(scores)), key=lambda d: (-score_key(scores[d]), ids[d], d))
    return [(d, _bits(scores[d])) for d in order]


def _top_bits(index, q, limit):
    return [(d, _bits(s)) for d, s in index.top(q, limit)]


def _cluster(rng, q, targets):
    """One row per target whose exact cosine with q lies within ~1e-12 of the target."""
    rows = rng.normal(0, 0.05, (len(targets), q.shape[0]))
    adjust = (np.asarray(targets) - rows @ q) / (q @ q)
    rows += adjust[:, None] * q[None, :]
    return rows + rng.normal(0, 1e-13, rows.shape) * (q != 0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("limit", [1, 10, 30, 60])
def test_top_matches_the_full_exact_sort_at_a_rounding_boundary(seed, limit):
    # 6000 random rows, 20 rows on the tie 0.3000005 (keys 300000 and 300001 interleave within
    # float32's error) and 100 rows spread over the whole key-300000 bucket [0.2999995, 0.3000005)
    # (equal keys, so ids — drawn with repeats — decide, not the raw values): the float32
    # selection must still hand back exactly the reference's first `limit` entries.
    rng = np.random.default_rng(seed)
    q = np.zeros(256)
    q[rng.choice(256, 8, replace=False)] = rng.normal(0, 1, 8)
    q /= np.linalg.norm(q)
    on_tie = _cluster(rng, q, [0.3000005] * 20)
    in_bucket = _cluster(rng, q, 0.2999995 + rng.random(100) * 0.999e-6)
    m = np.vstack([rng.normal(0, 0.03, (6000, 256)), on_tie, in_bucket])
    m = np.asfortranarray(m[rng.permutation(m.shape[0])])
    ids = [f"{x:03x}" for x in rng.integers(0, 4096, m.shape[0])]
    index = CosineIndex(m, id_ranks(ids))
    assert index._approximable(q)  # the float32 path is the one under test
    assert _top_bits(index, q, limit) == _full_order(q, m, ids)[:limit]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [120, 700, 6000])
@pytest.mark.parametrize("limit", [1, 10, 60])
def test_top_of_a_dense_query_is_the_exact_ranking(seed, n, limit):
    # Another embedder's vectors: unit length, every component non-zero, all leaning one way
    # (cosines crowd together), duplicate rows and a cluster on a key boundary. The float32
    # selection (one BLAS product; without the sample below 64 rows per result) must hand back
    # exactly the reference's first `limit` entries.
    rng = np.random.default_rng(seed)
    lean = rng.normal(0, 1, 256)
    q = rng.normal(0, 1, 256) + lean
    q /= np.linalg.norm(q)
    m = rng.normal(0, 1, (n, 256)) + lean
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    m[::9] = m[4]
    m[: n // 6] = _cluster(rng, q, [0.3000005] * (n // 6))  # keys 300000 and 300001 interleave
    m = np.asfortranarray(m[rng.permutation(n)])
    ids = [f"{x:03x}" for x in rng.integers(0, 4096, n)]
    index = CosineIndex(m, id_ranks(ids))
    assert index._approximable(q) and 2 * limit <= n  # the selection is the path under test
    assert _top_bits(index, q, limit) == _full_order(q, m, ids)[:limit]


@pytest.mark.parametrize("scale", [1e-12, 1e-3, 1.0, 1e4])
def test_top_with_unnormalised_rows_and_queries(scale):
    # Ollama-style vectors are not unit length; the error bound scales with |q|·max|c|.
    rng = np.random.default_rng(11)
    m = np.asfortranarray(rng.normal(0, scale, (5000, 64)))
    m[::7] = m[3]  # exact duplicate rows: equal cosines, broken by id
    q = rng.normal(0, 1.0 / scale, 64)
    ids = [f"{i:05d}" for i in rng.permutation(5000)]
    index = CosineIndex(m, id_ranks(ids))
    for limit in (1, 10, 30):
        assert _top_bits(index, q, limit) == _full_order(q, m, ids)[:limit]


def test_top_falls_back_to_exact_for_values_float32_cannot_hold():
    # 1e-30 underflows float32 products and 1e30 overflows them: the exact path must be taken.
    rng = np.random.default_rng(3)
    ids = [f"{i:05d}" for i in range(6000)]
    for extreme in (1e-30, 1e30, math.inf, math.nan):
        m = np.asfortranarray(rng.normal(0, 0.1, (6000, 16)))
        m[17, 3] = extreme
        index = CosineIndex(m, id_ranks(ids))
        q = rng.normal(0, 1, 16)
        assert not index._approximable(q)
        with np.errstate(invalid="ignore"):
            assert _top_bits(index, q, 5) == _full_order(q, m, ids)[:5]
    m = np.asfortranarray(rng.normal(0, 0.1, (6000, 16)))
    index = CosineIndex(m, id_ranks(ids))
    assert index._approximable(np.ones(16))
    assert not index._approximable(np.full(16, 1e-30))
    assert not index._approximable(np.full(16, 1e13))  # |q|·max|c| too large for the key margin


def test_top_of_a_zero_query_is_every_chunk_by_id():
    rng = np.random.default_rng(5)
    m = np.asfortranarray(rng.normal(0, 0.1, (6000, 16)))
    ids = [f"{x:04x}" for x in rng.permutation(6000)]
    index = CosineIndex(m, id_ranks(ids))
    got = index.top(np.zeros(16), 7)
    assert [d for d, _ in got] == sorted(range(6000), key=lambda d: ids[d])[:7]
    assert all(s == 0.0 for _, s in got)


# ---------------------------------------------------------------- sparse hash embeddings


@pytest.fixture(scope="module")
def stdlib_index():
    """Two packages of the installed standard library, built with the hash embedder: large
    enough (thousands of chunks) for the float32 selection."""
    with tempfile.TemporaryDirectory() as scratch:
        stdlib = Path(sysconfig.get_paths()["stdlib"])
        for package in ("email", "json", "asyncio"):
            shutil.copytree(
                stdlib / package, Path(scratch) / package, ignore=shutil.ignore_patterns("__pycache__")
            )
        yield build_index(scratch, workers=1)


def test_sparse_hash_embeddings_give_the_dense_matrix_its_float32_copy_and_its_rows(stdlib_index):
    sparse = stdlib_index.embeddings
    assert sparse is not None
    dense = sparse.dense(np.float64)
    assert dense.tobytes() == stdlib_index.matrix.tobytes() and dense.flags.f_contiguous
    assert sparse.dense(np.float32).tobytes() == np.asfortranarray(dense, dtype=np.float32).tobytes()
    rng = np.random.default_rng(3)
    empty = np.flatnonzero(np.diff(sparse.offsets) == 0)
    for picked in (rng.integers(0, sparse.n_rows, 300), np.arange(0), empty[:5], np.array([7, 7, 0])):
        for columns in (
            np.arange(256),
            np.array([0, 3, 200, 255]),
            np.arange(0),
            np.unique(rng.integers(0, 256, 9)),
        ):
            want = np.ascontiguousarray(dense[picked][:, columns])
            assert sparse.columns(picked, columns).tobytes() == want.tobytes()


@pytest.mark.parametrize("from_counts", [True, False], ids=["count-matrix", "sparse-entries"])
def test_cosine_over_sparse_hash_embeddings_equals_cosine_over_the_matrix(stdlib_index, from_counts):
    """Rows are scored exactly from the count matrix selection reads, or from the sparse entries;
    rankings select from float32 approximations made of the counts: every result is the matrix's."""
    index = stdlib_index
    sparse = CosineIndex.of_hash_embeddings(index.embeddings, index.id_rank, lambda: index.matrix)
    assert sparse._counts is not None and sparse._counts.narrow.dtype == np.int8  # a few rows kept wide
    assert 0 < sparse._counts.wide_rows.shape[0] < 0.05 * len(index.chunks)
    assert sparse._approximate is None  # no float32 copy of the matrix is made
    if not from_counts:
        sparse._norms = None
    dense = CosineIndex(index.matrix, index.id_rank)
    assert sparse._max_row_norm >= dense._max_row_norm
    assert math.isclose(sparse._max_row_norm, dense._max_row_norm, rel_tol=1e-8)
    texts = [c.content.split("\n", 1)[0][:80] for c in index.chunks[::97]] + [
        "",
        "zzzz",
        "def get",
        "import os",
    ]
    queries = [hash_embed(text) for text in texts]
    for q in queries:  # first what never needs the float64 matrix: some rows
        for rows_ in ([5, 3, 900, 3], [-1, 0, -5], slice(40, 90), slice(-30, None, 3)):
            assert sparse.scores(q, rows_).tobytes() == dense.scores(q, rows_).tobytes()
    assert sparse._matrix is None
    for q in queries:
        for limit in (1, 10, 25):  # selected from the counts' approximations
            assert [(d, _bits(s)) for d, s in sparse.top(q, limit)] == [
                (d, _bits(s)) for d, s in dense.top(q, limit)
            ]
    for q in queries:  # then rankings deep enough to score every one of the 1,786 rows
        for limit in (200, None):
            assert [(d, _bits(s)) for d, s in sparse.top(q, limit)] == [
                (d, _bits(s)) for d, s in dense.top(q, limit)
            ]
        assert sparse.scores(q).tobytes() == dense.scores(q).tobytes()


def _rows_of_entries(
    last_bucket: int, counts: st.SearchStrategy[int], *, entries: int, rows: int
) -> st.SearchStrategy[list[list[tuple[int, int]]]]:
    """Rows of (bucket, non-zero count) entries, a bucket possibly given twice (the last count holds)."""
    return st.lists(
        st.lists(st.tuples(st.integers(0, last_bucket), counts.filter(bool)), max_size=entries),
        min_size=1,
        max_size=rows,
    )


def _embeddings_of(rows_of_entries: list[list[tuple[int, int]]]) -> HashEmbeddings:
    lengths, buckets, counts = [], [], []
    for entries in rows_of_entries:
        distinct = dict(entries)  # one count per bucket, in bucket order
        lengths.append(len(distinct))
        buckets.extend(sorted(distinct))
        counts.extend(distinct[b] for b in sorted(distinct))
    return HashEmbeddings.of(
        [BucketCounts(np.array(lengths, np.int64), np.array(buckets, np.uint8), np.array(counts, np.int32))]
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.integers(0, 255), st.integers(-(2**31) + 1, 2**31 - 1).filter(bool)), max_size=12
        ),
        min_size=1,
        max_size=8,
    ),
    st.booleans(),
)
# a bucket given twice: the row keeps its last count, which fits the narrow matrix
@example([[(0, 128), (0, 1)]], False)
def test_counts_of_the_count_matrix_give_every_value(rows_of_entries, small):
    """Each value is a count over its row's norm; the count matrix (int8 or int16, rows with a
    count beyond it kept as int32) divided by the norms gives every value bit for bit — negative
    counts, counts up to 2**31 − 1, rows without entries, every entry of every row."""
    if small:
        rows_of_entries = [[(b, c % 65536 - 32768 or 1) for b, c in entries] for entries in rows_of_entries]
    embeddings = _embeddings_of(rows_of_entries)
    index = CosineIndex.of_hash_embeddings(
        embeddings, id_ranks([str(i) for i in range(len(rows_of_entries))]), lambda: None
    )
    counts = index._counts
    assert counts is not None and counts.narrow.dtype in (np.int8, np.int16)
    limits = np.iinfo(counts.narrow.dtype)
    beyond = [
        i
        for i, e in enumerate(rows_of_entries)
        if any(not limits.min <= c <= limits.max for c in dict(e).values())
    ]
    assert counts.wide_rows.tolist() == beyond and not counts.narrow[beyond].any()
    rows_ = np.arange(len(rows_of_entries))
    picked = np.array(list(reversed(range(len(rows_of_entries)))) * 2)
    whole = np.zeros((len(rows_of_entries), 256), dtype=np.int64)
    for i, entries in enumerate(rows_of_entries):
        for bucket, count in dict(entries).items():
            whole[i, bucket] = count
    columns = np.array([0, 7, 255])
    assert counts.entries(picked, np.arange(256)).tolist() == whole[picked].tolist()
    assert counts.entries(picked, columns).tolist() == whole[picked][:, columns].tolist()
    want = np.ascontiguousarray(embeddings.dense(np.float64)).tobytes()
    assert index._exact_values(rows_, np.arange(256)).tobytes() == want
    assert embeddings.columns(rows_, np.arange(256)).tobytes() == want


@settings(max_examples=100, deadline=None)
@given(_rows_of_entries(255, st.integers(-300, 300), entries=12, rows=12), st.integers(1, 5))
def test_passes_of_any_number_of_rows_make_what_one_pass_makes(rows_of_entries, rows_per_pass):
    """The norms, the dense matrix and the count matrix are worked out a block of rows at a time
    (`buckets._ROWS_PER_PASS`, so that the scratch arrays stay small): blocks of 1 to 5 rows,
    cutting the rows anywhere, give the bytes one block over every row gives."""
    whole = buckets._ROWS_PER_PASS
    try:
        buckets._ROWS_PER_PASS = len(rows_of_entries)
        one = _embeddings_of(rows_of_entries)
        one_matrix = one.count_matrix()
        buckets._ROWS_PER_PASS = rows_per_pass
        cut = _embeddings_of(rows_of_entries)
        cut_matrix = cut.count_matrix()
        assert cut.norms.tobytes() == one.norms.tobytes()
        assert cut.dense(np.float64).tobytes() == one.dense(np.float64).tobytes()
        assert cut.dense(np.float32).tobytes() == one.dense(np.float32).tobytes()
    finally:
        buckets._ROWS_PER_PASS = whole
    assert cut_matrix.narrow.dtype == one_matrix.narrow.dtype
    assert cut_matrix.narrow.tobytes() == one_matrix.narrow.tobytes()
    assert cut_matrix.wide_rows.tolist() == one_matrix.wide_rows.tolist()
    assert cut_matrix.wide.tobytes() == one_matrix.wide.tobytes()


@settings(max_examples=100, deadline=None)
@given(
    _rows_of_entries(15, st.integers(-40_000, 40_000), entries=10, rows=40),
    st.lists(st.floats(-4.0, 4.0, width=32), min_size=16, max_size=16),
    st.integers(1, 3),
)
def test_top_from_the_count_matrix_is_the_exact_ranking(rows_of_entries, components, limit):
    """Rows drawn on 16 buckets with counts of either sign (beyond int16 too), many of them alike:
    the first `limit` chunks selected from the counts' float32 approximations are those of the
    exact full sort, bit for bit (`_near_the_top` is made to run on a corpus this small)."""
    rows_of_entries = rows_of_entries * 4  # ties: every row four times
    embeddings = _embeddings_of(rows_of_entries)
    ids = id_ranks([f"{i:04x}" for i in range(len(rows_of_entries))])
    sparse = CosineIndex.of_hash_embeddings(embeddings, ids, lambda: embeddings.dense(np.float64))
    dense = CosineIndex(embeddings.dense(np.float64), ids)
    query = np.zeros(256)
    query[:16] = components
    if sparse._approximable(query) and len(rows_of_entries) >= 16 * limit:  # the sample holds m rows
        rows = sparse._near_the_top(query, limit)
        exact = dense.scores(query)
        order = np.lexsort((ids, -np.array([score_key(s) for s in exact])))
        assert set(order[:limit].tolist()) <= set(rows.tolist())
    assert [(d, _bits(s)) for d, s in sparse._top(query, limit)] == [
        (d, _bits(s)) for d, s in dense._top(query, limit)
    ]


def test_query_vectors_kept_for_the_backends_are_hash_embed_read_only():
    """vector and hybrid embed each query of a run: the vector is made once and kept (read-only,
    as the backends share it) for the most recent queries."""
    backends._memoised_hash_embed.cache_clear()
    first = backends._memoised_hash_embed("read the config file")
    assert first.tobytes() == hash_embed("read the config file").tobytes() and not first.flags.writeable
    assert backends._memoised_hash_embed("read the config file") is first
    kept = backends._memoised_hash_embed.cache_info().maxsize
    for i in range(kept + 5):
        backends._memoised_hash_embed(f"query {i}")
    assert backends._memoised_hash_embed.cache_info().currsize == kept
    assert backends._memoised_hash_embed("read the config file") is not first  # dropped, made again


@needs_smaps
def test_counts_of_a_mapped_record_leave_memory_once_the_count_matrix_is_made(tmp_path):
    """A kept corpus's bucket counts are views of its mapped record: once selection has its count
    matrix their pages are dropped (they are mapped again, the same bytes, if a full exact
    scoring reads them); and every result is that of the same counts in ordinary memory."""
    rng = np.random.default_rng(5)
    n, per_row = 100_000, 20
    lengths = np.full(n, per_row, dtype=np.int64)
    lengths[::7] = 0  # rows without entries too
    entries = int(lengths.sum())
    rows_buckets = np.arange(per_row) * 12 + rng.integers(0, 12, (n, per_row))  # ascending in a row
    bucket_bytes = rows_buckets[lengths > 0].astype(np.uint8).reshape(-1)
    count_values = rng.integers(-120, 121, entries).astype(np.int32)
    count_values[count_values == 0] = 1
    count_values[::997] *= 300  # some rows beyond int8, kept wide
    path = tmp_path / "record"
    path.write_bytes(count_values.tobytes() + bucket_bytes.tobytes())
    with open(path, "rb") as f:
        mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    whole = np.frombuffer(mapping, dtype=np.uint8)
    mapped = HashEmbeddings.of(
        [BucketCounts(lengths, whole[4 * entries :], whole[: 4 * entries].view(np.int32))]
    )
    held = HashEmbeddings.of([BucketCounts(lengths, bucket_bytes.copy(), count_values.copy())])
    ids = id_ranks([f"{i:06x}" for i in rng.permutation(n)])
    assert resident_kib(mapping) >= 4 * entries // 1024  # the norms read every count
    sparse = CosineIndex.of_hash_embeddings(mapped, ids, lambda: mapped.dense(np.float64))
    assert resident_kib(mapping) < 5 * entries // 1024 // 4  # of 5 bytes an entry, at most a quarter
    plain = CosineIndex.of_hash_embeddings(held, ids, lambda: held.dense(np.float64))
    for seed in range(4):
        query = hash_embed(" ".join(f"word{i}" for i in np.random.default_rng(seed).integers(0, 500, 6)))
        assert [(d, _bits(s)) for d, s in sparse.top(query, 25)] == [
            (d, _bits(s)) for d, s in plain.top(query, 25)
        ]
    query = hash_embed("every row scored exactly")
    assert sparse.scores(query).tobytes() == plain.scores(query).tobytes()  # the counts read again
    assert np.array_equal(mapped.counts, count_values) and np.array_equal(mapped.buckets, bucket_bytes)
