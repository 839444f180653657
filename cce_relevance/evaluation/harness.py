"""Score every fixture case at every selected backend (§metrics).

The harness only measures: it runs each case's query through a backend's search function, keeps
the top k, and scores the hits against the case's anchors. Results are plain data that the
reporting room renders; nothing here formats numbers.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from cce_relevance.evaluation.budget import (
    TokenCosts,
    anchor_recall,
    first_relevant_tokens,
    fitting,
    needs_deeper,
    token_recall,
)
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.judgments import Judgments
from cce_relevance.evaluation.metrics import QueryMetrics, macro_mean, median, score_query
from cce_relevance.evaluation.rank_metrics import MAX_CUTOFF, RankedCase, RankMetricSpec, score_specs
from cce_relevance.evaluation.spans import LineWeights, TokenScore, score_tokens
from cce_relevance.retrieval.hit import Hit, SearchFn


@dataclass(frozen=True)
class CaseResult:
    case: Case
    metrics: QueryMetrics
    tokens: TokenScore | None
    hits: tuple[Hit, ...]
    ranking: dict[str, float] | None = None  # the rank metrics asked for, by key; only when judged
    first_relevant_tokens: int | None = None  # `--metrics ttfr`: tokens up to the first relevant hit
    seconds: float | None = field(default=None, compare=False)
    """How long the backend took to answer the query (wall time; None when not measured: a
    report read back). Never part of a pinned report (evaluation/cost.py)."""


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
    ranking: dict[str, float] | None = None  # macro means of the per-case rank metrics, when judged
    # `--metrics ttfr`: the median tokens to the first relevant hit over the cases that have one
    # (None when none has), and how many have one; None when not asked for.
    first_relevant_tokens: tuple[float | None, int] | None = None
    embedder: Any = field(default=None, compare=False)
    """What the backend's own embedder did for it (evaluation/cost.py `EmbedderCost`), when it has one."""

    def metric(self, name: str) -> list[float]:
        """Per-case values of `precision`, `recall`, `mrr` or `f1`, in case order."""
        return [getattr(r.metrics, name) for r in self.cases]


def evaluate_backend(
    name: str,
    search: SearchFn,
    cases: Sequence[Case],
    weights: LineWeights,
    judgments: Sequence[Judgments] | None = None,
    specs: Sequence[RankMetricSpec] = (),
    costs: TokenCosts | None = None,
) -> BackendReport:
    """Run and score every case through one backend; with `judgments` (one per case, same order)
    also the rank metrics `specs` (`costs` for budget metrics)."""
    return evaluate_backends([(name, search)], cases, weights, judgments, specs=specs, costs=costs)[0]


def evaluate_backends(
    backends: Sequence[tuple[str, SearchFn]],
    cases: Sequence[Case],
    weights: LineWeights,
    judgments: Sequence[Judgments] | None = None,
    processes: int = 1,
    specs: Sequence[RankMetricSpec] = (),
    costs: TokenCosts | None = None,
    first_tokens: bool = False,
) -> list[BackendReport]:
    """`evaluate_backend` for each (name, search function), in order.

    A case is searched at its k, and the reference metrics score that ranking. When a rank metric
    asks for a cut-off deeper than k, the case is searched once more to the deepest cut-off asked,
    and every cut-off metric reads that one ranking (a backend such as hybrid, whose candidate pool
    grows with the depth asked, can order its first k differently at depth 20 than at depth k).
    Budget metrics (which need `costs`, the results' token costs) read it too, searched deeper
    first while its results do not fill the largest budget (evaluation/budget.py).
    `first_tokens` (which needs `costs` and `judgments`) also gives every case its tokens to the
    first relevant hit (`--metrics ttfr`).

    With `processes` > 1 the cases are dealt out to this process and `processes` − 1 forked
    worker processes, each running every backend over its cases (so rankings one backend shares
    with another stay in one process). Only for search functions that are plain functions of data
    the fork copies — the built-in backends over the hash embedder — never for ones holding a
    process, a connection or a remote embedder. Before forking, a search function's optional
    `warm_up(queries)` is called with every case's query, to make what its searches would each
    make on first use once for all the processes. Each case's hits and scores come back in case
    order and the averages are taken here, in the same order, so the reports are the same.
    """
    ranges = _ranges(len(cases), processes)
    if len(ranges) > 1:
        _warm_up(backends, cases, weights)
    assert costs is not None or all(s.budget is None for s in specs), "budget metrics need the token costs"
    assert costs is not None or not first_tokens, "tokens to the first relevant hit need the token costs"
    first = costs if first_tokens else None
    with _older_objects_frozen():
        if len(ranges) > 1:
            scored = _scored_in_workers(backends, cases, weights, judgments, ranges, specs, costs, first)
        else:
            scored = [
                [
                    _scored(
                        search,
                        case,
                        weights,
                        judgments[i] if judgments is not None else None,
                        specs,
                        costs,
                        first,
                    )
                    for i, case in enumerate(cases)
                ]
                for _, search in backends
            ]
    return [
        backend_report(
            name,
            [CaseResult(case, *parts) for case, parts in zip(cases, per_case, strict=True)],
            [s.key for s in specs] if judgments is not None else None,
            first_tokens=first_tokens and judgments is not None,
        )
        for (name, _), per_case in zip(backends, scored, strict=True)
    ]


