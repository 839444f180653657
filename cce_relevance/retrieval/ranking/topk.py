"""The first m entries of a ranking ordered by (score key desc, chunk id asc), without a full sort.

Every ranking in the pipeline compares six-decimal score keys and breaks ties by chunk id
(§score-key–§sorting). Sorting all chunks with a Python key per query costs seconds on a
whole repository, yet callers only read the first few entries. This module computes the keys
with numpy — the same IEEE operations as `numeric.round_half_away`, so the same integers — then
keeps the entries whose key is above the m-th largest key, fills the remaining places from
the entries tied at that key by smallest chunk id, and sorts only those m. The result is
exactly the first m entries of the full stable sort.

Chunk ids are compared through `id_ranks`: each chunk's position in (chunk id, index) order,
computed once per index, so ties break by id (then index order, for duplicate ids) without
touching strings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cce_relevance.numeric import I64_MAX, I64_MIN

_TWO_POW_63 = 9223372036854775808.0  # the first double past I64_MAX; exactly -I64_MIN


def id_ranks(chunk_ids: Sequence[str]) -> np.ndarray:
    """Position of each chunk in (chunk id, index) order; a stable sort keeps duplicate ids in index order."""
    hex_order = _hex_id_order(chunk_ids)
    order = sorted(range(len(chunk_ids)), key=chunk_ids.__getitem__) if hex_order is None else hex_order
    ranks = np.empty(len(chunk_ids), dtype=np.int64)
    ranks[order] = np.arange(len(chunk_ids), dtype=np.int64)
    return ranks


# Each byte's value as a lowercase hexadecimal digit; 16 (no digit) for every other byte.
_HEX_DIGIT = np.full(256, 16, dtype=np.uint8)
_HEX_DIGIT[np.frombuffer(b"0123456789abcdef", dtype=np.uint8)] = np.arange(16, dtype=np.uint8)


def _hex_id_order(chunk_ids: Sequence[str]) -> np.ndarray | None:
    """The stable sort order of `chunk_ids` when all are lowercase hexadecimal strings of one
    width up to 16 (as `chunk.chunk_id` makes them), from a numpy sort of the numbers they write;
    None for any other ids. Python's sort takes a step per id (tens of milliseconds on a whole
    repository); strings of one width over `0-9a-f` (ascending in code points as in value)
    compare as those numbers do."""
    width = len(chunk_ids[0]) if chunk_ids else 0
    if not 0 < width <= 16 or set(map(len, chunk_ids)) != {width}:
        return None
    joined = "".join(chunk_ids)
    if not joined.isascii():
        return None
    digits = _HEX_DIGIT[np.frombuffer(joined.encode("ascii"), dtype=np.uint8)]
    if (digits == 16).any():
        return None
    padded = np.zeros((len(chunk_ids), 16), dtype=np.uint8)  # leading zero digits up to 16
    padded[:, 16 - width :] = digits.reshape(-1, width)
    # Two digits a byte, eight bytes a big-endian 64-bit number per id.
    packed = np.ascontiguousarray((padded[:, 0::2] << 4) | padded[:, 1::2])
    return np.argsort(packed.view(">u8").ravel().astype(np.uint64), kind="stable")


def score_keys(scores: np.ndarray) -> np.ndarray:
    """`score_key` of every score as int64: round half away from zero of `score * 1e6`, saturating."""
    with np.errstate(over="ignore", invalid="ignore"):  # see `_products` and `_keys_of_products`
        return _keys_of_products(_products(scores))


def _products(scores: np.ndarray) -> np.ndarray:
    """`score * 1e6` element-wise: the same IEEE multiplication as the scalar `score_key`.
    Callers ignore overflow (to ±inf, as in Python): one `np.errstate` for a whole selection, as
    entering one costs more than the arithmetic on a few dozen scores."""
    return np.multiply(scores, 1000000.0, dtype=np.float64)


def _keys_of_products(y: np.ndarray) -> np.ndarray:
    """Round half away from zero, saturating to int64 like Rust's `as i64`; NaN gives 0.

    Each step is one the scalar `round_half_away` takes: `a - floor(a)` is exact for any double,
    so the tie test `>= 0.5` agrees; adding 1 to a floor below 2**53 is exact, and from 2**52 on
    every double is already an integer. Callers ignore the invalid operation `inf - inf`.
    """
    r = np.abs(y)
    a = r.copy()
    np.floor(r, out=r)
    r += (a - r) >= 0.5  # inf - inf is NaN: False, so ±inf stays ±inf
    in_range = r.size == 0 or r.max() < _TWO_POW_63  # magnitudes; a NaN makes it False
    np.copysign(r, y, out=r)
    if in_range:  # the usual case: finite and in range
        return r.astype(np.int64)
    keys = np.zeros(r.shape, dtype=np.int64)
    in_range = (r < _TWO_POW_63) & (r >= -_TWO_POW_63)  # NaN is in neither, so it stays 0
    keys[in_range] = r[in_range].astype(np.int64)
    keys[r >= _TWO_POW_63] = I64_MAX
    keys[r < -_TWO_POW_63] = I64_MIN
    return keys


def top_by_key(
    scores: np.ndarray, id_rank: np.ndarray, limit: int | None = None, positive_only: bool = False
) -> np.ndarray:
    """Indices of the first `limit` entries (all when None) by (score key desc, id rank asc).

    `positive_only` drops entries whose key is not above zero (BM25, §bm25): a key is
    at least 1 exactly when the product `score * 1e6` is at least 0.5 (NaN is not). Only the
    entries near the top are tested when those are found: the first m positive entries are among
    the first m of all (when fewer than m are positive, every one of them is).
    """
    with np.errstate(over="ignore", invalid="ignore"):  # see `_products` and `_keys_of_products`
        return _top_by_key(scores, id_rank, limit, positive_only)


def _top_by_key(
    scores: np.ndarray, id_rank: np.ndarray, limit: int | None, positive_only: bool
) -> np.ndarray:
    y = _products(scores)
    size = y.shape[0]
    m = size if limit is None else min(max(limit, 0), size)
    pool = _near_the_top(y, m) if 0 < m < size else None  # None: every entry
    if positive_only:
        pool = np.flatnonzero(y >= 0.5) if pool is None else pool[y[pool] >= 0.5]
        m = min(m, pool.shape[0])
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    if pool is None:
        if size <= _SORT_ALL_BELOW:  # a few entries (fusion, rescored rows): sorted as they are
            return np.lexsort((id_rank, ~_keys_of_products(y)))[:m]
        pool = np.arange(size)
    pool_keys = _keys_of_products(y[pool])
    if pool.shape[0] > max(m, _SORT_ALL_BELOW):
        pool, pool_keys = _first_m_unordered(pool, pool_keys, id_rank, m)
    # lexsort sorts by its last key first; ~key (= -key - 1, no overflow) ascending is key descending.
    return pool[np.lexsort((id_rank[pool], ~pool_keys))[:m]]


_SORT_ALL_BELOW = 256  # a pool this small is sorted whole: cheaper than partitioning it first


_SAMPLE_STRIDE = 32


def _near_the_top(y: np.ndarray, m: int) -> np.ndarray | None:
    """Positions in `y` (products `score * 1e6`) that include every one of the first m by key,
    found from a sample so that exact keys are computed for few entries; None when not worth it.

    Let t be the m-th largest product of an evenly spaced sample. At least m products are >= t,
    so the m-th largest key is at least round(t), and every entry of the first m has a key at
    least round(t), hence a product at least round(t) - 0.5 >= t - 1 (rounding moves a value by
    at most 0.5 below 2**52). Keeping products >= t - 2 (exact there) keeps all of them. NaN
    (whose key is 0) sorts as the largest in a partition, so a sample holding one has no such t
    (its m-th largest could be a NaN's neighbour above every real value); NaN elsewhere is never
    >= anything, so it is only tolerated when t >= 0.5, where a key of 0 cannot reach the first m.
    """
    sample = y[::_SAMPLE_STRIDE]
    if sample.shape[0] < 4 * m or np.isnan(sample).any():
        return None
    t = np.partition(sample, sample.shape[0] - m)[sample.shape[0] - m]
    if not -4503599627370496.0 < t < 4503599627370496.0:  # ±2**52; False for NaN and ±inf
        return None
    if t < 0.5 and np.isnan(y).any():
        return None
    return np.flatnonzero(y >= t - 2.0)


def _first_m_unordered(
    pool: np.ndarray, pool_keys: np.ndarray, id_rank: np.ndarray, m: int
) -> tuple[np.ndarray, np.ndarray]:
    """The m entries of `pool` that come first in key-then-id order, in no particular order.

    Every entry with a key above the m-th largest key is in; the places left go to the entries
    with exactly that key and the smallest id ranks (there are always enough of them).
    """
    boundary = np.partition(pool_keys, pool_keys.shape[0] - m)[pool_keys.shape[0] - m]
    above = np.flatnonzero(pool_keys > boundary)
    tied = np.flatnonzero(pool_keys == boundary)
    need = m - above.shape[0]
    if tied.shape[0] > need:
        tied = tied[np.argpartition(id_rank[pool[tied]], need - 1)[:need]]
    chosen = np.concatenate((above, tied))
    return pool[chosen], pool_keys[chosen]


class PrefixMemo:
    """Recent rankings by query, each kept deep enough to answer shallower requests by prefix.

    The harness runs every backend over the same queries, and hybrid asks BM25 and the cosine
    index for the same query's ranking that the bm25 and vector backends asked for (deeper: its
    candidate pool is k times the candidate multiplier). A ranking's first m entries are the
    first m of any deeper ranking of the same scores — the order is total — so a ranking made
    `depth` deep answers every request up to that depth; each is made at least MIN_DEPTH deep,
    which costs no more (the selection passes over every score either way). At most `size`
    queries are kept, the oldest dropped first.
    """

    MIN_DEPTH = 32

    def __init__(self, size: int = 2048) -> None:
        self._size = size
        self._kept: dict[object, tuple[int, list[Any]]] = {}

    def ranking(self, key: object, m: int, rank: Callable[[int], list[Any]]) -> list[Any]:
        """The first `m` entries of the ranking `rank(depth)` makes for the query `key`."""
        kept = self._kept.get(key)
        if kept is None or kept[0] < m:
            depth = max(m, self.MIN_DEPTH)
            kept = (depth, rank(depth))
            self._kept.pop(key, None)
            if len(self._kept) >= self._size:
                del self._kept[next(iter(self._kept))]
            self._kept[key] = kept
        return kept[1][:m]
