"""The entry point needs no home directory: runners without a mounted home (Kubernetes mode) give
the container a HOME that does not exist or cannot be written, or none at all. The Action writes
only in the workspace and the temporary directory, so it must work the same in each case.

Run as root on a workspace owned by uid 1001, as GitHub runs a container action: git then needs
the workspace marked as a safe directory, which each git call is told on its own command line
(action/workspace/git.py), never in $HOME/.gitconfig.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.action.fake_github import FakeGitHub
from tests.action.scenario import (
    RANKING_CHANGE,
    ActionRun,
    PullRequest,
    RunnerDirs,
    action_env,
    run_entrypoint,
)

ROOT_ONLY = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root, as in the container"
)


def run_with_home(pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub, home: str | None) -> ActionRun:
    """The Action on the pull request's head, as root on a workspace owned by uid 1001, with
    HOME set to `home` (None: unset)."""
    pr.push(RANKING_CHANGE, "h1")
    pr.check_out_merge()
    os.chown(pr.workspace, 1001, 1001)
    for path in pr.workspace.rglob("*"):
        os.chown(path, 1001, 1001, follow_symlinks=False)
    dirs = RunnerDirs(tmp_path / "runner")
    dirs.prepare(pr.event())
    env = action_env(
        dirs.places(pr.workspace),
        fake_github.url,
        fake_github.token,
        inputs={"INPUT_FAIL-ON": "none", "INPUT_COMMENT": "false"},
    )
    env.pop("HOME")
    if home is not None:
        env["HOME"] = home
    return run_entrypoint(pr.workspace, dirs, env)


@pytest.mark.slow
@ROOT_ONLY
def test_without_home(pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub) -> None:
    run = run_with_home(pr, tmp_path, fake_github, None)
    assert run.code == 0, run.stdout + run.stderr
    assert run.outputs["report"] == ".cce-relevance/report.md" and "Traceback" not in run.stderr


@pytest.mark.slow
@ROOT_ONLY
def test_with_home_pointing_at_a_missing_directory(
    pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub
) -> None:
    missing = tmp_path / "no-such-home"
    run = run_with_home(pr, tmp_path, fake_github, str(missing))
    assert run.code == 0, run.stdout + run.stderr
    assert run.outputs["report"] == ".cce-relevance/report.md"
    assert not missing.exists()


@pytest.mark.slow
@ROOT_ONLY
def test_nothing_is_written_to_home(pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub) -> None:
    home = tmp_path / "home"
    home.mkdir()
    run = run_with_home(pr, tmp_path, fake_github, str(home))
    assert run.code == 0, run.stdout + run.stderr
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == []
