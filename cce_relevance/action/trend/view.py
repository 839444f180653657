"""`cce-relevance trend HISTORY`: the series a trend history holds, as text or JSON.

The Action draws one series in the comment (the gated metric on the verdict's backend); this
prints any of them, with every point's commit, date and value, so a team can look at a history
kept in a cache or an artifact without writing code. A selection names a metric (default MRR),
and optionally a fixture set and a backend; a history with one set needs no `--set`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cce_relevance import schemas
from cce_relevance.action.trend.history import Entry, History, HistoryError, read_history
from cce_relevance.errors import CceError
from cce_relevance.reporting.numbers import format6
from cce_relevance.reporting.sparkline import sparkline


@dataclass(frozen=True)
class Series:
    """One (fixture set, backend, metric) across the entries that hold it, oldest first."""

    fixture: str
    backend: str
    metric: str
    points: tuple[tuple[Entry, float], ...]


def load(path: str) -> History:
    """The history at `path`; a missing or unreadable file is a `CceError` naming it (exit 2)."""
    try:
        history = read_history(Path(path))
    except HistoryError as exc:
        raise CceError(f"the trend history {path} {exc}") from None
    if history is None:
        raise CceError(f"the trend history {path} does not exist")
    return history


def select(history: History, metric: str, fixture: str | None, backend: str | None) -> list[Series]:
    """Every series of `metric` (in `fixture`, of `backend` when given), sets and backends in the
    order they first appear; an empty selection is a `CceError` listing what there is."""
    sets = _first_seen(f for e in history.entries for f in e.sets)
    if fixture is None and len(sets) > 1:
        raise CceError(
            f"the history holds {len(sets)} fixture sets: choose one with --set ({', '.join(sets)})"
        )
    chosen = [f for f in sets if fixture is None or f == fixture]
    found = []
    for f in chosen:
        for b in _first_seen(b for e in history.entries for b in e.sets.get(f, {})):
            if backend is None or b == backend:
                points = tuple(history.series(f, b, metric))
                if points:
                    found.append(Series(f, b, metric, points))
    if not found:
        backends = _first_seen(b for e in history.entries for by in e.sets.values() for b in by)
        metrics = _first_seen(
            m for e in history.entries for by in e.sets.values() for v in by.values() for m in v
        )
        raise CceError(
            f"the history holds no values of {metric!r}"
            + (f" in {fixture!r}" if fixture else "")
            + (f" on {backend!r}" if backend else "")
            + f": it has sets {', '.join(sets) or 'none'}; backends {', '.join(backends) or 'none'}; "
            f"metrics {', '.join(metrics) or 'none'}"
        )
    return found


def trend_text(history: History, series: Sequence[Series]) -> str:
    """Per series a heading line with its sparkline and range, then one line per push."""
    blocks = []
    for s in series:
        values = [v for _, v in s.points]
        pushes = f"{len(values)} push{'' if len(values) == 1 else 'es'} to {history.branch}"
        scale = f"{format6(min(values))}–{format6(max(values))}"
        lines = [f"{s.fixture} · {s.backend} · {s.metric} ({pushes}, {scale})", sparkline(values)]
        lines += [
            f"  {e.date}  {e.commit[:12]}  {format6(v)}  cce-relevance {e.version}" for e, v in s.points
        ]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def trend_document(history: History, series: Sequence[Series]) -> dict[str, Any]:
    """`cce.relevance.trend/v1`: the selected series with every point."""
    return {
        "schema": schemas.TREND,
        "branch": history.branch,
        "series": [
            {
                "set": s.fixture,
                "backend": s.backend,
                "metric": s.metric,
                "points": [
                    {"commit": e.commit, "date": e.date, "version": e.version, "value": v}
                    for e, v in s.points
                ],
            }
            for s in series
        ],
    }


def _first_seen(names: Any) -> list[str]:
    return list(dict.fromkeys(names))
