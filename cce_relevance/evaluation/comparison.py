"""Statistics of a base → head comparison: per metric the paired t-test, wins/losses/ties and the
minimum detectable effect at 80% power for the observed spread (the seed's formula), and on
request the full statistics of `full_stats`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cce_relevance.errors import CceError
from cce_relevance.evaluation.harness import BackendReport
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY, METRICS
from cce_relevance.evaluation.pairing import BackendPair, align_reports, pair_reports
from cce_relevance.evaluation.rank_metrics import RankMetricSpec, rank_metric_for_key
from cce_relevance.evaluation.run_result import Comparison
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.stats.full_stats import FullStats, StatsLevel, full_stats, full_stats_of
from cce_relevance.stats.multi_system import SystemsTest, compare_systems
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
    mde: (
        float | None
    )  # smallest mean delta detectable at alpha 0.05 with 80% power; None if n < 2 or no spread


@dataclass(frozen=True)
class BackendComparison:
    pair: BackendPair
    metrics: tuple[MetricStats, ...]
    full: FullStats | None = None  # only when asked for (`stats="full"`)

    def metric(self, key: str) -> MetricStats:
        return next(m for m in self.metrics if m.key == key)


def compare_pairs(
    pairs: Sequence[BackendPair], stats_level: StatsLevel = "reference", primary: str = DEFAULT_PRIMARY
) -> list[BackendComparison]:
    """Paired statistics of every metric of each pair (`pair.specs`) over the queries present on
    both sides; `"full"` adds `full_stats`, the pairs' bootstraps sharing their draws
    (`full_stats_of`), so comparing three backends costs little more than one."""
    full: list[FullStats | None] = [None] * len(pairs)
    if stats_level == "full":
        full = list(
            full_stats_of([[(spec.key, p.deltas(spec.key)) for spec in p.specs] for p in pairs], primary)
        )
    return [BackendComparison(p, _metric_stats(p), f) for p, f in zip(pairs, full, strict=True)]


def _metric_stats(pair: BackendPair) -> tuple[MetricStats, ...]:
    stats = []
    for spec in pair.specs:
        deltas = pair.deltas(spec.key)
        wins, losses, ties = win_loss_tie(deltas)
        stats.append(
            MetricStats(
                spec.key,
                spec.label,
                pair.base_means[spec.key] if pair.base_means else None,
                pair.head_means[spec.key] if pair.head_means else None,
                paired_t(deltas),
                wins,
                losses,
                ties,
                observed_mde(deltas),
            )
        )
    return tuple(stats)


def metric_deltas(
    a: BackendReport, b: BackendReport, rank_metrics: Sequence[RankMetricSpec] = ()
) -> list[tuple[str, list[float]]]:
    """Per metric key, the per-case deltas B − A in case order (§deltas): the reference
    metrics, then the rank metrics the run computed (`rank_metrics`)."""
    deltas = [
        (spec.key, [vb - va for va, vb in zip(a.metric(spec.attr), b.metric(spec.attr), strict=True)])
        for spec in METRICS
    ]
    for spec in rank_metrics:
        deltas.append(
            (
                spec.key,
                [
                    rb.ranking[spec.key] - ra.ranking[spec.key]  # type: ignore[index]
                    for ra, rb in zip(a.cases, b.cases, strict=True)
                ],
            )
        )
    return deltas


def compare_documents(
    base: Any,
    head: Any,
    base_label: str = "base",
    head_label: str = "head",
    stats_level: StatsLevel = "reference",
    primary: str = DEFAULT_PRIMARY,
) -> list[BackendComparison]:
    """Two run reports (JSON data) paired by backend and query id (`pair_reports`), with paired
    statistics per metric; `"full"` adds each backend's full statistics naming `primary` the
    primary metric, which a backend scored at both sides must carry."""
    pairs = pair_reports(base, head, base_label, head_label)
    if stats_level == "full":
        for p in pairs:
            if p.base_means is not None and p.head_means is not None:
                check_primary(primary, [spec.key for spec in p.specs])
    return compare_pairs(pairs, stats_level, primary)


def compare_reports(
    a: BackendReport, b: BackendReport, rank_metrics: Sequence[RankMetricSpec] = ()
) -> dict[str, PairedTest]:
    """Paired t-test per metric over the per-case deltas B − A (§deltas)."""
    return {key: paired_t(deltas) for key, deltas in metric_deltas(a, b, rank_metrics)}


def check_primary(primary: str, keys: Sequence[str]) -> None:
    """An input error unless `primary` is one of the metric keys a comparison tests."""
    if primary not in keys:
        spec = rank_metric_for_key(primary)
        hint = f"score both sides with --metrics {spec.name}" if spec is not None else None
        raise CceError(
            f"primary metric {rust_debug_str(primary)} is not one of the metrics compared "
            f"({', '.join(keys)})",
            hint=hint,
        )


def paired_comparison(
    reports: Sequence[BackendReport],
    stats_level: StatsLevel,
    primary: str,
    rank_metrics: Sequence[RankMetricSpec],
) -> Comparison:
    """The paired comparison of the first two reports (B − A), with `full_stats` on request."""
    full = None
    deltas = metric_deltas(reports[0], reports[1], rank_metrics)
    if stats_level == "full":
        check_primary(primary, [key for key, _ in deltas])
        full = full_stats(deltas, primary)
    return Comparison(reports[0].backend, reports[1].backend, {key: paired_t(d) for key, d in deltas}, full)


def compared(
    reports: Sequence[BackendReport],
    stats_level: StatsLevel,
    primary: str,
    rank_metrics: Sequence[RankMetricSpec],
) -> tuple[Comparison | None, tuple[SystemsTest, ...]]:
    """A run's comparison of its reports: two are paired (B − A), three or more compared as systems."""
    if len(reports) == 2:
        return paired_comparison(reports, stats_level, primary, rank_metrics), ()
    if stats_level == "full":
        raise CceError(
            "the full statistics compare two backends; with three or more every pair is tested "
            "(Holm) beside a randomised Tukey HSD already"
        )
    return None, systems_tests(reports, rank_metrics)


def systems_tests(
    reports: Sequence[BackendReport], rank_metrics: Sequence[RankMetricSpec] = ()
) -> tuple[SystemsTest, ...]:
    """Per metric (reference ones, then `rank_metrics`), the comparison of every report's per-case values."""
    names = [r.backend for r in reports]
    tests = [compare_systems(spec.key, names, [r.metric(spec.attr) for r in reports]) for spec in METRICS]
    tests += [
        compare_systems(
            spec.key,
            names,
            [
                [c.ranking[spec.key] for c in r.cases]  # type: ignore[index]
                for r in reports
            ],
        )
        for spec in rank_metrics
    ]
    return tuple(tests)


def compare_many(docs: Sequence[Any], labels: Sequence[str]) -> list[tuple[str, tuple[SystemsTest, ...]]]:
    """Three or more saved run reports as systems: per backend they all scored, per metric they all
    carry, every pair's tests and the randomised Tukey HSD over the queries all of them hold."""
    out = []
    for aligned in align_reports(list(docs), list(labels)):
        out.append(
            (
                aligned.backend,
                tuple(
                    compare_systems(spec.key, list(labels), aligned.metric(spec.key))
                    for spec in aligned.specs
                ),
            )
        )
    if not out:
        raise CceError("no backend is scored in every report, nothing to compare")
    return out
