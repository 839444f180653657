"""Renderings of `cce-relevance power`: human text and the `cce.relevance.power/v1` JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cce_relevance import schemas
from cce_relevance.reporting.full_report import label, optional6
from cce_relevance.reporting.numbers import format6
from cce_relevance.reporting.terminal import terminal_safe
from cce_relevance.stats.power import PowerAnalysis


def power_document(analysis: PowerAnalysis) -> dict[str, Any]:
    rows = [
        {
            "comparison": r.comparison,
            "mde": format6(r.plan.mde) if r.plan.mde is not None else None,
            "metric": r.metric,
            "n": r.plan.n,
            "note": r.plan.note,
            "queries_needed": r.plan.needed,
            "sd": format6(r.plan.sd) if r.plan.sd is not None else None,
        }
        for r in analysis.rows
    ]
    return {
        "alpha": analysis.alpha,
        "delta": format6(analysis.delta),
        "power": analysis.power,
        "rows": rows,
        "schema": schemas.POWER,
        "source": analysis.source,
    }


def _row(cells: Sequence[str]) -> str:
    comparison, metric, *numbers = cells
    return (
        "  "
        + comparison.ljust(24)
        + metric.ljust(10)
        + "".join(c.rjust(w) for c, w in zip(numbers, (6, 12, 12, 16), strict=True))
    )


def power_text(analysis: PowerAnalysis) -> str:
    out = [
        f"CCE relevance — power analysis (paired t-test, two-sided alpha {analysis.alpha:g}, "
        f"power {analysis.power:g})\n",
        f"  source: {terminal_safe(analysis.source)}\n",
        f"  target: a mean delta of {format6(analysis.delta)}\n\n",
        _row(["comparison", "metric", "n", "sd", "MDE now", "queries needed"]) + "\n",
    ]
    for r in analysis.rows:
        p = r.plan
        cells = [
            terminal_safe(r.comparison),
            label(r.metric),
            str(p.n),
            optional6(p.sd),
            optional6(p.mde),
            str(p.needed) if p.needed is not None else "n/a",
        ]
        out.append(_row(cells) + (f"  {p.note}" if p.note else "") + "\n")
    out.append(
        "\n  sd: sample standard deviation of the per-query deltas (the pilot's spread).\n"
        "  MDE now: (t_{alpha/2,n-1} + t_{beta,n-1}) * sd / sqrt(n), the smallest mean delta these n\n"
        "  queries detect; queries needed: the smallest n with n >= ((t_{alpha/2,n-1} + t_{beta,n-1}) * sd\n"
        "  / delta)^2, beta = 1 - power, t quantiles computed (Sakai 2016). See docs/statistics.md.\n"
    )
    return "".join(out)
