"""Per-query chunk-level metrics and macro averages (§query-metrics–§aggregates).

Definitions follow standard IR usage (Manning, Raghavan & Schütze, *Introduction to Information
Retrieval*, 2008, sec. 8.3–8.4): precision at k divides by k even when fewer results return,
recall counts matched anchors, the reciprocal rank is that of the first relevant result, and F1
is the harmonic mean of P@k and recall. Sums are left to right in case order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.numeric import seq_sum
from cce_relevance.retrieval.hit import Hit


@dataclass(frozen=True)
class QueryMetrics:
    precision: float
    recall: float
    mrr: float
    f1: float
    first_relevant_rank: int | None


def _matches(anchor: Anchor, hit: Hit) -> bool:
    return anchor.matches(hit.file_path, hit.kind, hit.start_line, hit.end_line)


def score_query(anchors: Sequence[Anchor], hits: Sequence[Hit], k: int) -> QueryMetrics:
    """P@k, recall, MRR, F1 and first relevant rank of one case's top-k hits."""
    considered = hits[:k]
    if len(anchors) == 1:  # most cases: one test per hit, no generator per hit
        matches = anchors[0].matches
        relevant = [matches(h.file_path, h.kind, h.start_line, h.end_line) for h in considered]
        matched = 1 if any(relevant) else 0
    else:
        relevant = [any(_matches(a, h) for a in anchors) for h in considered]
        matched = sum(1 for a in anchors if any(_matches(a, h) for h in considered))
    precision = sum(relevant) / k
    recall = matched / len(anchors)
    first = next((i + 1 for i, rel in enumerate(relevant) if rel), None)
    mrr = 1.0 / first if first is not None else 0.0
    f1 = ((2.0 * precision) * recall) / (precision + recall) if precision + recall != 0.0 else 0.0
    return QueryMetrics(precision, recall, mrr, f1, first)


def macro_mean(values: Sequence[float]) -> float:
    """Left-to-right sum divided by the count (0 for no values)."""
    return seq_sum(values) / len(values) if values else 0.0


def median(values: Sequence[float]) -> float:
    """The middle value, or the mean of the two middle ones; `values` must not be empty."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


@dataclass(frozen=True)
class MetricSpec:
    """How one chunk-level metric is named in each rendering."""

    key: str  # JSON report key
    attr: str  # QueryMetrics / BackendReport attribute
    label: str  # human tables


METRICS: tuple[MetricSpec, ...] = (
    MetricSpec("precision_at_k", "precision", "P@k"),
    MetricSpec("recall", "recall", "recall"),
    MetricSpec("mrr", "mrr", "MRR"),
    MetricSpec("f1", "f1", "F1"),
)
METRIC_KEYS = tuple(m.key for m in METRICS)  # precision_at_k, recall, mrr, f1
DEFAULT_PRIMARY = METRICS[2].key  # MRR: the metric the full statistics and the Action's gate lead with
