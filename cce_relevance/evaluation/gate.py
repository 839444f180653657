"""The pull-request gate's regression test for one backend of a base → head comparison.

The gate asks whether a change made the ranking worse on one metric. It runs the reference's
paired t-test over the per-query deltas of the queries scored at both sides, leaving out the
queries with a stale anchor at either side: their delta measures a label that stopped (or
started) resolving, not the ranking. With no query left out it is exactly the comparison's own
t-test. A regression is significant when the mean delta is negative and p < alpha.

A test that finds nothing significant is evidence of no change only if the set could have seen
one: `is_inconclusive` says when its minimum detectable effect at the configured power is above
the smallest change the team cares about (the Action's `min-detectable-effect`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from cce_relevance.evaluation.comparison import BackendComparison, compare_documents, compare_pairs
from cce_relevance.evaluation.pairing import BackendPair
from cce_relevance.stats.noncentral import detectable_effect_size, queries_to_detect
from cce_relevance.stats.paired import PairedTest, no_spread, paired_t, sample_sd


def gated_deltas(comparison: BackendComparison, metric: str, stale_queries: Collection[str]) -> list[float]:
    """The per-query deltas of `metric` (a metric key) over the paired queries not in `stale_queries`."""
    paired = comparison.pair.paired
    return [
        d for q, d in zip(paired, comparison.pair.deltas(metric), strict=True) if q.id not in stale_queries
    ]


def gated_test(
    comparison: BackendComparison, metric: str, stale_queries: Collection[str]
) -> tuple[PairedTest, int]:
    """The t-test of `metric` (a metric key) over the paired queries not in `stale_queries`, and how
    many paired queries it left out."""
    deltas = gated_deltas(comparison, metric, stale_queries)
    return paired_t(deltas), len(comparison.pair.paired) - len(deltas)


def is_significant_regression(test: PairedTest, alpha: float) -> bool:
    """A negative mean delta with p < `alpha` (a t-test without a p, n < 2, is never significant)."""
    return test.mean_delta < 0 and test.p is not None and test.p < alpha


def detectable_effect(deltas: Sequence[float], alpha: float, power: float) -> float | None:
    """The smallest mean delta the gate's test over these deltas detects at `alpha` (two-sided)
    with `power`, from their own spread: the exact noncentral-t answer (stats/noncentral.py,
    statsmodels' `TTestPower`), not the central-t approximation the reports' MDE@80% column shows,
    which is optimistic for small sets. None for fewer than 2 deltas or no spread."""
    if len(deltas) < 2 or no_spread(deltas):
        return None
    return detectable_effect_size(len(deltas), alpha, power) * sample_sd(deltas)


def queries_for_effect(deltas: Sequence[float], effect: float, alpha: float, power: float) -> int | None:
    """How many queries with the spread of these deltas the gate's test needs to detect a mean
    delta of `effect` at `alpha` with `power` (exact noncentral t); None for fewer than 2 deltas,
    no spread, or more than 10 million."""
    if len(deltas) < 2 or no_spread(deltas):
        return None
    try:
        return queries_to_detect(sample_sd(deltas), effect, alpha, power)
    except ValueError:
        return None


def is_inconclusive(test: PairedTest, mde: float | None, alpha: float, threshold: float) -> bool:
    """Whether a test that found no significant change cannot be read as "no change": the set
    could only have detected a change larger than `threshold` (its `mde` exceeds it), or it has
    fewer than 2 queries (no test at all). A set whose deltas have no spread (every query moved
    alike, or none moved) has no noise to size an effect against, and is not inconclusive."""
    if test.p is not None and test.p < alpha:
        return False
    if test.n < 2:
        return True
    return mde is not None and mde > threshold


def gated_comparison(
    comparison: BackendComparison, stale_queries: Collection[str], primary: str
) -> BackendComparison:
    """The comparison over the queries `gated_test` keeps, with the full statistics (`primary` the
    gated metric): every statistic a report shows next to the gate's verdict then describes the
    same queries as the verdict. Backend means stay those of the whole reports."""
    return gated_comparisons([comparison], stale_queries, primary)[0]


def gated_comparisons(
    comparisons: Sequence[BackendComparison], stale_queries: Collection[str], primary: str
) -> list[BackendComparison]:
    """`gated_comparison` of each comparison (the backends of one fixture set), their bootstraps
    drawn together (`compare_pairs`). A comparison that leaves no query out and has its full
    statistics with this primary metric already is its own gated comparison."""
    kept = [
        BackendPair(
            c.pair.backend,
            tuple(q for q in c.pair.queries if q.id not in stale_queries),
            c.pair.base_means,
            c.pair.head_means,
            c.pair.specs,
        )
        for c in comparisons
    ]
    redo = [
        i
        for i, (c, pair) in enumerate(zip(comparisons, kept, strict=True))
        if not (c.full is not None and c.full.primary == primary and len(pair.queries) == len(c.pair.queries))
    ]
    done = iter(compare_pairs([kept[i] for i in redo], "full", primary))
    return [next(done) if i in redo else c for i, c in enumerate(comparisons)]


@dataclass(frozen=True)
class BackendGate:
    """The gate's test of one backend scored at both sides: the t-test of the gated metric (its
    label) over the queries it keeps, how many paired queries it left out, and the per-query
    deltas it tested (what its power is sized from)."""

    backend: str
    label: str
    test: PairedTest
    left_out: int
    deltas: tuple[float, ...]

    def regressed(self, alpha: float) -> bool:
        """Whether the change is a significant regression at `alpha` (`is_significant_regression`)."""
        return is_significant_regression(self.test, alpha)

    def smallest_detectable(self, alpha: float, power: float) -> float | None:
        """The smallest mean delta this test detects at `alpha` with `power` (`detectable_effect`)."""
        return detectable_effect(self.deltas, alpha, power)

    def queries_needed(self, effect: float, alpha: float, power: float) -> int | None:
        """How many queries of this spread would detect `effect` (`queries_for_effect`)."""
        return queries_for_effect(self.deltas, effect, alpha, power)

    def underpowered(self, alpha: float, power: float, threshold: float) -> bool:
        """Whether finding no significant change cannot be read as "no change": at `power` the
        test detects only changes larger than `threshold` (`is_inconclusive`)."""
        return is_inconclusive(self.test, self.smallest_detectable(alpha, power), alpha, threshold)


@dataclass(frozen=True)
class SetComparison:
    """One fixture set's base → head comparison with every statistic computed once: each backend's
    comparison over every query (with the full statistics), the same over the queries the gate
    keeps for the backends scored at both sides, and the gate's test of each of those."""

    comparisons: tuple[BackendComparison, ...]
    gated: tuple[BackendComparison, ...]
    gates: tuple[BackendGate, ...]

    @property
    def at_both(self) -> tuple[BackendComparison, ...]:
        """The comparisons of the backends scored at both base and head."""
        return tuple(c for c in self.comparisons if _at_both(c))


def compare_sides(base: Any, head: Any, primary: str, left_out: Collection[str] = ()) -> SetComparison:
    """A set's run reports at base and head (JSON data) compared, with the full statistics naming
    `primary` (the gated metric key) the primary metric, and the gate over the queries not in
    `left_out` (a stale anchor at either side, a range anchor whose lines moved)."""
    comparisons = tuple(compare_documents(base, head, "base", "head", "full", primary))
    at_both = [c for c in comparisons if _at_both(c)]
    gates = []
    for c in at_both:
        test, dropped = gated_test(c, primary, left_out)
        deltas = tuple(gated_deltas(c, primary, left_out))
        gates.append(BackendGate(c.pair.backend, c.metric(primary).label, test, dropped, deltas))
    return SetComparison(comparisons, tuple(gated_comparisons(at_both, left_out, primary)), tuple(gates))


def _at_both(c: BackendComparison) -> bool:
    return c.pair.base_means is not None and c.pair.head_means is not None
