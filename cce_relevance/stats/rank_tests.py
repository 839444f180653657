"""Wilcoxon's signed-rank test and the sign test of paired deltas: the two classic tests that use
only the order of the deltas (signed-rank) or only their signs (sign test).

Both ask the question the t-test and the permutation test ask — did the change move the metric? —
under weaker assumptions: the signed-rank test needs the deltas' distribution to be symmetric
under the null, the sign test only that a delta is as likely up as down. IR papers report them
beside the t-test (Smucker, Allan & Carterette, *A comparison of statistical significance tests
for information retrieval evaluation*, CIKM 2007), and trec_eval users reach for them first.

Zero deltas are dropped before either test (Wilcoxon's original "wilcox" treatment, scipy's
default), so m below is the number of changed queries. Absolute deltas equal to nine decimals are
ties: 0.6 − 0.4 and 0.3 − 0.1 are one value, and a saved report's six-decimal values differ by far
more than 1e-9 when they differ at all.

* m ≤ EXACT_LIMIT: the exact null distribution. Every one of the 2^m sign patterns is equally
  likely; the number of patterns giving each rank sum is counted by dynamic programming over the
  (doubled, so integral) mid-ranks. With ties this is the exact conditional distribution given
  the tied ranks — what scipy's `wilcoxon` computes by enumerating permutations.
* m > EXACT_LIMIT: the normal approximation with a continuity correction of ½ and the usual tie
  correction of the variance, Σ(t³ − t)/48 over groups of t tied |d| (Hollander & Wolfe,
  *Nonparametric Statistical Methods*, 2nd ed., 1999, section 3.1; scipy's `method="asymptotic"`).

Pure Python: no randomness, so the p-values are the same on every machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

EXACT_LIMIT = 50  # changed queries up to which both tests are exact
TIE_DECIMALS = 9  # |deltas| equal when rounded to this many decimals are tied


@dataclass(frozen=True)
class RankTest:
    """One two-sided test of the changed deltas: its statistic, p and how p was computed.

    `statistic` is min(W+, W−) for the signed-rank test and the number of positive deltas for
    the sign test; `changed` is m, the non-zero deltas.
    """

    statistic: float
    p: float
    method: Literal["exact", "normal"]
    changed: int


def _changed(deltas: Sequence[float]) -> list[float]:
    return [d for d in deltas if d != 0.0]


def _normal_two_sided(z: float) -> float:
    """P(|Z| ≥ |z|) for a standard normal Z."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def midranks(values: Sequence[float]) -> tuple[list[float], list[int]]:
    """Mid-ranks (1-based; ties share the mean of their ranks) of `values`, and the sizes of the
    tied groups. Values equal to TIE_DECIMALS decimals are one value."""
    keys = [round(v, TIE_DECIMALS) for v in values]
    order = sorted(range(len(values)), key=lambda i: keys[i])
    ranks = [0.0] * len(values)
    groups = []
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and keys[order[end + 1]] == keys[order[start]]:
            end += 1
        for i in order[start : end + 1]:
            ranks[i] = (start + end + 2) / 2.0
        groups.append(end - start + 1)
        start = end + 1
    return ranks, groups


def _exact_signed_rank_p(ranks: Sequence[float], w_plus: float) -> float:
    """Two-sided exact p of the rank sum W+ over all 2^m equally likely sign patterns.

    counts[s] is the number of patterns whose positive ranks, doubled, sum to s (doubled
    mid-ranks are integers). p = 2·min(P(W+ ≤ w), P(W+ ≥ w)), at most 1.
    """
    doubled = [round(2 * r) for r in ranks]
    counts = [0] * (sum(doubled) + 1)
    counts[0] = 1
    reach = 0
    for r in doubled:
        for s in range(reach, -1, -1):
            if counts[s]:
                counts[s + r] += counts[s]
        reach += r
    observed = round(2 * w_plus)
    total = 2 ** len(ranks)
    lower = sum(counts[: observed + 1])
    upper = sum(counts[observed:])
    return min(1.0, 2 * min(lower, upper) / total)


def wilcoxon_signed_rank(deltas: Sequence[float], exact_limit: int = EXACT_LIMIT) -> RankTest | None:
    """Two-sided Wilcoxon signed-rank test of the deltas against zero (Wilcoxon, *Individual
    comparisons by ranking methods*, Biometrics Bull. 1(6), 1945).

    Rank the m non-zero |d_i| (mid-ranks for ties); W+ sums the ranks of the positive deltas.
    None for n < 2 (no sample, as for the other tests); p = 1 when every delta is zero.
    """
    if len(deltas) < 2:
        return None
    changed = _changed(deltas)
    m = len(changed)
    if m == 0:
        return RankTest(0.0, 1.0, "exact", 0)
    ranks, groups = midranks([abs(d) for d in changed])
    w_plus = sum(r for r, d in zip(ranks, changed, strict=True) if d > 0)
    w_minus = m * (m + 1) / 2.0 - w_plus
    statistic = float(min(w_plus, w_minus))
    if m <= exact_limit:
        return RankTest(statistic, _exact_signed_rank_p(ranks, w_plus), "exact", m)
    mean = m * (m + 1) / 4.0
    variance = m * (m + 1) * (2 * m + 1) / 24.0 - sum(t * t * t - t for t in groups) / 48.0
    if variance <= 0.0:  # every |d| tied and m large: W+ is fixed by the signs alone
        return RankTest(statistic, 1.0, "normal", m)
    distance = max(abs(w_plus - mean) - 0.5, 0.0)
    return RankTest(statistic, min(1.0, _normal_two_sided(distance / math.sqrt(variance))), "normal", m)


def sign_test(deltas: Sequence[float], exact_limit: int = EXACT_LIMIT) -> RankTest | None:
    """Two-sided sign test: of the m changed queries, is the share that improved different from ½?

    Exact: p = 2·P(X ≤ min(k, m − k)) for X ~ Binomial(m, ½), at most 1 (Conover, *Practical
    Nonparametric Statistics*, 3rd ed., 1999, section 3.4). Above `exact_limit` the normal approximation
    z = (|k − m/2| − ½) / (√m / 2). None for n < 2; p = 1 when every delta is zero.
    """
    if len(deltas) < 2:
        return None
    changed = _changed(deltas)
    m = len(changed)
    wins = sum(1 for d in changed if d > 0)
    if m == 0:
        return RankTest(0.0, 1.0, "exact", 0)
    if m <= exact_limit:
        tail = sum(math.comb(m, i) for i in range(min(wins, m - wins) + 1))
        return RankTest(float(wins), min(1.0, 2 * tail / 2**m), "exact", m)
    distance = max(abs(wins - m / 2.0) - 0.5, 0.0)
    return RankTest(float(wins), min(1.0, _normal_two_sided(distance / (math.sqrt(m) / 2.0))), "normal", m)
