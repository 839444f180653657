"""Cosine ranking over stored embeddings (§cosine, §vector).

The reference sums `q[i] * c[i]` left to right over the components. Components where the query
is zero add exactly ±0.0 and never change a partial sum (which starts at +0.0 and so is never
-0.0), so summing only over the query's non-zero components, in component order, gives the same
doubles; doing that column by column with numpy keeps the sequential order per chunk while
working on all chunks at once. The index keeps its embedding matrix column-major, so each
column is one contiguous read.

Ranking needs those exact doubles only near the top. `CosineIndex.top` therefore first scores
every chunk in float32 (half the memory traffic), bounds how far those approximations can be
from the exact doubles, and rescores exactly every chunk whose approximation is close enough to
the m-th best that its six-decimal key could place it among the first m; the rest provably
cannot. The result is the exact ranking's first m entries, bit for bit.

A dense query (another embedder's: every component non-zero) reads every column, so over a
dense matrix the float32 approximations are one BLAS matrix-vector product (the error bound
holds for any order of summation), and the few rows to rescore are gathered as one block whose
products are summed in component order (`_dense_row_sums`) instead of 256 gathers of a column.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from cce_relevance.memory_pages import release_array
from cce_relevance.reference import EMBED_DIM
from cce_relevance.retrieval.embedding.buckets import CountMatrix, HashEmbeddings
from cce_relevance.retrieval.ranking.topk import PrefixMemo, top_by_key

_F32_UNIT = 2.0**-24  # unit roundoff of float32
_F64_UNIT = 2.0**-53
# Magnitudes for which float32 neither overflows nor underflows in any product or sum of
# up to 256 products: then every float32 operation has relative error at most _F32_UNIT.
_SAFE_MAX = 1e18
_SAFE_MIN = 1e-18
# The m-th best of every 16th approximation bounds the m-th best from below. A sparser sample is
# cheaper to partition but leaves more rows above its bound to narrow down (the stride is chosen
# by measurement: docs/dev/performance.md).
_SAMPLE_STRIDE = 16


def cosine_all(
    query: np.ndarray, matrix: np.ndarray, rows: Sequence[int] | np.ndarray | slice | None = None
) -> np.ndarray:
    """Sequential-order dot products of `query` with every row of `matrix`, or with the given
    `rows` only (exact, see above); only the query's non-zero columns are read. A slice of rows
    (a file's chunks are consecutive) reads each column as one view instead of gathering it."""
    picked: slice | np.ndarray = (
        slice(None) if rows is None else rows if isinstance(rows, slice) else np.asarray(rows, dtype=np.intp)
    )
    n_rows = len(range(*picked.indices(matrix.shape[0]))) if isinstance(picked, slice) else picked.shape[0]
    scores = np.zeros(n_rows, dtype=np.float64)
    if query.size == 0 or n_rows == 0:
        return scores
    width = min(query.shape[0], matrix.shape[1])
    products = np.empty(n_rows, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf, inf - inf: IEEE, like the reference
        for i in np.flatnonzero(query[:width]):
            np.multiply(matrix[picked, i], query[i], out=products)
            np.add(scores, products, out=scores)
    return scores


def _row_sums(values: np.ndarray, query: np.ndarray) -> np.ndarray:
    """`cosine_all(query, values)` when every component of `query` is non-zero: each row's
    products summed left to right, for a block of a few rows at once. `np.add.accumulate` along a
    row adds one product after another, as the column loop does, except that it starts from the
    first product instead of from 0.0: the two differ only where every partial sum is a zero and
    the first is -0.0, which the final `+ 0.0` makes 0.0 as `0.0 + -0.0` is (any other sum is
    unchanged by adding 0.0)."""
    if values.shape[0] == 0 or values.shape[1] == 0:
        return np.zeros(values.shape[0], dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf, inf - inf: IEEE, like the reference
        return np.add.accumulate(values * query, axis=1)[:, -1] + 0.0


def _dense_row_sums(matrix: np.ndarray, rows: np.ndarray | slice, query: np.ndarray) -> np.ndarray:
    """`cosine_all(query, matrix, rows)`: the rows' entries at the query's non-zero components
    gathered as one block, multiplied, and the products added component after component along
    the block's first axis (`np.add.accumulate`, one elementwise add per component, for all rows
    at once); as in `_row_sums`, the sum starts from the first product, and `+ 0.0` makes the
    only difference from the column loop (a -0.0 sum of zeros) its 0.0."""
    read = np.flatnonzero(query[: min(query.shape[0], matrix.shape[1])])
    picked = matrix[rows] if isinstance(rows, slice) else matrix[rows.astype(np.intp, copy=False)]
    if picked.shape[0] == 0 or read.shape[0] == 0:
        return np.zeros(picked.shape[0], dtype=np.float64)
    products = np.ascontiguousarray((picked[:, read] * query[read]).T)  # components × rows
    with np.errstate(over="ignore", invalid="ignore"):  # overflow to inf, inf - inf: IEEE, like the reference
        return np.add.accumulate(products, axis=0)[-1] + 0.0


def _within_safe_range(values: np.ndarray) -> bool:
    """All finite, and every non-zero magnitude in [_SAFE_MIN, _SAFE_MAX]."""
    magnitudes = np.abs(values[values != 0])
    return bool(magnitudes.size == 0 or (magnitudes.max() <= _SAFE_MAX and magnitudes.min() >= _SAFE_MIN))


class CosineIndex:
    """The embedding matrix prepared for exact top-m cosine ranking (see the module docstring).

    Over a dense matrix (a loaded store, another embedder), or over hash embeddings kept sparse
    (`of_hash_embeddings`): then selection reads the bucket counts themselves, the exact doubles
    of the few rows that need them are made from those counts as a small block, and the float64
    matrix is only asked for when every row must be scored exactly (a small corpus, an unusual
    query)."""

    _matrix: np.ndarray | None  # set by _setup: None until known
    _sparse: HashEmbeddings | None
    _dense: Callable[[], np.ndarray] | None
    _approximate: np.ndarray | None

    def __init__(self, matrix: np.ndarray, id_rank: np.ndarray) -> None:
        self._setup(matrix.shape[0], matrix.shape[1], id_rank)
        self._matrix = matrix
        if matrix.size and all(_within_safe_range(matrix[:, i]) for i in range(matrix.shape[1])):
            self._approximate = np.asfortranarray(matrix, dtype=np.float32)
            squares = np.zeros(matrix.shape[0], dtype=np.float64)
            for i in range(matrix.shape[1]):
                squares += matrix[:, i] * matrix[:, i]
            # Rounding in the sum of squares is far below the 1e-9 margin added here.
            self._max_row_norm = math.sqrt(float(squares.max())) * (1.0 + 1e-9)

    @classmethod
    def of_hash_embeddings(
        cls, embeddings: HashEmbeddings, id_rank: np.ndarray, dense: Callable[[], np.ndarray]
    ) -> CosineIndex:
        """Over sparse hash embeddings; `dense()` gives their float64 matrix when it is needed.

        Selection reads a column-major matrix of the bucket counts themselves (int8 or int16, the
        few rows with a count too large for it kept apart as int32: a quarter or half of a
        float32 copy's bytes) and each row's inverse norm; the rows to rescore take their exact
        doubles from the same counts."""
        index = cls.__new__(cls)
        index._setup(embeddings.n_rows, EMBED_DIM, id_rank)
        index._sparse, index._dense = embeddings, dense
        norms = embeddings.norms
        if index._n and (not norms.size or float(norms.max()) * _SAFE_MIN <= 1.0):
            # Every value is a count c over its row's norm N >= |c| >= 1: |c / N| <= 1, and
            # |c / N| >= 1 / N >= 1 / max N >= _SAFE_MIN, the range float32 holds safely.
            index._counts = embeddings.count_matrix()
            # Kept corpora's counts are views of their mapped record, which selection no longer
            # reads: their pages leave the resident set, read again only for a full exact scoring.
            release_array(embeddings.buckets)
            release_array(embeddings.counts)
            index._norms = np.where(norms == 0.0, 1.0, norms)  # a row without entries: 0 / 1 is its 0.0
            index._inverse_norms = (1.0 / index._norms).astype(np.float32)
            # Each value is c / N rounded (relative 2**-53), and N is the rounded square root of
            # the exact Σc²: a row's Σ(c / N)² is at most 1 + 2**-50 (0 without entries).
            index._max_row_norm = (1.0 + 2.0**-50) * (1.0 + 1e-9) if bool((norms > 0.0).any()) else 0.0
        return index

    def _setup(self, n: int, width: int, id_rank: np.ndarray) -> None:
        self._n, self._width = n, width
        self.id_rank = id_rank
        self._matrix = None
        self._sparse = None
        self._dense = None
        self._approximate = None
        self._max_row_norm = 0.0
        self._counts: CountMatrix | None = None  # hash embeddings' bucket counts, column-major
        self._norms: np.ndarray | None = None  # their rows' norms (1.0 for a row without entries)
        self._inverse_norms: np.ndarray | None = None  # float32 1 / norm, what selection multiplies by
        self._rankings = PrefixMemo()

    @property
    def matrix(self) -> np.ndarray:
        """The float64 matrix (made on first use over hash embeddings)."""
        if self._matrix is None:
            assert self._dense is not None
            self._matrix = self._dense()
        return self._matrix

    def scores(self, query: np.ndarray, rows: Sequence[int] | np.ndarray | slice | None = None) -> np.ndarray:
        """Exact cosines with every chunk, or with `rows` only (positions, or a slice of them)."""
        if rows is not None and self._sparse is not None and self._matrix is None:
            if isinstance(rows, slice):
                positions = np.arange(*rows.indices(self._n))
            else:  # negative positions count from the end, as in indexing the matrix
                positions = np.asarray(rows, dtype=np.int64)
                positions = np.where(positions < 0, positions + self._n, positions)
            # Only the query's non-zero components are read, in order: the same products and sums.
            read = np.flatnonzero(query[: self._width])
            return _row_sums(self._exact_values(positions, read), query[read])
        if rows is not None and self._sparse is None:
            return _dense_row_sums(self.matrix, rows if isinstance(rows, slice) else np.asarray(rows), query)
        return cosine_all(query, self.matrix, rows)

    def _exact_values(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """The float64 matrix's entries at `rows` and `columns`, from the hash embeddings: each
        is the row's bucket count over its norm, the very division that made the entry, and the
        counts of those rows are a small gather of the count matrix selection reads anyway."""
        assert self._sparse is not None
        if self._counts is None or self._norms is None:
            return self._sparse.columns(rows, columns)
        values = self._counts.entries(rows, columns).astype(np.float64)
        values /= self._norms[rows][:, None]
        return values

    def top(self, query: np.ndarray, limit: int | None = None) -> list[tuple[int, float]]:
        """The first `limit` (default: all) chunks by (cosine key desc, chunk id asc), zero and
        negative cosines included, as (chunk index, exact cosine) pairs."""
        if limit is None:
            return self._top(query, None)
        key = (query.dtype.str, query.shape, query.tobytes())
        return self._rankings.ranking(key, max(limit, 0), lambda depth: self._top(query, depth))

    def _top(self, query: np.ndarray, limit: int | None) -> list[tuple[int, float]]:
        n = self._n
        m = n if limit is None else min(max(limit, 0), n)
        if m == 0:
            return []
        # Over a dense matrix the approximations cost one matrix-vector product, worth it at any
        # size that leaves rows out; from bucket counts, where rows are many (see _near_the_top).
        selects = n >= 4 * m * _SAMPLE_STRIDE or (self._sparse is None and 2 * m <= n)
        if selects and self._approximable(query):
            rows = self._near_the_top(query, m)
            exact = self.scores(query, rows)
            order = top_by_key(exact, self.id_rank[rows], m)
            return list(zip(rows[order].tolist(), exact[order].tolist(), strict=True))
        exact = self.scores(query)
        order = top_by_key(exact, self.id_rank, m)
        return list(zip(order.tolist(), exact[order].tolist(), strict=True))

    def _approximable(self, query: np.ndarray) -> bool:
        return (
            (self._approximate is not None or self._counts is not None)
            and query.ndim == 1
            and query.size > 0
            and _within_safe_range(query)
            and math.sqrt(float(np.dot(query, query))) * self._max_row_norm < 1e12
        )

    def _near_the_top(self, query: np.ndarray, m: int) -> np.ndarray:
        """Rows (ascending) that include every row of the exact ranking's first m.

        With S the true dot product, s the reference's double and a the float32 approximation,
        |a - S| <= γ32(n+3)·Σ|q_i c_i| and |s - S| <= γ64(n+1)·Σ|q_i c_i| for n non-zero query
        components (Higham, "Accuracy and Stability of Numerical Algorithms", 2002, sec. 3.1; the +3
        covers rounding q and c to float32; from bucket counts it is γ32(n+5),
        `_approximations_from_counts`), and Σ|q_i c_i| <= |q|·max|c| (Cauchy–Schwarz); so
        |a - s| <= e. If m rows have a >= t, the m-th best exact cosine s_m is >= t - e. A row of
        the first m has a key at least key(s_m), so its s is at least s_m - 1e-6 less the error
        of the products x·1e6 (relative 2**-53, bounded via B = |q|·max|c|), and its a at least
        t - 2e - 1e-6 - 2**-50·B. Every row with a at or above that threshold is kept.
        """
        width = min(query.shape[0], self._width)
        nonzero = np.flatnonzero(query[:width])
        n = nonzero.shape[0]
        if self._counts is not None:
            approx = self._approximations_from_counts(query, nonzero)
            roundings = n + 5
        else:
            approx = self._approximations(query, nonzero)
            roundings = n + 3
        bound = math.sqrt(float(np.dot(query, query))) * (1.0 + 1e-9) * self._max_row_norm
        gamma32 = roundings * _F32_UNIT / (1.0 - roundings * _F32_UNIT)
        gamma64 = (n + 1) * _F64_UNIT / (1.0 - (n + 1) * _F64_UNIT)
        error = (gamma32 + gamma64) * bound * (1.0 + 1e-6)
        sample = approx[::_SAMPLE_STRIDE] if approx.shape[0] >= 4 * m * _SAMPLE_STRIDE else approx
        rows = np.flatnonzero(approx >= _cut(_mth_largest(sample, m), error, bound))
        if rows.shape[0] > 8 * m:  # the sample's m-th best was loose: use the true m-th best
            rows = rows[approx[rows] >= _cut(_mth_largest(approx[rows], m), error, bound)]
        return rows

    def _approximations(self, query: np.ndarray, nonzero: np.ndarray) -> np.ndarray:
        """Each row's float32 dot product with the query from the float32 copy: column by column
        for a sparse query, one BLAS product for a dense one (zero components add exact zeros, so
        the bound of `_near_the_top` holds in any order the product sums)."""
        matrix = self._approximate
        assert matrix is not None
        if nonzero.shape[0] == 0:
            return np.zeros(matrix.shape[0], dtype=np.float32)
        if 4 * nonzero.shape[0] >= matrix.shape[1]:
            dense = np.zeros(matrix.shape[1], dtype=np.float32)
            dense[nonzero] = query[nonzero]
            product: np.ndarray = matrix @ dense
            return product
        # the first product is the first partial sum (0 + p is p, up to the sign of a zero)
        approx = matrix[:, nonzero[0]] * np.float32(query[nonzero[0]])
        products = np.empty(matrix.shape[0], dtype=np.float32)
        for i in nonzero[1:]:
            np.multiply(matrix[:, i], np.float32(query[i]), out=products)
            np.add(approx, products, out=approx)
        return approx

    def _approximations_from_counts(self, query: np.ndarray, nonzero: np.ndarray) -> np.ndarray:
        """Each row's float32 (Σ q_i · c_i) · (1 / N) from the bucket counts c, column by column.

        Against the exact Σ q_i · c_i / N each term's path has at most n + 5 float32 roundings for
        n non-zero components: q_i, c_i (exact below 2**24), the product, at most n − 1 sums, 1 / N
        (a float64 quotient rounded to float32, which two float32 roundings cover) and the last
        product; so `_near_the_top`'s bound holds with γ32(n + 5)."""
        counts, inverse = self._counts, self._inverse_norms
        assert counts is not None and inverse is not None
        approx = _column_sums(counts.narrow, query, nonzero)
        if counts.wide_rows.shape[0]:  # zeros in the narrow matrix: their sums are made alike
            approx[counts.wide_rows] = _column_sums(counts.wide, query, nonzero)
        approx *= inverse
        return approx


def _column_sums(counts: np.ndarray, query: np.ndarray, nonzero: np.ndarray) -> np.ndarray:
    """Each row's float32 Σ q_i · c_i over the `nonzero` components, in order, from 0.0."""
    approx = np.zeros(counts.shape[0], dtype=np.float32)
    products = np.empty(counts.shape[0], dtype=np.float32)
    for i in nonzero:
        np.multiply(counts[:, i], np.float32(query[i]), out=products)
        np.add(approx, products, out=approx)
    return approx


def _mth_largest(values: np.ndarray, m: int) -> float:
    return float(np.partition(values, values.shape[0] - m)[values.shape[0] - m])


def _cut(t: float, error: float, bound: float) -> np.float32:
    """The float32 threshold `t - 2e - 1e-6 - 2**-50·B` of `_near_the_top`, rounded down."""
    # The slack covers rounding in this float64 arithmetic itself.
    slack = (abs(t) + 2.0 * error + bound) * 2.0**-49 + 1e-12
    threshold = t - 2.0 * error - 1e-6 - bound * 2.0**-50 - slack
    cut = np.float32(threshold)
    if float(cut) > threshold:
        cut = np.nextafter(cut, np.float32(-np.inf))
    return cut
