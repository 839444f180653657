"""`mode: publish` end to end: a fork's evaluating run (read-only token, no comment) leaves
`.cce-relevance/` as an artifact; a `workflow_run` job downloads it through the REST API of the
loopback GitHub, checks it and posts it. Real git, real processes, real HTTP."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from tests.action.fake_github import FakeGitHub
from tests.action.scenario import (
    PR_NUMBER,
    RANKING_CHANGE,
    REPO,
    ActionRun,
    PullRequest,
    RunnerDirs,
    action_env,
    run_entrypoint,
)
from tests.action.test_main_e2e import annotations

EVALUATING_RUN = 77


def evaluate(pr: PullRequest, tmp_path: Path, fake: FakeGitHub) -> bytes:
    """The fork's run: scores with a read-only token and posts nothing; returns `.cce-relevance/` zipped
    as actions/upload-artifact stores it (paths relative to the uploaded directory)."""
    pr.push(RANKING_CHANGE, "h1: reports module")
    pr.check_out_merge()
    dirs = RunnerDirs(tmp_path / "evaluate")
    dirs.prepare(pr.event())
    env = action_env(
        dirs.places(pr.workspace),
        fake.url,
        fake.token,
        inputs={
            "INPUT_COMMENT": "false",
            "GITHUB_WORKFLOW": "Relevance (evaluate)",
            "GITHUB_JOB": "evaluate",
            "INPUT_MATRIX": "null",
        },
    )
    run = run_entrypoint(pr.workspace, dirs, env)
    assert run.code == 1 and fake.comments(REPO, PR_NUMBER) == []  # the golden drifted; nothing posted
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted((pr.workspace / ".cce-relevance").rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(pr.workspace / ".cce-relevance").as_posix())
    return buffer.getvalue()


def publish(pr: PullRequest, tmp_path: Path, fake: FakeGitHub, head: str | None = None) -> ActionRun:
    dirs = RunnerDirs(tmp_path / "publish")
    event = {
        "workflow_run": {
            "id": EVALUATING_RUN,
            "event": "pull_request",
            "head_sha": head or pr.head_sha,
            "pull_requests": [],
        }
    }
    dirs.prepare(event)
    env = action_env(
        dirs.places(pr.workspace),
        fake.url,
        fake.token,
        inputs={
            "GITHUB_EVENT_NAME": "workflow_run",
            "INPUT_MODE": "publish",
            "INPUT_RUN-ID": str(EVALUATING_RUN),
            "INPUT_FIXTURES": "",
            "GITHUB_WORKFLOW": "Relevance (publish)",
            "GITHUB_JOB": "publish",
        },
    )
    return run_entrypoint(pr.workspace, dirs, env)


@pytest.fixture
def pr(tmp_path: Path) -> PullRequest:
    return PullRequest(tmp_path)


def test_a_fork_pull_request_gets_the_evaluating_runs_comment(
    pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub
) -> None:
    fake_github.add_artifact(REPO, EVALUATING_RUN, "cce-relevance", evaluate(pr, tmp_path, fake_github))
    fake_github.pull_heads[(REPO, PR_NUMBER)] = pr.head_sha
    evaluated = (pr.workspace / ".cce-relevance" / "comment.md").read_text(encoding="utf-8")

    run = publish(pr, tmp_path, fake_github)

    assert run.code == 0, run.stdout + run.stderr
    [comment] = fake_github.comments(REPO, PR_NUMBER)
    assert run.outputs["comment-url"] == comment["html_url"]
    marker = evaluated.split("\n", 1)[0]
    assert marker.startswith(
        "<!-- cce-relevance:v1 key=auto-"
    )  # the evaluating step's key, not the publisher's
    assert comment["body"].startswith(marker + "\n") and "`invoice-total` | 1 → 3 |" in comment["body"]
    assert comment["body"].endswith(
        f"<sub>Published from the artifact of run {EVALUATING_RUN} (`mode: publish`).</sub>"
    )
    [download] = fake_github.blob_requests
    assert "authorization" not in download.headers  # the token stayed with the API host
    assert fake_github.token not in run.stdout + run.stderr

    again = publish(pr, tmp_path, fake_github)  # a re-run edits nothing
    assert again.code == 0 and len(fake_github.comments(REPO, PR_NUMBER)) == 1
    assert fake_github.requests_for("PATCH") == []


def test_a_pull_request_that_moved_on_is_left_to_its_newer_run(
    pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub
) -> None:
    fake_github.add_artifact(REPO, EVALUATING_RUN, "cce-relevance", evaluate(pr, tmp_path, fake_github))
    fake_github.pull_heads[(REPO, PR_NUMBER)] = "f" * 40

    run = publish(pr, tmp_path, fake_github)

    assert run.code == 0 and fake_github.comments(REPO, PR_NUMBER) == []
    [(_, notice)] = annotations(run, "notice")
    assert "ffffffffffff" in notice and pr.head_sha[:12] in notice


META = {
    "schema": "cce.relevance.pull-request/v1",
    "number": PR_NUMBER,
    "head": "0" * 40,
    "comment_key": None,
    "changed": True,
    "on_change": False,
}


def zipped(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_the_artifact_is_untrusted(pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub) -> None:
    meta = {
        "schema": "cce.relevance.pull-request/v1",
        "number": PR_NUMBER,
        "head": pr.head_sha,
        "comment_key": None,
        "changed": True,
        "on_change": False,
    }
    forged = "<!-- cce-relevance:v1 key=someone-else -->\nPing @admin and @org/team about #12.\n"
    fake_github.add_artifact(
        REPO,
        EVALUATING_RUN,
        "cce-relevance",
        zipped({"comment.md": forged, "pull-request.json": json.dumps(meta)}),
    )
    fake_github.pull_heads[(REPO, PR_NUMBER)] = pr.head_sha

    run = publish(pr, tmp_path, fake_github)

    [comment] = fake_github.comments(REPO, PR_NUMBER)
    assert comment["body"].startswith("<!-- cce-relevance:v1 -->\n")  # our marker; theirs is dropped
    assert "someone-else" not in comment["body"]
    assert (
        "@\u200badmin" in comment["body"]
        and "@\u200borg/team" in comment["body"]
        and "#\u200b12" in comment["body"]
    )
    assert run.code == 0


@pytest.mark.parametrize(
    ("files", "size", "why"),
    [
        ({"comment.md": "<!-- m -->\nx\n"}, None, "no pull-request.json"),
        ({"comment.md": "x", "pull-request.json": "{}"}, 10**9, "over the"),
        (
            {"comment.md": "x" * 300_000, "pull-request.json": "{}"},
            None,
            "comment.md in the artifact is over",
        ),
        (
            {"comment.md": "x", "pull-request.json": json.dumps(META | {"head": "0" * 40})},
            None,
            "another commit",
        ),
        (
            {"comment.md": "x", "pull-request.json": json.dumps(META | {"head": "%0A::warning::X"})},
            None,
            'pull-request.json: field "head": expected a commit (40 or 64 lowercase hex digits), '
            'got "%0A::warning::X"',
        ),
        (
            {"comment.md": "x", "pull-request.json": json.dumps({"number": PR_NUMBER, "head": "0" * 40})},
            None,
            "pull-request.json: lacks schema, comment_key, changed, on_change",
        ),
    ],
    ids=["missing-file", "too-large", "huge-comment", "other-head", "head-not-a-commit", "fields-missing"],
)
def test_a_bad_artifact_posts_nothing(
    pr: PullRequest,
    tmp_path: Path,
    fake_github: FakeGitHub,
    files: dict[str, str],
    size: int | None,
    why: str,
) -> None:
    fake_github.add_artifact(REPO, EVALUATING_RUN, "cce-relevance", zipped(files), size=size)
    fake_github.pull_heads[(REPO, PR_NUMBER)] = pr.head_sha

    run = publish(pr, tmp_path, fake_github)

    assert run.code == 0 and fake_github.comments(REPO, PR_NUMBER) == []
    [(_, warning)] = annotations(run, "warning")
    assert why in warning
    assert not any(line.startswith("::warning::X") for line in run.stdout.splitlines())


def test_publish_outside_workflow_run_is_a_configuration_error(
    pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub
) -> None:
    dirs = RunnerDirs(tmp_path / "publish")
    dirs.prepare(pr.event())
    env = action_env(
        dirs.places(pr.workspace),
        fake_github.url,
        fake_github.token,
        inputs={"INPUT_MODE": "publish", "INPUT_RUN-ID": "5"},
    )
    run = run_entrypoint(pr.workspace, dirs, env)
    assert run.code == 2 and "workflow_run" in annotations(run, "error")[0][1]
