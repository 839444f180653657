"""The Action scores each side's queries in its own process (action/scoring/sides.py
`SCORING_PROCESSES`), with the reports a run in worker processes gives: scoring workers cost more
CPU than they save on a shared runner (docs/dev/performance.md, "The whole check")."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence
from typing import Any

import pytest

from cce_relevance.action.config.inputs import ActionInputs, read_inputs
from cce_relevance.action.scoring.sides import score_commits
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.evaluation import backend_runs, set_scoring
from cce_relevance.evaluation.set_scoring import SCORING_PROCESSES
from cce_relevance.retrieval.index.model import Index
from tests.action.scenario import FIXTURE, RANKING_CHANGE, PullRequest


def _inputs(pr: PullRequest, commits: CommitPair) -> ActionInputs:
    """The Action's inputs comparing `commits` of the pull request's repository."""
    return read_inputs(
        {
            "GITHUB_WORKSPACE": str(pr.workspace),
            "GITHUB_EVENT_NAME": "workflow_dispatch",
            "INPUT_FIXTURES": FIXTURE,
            "INPUT_BASE-REF": commits.base or "",
            "INPUT_HEAD-REF": commits.head,
        }
    )


def test_each_side_is_scored_in_one_process_with_the_reports_of_workers(
    pr: PullRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    pr.push(RANKING_CHANGE, "h1: a new module")
    commits = CommitPair(pr.merge_base(), pr.head_sha)
    inputs = _inputs(pr, commits)
    asked: list[int] = []
    forced: list[int] = []  # the processes to score with instead, once set
    real = backend_runs.evaluate_backends

    def evaluate(
        backends: Sequence[Any],
        cases: Sequence[Any],
        weights: Any,
        judgments: Any,
        processes: int = 1,
        *rest: Any,
    ) -> Any:
        asked.append(processes)
        return real(backends, cases, weights, judgments, (forced or [processes])[0], *rest)

    monkeypatch.setattr(backend_runs, "evaluate_backends", evaluate)
    alone = score_commits(pr.workspace, commits, inputs)
    assert asked == [SCORING_PROCESSES] * 2 == [1, 1]  # head, then base
    forced.append(2)
    monkeypatch.setattr("cce_relevance.evaluation.harness.MIN_CASES_PER_PROCESS", 1)  # forked, however few
    forked = score_commits(pr.workspace, commits, inputs)
    assert [(r.base, r.head) for r in forked] == [(r.base, r.head) for r in alone]


def test_the_head_sides_index_is_freed_before_the_base_side_opens_its_own(
    pr: PullRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both sides' indexes (and what ranking derived from them) never live at once: the head's is
    held only by reference cycles once its side is scored, and collected before the base opens."""
    pr.push(RANKING_CHANGE, "h1: a new module")
    commits = CommitPair(pr.merge_base(), pr.head_sha)
    inputs = _inputs(pr, commits)
    opened: list[weakref.ref[Index]] = []
    alive_at_open: list[list[bool]] = []
    real = set_scoring.open_corpus

    def recording(path: str, **options: Any) -> Index:
        alive_at_open.append([ref() is not None for ref in opened])
        index = real(path, **options)
        index.cosine  # noqa: B018 - what ranking derives, referring back to the index
        opened.append(weakref.ref(index))
        return index

    monkeypatch.setattr(set_scoring, "open_corpus", recording)
    gc.disable()  # only the collection the scoring asks for may free it
    try:
        score_commits(pr.workspace, commits, inputs)
    finally:
        gc.enable()
    assert alive_at_open == [[], [False]]
