"""Score every fixture case at every selected backend (harness.md §3).

The harness only measures: it runs each case's query through a backend's search function, keeps
the top k, and scores the hits against the case's anchors. Results are plain data that the
reporting room renders; nothing here formats numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.judgments import Judgments
from cce_relevance.evaluation.metrics import QueryMetrics, macro_mean, score_query
from cce_relevance.evaluation.rank_metrics import RankMetrics, score_ranking
from cce_relevance.evaluation.spans import LineWeights, TokenScore, score_tokens
from cce_relevance.retrieval.backends import Hit, SearchFn


@dataclass(frozen=True)
class CaseResult:
    case: Case
    metrics: QueryMetrics
    tokens: TokenScore | None
    hits: tuple[Hit, ...]
    ranking: RankMetrics | None = None  # only when the run was given corpus judgments


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
    ranking: RankMetrics | None = None  # macro means of the per-case rank metrics, when judged

    def metric(self, name: str) -> list[float]:
        """Per-case values of `precision`, `recall`, `mrr` or `f1`, in case order."""
        return [getattr(r.metrics, name) for r in self.cases]


def evaluate_backend(name: str, search: SearchFn, cases: Sequence[Case], weights: LineWeights,
                     judgments: Sequence[Judgments] | None = None) -> BackendReport:
    """Run and score every case through one backend; with `judgments` (one per case, same order)
    also the rank-sensitive metrics."""
    results = []
    for i, case in enumerate(cases):
        hits = tuple(search(case.query, case.k, case.id)[: case.k])
        tokens = score_tokens(case.anchors, hits, case.k, weights) if case.ranged else None
        ranking = None
        if judgments is not None:
            ranking = score_ranking(judgments[i].hit_gains(hits), judgments[i].gains, case.k)
        results.append(CaseResult(case, score_query(case.anchors, hits, case.k), tokens, hits, ranking))
    ranged = [r.tokens for r in results if r.tokens is not None]
    token_agg = None
    if ranged:
        token_agg = TokenAggregate(len(ranged), macro_mean([t.precision for t in ranged]),
                                   macro_mean([t.recall for t in ranged]), macro_mean([t.iou for t in ranged]))
    return BackendReport(
        name, tuple(results),
        macro_mean([r.metrics.precision for r in results]), macro_mean([r.metrics.recall for r in results]),
        macro_mean([r.metrics.mrr for r in results]), macro_mean([r.metrics.f1 for r in results]),
        token_agg, _mean_ranking([r.ranking for r in results]) if judgments is not None else None,
    )


def _mean_ranking(per_case: Sequence[RankMetrics | None]) -> RankMetrics:
    ranked = [r for r in per_case if r is not None]
    return RankMetrics(macro_mean([r.ndcg for r in ranked]), macro_mean([r.ap for r in ranked]),
                       macro_mean([r.hit for r in ranked]), macro_mean([r.rprec for r in ranked]))
