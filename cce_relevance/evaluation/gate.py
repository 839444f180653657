"""The pull-request gate's regression test for one backend of a base → head comparison.

The gate asks whether a change made the ranking worse on one metric. It runs the reference's
paired t-test over the per-query deltas of the queries scored at both sides, leaving out the
queries with a stale anchor at either side: their delta measures a label that stopped (or
started) resolving, not the ranking. With no query left out it is exactly the comparison's own
t-test. A regression is significant when the mean delta is negative and p < alpha.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from cce_relevance.evaluation.comparison import BackendComparison, compare_pairs
from cce_relevance.evaluation.pairing import BackendPair
from cce_relevance.stats.paired import PairedTest, paired_t


def gated_test(
    comparison: BackendComparison, metric: str, stale_queries: Collection[str]
) -> tuple[PairedTest, int]:
    """The t-test of `metric` (a metric key) over the paired queries not in `stale_queries`, and how
    many paired queries it left out."""
    paired = comparison.pair.paired
    deltas = [
        d for q, d in zip(paired, comparison.pair.deltas(metric), strict=True) if q.id not in stale_queries
    ]
    return paired_t(deltas), len(paired) - len(deltas)


def is_significant_regression(test: PairedTest, alpha: float) -> bool:
    """A negative mean delta with p < `alpha` (a t-test without a p, n < 2, is never significant)."""
    return test.mean_delta < 0 and test.p is not None and test.p < alpha


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
