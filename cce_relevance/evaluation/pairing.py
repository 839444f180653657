"""Pair two saved run reports (base and head) by backend and query id, never by position.

A saved `cce.relevance.report/v2` holds six-decimal strings, so deltas computed here are
differences of the rounded values the reports show. Queries or backends present on one side
only are listed as such and left out of the paired statistics (a paired test needs both).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cce_relevance import schemas
from cce_relevance.errors import CceError
from cce_relevance.evaluation.metrics import METRICS, MetricSpec


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


def _number(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):  # reports never hold NaN or infinities; they would poison every statistic
        raise CceError(f"{where}: expected a finite number, got {value!r}")
    return number


def metric_values(obj: Mapping[str, Any], where: str) -> dict[str, float]:
    """The chunk-level metric values of a report entry (a backend or a query), by key."""
    return {m.key: _number(obj.get(m.key), f"{where} {m.key}") for m in METRICS}


def _backends(doc: Any, label: str) -> dict[str, Mapping[str, Any]]:
    if not isinstance(doc, dict) or doc.get("schema") not in schemas.REPORTS_READ:
        raise CceError(f"{label} is not a cce.relevance report (expected schema {schemas.REPORTS_READ[-1]})")
    backends = doc.get("backends")
    if not isinstance(backends, list):
        raise CceError(f'{label}: "backends" must be an array')
    out: dict[str, Mapping[str, Any]] = {}
    for b in backends:
        if not isinstance(b, dict) or not isinstance(b.get("backend"), str) or not isinstance(b.get("per_query"), list):
            raise CceError(f"{label}: every backend needs a name and a per_query array")
        out[b["backend"]] = b
    return out


def _queries(backend: Mapping[str, Any], label: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for q in backend["per_query"]:
        if not isinstance(q, dict) or not isinstance(q.get("id"), str):
            raise CceError(f"{label}: every per_query entry needs a string id")
        if q["id"] in out:
            raise CceError(f"{label}: duplicate query id {q['id']!r} in backend {backend['backend']!r} "
                           "(ids must be unique to pair base and head)")
        out[q["id"]] = metric_values(q, f"{label} {backend['backend']}/{q['id']}")
    return out


def pair_reports(base: Any, head: Any, base_label: str = "base", head_label: str = "head") -> list[BackendPair]:
    """Backends in base order then head-only ones; within each, queries paired by id."""
    base_b, head_b = _backends(base, base_label), _backends(head, head_label)
    pairs = []
    for name in [*base_b, *(n for n in head_b if n not in base_b)]:
        bq = _queries(base_b[name], base_label) if name in base_b else {}
        hq = _queries(head_b[name], head_label) if name in head_b else {}
        ids = [*bq, *(i for i in hq if i not in bq)]
        queries = tuple(QueryPair(i, bq.get(i), hq.get(i)) for i in ids)
        pairs.append(BackendPair(
            name, queries,
            metric_values(base_b[name], f"{base_label} {name}") if name in base_b else None,
            metric_values(head_b[name], f"{head_label} {name}") if name in head_b else None,
        ))
    return pairs


def metric_specs() -> tuple[MetricSpec, ...]:
    return METRICS