@contextlib.contextmanager
def _older_objects_frozen() -> Iterator[None]:
    """Keep the cyclic garbage collector's full passes off the objects that exist when scoring
    starts (`gc.freeze`), until it ends.

    Those are mostly the index: hundreds of thousands of objects that outlive the run and hold no
    garbage. Scoring makes enough short-lived containers to set off full collections, and each
    would walk them all (in a forked worker also writing to, and so copying, every page that holds
    one), to free nothing. Objects made while scoring are collected as usual. A caller that froze
    objects itself keeps them frozen.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


_CaseOutcome = tuple[
    QueryMetrics, TokenScore | None, tuple[Hit, ...], dict[str, float] | None, int | None, float
]
MIN_CASES_PER_PROCESS = 100  # fewer, and a worker's start costs more than it saves


def _warm_up(backends: Sequence[tuple[str, SearchFn]], cases: Sequence[Case], weights: LineWeights) -> None:
    """Before forking, make once what every process would otherwise make for itself on first use,
    in pages the workers then share (and before the garbage collector's freeze, which then keeps
    its passes off them too):

    * what a search builds on first use (BM25's statistics from the postings, the float32 cosine
      copy, the import graph): the first case is searched with every backend (on the standard
      library, a quarter of two workers' CPU time). This process scores that case later, from
      its memoised rankings (a memoised ranking is the ranking made afresh);
    * what a search function's optional `warm_up` makes for all the queries;
    * each ranged case's expected spans and their mass."""
    first = cases[0]
    queries = [case.query for case in cases]
    for _, search in backends:
        search(first.query, first.k, first.id)
        warm_up = getattr(search, "warm_up", None)
        if callable(warm_up):
            warm_up(queries)
    for case in cases:
        if case.ranged:
            weights.expected(case.anchors)


def _scored(
    search: SearchFn,
    case: Case,
    weights: LineWeights,
    judgment: Judgments | None,
    specs: Sequence[RankMetricSpec] = (),
    costs: TokenCosts | None = None,
    first: TokenCosts | None = None,
) -> _CaseOutcome:
    started = time.perf_counter()
    hits = tuple(search(case.query, case.k, case.id)[: case.k])
    seconds = time.perf_counter() - started
    tokens = score_tokens(case.anchors, hits, case.k, weights) if case.ranged else None
    ranking = None
    first_tokens = None
    if judgment is not None:
        gains = judgment.hit_gains(hits)
        deep_hits = _deep_ranking(search, case, hits, specs, costs)
        deep = gains if deep_hits is hits else judgment.hit_gains(deep_hits)
        budgeted = _budgeted(case, deep_hits, judgment, specs, weights, costs) if costs is not None else {}
        ranked = RankedCase(
            gains,
            deep,
            judgment.gains,
            case.k,
            judgment.hit_judged(hits, gains),
            judgment.hit_judged(deep_hits, deep),
            budgeted,
        )
        ranking = score_specs(specs, ranked)
        if first is not None:
            first_tokens = first_relevant_tokens(first.costs(hits), gains)
    return score_query(case.anchors, hits, case.k), tokens, hits, ranking, first_tokens, seconds


def _deep_ranking(
    search: SearchFn,
    case: Case,
    hits: tuple[Hit, ...],
    specs: Sequence[RankMetricSpec],
    costs: TokenCosts | None,
) -> tuple[Hit, ...]:
    """The one ranking the cut-off and budget metrics read: the top k (`hits`) unless a cut-off is
    deeper, searched deeper still (doubling the depth) while it leaves room in the largest budget."""
    depth = max((s.cutoff for s in specs if s.cutoff is not None), default=0)
    deep = hits if depth <= case.k else tuple(search(case.query, depth, case.id)[:depth])
    budget = max((s.budget for s in specs if s.budget is not None), default=0)
    if costs is None or not budget:
        return deep
    asked = max(depth, case.k)
    while needs_deeper(costs.costs(deep), asked, budget, MAX_CUTOFF):
        asked = min(2 * asked, MAX_CUTOFF)
        deep = tuple(search(case.query, asked, case.id)[:asked])
    return deep


def _budgeted(
    case: Case,
    deep: Sequence[Hit],
    judgment: Judgments,
    specs: Sequence[RankMetricSpec],
    weights: LineWeights,
    costs: TokenCosts,
) -> dict[str, float]:
    """The budget metrics of one case, by key, on the results of `deep` that fit each budget."""
    budgeted = [s for s in specs if s.budget is not None]
    if not budgeted:
        return {}
    deep_costs = costs.costs(deep)
    if case.ranged:
        expected, mass = weights.expected(case.anchors)
    else:
        expected = costs.chunk_spans(chunk for chunk, _ in judgment.relevant)
        mass = weights.mass(expected)
    out = {}
    for s in budgeted:
        assert s.budget is not None
        fit = deep[: fitting(deep_costs, s.budget)]
        if s.attr == "recall":
            out[s.key] = anchor_recall(case.anchors, fit)
        else:
            out[s.key] = token_recall(expected, mass, fit, weights)
    return out


def backend_report(
    name: str, results: list[CaseResult], judged: Sequence[str] | None, *, first_tokens: bool = False
) -> BackendReport:
    """A backend's report from its per-case results, in case order: the macro means are taken
    here and only here, so a report rebuilt from saved per-case values (evaluation/shards.py) is
    the one the run made. `first_tokens`: the cases carry their tokens to the first relevant hit."""
    ranged = [r.tokens for r in results if r.tokens is not None]
    token_agg = None
    if ranged:
        token_agg = TokenAggregate(
            len(ranged),
            macro_mean([t.precision for t in ranged]),
            macro_mean([t.recall for t in ranged]),
            macro_mean([t.iou for t in ranged]),
        )
    return BackendReport(
        name,
        tuple(results),
        macro_mean([r.metrics.precision for r in results]),
        macro_mean([r.metrics.recall for r in results]),
        macro_mean([r.metrics.mrr for r in results]),
        macro_mean([r.metrics.f1 for r in results]),
        token_agg,
        _mean_ranking([r.ranking for r in results], judged) if judged is not None else None,
        _first_tokens([r.first_relevant_tokens for r in results]) if first_tokens else None,
    )


def _ranges(n: int, processes: int) -> list[range]:
    """`n` cases dealt out to at most `processes` processes in turn (case i to process i mod the
    number of processes), each at least MIN_CASES_PER_PROCESS. A fixture set's cheap and costly
    queries often come in runs (names, then sentences), which contiguous ranges would leave to
    one process; dealt out, the processes finish together."""
    parts = max(1, min(processes, n // MIN_CASES_PER_PROCESS))
    return [range(first, n, parts) for first in range(parts)]


_JOB: tuple[Any, ...] | None = None  # a worker's job, set by `_take_job` in the forked process


def _scored_in_workers(
    backends: Sequence[tuple[str, SearchFn]],
    cases: Sequence[Case],
    weights: LineWeights,
    judgments: Sequence[Judgments] | None,
    ranges: list[range],
    specs: Sequence[RankMetricSpec],
    costs: TokenCosts | None = None,
    first: TokenCosts | None = None,
) -> list[list[_CaseOutcome]]:
    """The first range scored here, the others by forked workers meanwhile, which get the job as
    they fork (never pickled, and never shared with another caller's pool): n processes in all,
    none of them waiting. A worker that dies (killed for memory, say) breaks the pool; its cases
    are then scored here, so a run never hangs on a lost range. Workers send their outcomes back
    as plain tuples (`_flat`): pickling the records themselves costs several times more."""
    job = (backends, cases, weights, judgments, specs, costs, first)
    here, others = ranges[0], ranges[1:]
    mine = None
    try:
        with ProcessPoolExecutor(
            len(others),
            mp_context=multiprocessing.get_context("fork"),
            initializer=_take_job,
            initargs=(job,),
        ) as pool:
            # Submitting forks every worker (as the fork context does) before this process scores.
            futures = [pool.submit(_score_range, (r.start, r.stop, r.step)) for r in others]
            mine = _score_range((here.start, here.stop, here.step), job, flat=False)
            theirs = [future.result() for future in futures]
    except BrokenProcessPool:
        theirs = [_score_range((r.start, r.stop, r.step), job) for r in others]
    if mine is None:  # the pool broke before this process had scored its own range
        mine = _score_range((here.start, here.stop, here.step), job, flat=False)
    # Back in case order: process w scored cases w, w + n, w + 2n, ... (`_ranges`).
    scored: list[list[_CaseOutcome]] = []
    for b in range(len(backends)):
        in_order: list[Any] = [None] * len(cases)
        for i, outcome in zip(here, mine[b], strict=True):
            in_order[i] = outcome
        for r, part in zip(others, theirs, strict=True):
            for i, flat in zip(r, part[b], strict=True):
                in_order[i] = _unflat(flat)
        scored.append(in_order)
    return scored


def _take_job(job: tuple[Any, ...]) -> None:
    global _JOB
    _JOB = job


def _score_range(
    bounds: tuple[int, int, int], job: tuple[Any, ...] | None = None, flat: bool = True
) -> list[list[Any]]:
    """The outcomes of the cases `range(*bounds)` at every backend, as plain tuples (`_flat`) to
    send back from a worker, or as they are (`flat` False) in the process that keeps them."""
    job = job if job is not None else _JOB
    assert job is not None, "a worker scores after _take_job"
    backends, cases, weights, judgments, specs, costs, first = job
    judged = judgments if judgments is not None else [None] * len(cases)
    outcomes = [
        [_scored(search, cases[i], weights, judged[i], specs, costs, first) for i in range(*bounds)]
        for _, search in backends
    ]
    return [[_flat(outcome) for outcome in part] for part in outcomes] if flat else outcomes


def _flat(outcome: _CaseOutcome) -> tuple[Any, ...]:
    """A case's outcome as tuples of plain values, which pickle in C."""
    metrics, tokens, hits, ranking, first_tokens, seconds = outcome
    return (
        (metrics.precision, metrics.recall, metrics.mrr, metrics.f1, metrics.first_relevant_rank),
        None if tokens is None else (tokens.precision, tokens.recall, tokens.iou),
        [
            (h.chunk_id, h.file_path, h.start_line, h.end_line, h.chunk_type, h.kind, h.rank, h.score)
            for h in hits
        ],
        ranking,
        first_tokens,
        seconds,
    )


def _unflat(flat: tuple[Any, ...]) -> _CaseOutcome:
    metrics, tokens, hits, ranking, first_tokens, seconds = flat
    return (
        QueryMetrics(*metrics),
        None if tokens is None else TokenScore(*tokens),
        tuple(Hit(*h) for h in hits),
        ranking,
        first_tokens,
        seconds,
    )


def can_fork() -> bool:
    """Whether worker processes can be forked here (not on Windows or macOS' default, nor inside
    a daemonic process)."""
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and sys.platform == "linux"
        and not multiprocessing.current_process().daemon
    )


def _first_tokens(per_case: Sequence[int | None]) -> tuple[float | None, int]:
    """The median of the cases' tokens to their first relevant hit, over the cases that have one,
    and how many do: token counts are skewed (one huge chunk), so a mean would tell of the outlier."""
    found = [float(t) for t in per_case if t is not None]
    return (median(found) if found else None), len(found)


def _mean_ranking(per_case: Sequence[dict[str, float] | None], keys: Sequence[str]) -> dict[str, float]:
    ranked = [r for r in per_case if r is not None]
    return {key: macro_mean([r[key] for r in ranked]) for key in keys}
