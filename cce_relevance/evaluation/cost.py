"""What a run cost beside what it measured: each backend's query latency and its embedder's work.

Latency is wall time and so differs from run to run; it is never part of the pinned report
(`run --json` without `--cost`, goldens, shard states). It is reported beside quality when asked:
p50 and p95 by linear interpolation between the order statistics (numpy's default percentile),
the slowest query and the total, in milliseconds. A backend that ranks with an embedder of its
own (a variant's `embedder`) also reports that embedder's calls, texts embedded, tokens (where the
endpoint reports them), cache hits and seconds spent — the chunk vectors it needed (the first
backend over an embedder embeds the corpus; others reuse them) and its queries, embedded in
batches before its queries are timed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cce_relevance.evaluation.harness import BackendReport


@dataclass(frozen=True)
class EmbedderCost:
    """One backend's share of its embedder's work (retrieval/embedders/embedder.py `EmbedderUsage`)."""

    name: str
    model: str
    calls: int
    texts: int
    tokens: int | None
    cache_hits: int
    seconds: float


@dataclass(frozen=True)
class Latency:
    """A backend's query latencies summed up, in milliseconds."""

    queries: int
    p50: float
    p95: float
    max: float
    total: float


def latency(report: BackendReport) -> Latency | None:
    """The latency summary of `report`'s cases; None when they were not timed (a report read back)."""
    seconds = [c.seconds for c in report.cases]
    if not seconds or any(s is None for s in seconds):
        return None
    return latency_of([s for s in seconds if s is not None])


def latency_of(seconds: Sequence[float]) -> Latency:
    ms = np.asarray(seconds, dtype=np.float64) * 1000.0
    p50, p95 = np.percentile(ms, [50, 95])
    return Latency(len(ms), float(p50), float(p95), float(ms.max()), float(ms.sum()))


def timed(reports: Sequence[BackendReport]) -> bool:
    """Whether every report's queries were timed: what a cost section needs."""
    return bool(reports) and all(latency(r) is not None for r in reports)
