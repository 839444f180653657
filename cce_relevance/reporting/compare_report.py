"""Renderings of a base → head comparison: `cce.relevance.compare/v1` JSON and human text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cce_relevance import schemas
from cce_relevance.evaluation.comparison import BackendComparison
from cce_relevance.reporting.full_report import FULL_LEGEND, MDE_LEGEND, full_document, full_text_block
from cce_relevance.reporting.json_report import paired_document
from cce_relevance.reporting.numbers import format6, signed6
from cce_relevance.reporting.terminal import terminal_safe
from cce_relevance.reporting.text import paired_heading, paired_row


def _values(values: dict[str, float] | None) -> dict[str, str] | None:
    return {k: format6(v) for k, v in values.items()} if values is not None else None


def comparison_document(
    base_label: str, head_label: str, comparisons: Sequence[BackendComparison]
) -> dict[str, Any]:
    backends = []
    for c in comparisons:
        pair = c.pair
        per_query = []
        for q in pair.queries:
            status = (
                "paired"
                if q.base is not None and q.head is not None
                else ("base-only" if q.head is None else "head-only")
            )
            entry: dict[str, Any] = {
                "id": q.id,
                "status": status,
                "base": _values(q.base),
                "head": _values(q.head),
            }
            if status == "paired":
                entry["delta"] = {m.key: signed6(q.delta(m.key)) for m in pair.specs}  # type: ignore[arg-type]
            per_query.append(entry)
        metrics = {}
        for m in c.metrics:
            block = paired_document(m.test)
            block.update(
                {
                    "base": format6(m.base_mean) if m.base_mean is not None else None,
                    "head": format6(m.head_mean) if m.head_mean is not None else None,
                    "wins": m.wins,
                    "losses": m.losses,
                    "ties": m.ties,
                    "mde80": format6(m.mde) if m.mde is not None else None,
                }
            )
            metrics[m.key] = block
        backend: dict[str, Any] = {
            "backend": pair.backend,
            "status": "paired"
            if pair.base_means and pair.head_means
            else ("base-only" if pair.head_means is None else "head-only"),
            "metrics": metrics,
            "per_query": per_query,
        }
        if c.full is not None:
            backend["full"] = full_document(c.full)
        backends.append(backend)
    return {"schema": schemas.COMPARE, "base": base_label, "head": head_label, "backends": backends}


def _row(label: str, cells: Sequence[str], first: int, width: int = 12) -> str:
    return "  " + label.ljust(first) + "".join(c.rjust(width) for c in cells) + "\n"


def comparison_text(base_label: str, head_label: str, comparisons: Sequence[BackendComparison]) -> str:
    out = [
        f"CCE relevance — base → head comparison\n  base: {terminal_safe(base_label)}\n"
        f"  head: {terminal_safe(head_label)}\n"
    ]
    for c in comparisons:
        pair = c.pair
        out.append(f"\n  backend {pair.backend}")
        if pair.base_means is None or pair.head_means is None:
            out.append(f" (only in {'head' if pair.base_means is None else 'base'})\n")
            continue
        out.append("\n")
        out.append(_row("metric", ["base", "head", "delta", "W/L/T"], first=10, width=12))
        for m in c.metrics:
            wlt = f"{m.wins}/{m.losses}/{m.ties}"
            out.append(
                _row(
                    m.label,
                    [
                        format6(m.base_mean or 0.0),
                        format6(m.head_mean or 0.0),
                        signed6((m.head_mean or 0.0) - (m.base_mean or 0.0)),
                        wlt,
                    ],
                    first=10,
                )
            )
        out.append("\n  per-query deltas (head − base)\n")
        out.append(_row("query", ["d" + m.label for m in pair.specs], first=24))
        for q in pair.paired:
            out.append(_row(terminal_safe(q.id), [signed6(q.delta(m.key)) for m in pair.specs], first=24))  # type: ignore[arg-type]
        for qid in pair.only_base:
            out.append(f"  {terminal_safe(qid).ljust(24)}  only in base\n")
        for qid in pair.only_head:
            out.append(f"  {terminal_safe(qid).ljust(24)}  only in head\n")
        n = len(pair.paired)
        out.append("\n" + paired_heading(n) + "MDE@80%".rjust(12) + "\n")
        for m in c.metrics:
            mde = format6(m.mde) if m.mde is not None else "n/a"
            out.append(paired_row(m.label, m.test) + mde.rjust(12) + "\n")
        if c.full is not None:
            out.append(full_text_block(c.full))
    out.append(MDE_LEGEND)
    if any(c.full is not None for c in comparisons):
        out.append(FULL_LEGEND)
    return "".join(out)
