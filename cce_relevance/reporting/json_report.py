"""The `cce.relevance.report/v2` document (§json-report) as plain data.

Scores are six-decimal strings so the report is byte-pinnable; optional members (`tokens`,
`compare`, `compare.full`) are absent rather than null when they do not apply, which keeps an unranged,
non-compare report identical to v1 apart from the schema string. The rank metrics asked for with
`--metrics` live under `extra` (per backend and per query), also only when asked for; so do the
tokens to the first relevant hit (`--metrics ttfr`), beside `first_relevant_rank`, which is no
metric in [0, 1] and is not compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cce_relevance import schemas
from cce_relevance.evaluation.harness import BackendReport, CaseResult, TokenAggregate
from cce_relevance.evaluation.metrics import MetricSpec
from cce_relevance.evaluation.spans import TokenScore
from cce_relevance.reporting.full_report import full_document
from cce_relevance.reporting.numbers import format6, signed6
from cce_relevance.stats.full_stats import FullStats
from cce_relevance.stats.paired import PairedTest


def _extra(ranking: Mapping[str, float] | None, specs: Sequence[MetricSpec]) -> dict[str, str]:
    """The `extra` member: the requested rank metrics (`--metrics`), by JSON key."""
    assert ranking is not None, "rank metrics were requested but the run was not judged"
    return {spec.key: format6(ranking[spec.key]) for spec in specs}


def _scores(precision: float, recall: float, mrr: float, f1: float) -> dict[str, Any]:
    """The reference metrics as six-decimal strings, by JSON key (the writer sorts the keys)."""
    return {
        "f1": format6(f1),
        "mrr": format6(mrr),
        "precision_at_k": format6(precision),
        "recall": format6(recall),
    }


def _tokens(t: TokenScore | TokenAggregate) -> dict[str, Any]:
    return {"iou": format6(t.iou), "precision": format6(t.precision), "recall": format6(t.recall)}


def _case(result: CaseResult, extra: Sequence[MetricSpec] = ()) -> dict[str, Any]:
    m = result.metrics
    doc: dict[str, Any] = {
        **_scores(m.precision, m.recall, m.mrr, m.f1),
        "first_relevant_rank": m.first_relevant_rank,
        "id": result.case.id,
        "k": result.case.k,
    }
    if result.tokens is not None:
        doc["tokens"] = _tokens(result.tokens)
    if extra:
        doc["extra"] = _extra(result.ranking, extra)
    return doc


def _with_first_tokens(doc: dict[str, Any], report: BackendReport) -> dict[str, Any]:
    """`--metrics ttfr`: each query's tokens to its first relevant hit (null: none in the top k),
    and the backend's median over the queries that have one, with how many do."""
    if report.first_relevant_tokens is not None:
        middle, found = report.first_relevant_tokens
        median = None if middle is None else format6(middle)
        doc["first_relevant_tokens"] = {"median": median, "queries": found}
        for entry, result in zip(doc["per_query"], report.cases, strict=True):
            entry["first_relevant_tokens"] = result.first_relevant_tokens
    return doc


def backend_document(report: BackendReport, extra: Sequence[MetricSpec] = ()) -> dict[str, Any]:
    """One backend's block; `extra` names the rank metrics to add under `extra` (none by default)."""
    doc: dict[str, Any] = {
        **_scores(report.precision, report.recall, report.mrr, report.f1),
        "backend": report.backend,
        "per_query": [_case(r, extra) for r in report.cases],
    }
    if report.tokens is not None:
        doc["tokens"] = {**_tokens(report.tokens), "queries": report.tokens.queries}
    if extra:
        doc["extra"] = _extra(report.ranking, extra)
    return _with_first_tokens(doc, report)


def paired_document(test: PairedTest) -> dict[str, Any]:
    """One metric's paired-test block; undefined statistics are null."""
    low, high = test.ci95 if test.ci95 is not None else (None, None)
    return {
        "ci95_high": signed6(high) if high is not None else None,
        "ci95_low": signed6(low) if low is not None else None,
        "mean_delta": signed6(test.mean_delta),
        "n": test.n,
        "p": format6(test.p) if test.p is not None else None,
        "t": signed6(test.t) if test.t is not None else None,
    }


def report_document(
    corpus: str,
    embedder: str,
    queries: int,
    reports: Sequence[BackendReport],
    compare: tuple[str, str, Mapping[str, PairedTest]] | None = None,
    full: FullStats | None = None,
    extra: Sequence[MetricSpec] = (),
) -> dict[str, Any]:
    """The report as plain data; `full` (only with `compare`) adds `compare.full`, and `extra`
    (the `--metrics` selection) adds an `extra` member to every backend and per-query entry."""
    doc: dict[str, Any] = {
        "backends": [backend_document(r, extra) for r in reports],
        "corpus": corpus,
        "embedder": embedder,
        "queries": queries,
        "schema": schemas.REPORT,
    }
    if compare is not None:
        a, b, tests = compare
        doc["compare"] = {
            "a": a,
            "b": b,
            "metrics": {key: paired_document(test) for key, test in tests.items()},
        }
        if full is not None:
            doc["compare"]["full"] = full_document(full)
    return doc
