"""Pair two saved run reports (base and head) by backend and query id, never by position.

A saved `cce.relevance.report/v2` holds six-decimal strings, so deltas computed here are
differences of the rounded values the reports show. Queries or backends present on one side
only are listed as such and left out of the paired statistics (a paired test needs both).

Rank metrics (`run --metrics`, under `extra`) are paired too, each one that both sides of a
backend carry: a comparison of two reports made with `--metrics ndcg,ap` tests nDCG and AP beside
the four reference metrics. Without `extra` on both sides the comparison is the reference one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cce_relevance import schemas
from cce_relevance.errors import CceError
from cce_relevance.evaluation.metrics import METRICS, MetricSpec
from cce_relevance.evaluation.rank_metrics import rank_metric_for_key


@dataclass(frozen=True)
class QueryPair:
    """One query's metric values at base and head (a side is None when the query is absent there)."""

    id: str
    base: dict[str, float] | None
    head: dict[str, float] | None

    def delta(self, key: str) -> float | None:
        if self.base is None or self.head is None:
            return None
        return self.head[key] - self.base[key]


@dataclass(frozen=True)
class BackendPair:
    backend: str
    queries: tuple[QueryPair, ...]  # base order first, then head-only queries in head order
    base_means: dict[str, float] | None
    head_means: dict[str, float] | None
    specs: tuple[MetricSpec, ...] = METRICS  # the reference metrics, then the rank metrics both sides carry

    @property
    def paired(self) -> tuple[QueryPair, ...]:
        return tuple(q for q in self.queries if q.base is not None and q.head is not None)

    @property
    def only_base(self) -> tuple[str, ...]:
        return tuple(q.id for q in self.queries if q.head is None)

    @property
    def only_head(self) -> tuple[str, ...]:
        return tuple(q.id for q in self.queries if q.base is None)

    def deltas(self, key: str) -> list[float]:
        return [q.head[key] - q.base[key] for q in self.paired]  # type: ignore[index]


# Metrics lie in [0, 1]; hand-made reports may stray, but a value this large can only be damage,
# and squaring it in the statistics would overflow to infinity (1.7e308, a 400-digit integer).
_MAX_MAGNITUDE = 1e6
_NUMERIC = (int, float, str)  # a tuple: `int | float | str` would make a union object every call


def _number(value: Any, where: str) -> float:
    """A metric value: a finite number or numeric string of modest size (see `_MAX_MAGNITUDE`)."""
    try:
        number = float(value) if isinstance(value, _NUMERIC) and not isinstance(value, bool) else math.nan
    except (ValueError, OverflowError):
        number = math.nan
    # NaN and infinities would poison every statistic; so would a value whose square overflows.
    if not abs(number) <= _MAX_MAGNITUDE:
        shown = "null" if value is None else repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "…"
        raise CceError(
            f"{where}: expected a finite number (a metric, at most {_MAX_MAGNITUDE:g} in size), got {shown}"
        )
    return number


def metric_values(obj: Mapping[str, Any], where: str) -> dict[str, float]:
    """The metric values of a report entry (a backend or a query), by key: the four reference
    metrics, then the rank metrics under its `extra` member (a run report) or beside the four (a
    compare document's base and head values), in the document's order."""
    values = {m.key: _number(obj.get(m.key), f"{where} {m.key}") for m in METRICS}
    for key, value in obj.items():  # a compare document's base/head values hold them beside the four
        if rank_metric_for_key(key) is not None:
            values[key] = _number(value, f"{where} {key}")
    extra = obj.get("extra")
    if extra is None:
        return values
    if not isinstance(extra, dict):
        raise CceError(f'{where}: "extra" must be an object of rank metrics')
    for key, value in extra.items():
        if rank_metric_for_key(key) is None:
            raise CceError(f"{where}: unknown rank metric {key!r} under extra")
        values[key] = _number(value, f"{where} extra.{key}")
    return values


def shared_specs(*entries: Mapping[str, float]) -> tuple[MetricSpec, ...]:
    """The reference metrics, then each rank metric present in every entry (first entry's order)."""
    if not entries:
        return METRICS
    keys = [k for k in entries[0] if all(k in e for e in entries[1:])]
    return METRICS + tuple(spec for k in keys if (spec := rank_metric_for_key(k)) is not None)


