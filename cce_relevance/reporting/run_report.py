"""A run's report: the canonical JSON document (`run --json`, goldens) and the text summary."""

from __future__ import annotations

from cce_relevance.evaluation.run_result import RunResult
from cce_relevance.reporting.canonical_json import dumps_report
from cce_relevance.reporting.cost_report import COST_KEY, cost_document, cost_text
from cce_relevance.reporting.full_report import FULL_LEGEND, MDE_LEGEND, full_text_block
from cce_relevance.reporting.json_report import report_document
from cce_relevance.reporting.per_query import render_per_query
from cce_relevance.reporting.systems_report import systems_document, systems_text
from cce_relevance.reporting.text import render_compare, render_rank_metrics, render_summary


def run_report_json(result: RunResult, cost: bool = False) -> str:
    """The cce.relevance report document of `result`, as canonical JSON text; with `cost`, also
    its `cost` document under that key (never for a golden: reporting/cost_report.py)."""
    compare = None
    if result.comparison is not None:
        compare = (result.comparison.a, result.comparison.b, result.comparison.tests)
    full = result.comparison.full if result.comparison is not None else None
    doc = report_document(
        result.corpus,
        result.embedder,
        len(result.fixtures.cases),
        result.reports,
        compare,
        full,
        result.rank_metrics,
    )
    if result.systems:
        doc["systems"] = systems_document(result.systems)
    if cost:
        doc[COST_KEY] = cost_document(result)
    return dumps_report(doc)


def run_report_text(result: RunResult, cost: bool = False) -> str:
    """The human summary of `result`: means per backend, rank metrics, the comparison (two backends)
    or the systems comparison (three or more) if any; with `cost`, what each backend cost."""
    text = render_summary(result.corpus, result.embedder, len(result.fixtures.cases), result.reports)
    if result.rank_metrics or any(r.first_relevant_tokens is not None for r in result.reports):
        text += render_rank_metrics(result.reports, result.rank_metrics)
    if result.comparison is not None:
        text += render_compare(
            result.reports[0], result.reports[1], result.comparison.tests, result.rank_metrics
        )
        if result.comparison.full is not None:
            text += full_text_block(result.comparison.full) + MDE_LEGEND + FULL_LEGEND
    if result.systems:
        text += systems_text(f"comparison of {len(result.reports)} backends", result.systems)
    if cost:
        text += cost_text(result)
    return text


def run_report_per_query(result: RunResult, fmt: str, cost: bool = False) -> str:
    """`--per-query` output of `result`: `text`, `csv` or `tsv` (reporting/per_query.py); with
    `cost`, each query's latency too."""
    return render_per_query(fmt, result.reports, result.rank_metrics, cost)
