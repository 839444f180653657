"""What scoring the sides gives: one set at one side (`SetAtCommit`), every set at both sides
(`ScoredSides`), and one set compared base → head (`ComparedSet`) as the outcome, the comment, the saved
sides and the trend read it.

Kept apart from the scoring (sides.py) because most of the Action reads these and none of it
needs to know how a commit is checked out and scored. A `ComparedSet` computes its comparison
once, on first use (`api.compare_sides`), and parses each side's report once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, NamedTuple

from cce_relevance import api
from cce_relevance.action.scoring.range_anchors import AnchorMove, SideFixtures
from cce_relevance.api import BackendComparison, SetComparison, TopHit, Validation
from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.golden import GoldenCheck, GoldenFile
from cce_relevance.evaluation.metrics import DEFAULT_PRIMARY
from cce_relevance.evaluation.validation import AnchorFinding

SetStatus = Literal["paired", "head-only", "base-only"]
Rankings = dict[str, dict[str, tuple[TopHit, ...]]]  # backend -> query id -> top hits


@dataclass(frozen=True)
class ComparedSet:
    """One fixture set: its report at each side where it exists (`cce.relevance.report/v2` text),
    and its anchor check there (`validate`)."""

    fixture: str  # as configured: relative to the working directory, POSIX
    base: str | None
    head: str | None
    golden: GoldenCheck | None
    primary: str = DEFAULT_PRIMARY  # the metric the full statistics lead with: the gated one
    base_anchors: Validation | None = None
    head_anchors: Validation | None = None
    base_rankings: Rankings | None = None
    head_rankings: Rankings | None = None
    corpus: str = ""  # the corpus directory, relative to the repository root (POSIX), for links
    anchors: dict[str, tuple[Anchor, ...]] | None = None  # query id -> its anchors (head's, else base's)
    moves: tuple[AnchorMove, ...] = ()  # range anchors whose lines moved or changed (anchor_moves.py)
    latency: dict[str, tuple[float, float]] = field(default_factory=dict)
    """Backend → its query p50 in ms at base and at head (input `cost`; timed at both sides only)."""

    @property
    def status(self) -> SetStatus:
        if self.base is not None and self.head is not None:
            return "paired"
        return "head-only" if self.head is not None else "base-only"

    @cached_property
    def comparison(self) -> SetComparison | None:
        """Base → head paired by query id, with the full statistics (the comment always shows them)
        and the gate's tests over the queries it keeps, computed once; None unless the set was
        scored on both sides. The sides are compared as their run reports' JSON, as
        `cce-relevance compare base.json head.json` compares the report files the Action saves, so
        the statistics are the ones a reader reproduces from them."""
        if self.base is None or self.head is None:
            return None
        return api.compare_sides(
            self.document("base"), self.document("head"), self.primary, self.left_out_queries
        )

    @property
    def comparisons(self) -> tuple[BackendComparison, ...] | None:
        """Per backend, base → head over every query; None unless scored at both sides."""
        return None if self.comparison is None else self.comparison.comparisons

    @property
    def gated_comparisons(self) -> tuple[BackendComparison, ...]:
        """The comparisons of the backends scored at both sides over the queries the regression
        test keeps (none with a stale anchor at either side, nor a range anchor whose lines moved or
        changed): the one query set behind the gate, the verdict and every statistic the comment
        shows."""
        return () if self.comparison is None else self.comparison.gated

    def stale(self, side: Literal["base", "head"]) -> dict[str, tuple[str, ...]]:
        """Query id → its anchors that resolve to nothing at `side` (empty when not checked there)."""
        anchors = self.base_anchors if side == "base" else self.head_anchors
        return {} if anchors is None else anchors.stale_anchors()

    def stale_findings(self, side: Literal["base", "head"]) -> tuple[AnchorFinding, ...]:
        """The anchor check's findings at `side` that are stale anchors, with line and reason."""
        anchors = self.base_anchors if side == "base" else self.head_anchors
        return () if anchors is None else anchors.stale_findings()

    @cached_property
    def stale_queries(self) -> frozenset[str]:
        """Ids of the queries with a stale anchor at base or at head: their delta measures a
        label that stopped (or started) resolving, not the ranking, so the gate leaves them out."""
        return frozenset(self.stale("base")) | frozenset(self.stale("head"))

    @cached_property
    def left_out_queries(self) -> frozenset[str]:
        """The queries the regression test leaves out: a stale anchor at either side, or a range
        anchor whose lines moved or changed (its delta may compare two different labels)."""
        return self.stale_queries | {m.case_id for m in self.moves}

    def document(self, side: Literal["base", "head"]) -> Any:
        """The report of one side as JSON data (the side must exist), parsed once: callers read it,
        never change it."""
        assert side in self._documents, f"{self.fixture} has no {side} report"
        return self._documents[side]

    @cached_property
    def _documents(self) -> dict[str, Any]:
        return {
            side: json.loads(text)
            for side, text in (("base", self.base), ("head", self.head))
            if text is not None
        }


class SetAtCommit(NamedTuple):
    """One set at one side: the run report's JSON text, the anchor check, each query's top hits,
    the corpus (repository-relative), each query's anchors, the set as read, and the run itself
    (its per-query values are what a saved side keeps: saved/side.py)."""

    report: str
    anchors: Validation
    rankings: Rankings
    corpus: str
    expected: dict[str, tuple[Anchor, ...]]
    fixtures: SideFixtures
    run: api.RunResult


@dataclass(frozen=True)
class ScoredSides:
    """Every fixture set scored at each side where it exists (fixture -> result; `base` empty
    without a base commit), and the goldens read at head."""

    base: dict[str, SetAtCommit]
    head: dict[str, SetAtCommit]
    goldens: dict[str, GoldenFile]
