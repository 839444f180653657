"""A sharded Action run end to end: three `shard: I/N` runs, their states moved as a matrix's
artifacts would be, then a `mode: merge` run, against the unsharded run of the same pull request.

Two copies of the scenario's repository (the same commits: the history is deterministic), each
with its own loopback GitHub and runner directories: one runs unsharded, the other sharded then
merged. Everything a user sees must be byte for byte the same: the report files, compare.json,
the comment posted, the step outputs, the summary and the exit code. The change drifts a golden,
moves a query's answer down and moves a range anchor's lines, so the gate fails and the comment
has something in every section.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.action.fake_github import FakeGitHub
from tests.action.scenario import (
    BILLING_FIXTURE,
    BILLING_FIXTURES,
    CORPUS,
    PR_NUMBER,
    RANKING_CHANGE,
    REPO,
    ActionRun,
    PullRequest,
    RunnerDirs,
    action_env,
    run_entrypoint,
)
from tests.action.test_schemas import validator

ADDED = 'def tax_rate():\n    """The tax rate."""\n    return 0.2\n\n\n'  # five lines above billing.py's functions
CHANGE = {**RANKING_CHANGE, "corpus/billing.py": ADDED + CORPUS["corpus/billing.py"]}
SETS = "eval/*.jsonl"


class Side:
    """One copy of the scenario: its repository, loopback GitHub and runner directories."""

    def __init__(self, root: Path, fake: FakeGitHub) -> None:
        self.pr = PullRequest(root, base_files={BILLING_FIXTURE: BILLING_FIXTURES})
        self.pr.push(CHANGE, "h1: a reports module, and a function above billing.py's")
        self.fake = fake
        self.dirs = RunnerDirs(root / "runner")

    def act(self, **inputs: str) -> ActionRun:
        self.pr.check_out_merge()
        self.dirs.prepare(self.pr.event())
        env = action_env(
            self.dirs.places(self.pr.workspace),
            self.fake.url,
            self.fake.token,
            inputs={"INPUT_FIXTURES": SETS, **inputs},
        )
        return run_entrypoint(self.pr.workspace, self.dirs, env)

    def files(self) -> dict[str, bytes]:
        """The output directory's files but the index cache (and saved sides) in it."""
        out = self.pr.workspace / ".cce-relevance"
        return {
            p.relative_to(out).as_posix(): p.read_bytes()
            for p in sorted(out.rglob("*"))
            if p.is_file() and not p.relative_to(out).as_posix().startswith("cache/")
        }

    def comments(self) -> list[str]:
        return [c["body"] for c in self.fake.comments(REPO, PR_NUMBER)]


@pytest.fixture
def sides(tmp_path: Path, make_fake_github: Callable[..., FakeGitHub]) -> tuple[Side, Side]:
    whole, sharded = (
        Side(tmp_path / "whole", make_fake_github()),
        Side(tmp_path / "sharded", make_fake_github()),
    )
    assert whole.pr.head_sha == sharded.pr.head_sha and whole.pr.merge_base() == sharded.pr.merge_base()
    return whole, sharded


def shard_runs(side: Side, count: int, **inputs: str) -> list[dict[str, object]]:
    """Run shards 1..count, each state copied to `artifacts/cce-relevance-shard-I/` as
    actions/download-artifact leaves a matrix's artifacts; returns the states."""
    states = []
    for index in range(1, count + 1):
        run = side.act(INPUT_SHARD=f"{index}/{count}", **inputs)
        assert run.code == 0, run.stdout + run.stderr
        assert set(run.outputs) == {"shard-state"} and run.summary == ""
        state = side.pr.workspace / run.outputs["shard-state"]
        artifact = side.pr.workspace / "artifacts" / f"cce-relevance-shard-{index}"
        artifact.mkdir(parents=True)
        shutil.copy(state, artifact)
        states.append(json.loads(state.read_text(encoding="utf-8")))
    return states


@pytest.mark.slow
def test_three_shards_merged_are_the_unsharded_run_byte_for_byte(sides: tuple[Side, Side]) -> None:
    whole, sharded = sides
    expected = whole.act()

    states = shard_runs(sharded, 3)
    assert sharded.comments() == []  # a shard never comments
    scored = [
        sum(len(s["run"]["backends"][0]["cases"]) for s in state["sides"]["head"]["sets"]) for state in states
    ]
    assert all(scored) and sum(scored) == 10  # a real split of the two sets' 4 + 6 queries
    for state in states:
        validator("cce.relevance.action.shard.v1").validate(state)  # docs/schemas/ describes it
    merged = sharded.act(INPUT_MODE="merge", **{"INPUT_SHARDS-DIR": "artifacts"})

    assert expected.code == 1, expected.stdout + expected.stderr  # the golden drifted
    assert merged.code == expected.code, merged.stdout + merged.stderr
    assert merged.outputs == expected.outputs
    assert merged.summary == expected.summary
    assert sharded.comments() == whole.comments() and len(whole.comments()) == 1
    assert sharded.files() == whole.files()
    body = whole.comments()[0]
    assert "**-0.667** 🔴" in body and "#### ↕️ Line-range anchors that moved or changed" in body
    assert "3 shards merged" in merged.stdout
