"""Resampling statistics of paired deltas: the sign-flip permutation test and the bootstrap CI.

The paired t-test assumes the mean delta is roughly normal; with a handful of queries and
deltas that take a few discrete values (MRR moves in steps of 1/k) nobody can check that. The
two methods here need no such assumption, and both are reproducible bit for bit: the same
deltas give the same numbers on every run, in every process, on every machine.

Randomness comes from numpy's PCG64 bit generator seeded through `SeedSequence` with the fixed
seeds below — both are stable across numpy versions by numpy's policy (NEP 19), unlike the
`Generator` distribution methods, which may change. So we read the raw 64-bit words
(`random_raw`) and turn them into signs and indices ourselves. Every call starts a fresh
generator, so a metric's numbers never depend on which metric was computed before it.

Sums are vectorised across patterns, never across deltas, so their rounding is fixed by the
code below and not by numpy's or BLAS's choice of summation order; the tie tolerance of
`_tie_tolerance` absorbs what rounding remains, so a plain Python loop over the same raw
words counts the same patterns.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from cce_relevance.numeric import seq_sum

EXACT_LIMIT = 20  # enumerate every sign pattern when at most this many deltas are non-zero
PERMUTATION_DRAWS = 100_000
PERMUTATION_SEED = 2010  # the year of Phipson & Smyth, whose +1 correction the sampled p uses
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 1979  # the year of Efron's bootstrap paper
_CHUNK_WORDS = 1 << 20  # raw 64-bit words held at once (8 MiB), whatever the number of deltas
_TIE_SLACK = 8.0  # tie tolerance, in multiples of the recursive-summation error bound


@dataclass(frozen=True)
class PermutationTest:
    """A two-sided sign-flip permutation test of the mean delta against zero.

    `changed` is the number of non-zero deltas (flipping the sign of a zero changes nothing).
    `method` is ``"exact"`` when all 2^changed sign patterns were enumerated, ``"sampled"``
    when `patterns` random patterns were drawn instead.
    """

    p: float
    method: Literal["exact", "sampled"]
    changed: int
    patterns: int


def _tie_tolerance(values: np.ndarray) -> float:
    """How far apart two pattern sums may be and still count as equal.

    Sums of the same magnitudes in a different sign pattern differ in their last bits even when
    they are equal in exact arithmetic (0.1 + 0.2 − 0.3 ≠ 0). Recursive summation of m terms errs
    by at most (m − 1)·u·Σ|x_i| with u = ε/2 (Higham, *Accuracy and Stability of Numerical
    Algorithms*, 2nd ed., sec. 4.2); we allow 8·m·ε·Σ|x_i|, comfortably more than two such errors.
    For m ≤ 20 deltas in [−1, 1] that is below 1e-12, while distinct sums of metric values
    (multiples of 1/k, or of 1e-6 in a saved report) lie at least ~1e-6 apart.
    """
    return _TIE_SLACK * values.size * sys.float_info.epsilon * float(np.abs(values).sum())


def _nonzero(deltas: Sequence[float]) -> np.ndarray:
    values = np.asarray(deltas, dtype=np.float64)
    return values[values != 0.0]


def _exact_count(values: np.ndarray, threshold: float) -> tuple[int, int]:
    """Patterns with |sum| ≥ threshold, and the number of patterns, over half the sign patterns.

    A pattern and its negation have the same |sum|, so the first sign is fixed at + and the
    remaining 2^(m−1) sums are built by doubling: after step j the array holds every signed sum
    of x_0..x_j, each added left to right. Memory peaks at a few 2^(m−1)-element arrays (12 MiB
    at m = 20).
    """
    sums = values[:1].copy()
    for x in values[1:]:
        sums = np.concatenate((sums + x, sums - x))
    return int(np.count_nonzero(np.abs(sums) >= threshold)), int(sums.size)


def _byte_tables(values: np.ndarray) -> np.ndarray:
    """For each group of 8 consecutive deltas, the signed sum under each of the 256 sign bytes.

    Row g, column b holds Σ_{i=0..7} ±x_{8g+i}, added left to right, with x_{8g+i} negated when
    bit i of b is set; deltas past the end count as +0.0, which leaves every sum unchanged.
    """
    groups = -(-values.size // 8)
    padded = np.zeros(groups * 8)
    padded[: values.size] = values
    patterns = np.arange(256)
    tables = np.zeros((groups, 256))
    for i in range(8):
        column = padded[i::8][:, None]
        tables += np.where((patterns >> i) & 1 == 1, -column, column)
    return tables


def _sampled_count(values: np.ndarray, threshold: float, draws: int, seed: int) -> int:
    """Patterns among `draws` random ones with |sum| ≥ threshold.

    Draw r takes ⌈m/64⌉ consecutive raw words; bit j of them (bit j mod 64 of word j // 64,
    least significant first) set means delta j is negated. A draw's sum adds, group after
    group, the signed sums of 8 consecutive deltas (`_byte_tables`): one table look-up per 8
    deltas instead of 8 additions. Rows are processed in chunks so memory stays bounded.
    """
    per_draw = -(-values.size // 64)
    tables = _byte_tables(values)
    rows = max(1, _CHUNK_WORDS // per_draw)
    bits = np.random.PCG64(seed)
    hits = 0
    for start in range(0, draws, rows):
        count = min(rows, draws - start)
        words = bits.random_raw(count * per_draw).astype("<u8").view(np.uint8).reshape(count, per_draw * 8)
        total = np.zeros(count)
        for group, table in enumerate(tables):
            total += table[words[:, group]]
        hits += int(np.count_nonzero(np.abs(total) >= threshold))
    return hits


def sign_flip_test(
    deltas: Sequence[float],
    *,
    exact_limit: int = EXACT_LIMIT,
    draws: int = PERMUTATION_DRAWS,
    seed: int = PERMUTATION_SEED,
) -> PermutationTest | None:
    """Two-sided paired permutation test: how often does a random sign pattern look as extreme?

    Under the null hypothesis that head and base are exchangeable per query, each delta is as
    likely to have either sign, so all 2^n patterns of signs are equally likely. The statistic
    is the mean delta; p is the fraction of patterns whose |mean| is at least the observed one
    (Fisher, *The Design of Experiments*, 1935, sec. 21; Good, *Permutation, Parametric and
    Bootstrap Tests of Hypotheses*, 3rd ed., 2005, sec. 3.1). Sums are compared instead of means
    (the same n divides both), within the tolerance of `_tie_tolerance`.

    Zero deltas are dropped first: each pattern of the m non-zero signs occurs 2^(n−m) times
    among all n signs with the same sum, so the fraction is unchanged — and a fixture set where
    most queries did not move can still be enumerated exactly.

    * m ≤ `exact_limit`: every pattern is enumerated and p is exact (a multiple of 2^−(m−1)).
    * otherwise: `draws` patterns come from PCG64(`seed`) and p = (b + 1)/(draws + 1), with b
      the patterns at least as extreme (Phipson & Smyth, *Permutation p-values should never
      be zero*, Stat. Appl. Genet. Mol. Biol. 9(1), 2010): it counts the observed pattern, so
      the p-value is never 0 and the test stays valid.
    * m = 0 (every delta zero): p = 1, exactly; no pattern differs from the observed one.
    * n < 2: None; one query is no sample to test.
    """
    if len(deltas) < 2:
        return None
    values = _nonzero(deltas)
    m = values.size
    if m == 0:
        return PermutationTest(p=1.0, method="exact", changed=0, patterns=1)
    threshold = abs(seq_sum(values.tolist())) - _tie_tolerance(values)
    if m <= exact_limit:
        hits, half = _exact_count(values, threshold)
        return PermutationTest(p=hits / half, method="exact", changed=m, patterns=2 * half)
    hits = _sampled_count(values, threshold, draws, seed)
    return PermutationTest(p=(hits + 1) / (draws + 1), method="sampled", changed=m, patterns=draws)


def _percentile_indices(resamples: int) -> tuple[int, int]:
    """0-based order statistics of the 2.5% and 97.5% empirical quantiles (inverted CDF).

    The q-quantile is the smallest value whose empirical CDF reaches q: order statistic
    ⌈q·B⌉ (Hyndman & Fan, *Sample Quantiles in Statistical Packages*, Am. Stat. 1996,
    definition 1; numpy's ``method="inverted_cdf"``). Integer arithmetic, so 0.025·10000 is
    exactly 250 and not 250.00000000000003.
    """
    return -(-resamples * 25 // 1000) - 1, -(-resamples * 975 // 1000) - 1


def bootstrap_means_of(
    samples: Sequence[Sequence[float]], *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[np.ndarray]:
    """The mean of each of `resamples` bootstrap resamples, in draw order, of each of several
    samples of one size n (the metrics of one comparison).

    Resample r takes n consecutive raw words of PCG64(`seed`); word w picks delta w mod n.
    (The modulo's bias is below n/2^64, far below anything 10,000 resamples could show.)
    Each mean is a left-to-right sum divided by n, like `paired_t`'s mean. Every sample gets
    the same picks, so they are drawn once for all: the random words and their remainders are
    most of the work.

    When few deltas are non-zero in any sample (a change that moved a few queries of many), a
    sum adds only the picks of those, still left to right: it starts at +0.0 and can never
    become −0.0 (x + (−x) rounds to +0.0), so adding a zero of either sign leaves it unchanged
    to the bit, and skipping the zeros gives the same means with a tenth of the additions.
    """
    columns = [np.asarray(deltas, dtype=np.float64) for deltas in samples]
    n = columns[0].size
    if any(c.size != n for c in columns):
        raise ValueError("the samples are of different sizes")
    rows = max(1, _CHUNK_WORDS // n)
    bits = np.random.PCG64(seed)
    size = np.uint64(n)
    means = [np.empty(resamples) for _ in columns]
    moving = np.zeros(n, dtype=bool)
    for values in columns:
        moving |= values != 0.0  # NaN too
    sparse = int(np.count_nonzero(moving)) * _SPARSE_SHARE <= n
    for start in range(0, resamples, rows):
        count = min(rows, resamples - start)
        words = bits.random_raw(count * n).reshape(count, n)
        # w mod n, exactly, as w − ⌊w/n⌋·n: numpy divides by a scalar without a division
        # instruction per word; the positions are below n, so they read as int64 unchanged.
        positions = (words - words // size * size).view(np.int64)
        sums = _sums_of_moving_picks if sparse else _sums_of_picks
        for out, total in zip(means, sums(columns, positions, moving), strict=True):
            out[start : start + count] = total / n
    return means


_SPARSE_SHARE = 8  # add only the non-zero deltas' picks when at most 1 delta in this many is non-zero


def _sums_of_picks(
    columns: Sequence[np.ndarray], positions: np.ndarray, moving: np.ndarray
) -> list[np.ndarray]:
    """Per sample, each row's picks (`positions`, rows × n) summed left to right: the picks are
    laid out one pick column per row of memory, so each step adds one contiguous vector."""
    across = np.ascontiguousarray(positions.T)
    sums = []
    for values in columns:
        picks = values.take(across)
        total = np.zeros(positions.shape[0])
        for column in picks:
            total += column
        sums.append(total)
    return sums


def _sums_of_moving_picks(
    columns: Sequence[np.ndarray], positions: np.ndarray, moving: np.ndarray
) -> list[np.ndarray]:
    """`_sums_of_picks` adding only the picks of `moving` deltas (the others are zeros in every
    sample), in the same order: each row's k-th such pick goes to slot k, and the slots past a
    row's last hold +0.0, which leaves a sum unchanged."""
    count, n = positions.shape
    picked = np.flatnonzero(moving.take(positions))  # row-major: by row, then left to right
    row = picked // n
    slot = np.arange(picked.size) - np.searchsorted(row, row)
    width = int(slot.max()) + 1 if picked.size else 0
    where = positions.reshape(-1).take(picked)
    sums = []
    for values in columns:
        slots = np.zeros((width, count))
        slots[slot, row] = values.take(where)
        total = np.zeros(count)
        for column in slots:
            total += column
        sums.append(total)
    return sums


def bootstrap_ci95(
    deltas: Sequence[float], *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float] | None:
    """Percentile bootstrap 95% confidence interval of the mean delta; None for n < 2.

    Resample the n deltas with replacement `resamples` times and take the 2.5% and 97.5%
    empirical quantiles of the resample means (Efron, *Bootstrap methods: another look at the
    jackknife*, Ann. Statist. 7(1), 1979; Efron & Tibshirani, *An Introduction to the
    Bootstrap*, 1993, sec. 13.3). Unlike the t interval it is not symmetric around the mean and
    never extends past the most extreme delta; at small n it is somewhat too narrow.
    """
    return bootstrap_ci95_of([deltas], resamples=resamples, seed=seed)[0]


def bootstrap_ci95_of(
    samples: Sequence[Sequence[float]], *, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> list[tuple[float, float] | None]:
    """`bootstrap_ci95` of each of several samples, those of one size resampled together
    (`bootstrap_means_of`)."""
    by_size: dict[int, list[int]] = {}
    for i, deltas in enumerate(samples):
        by_size.setdefault(len(deltas), []).append(i)
    low, high = _percentile_indices(resamples)
    intervals: list[tuple[float, float] | None] = [None] * len(samples)
    for size, members in by_size.items():
        if size < 2:
            continue
        for i, means in zip(
            members,
            bootstrap_means_of([samples[i] for i in members], resamples=resamples, seed=seed),
            strict=True,
        ):
            means.sort()
            intervals[i] = (float(means[low]), float(means[high]))
    return intervals
