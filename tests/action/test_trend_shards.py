"""The trend inputs in a sharded workflow: only the `mode: merge` job shows or records the trend.

A team that adds `history` to the shard jobs (where it does nothing) is told so, and a merge job
given `history` or `history-branch` without the checkout its store is read with gets one error
naming the input, not git's "no repository"; without them the merge needs no checkout at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.action.scenario import ActionRun, Copy, action_env, run_entrypoint
from tests.action.test_workflow_commands import runner_commands

HISTORY = {"INPUT_HISTORY": ".cce-relevance-history/history.json"}


def commands(run: ActionRun, kind: str) -> list[str]:
    return [data for name, _, data in runner_commands(run.stdout) if name == kind]


@pytest.mark.slow
def test_trend_inputs_are_a_notice_on_a_shard_and_need_a_checkout_on_the_merge(tmp_path: Path) -> None:
    side = Copy(tmp_path / "sharded", None)
    bare = tmp_path / "fan-in"  # the merge job's workspace: its downloaded artifacts, no checkout
    (bare / "shards").mkdir(parents=True)
    for index in (1, 2):
        run = side.act(INPUT_SHARD=f"{index}/2", **HISTORY)
        assert run.code == 0, run.stdout + run.stderr
        assert commands(run, "notice") == [
            "input 'history': a `shard: I/N` job neither shows nor records the trend; "
            "give it to the `mode: merge` job, which does"
        ]
        assert not (side.pr.workspace / ".cce-relevance-history").exists()
        shutil.copy(side.pr.workspace / run.outputs["shard-state"], bare / "shards")

    def merge(**inputs: str) -> ActionRun:
        side.dirs.prepare(side.pr.event())
        env = action_env(
            side.dirs.places(bare),
            "http://127.0.0.1:9",
            "ghs_unused",
            inputs={"INPUT_MODE": "merge", "INPUT_SHARDS-DIR": "shards", "INPUT_COMMENT": "false", **inputs},
        )
        return run_entrypoint(bare, side.dirs, env)

    run = merge()
    assert run.code == 1, run.stdout + run.stderr  # no checkout needed: the golden drifted, as unsharded
    assert run.outputs["drift"] == "true"
    for given, inputs in (("history", HISTORY), ("history-branch", {"INPUT_HISTORY-BRANCH": "data"})):
        run = merge(**inputs)
        assert run.code == 2, run.stdout + run.stderr
        [error] = commands(run, "error")
        assert error.startswith(
            f"input '{given}': the trend history is read with git, and the `mode: merge` job has no "
            f"checkout in the workspace {bare}"
        )
        assert "add actions/checkout before this step" in error and "Traceback" not in run.stderr
