"""Statistics of a base → head comparison: per metric the paired t-test, wins/losses/ties and the
minimum detectable effect at 80% power for the observed spread (the seed's formula), and on
request the full statistics of `full_stats`."""

from __future__ import annotations

from dataclasses import dataclass

from cce_relevance.evaluation.harness import BackendReport
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY, METRICS
from cce_relevance.evaluation.pairing import BackendPair
from cce_relevance.stats.full_stats import FullStats, StatsLevel, full_stats
from cce_relevance.stats.paired import PairedTest, paired_t, win_loss_tie
from cce_relevance.stats.power import observed_mde


@dataclass(frozen=True)
class MetricStats:
    key: str
    label: str
    base_mean: float | None
    head_mean: float | None
    test: PairedTest
    wins: int
    losses: int
    ties: int
    mde: float | None  # smallest mean delta detectable at alpha 0.05 with 80% power; None if n < 2 or sd = 0


@dataclass(frozen=True)
class BackendComparison:
    pair: BackendPair
    metrics: tuple[MetricStats, ...]
    full: FullStats | None = None  # only when asked for (`stats="full"`)

    def metric(self, key: str) -> MetricStats:
        return next(m for m in self.metrics if m.key == key)


def compare_pair(pair: BackendPair, stats_level: StatsLevel = "reference", primary: str = DEFAULT_PRIMARY) -> BackendComparison:
    """Paired statistics over the queries present on both sides; `"full"` adds `full_stats`."""
    stats = []
    for spec in METRICS:
        deltas = pair.deltas(spec.key)
        wins, losses, ties = win_loss_tie(deltas)
        stats.append(MetricStats(
            spec.key, spec.label,
            pair.base_means[spec.key] if pair.base_means else None,
            pair.head_means[spec.key] if pair.head_means else None,
            paired_t(deltas), wins, losses, ties,
            observed_mde(deltas),
        ))
    full = None
    if stats_level == "full":
        full = full_stats([(spec.key, pair.deltas(spec.key)) for spec in METRICS], primary)
    return BackendComparison(pair, tuple(stats), full)


def metric_deltas(a: BackendReport, b: BackendReport) -> list[tuple[str, list[float]]]:
    """Per metric key, the per-case deltas B − A in case order (§deltas)."""
    return [(spec.key, [vb - va for va, vb in zip(a.metric(spec.attr), b.metric(spec.attr), strict=True)])
            for spec in METRICS]


def compare_reports(a: BackendReport, b: BackendReport) -> dict[str, PairedTest]:
    """Paired t-test per metric over the per-case deltas B − A (§deltas)."""
    return {key: paired_t(deltas) for key, deltas in metric_deltas(a, b)}
