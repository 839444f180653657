"""The fuller comparison: everything a reviewer should read beside the reference's t-test.

`--stats full` (and the Action's comment, always) reports per metric the paired t-test as the
reference computes it, plus: wins/losses/ties, the effect size d_z, a sign-flip permutation
p-value, a bootstrap 95% CI of the mean delta, the minimum detectable effect at 80% power,
Holm-adjusted p-values across the metrics with one metric named primary, and the Wilcoxon
signed-rank and sign tests (`rank_tests`).

Holm adjusts the *permutation* p-values, not the t-test's: the permutation test is exact (or,
above 20 changed queries, a reproducible estimate) without assuming normal deltas, which
discrete per-query metrics at small n rarely are, and its p is never 0 — the t-test reports
p = 0 for constant non-zero deltas, which a multiplier cannot correct. The primary metric is
the one decided on before looking (the Action's `regression-metric`); its raw permutation p
answers the pre-registered question, while the Holm-adjusted values are the ones to read when
scanning all four metrics for "anything significant".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from cce_relevance.stats.multiplicity import holm_adjust
from cce_relevance.stats.paired import PairedTest, effect_size_dz, paired_t, win_loss_tie
from cce_relevance.stats.power import observed_mde
from cce_relevance.stats.rank_tests import RankTest, sign_test, wilcoxon_signed_rank
from cce_relevance.stats.resampling import PermutationTest, bootstrap_ci95_of, sign_flip_test
from cce_relevance.stats.stats_level import STATS_LEVELS as STATS_LEVELS
from cce_relevance.stats.stats_level import StatsLevel as StatsLevel

HOLM_BASIS = "permutation"  # which p-values `holm_p` adjusts


@dataclass(frozen=True)
class MetricFullStats:
    """One metric's full statistics; `None` means "not defined for these deltas".

    With n < 2 only `test.n` and `test.mean_delta` (and the win/loss/tie counts) are set.
    """

    key: str
    test: PairedTest
    wins: int
    losses: int
    ties: int
    d_z: float | None
    permutation: PermutationTest | None
    bootstrap_ci95: tuple[float, float] | None
    holm_p: float | None
    mde80: float | None
    wilcoxon: RankTest | None = None
    sign: RankTest | None = None

    @property
    def no_change(self) -> bool:
        """Every one of n ≥ 2 deltas is zero: p = 1, and nothing else to read."""
        return self.test.n >= 2 and self.ties == self.test.n


@dataclass(frozen=True)
class FullStats:
    """Full statistics of every metric of one comparison, in the order they were given."""

    primary: str
    metrics: tuple[MetricFullStats, ...]

    def metric(self, key: str) -> MetricFullStats:
        return next(m for m in self.metrics if m.key == key)


def full_stats(deltas_by_metric: Sequence[tuple[str, Sequence[float]]], primary: str) -> FullStats:
    """Full statistics of each (metric key, deltas) pair; Holm runs over the defined permutation p's.

    A metric with n < 2 has no permutation p and stays out of the Holm family, so the family
    is the metrics that were actually tested. Raises ValueError when `primary` is not one of
    the metric keys.
    """
    return full_stats_of([deltas_by_metric], primary)[0]


def full_stats_of(
    comparisons: Sequence[Sequence[tuple[str, Sequence[float]]]], primary: str
) -> list[FullStats]:
    """`full_stats` of each of several comparisons (the backends of a base → head comparison),
    their bootstrap resamples drawn together: samples of one size share one draw of resample
    positions (`bootstrap_ci95_of`), which is most of the bootstrap's work. Each comparison's
    statistics are the ones `full_stats` gives it alone."""
    for deltas_by_metric in comparisons:
        keys = [key for key, _ in deltas_by_metric]
        if primary not in keys:
            raise ValueError(f"primary metric {primary!r} is not one of {keys}")
    intervals = iter(bootstrap_ci95_of([deltas for each in comparisons for _, deltas in each]))
    return [_full_stats(each, [next(intervals) for _ in each], primary) for each in comparisons]


def _full_stats(
    deltas_by_metric: Sequence[tuple[str, Sequence[float]]],
    intervals: Sequence[tuple[float, float] | None],
    primary: str,
) -> FullStats:
    partial = []
    for (key, deltas), interval in zip(deltas_by_metric, intervals, strict=True):
        test = paired_t(deltas)
        wins, losses, ties = win_loss_tie(deltas)
        partial.append(
            MetricFullStats(
                key,
                test,
                wins,
                losses,
                ties,
                effect_size_dz(deltas, test),
                sign_flip_test(deltas),
                interval,
                None,
                observed_mde(deltas),
                wilcoxon_signed_rank(deltas),
                sign_test(deltas),
            )
        )
    tested = [m for m in partial if m.permutation is not None]
    adjusted = dict(
        zip(
            (m.key for m in tested),
            holm_adjust([m.permutation.p for m in tested]),  # type: ignore[union-attr]
            strict=True,
        )
    )
    return FullStats(primary, tuple(replace(m, holm_p=adjusted.get(m.key)) for m in partial))
