"""Cost beside quality: the `cost` document, its text block, and the latency change of a comparison.

A report stays byte-deterministic because cost is never in it unless asked for (`--cost`), and
then only under its own top-level key `cost` (schema `cce.relevance.cost/v1`): a golden is
compared with, and written as, the report without that key, so timing noise can never be drift.
Milliseconds are written to three decimals, seconds to six.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cce_relevance import schemas
from cce_relevance.evaluation.cost import EmbedderCost, Latency, latency
from cce_relevance.evaluation.harness import BackendReport
from cce_relevance.evaluation.run_result import RunResult
from cce_relevance.reporting.terminal import terminal_safe

COST_KEY = "cost"
NOTE = "wall time, this machine; never part of the pinned report"


def _ms(value: float) -> float:
    return round(value, 3)


def _embedder_document(cost: EmbedderCost | None) -> dict[str, Any] | None:
    if cost is None:
        return None
    return {
        "name": cost.name,
        "model": cost.model,
        "calls": cost.calls,
        "texts": cost.texts,
        "tokens": cost.tokens,
        "cache_hits": cost.cache_hits,
        "seconds": round(cost.seconds, 6),
    }


def _latency_document(summary: Latency) -> dict[str, float]:
    return {
        "p50": _ms(summary.p50),
        "p95": _ms(summary.p95),
        "max": _ms(summary.max),
        "total": _ms(summary.total),
    }


def cost_document(result: RunResult) -> dict[str, Any]:
    """The `cost` document of a run whose queries were timed."""
    backends: dict[str, Any] = {}
    for report in result.reports:
        summary = latency(report)
        if summary is None:
            continue
        backends[report.backend] = {
            "queries": summary.queries,
            "latency_ms": _latency_document(summary),
            "per_query_ms": {c.case.id: _ms((c.seconds or 0.0) * 1000.0) for c in report.cases},
            "embedder": _embedder_document(report.embedder),
        }
    index = None if result.index_seconds is None else round(result.index_seconds, 6)
    return {"schema": schemas.COST, "index_seconds": index, "backends": backends}


def _cells(row: Sequence[str], widths: Sequence[int]) -> str:
    return (
        "  " + row[0].ljust(widths[0]) + "".join(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))
    )


def cost_text(result: RunResult) -> str:
    """The text block: per backend its latency and embedder work, the index time, and with
    `--compare` the latency change beside the quality change above it."""
    document = cost_document(result)
    rows = [
        [
            "backend",
            "queries",
            "p50 ms",
            "p95 ms",
            "max ms",
            "total ms",
            "embedder",
            "calls",
            "texts",
            "tokens",
            "cached",
        ]
    ]
    for name, entry in document["backends"].items():
        lat = entry["latency_ms"]
        embedder = entry["embedder"]
        tail = (
            ["-", "", "", "", ""]
            if embedder is None
            else [
                embedder["name"],
                str(embedder["calls"]),
                str(embedder["texts"]),
                "-" if embedder["tokens"] is None else str(embedder["tokens"]),
                str(embedder["cache_hits"]),
            ]
        )
        rows.append(
            [
                terminal_safe(name),
                str(entry["queries"]),
                *(f"{lat[k]:.3f}" for k in ("p50", "p95", "max", "total")),
                *tail,
            ]
        )
    widths = [max(10, *(len(r[0]) + 2 for r in rows))] + [
        max(len(r[i]) for r in rows) + 2 for i in range(1, len(rows[0]))
    ]
    out = ["\n", f"  cost ({NOTE})\n"]
    out += [_cells(r, widths).rstrip() + "\n" for r in rows]
    if document["index_seconds"] is not None:
        out.append(f"  index: {document['index_seconds']:.3f} s\n")
    if result.comparison is not None:
        a, b = result.comparison.a, result.comparison.b
        change = latency_change(document["backends"].get(a), document["backends"].get(b))
        if change:
            out.append(f"  latency {terminal_safe(a)} → {terminal_safe(b)}: {change}\n")
    return "".join(out)


def _ratio(before: float, after: float) -> str:
    return f"×{after / before:.2f}" if before > 0 else "×n/a"


def latency_change(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> str:
    """`p50 0.412 → 0.530 ms (×1.29), p95 …, total …` between two backends' (or sides') cost
    entries; '' when either is missing."""
    if not before or not after:
        return ""
    a, b = before["latency_ms"], after["latency_ms"]
    return ", ".join(
        f"{k} {a[k]:.3f} → {b[k]:.3f} ms ({_ratio(a[k], b[k])})" for k in ("p50", "p95", "total")
    )


def side_costs(report: Any) -> Mapping[str, Any]:
    """The cost entries of a saved run report by backend ({} when it was not run with `--cost`, or
    its `cost` is not one of ours)."""
    cost = report.get(COST_KEY) if isinstance(report, dict) else None
    if not isinstance(cost, dict) or cost.get("schema") != schemas.COST:
        return {}
    backends = cost.get("backends")
    if not isinstance(backends, dict):
        return {}
    return {
        name: entry
        for name, entry in backends.items()
        if isinstance(entry, dict) and _is_latency(entry.get("latency_ms"))
    }


def _is_latency(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(value.get(k), (int, float)) and not isinstance(value.get(k), bool)
        for k in ("p50", "p95", "total")
    )


def compare_cost_text(base: Mapping[str, Any], head: Mapping[str, Any], backends: Sequence[str]) -> str:
    """The latency change base → head of every backend both saved reports timed ('' when none)."""
    lines = [
        f"  {terminal_safe(name)}: {latency_change(base.get(name), head.get(name))}\n"
        for name in backends
        if base.get(name) and head.get(name)
    ]
    return "" if not lines else f"\n  latency base → head ({NOTE})\n" + "".join(lines)


def p50_by_backend(result: RunResult) -> dict[str, float]:
    """Each timed backend's query latency p50 in milliseconds (none for a run read back)."""
    return {r.backend: summary.p50 for r in result.reports if (summary := latency(r)) is not None}


def per_query_seconds(reports: Sequence[BackendReport]) -> bool:
    """Whether every case of every report was timed."""
    return all(c.seconds is not None for r in reports for c in r.cases)
