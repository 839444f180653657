"""What one evaluation run measured: every backend's report over a fixture set, and the comparison
of two backends when one was asked for. Data only: reporting/run_report.py renders it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cce_relevance.evaluation.fixtures import FixtureSet
from cce_relevance.evaluation.harness import BackendReport
from cce_relevance.evaluation.judgments import Judgments
from cce_relevance.evaluation.rank_metrics import RankMetricSpec
from cce_relevance.stats.full_stats import FullStats
from cce_relevance.stats.multi_system import SystemsTest
from cce_relevance.stats.paired import PairedTest


@dataclass(frozen=True)
class Comparison:
    a: str
    b: str
    tests: dict[str, PairedTest]
    full: FullStats | None = None  # only with stats_level="full"


@dataclass(frozen=True)
class RunResult:
    """Everything a run measured, ready for any renderer."""

    corpus: str
    embedder: str
    fixtures: FixtureSet
    reports: tuple[BackendReport, ...]
    comparison: Comparison | None
    rank_metrics: tuple[RankMetricSpec, ...] = ()  # the `--metrics` selection, in the order asked
    judgments: tuple[Judgments, ...] | None = None  # per case; set when rank metrics or TREC files were asked
    systems: tuple[SystemsTest, ...] = ()  # `--compare` of three or more backends: one per metric
    index_seconds: float | None = field(default=None, compare=False)  # indexing or loading the corpus
