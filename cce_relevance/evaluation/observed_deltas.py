"""Per-query deltas read back from a saved comparison, as the pilot data of a power analysis.

Three documents carry them. A run report made with `--compare A,B` holds both backends' per-query
values: the deltas are B − A, query by query (the two lists hold the same cases in the same
order, so they pair by position; fixture ids need not be unique). A `cce.relevance.compare/v1`
document holds base and head values per backend and paired query: the deltas are head − base.
The Action's `compare.json` (`cce.relevance.action/v1`) holds one such document per fixture set
scored at both sides; each set's backends are comparisons of their own, named `SET: backend`.
Values are the documents' six-decimal strings, so the deltas are those of the rounded values.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from cce_relevance import schemas
from cce_relevance.errors import CceError
from cce_relevance.evaluation.pairing import metric_values, shared_specs
from cce_relevance.evaluation.rank_metrics import rank_metric_for_key
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.stats.power import PowerAnalysis, PowerRow, plan_from_pilot
from cce_relevance.untrusted_json import expect_array, expect_object


@dataclass(frozen=True)
class DeltaSample:
    """One comparison's per-query deltas of one metric."""

    comparison: str  # "A → B" for a run report, the backend name for a compare document, "SET: backend"
    metric: str  # metric key
    deltas: tuple[float, ...]


def _samples(
    comparison: str, values: Sequence[tuple[dict[str, float], dict[str, float]]]
) -> list[DeltaSample]:
    """One sample per metric: the reference metrics, then each rank metric every query carries."""
    specs = shared_specs(*(side for pair in values for side in pair)) if values else shared_specs()
    return [
        DeltaSample(comparison, m.key, tuple(after[m.key] - before[m.key] for before, after in values))
        for m in specs
    ]


# A saved report or comparison that is not shaped as one is an input error naming the field.
_object = partial(expect_object, error=CceError)
_list = partial(expect_array, error=CceError)


def _report_samples(doc: Mapping[str, Any], label: str) -> list[DeltaSample]:
    if "compare" not in doc:
        raise CceError(
            f"{label} has no compare block, so no per-query deltas",
            hint="make one with `cce-relevance run FIXTURES --compare A,B --json`, or pass a "
            "`cce-relevance compare BASE.json HEAD.json --json` document",
        )
    compare = _object(doc["compare"], f'{label} "compare"')
    a, b = compare.get("a"), compare.get("b")
    backends = {}
    for i, entry in enumerate(_list(doc.get("backends"), f'{label} "backends"')):
        entry = _object(entry, f"{label} backends[{i}]")
        backends[entry.get("backend")] = entry
    for name in (a, b):
        if not isinstance(name, str) or name not in backends:
            raise CceError(
                f"{label}: the compare block names backend {name!r}, which the report does not hold"
            )
    rows_a = _list(backends[a].get("per_query"), f"{label} {a} per_query")
    rows_b = _list(backends[b].get("per_query"), f"{label} {b} per_query")
    if len(rows_a) != len(rows_b):
        raise CceError(
            f"{label}: backends {a} and {b} scored different numbers of queries "
            f"({len(rows_a)} and {len(rows_b)})"
        )
    values = []
    for i, (qa, qb) in enumerate(zip(rows_a, rows_b, strict=True)):
        qa, qb = _object(qa, f"{label} {a} per_query[{i}]"), _object(qb, f"{label} {b} per_query[{i}]")
        if qa.get("id") != qb.get("id"):
            raise CceError(f"{label}: query {i + 1} is {qa.get('id')!r} in {a} but {qb.get('id')!r} in {b}")
        values.append(
            (
                metric_values(qa, f"{label} {a}/{qa.get('id')}"),
                metric_values(qb, f"{label} {b}/{qb.get('id')}"),
            )
        )
    return _samples(f"{a} → {b}", values)


def _compare_samples(doc: Mapping[str, Any], label: str, prefix: str = "") -> list[DeltaSample]:
    samples = []
    for i, entry in enumerate(_list(doc.get("backends"), f'{label} "backends"')):
        backend = _object(entry, f"{label} backends[{i}]")
        name = backend.get("backend")
        if not isinstance(name, str):
            raise CceError(f"{label} backends[{i}]: expected a backend name")
        if backend.get("status") != "paired":
            continue
        values = []
        for j, query in enumerate(_list(backend.get("per_query"), f"{label} {name} per_query")):
            query = _object(query, f"{label} {name} per_query[{j}]")
            if query.get("status") != "paired":
                continue
            where = f"{label} {name}/{query.get('id')}"
            values.append(
                (
                    metric_values(_object(query.get("base"), f"{where} base"), f"{where} base"),
                    metric_values(_object(query.get("head"), f"{where} head"), f"{where} head"),
                )
            )
        samples += _samples(prefix + name, values)
    if not samples:
        raise CceError(f"{label}: no backend was scored at both base and head, so there are no deltas")
    return samples


def _action_samples(doc: Mapping[str, Any], label: str) -> list[DeltaSample]:
    """Every set's comparison in the Action's `compare.json` (sets scored at one side only have none)."""
    samples = []
    for i, entry in enumerate(_list(doc.get("sets"), f'{label} "sets"')):
        entry = _object(entry, f"{label} sets[{i}]")
        if entry.get("compare") is None:
            continue
        name = entry.get("fixtures")
        where = f"{label} {name}"
        samples += _compare_samples(_object(entry["compare"], f'{where} "compare"'), where, f"{name}: ")
    if not samples:
        raise CceError(f"{label}: no fixture set was scored at both base and head, so there are no deltas")
    return samples


def observed_deltas(doc: Any, label: str) -> list[DeltaSample]:
    """Every comparison's per-query deltas of every metric in `doc` (`label` names it in errors)."""
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema in schemas.REPORTS_READ:
        return _report_samples(doc, label)
    if schema == schemas.COMPARE:
        return _compare_samples(doc, label)
    if schema == schemas.ACTION:
        return _action_samples(doc, label)
    raise CceError(
        f"{label} is neither a run report nor a compare document "
        f"(expected schema {schemas.REPORTS_READ[-1]} with a compare block, {schemas.COMPARE}, "
        f"or the Action's {schemas.ACTION})"
    )


def plan_power(
    samples: Sequence[DeltaSample], source: str, delta: float, alpha: float, power: float, metric: str | None
) -> PowerAnalysis:
    """The power plan of each sample (of `metric` only, when given) read from `source`: queries
    needed to detect `delta` at `alpha` with `power`, and the MDE now."""
    if metric is not None and all(s.metric != metric for s in samples):
        spec = rank_metric_for_key(metric)
        raise CceError(
            f"{source} holds no metric {rust_debug_str(metric)} "
            f"(it holds {', '.join(dict.fromkeys(s.metric for s in samples))})",
            hint=f"make the reports with the rank metric {spec.name}" if spec is not None else None,
        )
    rows = tuple(
        PowerRow(s.comparison, s.metric, plan_from_pilot(s.deltas, delta, alpha, power))
        for s in samples
        if metric is None or s.metric == metric
    )
    return PowerAnalysis(source, delta, alpha, power, rows)
