"""Score every fixture case at every selected backend (harness.md §3).

The harness only measures: it runs each case's query through a backend's search function, keeps
the top k, and scores the hits against the case's anchors. Results are plain data that the
reporting room renders; nothing here formats numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.metrics import QueryMetrics, macro_mean, score_query
from cce_relevance.evaluation.spans import LineWeights, TokenScore, score_tokens
from cce_relevance.retrieval.backends import Hit

SearchFn = Callable[[str, int], list[Hit]]


@dataclass(frozen=True)
class CaseResult:
    case: Case
    metrics: QueryMetrics
    tokens: TokenScore | None
    hits: tuple[Hit, ...]


@dataclass(frozen=True)
class TokenAggregate:
    queries: int
    precision: float
    recall: float
    iou: float


@dataclass(frozen=True)
class BackendReport:
    """One backend's per-case results and macro averages."""

    backend: str
    cases: tuple[CaseResult, ...]
    precision: float
    recall: float
    mrr: float
    f1: float
    tokens: TokenAggregate | None

    def metric(self, name: str) -> list[float]:
        """Per-case values of `precision`, `recall`, `mrr` or `f1`, in case order."""
        return [getattr(r.metrics, name) for r in self.cases]


def evaluate_backend(name: str, search: SearchFn, cases: Sequence[Case], weights: LineWeights) -> BackendReport:
    """Run and score every case through one backend."""
    results = []
    for case in cases:
        hits = tuple(search(case.query, case.k)[: case.k])
        tokens = score_tokens(case.anchors, hits, case.k, weights) if case.ranged else None
        results.append(CaseResult(case, score_query(case.anchors, hits, case.k), tokens, hits))
    ranged = [r.tokens for r in results if r.tokens is not None]
    token_agg = None
    if ranged:
        token_agg = TokenAggregate(len(ranged), macro_mean([t.precision for t in ranged]),
                                   macro_mean([t.recall for t in ranged]), macro_mean([t.iou for t in ranged]))
    return BackendReport(
        name, tuple(results),
        macro_mean([r.metrics.precision for r in results]), macro_mean([r.metrics.recall for r in results]),
        macro_mean([r.metrics.mrr for r in results]), macro_mean([r.metrics.f1 for r in results]),
        token_agg,
    )