def _backends(doc: Any, label: str) -> dict[str, Mapping[str, Any]]:
    if not isinstance(doc, dict) or doc.get("schema") not in schemas.REPORTS_READ:
        raise CceError(f"{label} is not a cce.relevance report (expected schema {schemas.REPORTS_READ[-1]})")
    backends = doc.get("backends")
    if not isinstance(backends, list):
        raise CceError(f'{label}: "backends" must be an array')
    out: dict[str, Mapping[str, Any]] = {}
    for b in backends:
        if (
            not isinstance(b, dict)
            or not isinstance(b.get("backend"), str)
            or not isinstance(b.get("per_query"), list)
        ):
            raise CceError(f"{label}: every backend needs a name and a per_query array")
        out[b["backend"]] = b
    return out


def _queries(backend: Mapping[str, Any], label: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for q in backend["per_query"]:
        if not isinstance(q, dict) or not isinstance(q.get("id"), str):
            raise CceError(f"{label}: every per_query entry needs a string id")
        if q["id"] in out:
            raise CceError(
                f"{label}: duplicate query id {q['id']!r} in backend {backend['backend']!r} "
                "(ids must be unique to pair base and head)"
            )
        out[q["id"]] = metric_values(q, f"{label} {backend['backend']}/{q['id']}")
    return out


def backend_means(doc: Any, label: str) -> dict[str, dict[str, float]]:
    """Each backend's mean metric values in run report `doc`, by backend name then metric key."""
    return {name: metric_values(b, f"{label} {name}") for name, b in _backends(doc, label).items()}


def pair_reports(
    base: Any, head: Any, base_label: str = "base", head_label: str = "head"
) -> list[BackendPair]:
    """Backends in base order then head-only ones; within each, queries paired by id."""
    base_b, head_b = _backends(base, base_label), _backends(head, head_label)
    pairs = []
    for name in [*base_b, *(n for n in head_b if n not in base_b)]:
        bq = _queries(base_b[name], base_label) if name in base_b else {}
        hq = _queries(head_b[name], head_label) if name in head_b else {}
        ids = [*bq, *(i for i in hq if i not in bq)]
        queries = tuple(QueryPair(i, bq.get(i), hq.get(i)) for i in ids)
        base_means = metric_values(base_b[name], f"{base_label} {name}") if name in base_b else None
        head_means = metric_values(head_b[name], f"{head_label} {name}") if name in head_b else None
        sides = [m for m in (base_means, head_means) if m is not None]
        specs = shared_specs(*sides, *(v for q in queries for v in (q.base, q.head) if v is not None))
        pairs.append(BackendPair(name, queries, base_means, head_means, specs))
    return pairs


def metric_specs() -> tuple[MetricSpec, ...]:
    return METRICS


@dataclass(frozen=True)
class AlignedBackend:
    """One backend scored in every one of several reports: the queries all of them hold (first
    report's order) and, per report, those queries' metric values."""

    backend: str
    specs: tuple[MetricSpec, ...]
    query_ids: tuple[str, ...]
    values: tuple[tuple[dict[str, float], ...], ...]  # per report, per query

    def metric(self, key: str) -> list[list[float]]:
        """Per report, the per-query values of `key`."""
        return [[q[key] for q in report] for report in self.values]


def align_reports(docs: list[Any], labels: list[str]) -> list[AlignedBackend]:
    """Backends present in every report (first report's order), queries paired by id across all."""
    backends = [_backends(doc, label) for doc, label in zip(docs, labels, strict=True)]
    aligned = []
    for name in backends[0]:
        if not all(name in b for b in backends[1:]):
            continue
        queries = [_queries(b[name], label) for b, label in zip(backends, labels, strict=True)]
        ids = tuple(i for i in queries[0] if all(i in q for q in queries[1:]))
        values = tuple(tuple(q[i] for i in ids) for q in queries)
        specs = shared_specs(*(v for report in values for v in report)) if ids else METRICS
        aligned.append(AlignedBackend(name, specs, ids, values))
    return aligned
