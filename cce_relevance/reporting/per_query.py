"""Per-query views of a run (`--per-query text|csv|tsv`): every query's numbers, not just the means.

* `csv` / `tsv`: one row per query × backend × metric, like `trec_eval -q` — columns `backend`,
  `query`, `metric`, `value`; values six-decimal as in the JSON report; metric names are the
  report's keys (`precision_at_k`, `mrr`, `tokens.iou`, `ndcg_at_5`, …). A spreadsheet or pandas
  pivots it into any table. Fields are quoted as RFC 4180 says (a query id holding a comma, a
  quote or a tab stays one field).
* `text`: for each query its expected anchors and, per backend, the first relevant rank and the
  top hits (rank, `file:start-end`, kind), the relevant ones marked `*`, the ones matching no
  anchor — nobody labeled them, so they count as misses though they may be right — marked `?`,
  and those a reviewer judged not relevant (the case's `irrelevant` anchors) marked `-`: what a
  person writing or checking labels needs to see, without opening the JSON.

With `--cost` each query's latency is added: a `latency_ms` row per query and backend (three
decimals), and the milliseconds after the first relevant rank.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence

from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.harness import BackendReport, CaseResult
from cce_relevance.evaluation.metrics import METRICS, MetricSpec
from cce_relevance.reporting.numbers import format6
from cce_relevance.reporting.terminal import terminal_safe
from cce_relevance.retrieval.hit import Hit

COLUMNS = ("backend", "query", "metric", "value")
LATENCY_KEY = "latency_ms"


def _case_values(result: CaseResult, rank_metrics: Sequence[MetricSpec]) -> Iterator[tuple[str, float]]:
    for spec in METRICS:
        yield spec.key, getattr(result.metrics, spec.attr)
    if result.tokens is not None:
        t = result.tokens
        yield from (("tokens.precision", t.precision), ("tokens.recall", t.recall), ("tokens.iou", t.iou))
    for spec in rank_metrics:
        assert result.ranking is not None, "rank metrics were requested but the run was not judged"
        yield spec.key, result.ranking[spec.key]


FIRST_TOKENS_KEY = "first_relevant_tokens"  # as the JSON report names it


def per_query_rows(
    reports: Sequence[BackendReport], rank_metrics: Sequence[MetricSpec] = (), cost: bool = False
) -> Iterator[tuple[str, str, str, str]]:
    """(backend, query id, metric key, six-decimal value), backends in order, then cases, then
    metrics; with `--metrics ttfr` last the tokens to the first relevant hit (an integer, empty
    when the top k holds none); with `cost`, then `latency_ms`."""
    for report in reports:
        for result in report.cases:
            for key, value in _case_values(result, rank_metrics):
                yield report.backend, result.case.id, key, format6(value)
            if report.first_relevant_tokens is not None:
                tokens = result.first_relevant_tokens
                yield report.backend, result.case.id, FIRST_TOKENS_KEY, "" if tokens is None else str(tokens)
            if cost and result.seconds is not None:
                yield report.backend, result.case.id, LATENCY_KEY, f"{result.seconds * 1000.0:.3f}"


def per_query_table(
    reports: Sequence[BackendReport],
    rank_metrics: Sequence[MetricSpec] = (),
    delimiter: str = ",",
    cost: bool = False,
) -> str:
    """The rows of `per_query_rows` under a header line, comma- or tab-separated."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(per_query_rows(reports, rank_metrics, cost))
    return out.getvalue()


RELEVANT, UNJUDGED, REJECTED = "*", "?", "-"  # the marks of a hit in the text view


def hit_mark(case: Case, hit: Hit) -> str:
    """`*` when the hit matches an expected anchor, `-` when it matches only an `irrelevant` one,
    `?` when it matches none: a hit nobody labeled."""
    span = (hit.file_path, hit.kind, hit.start_line, hit.end_line)
    if any(a.matches(*span) for a in case.anchors):
        return RELEVANT
    return REJECTED if any(a.matches(*span) for a in case.irrelevant) else UNJUDGED


def _hit_line(result: CaseResult, rank: int) -> str:
    hit = result.hits[rank - 1]
    where = f"{hit.file_path}:{hit.start_line}-{hit.end_line}"
    return f"    {rank:>3} {hit_mark(result.case, hit)} {terminal_safe(where)}  {terminal_safe(hit.kind)}\n"


def per_query_text(reports: Sequence[BackendReport], cost: bool = False) -> str:
    """Each query once, with every backend's first relevant rank and top hits, marked (`hit_mark`),
    and with `cost` how long the backend took."""
    if not reports:
        return ""
    out = []
    for i, first in enumerate(reports[0].cases):
        case = first.case
        out.append(f"query {terminal_safe(case.id)} (k={case.k}): {terminal_safe(case.query)}\n")
        out.append("  expected: " + ", ".join(terminal_safe(a.display()) for a in case.anchors) + "\n")
        for report in reports:
            result = report.cases[i]
            rank = result.metrics.first_relevant_rank
            found = (
                f"first relevant rank {rank}" if rank is not None else f"nothing relevant in the top {case.k}"
            )
            if rank is not None and result.first_relevant_tokens is not None:
                found += f" (after {result.first_relevant_tokens} tokens)"
            if cost and result.seconds is not None:
                found += f" ({result.seconds * 1000.0:.3f} ms)"
            out.append(f"  {terminal_safe(report.backend)}: {found}\n")
            out.extend(_hit_line(result, r) for r in range(1, len(result.hits) + 1))
            if not result.hits:
                out.append("    (no results)\n")
        out.append("\n")
    out.append(
        f"  {RELEVANT} = the hit matches an expected anchor, {UNJUDGED} = it matches no anchor (nobody "
        f"labeled it: a miss here may be an unlabeled hit), {REJECTED} = a reviewer judged it not relevant\n"
    )
    return "".join(out)


def render_per_query(
    fmt: str, reports: Sequence[BackendReport], rank_metrics: Sequence[MetricSpec] = (), cost: bool = False
) -> str:
    """The `--per-query` output in format `fmt`: `text`, `csv` or `tsv`."""
    if fmt == "text":
        return per_query_text(reports, cost)
    return per_query_table(reports, rank_metrics, "\t" if fmt == "tsv" else ",", cost)
