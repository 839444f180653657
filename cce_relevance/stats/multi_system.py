"""More than two systems: every pair tested, corrected for multiplicity, and a randomised Tukey HSD.

With s systems there are s(s − 1)/2 pairs, and as many chances to be lucky. Two answers are given
per metric, both over the queries every system scored:

* **Pairwise**, per pair (A, B): the mean delta B − A, W/L/T, the paired t-test's p, the
  sign-flip permutation p (`resampling`), and that p adjusted by Holm across the pairs of the
  metric (`multiplicity`): the family is "all pairs of this metric".
* **Randomised Tukey HSD** (Carterette, *Multiple testing in statistical analysis of
  systems-based information retrieval experiments*, ACM TOIS 30(1), 2012, section 4.2): under the null
  hypothesis that the systems are interchangeable, their scores on each query could have come
  out in any order among them. A trial shuffles every query's s scores among the systems and
  records the range of the system means, max − min; a pair's p is the share of trials whose
  range is at least that pair's |mean difference|. Because each pair is held against the
  largest difference the null produces among *all* systems, the p-values control the
  family-wise error over every pair at once (Tukey's honestly significant difference).

The trials are PCG64(HSD_SEED) draws: trial t reads s raw 64-bit words per query, query after
query, and the query's scores are assigned in the order of a stable argsort of those words (a
uniformly random permutation; equal words, at 2^−64, keep system order). p = (b + 1)/(B + 1),
counting the observed assignment (Phipson & Smyth 2010), so no p is 0. Pair differences and
trial ranges count as equal within the summation tolerance of `resampling._tie_tolerance`.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cce_relevance.numeric import seq_sum
from cce_relevance.stats.multiplicity import holm_adjust
from cce_relevance.stats.paired import paired_t, win_loss_tie
from cce_relevance.stats.resampling import sign_flip_test

HSD_TRIALS = 10_000
HSD_SEED = 2012  # Carterette's year, as the other seeds name their sources
_CHUNK_WORDS = 1 << 20
_TIE_SLACK = 8.0


@dataclass(frozen=True)
class PairResult:
    """One pair (a, b) of one metric: b − a, how it splits, and its four p-values (None: n < 2)."""

    a: str
    b: str
    mean_delta: float
    wins: int
    losses: int
    ties: int
    t_p: float | None
    perm_p: float | None
    holm_p: float | None
    hsd_p: float | None


@dataclass(frozen=True)
class SystemsTest:
    """Every system's mean of one metric and every pair's tests, pairs in (i < j) order."""

    key: str
    systems: tuple[str, ...]
    means: tuple[float, ...]
    n: int
    pairs: tuple[PairResult, ...]

    def pair(self, a: str, b: str) -> PairResult:
        return next(p for p in self.pairs if {p.a, p.b} == {a, b})


def _hsd_counts(values: np.ndarray, thresholds: np.ndarray, trials: int, seed: int) -> np.ndarray:
    """For each threshold, the trials whose range of system means reaches it (see the module doc)."""
    s, n = values.shape
    per_trial = s * n
    rows = max(1, _CHUNK_WORDS // per_trial)
    bits = np.random.PCG64(seed)
    by_query = values.T  # n × s
    counts = np.zeros(thresholds.size, dtype=np.int64)
    for start in range(0, trials, rows):
        count = min(rows, trials - start)
        words = bits.random_raw(count * per_trial).reshape(count, n, s)
        order = np.argsort(words, axis=2, kind="stable")
        shuffled = np.take_along_axis(np.broadcast_to(by_query, (count, n, s)), order, axis=2)
        means = shuffled.sum(axis=1) / n
        ranges = means.max(axis=1) - means.min(axis=1)
        counts += np.count_nonzero(ranges[:, None] >= thresholds[None, :], axis=0)
    return counts


def randomised_tukey_hsd(
    values: Sequence[Sequence[float]], *, trials: int = HSD_TRIALS, seed: int = HSD_SEED
) -> list[list[float]] | None:
    """The HSD p of every pair of systems, as a symmetric s × s matrix (diagonal 1).

    `values[i]` holds system i's per-query values, every system the same queries in the same
    order. None with fewer than 2 queries or 2 systems.
    """
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] < 2 or matrix.shape[1] < 2:
        return None
    s, n = matrix.shape
    means = [seq_sum(row.tolist()) / n for row in matrix]
    tolerance = _TIE_SLACK * n * sys.float_info.epsilon * float(np.abs(matrix).sum(axis=0).max()) * 2
    pairs = [(i, j) for i in range(s) for j in range(i + 1, s)]
    thresholds = np.array([abs(means[i] - means[j]) - tolerance for i, j in pairs])
    counts = _hsd_counts(matrix, thresholds, trials, seed)
    out = [[1.0] * s for _ in range(s)]
    for (i, j), b in zip(pairs, counts.tolist(), strict=True):
        out[i][j] = out[j][i] = (b + 1) / (trials + 1)
    return out


def compare_systems(
    key: str,
    systems: Sequence[str],
    values: Sequence[Sequence[float]],
    *,
    trials: int = HSD_TRIALS,
    seed: int = HSD_SEED,
) -> SystemsTest:
    """Pairwise tests (Holm over the pairs) and the randomised Tukey HSD of one metric."""
    if len(systems) != len(values) or len(set(systems)) != len(systems):
        raise ValueError("one distinct name per system's values")
    n = len(values[0]) if values else 0
    if any(len(v) != n for v in values):
        raise ValueError("every system needs a value for every query")
    means = tuple(seq_sum(v) / n if n else 0.0 for v in values)
    hsd = randomised_tukey_hsd(values, trials=trials, seed=seed)
    partial = []
    for i in range(len(systems)):
        for j in range(i + 1, len(systems)):
            deltas = [b - a for a, b in zip(values[i], values[j], strict=True)]
            test, perm = paired_t(deltas), sign_flip_test(deltas)
            wins, losses, ties = win_loss_tie(deltas)
            partial.append(
                PairResult(
                    systems[i],
                    systems[j],
                    test.mean_delta,
                    wins,
                    losses,
                    ties,
                    test.p,
                    perm.p if perm is not None else None,
                    None,
                    hsd[i][j] if hsd is not None else None,
                )
            )
    tested = [k for k, p in enumerate(partial) if p.perm_p is not None]
    adjusted = holm_adjust([partial[k].perm_p for k in tested])  # type: ignore[misc]
    pairs = list(partial)
    for k, h in zip(tested, adjusted, strict=True):
        p = pairs[k]
        pairs[k] = PairResult(p.a, p.b, p.mean_delta, p.wins, p.losses, p.ties, p.t_p, p.perm_p, h, p.hsd_p)
    return SystemsTest(key, tuple(systems), means, n, tuple(pairs))
