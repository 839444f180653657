"""Running the Action end to end on hostile workspaces: the scenario's pull request (or a push to
main), the entry point as a child the test can stop (child.py), and the special files the tables
put where an input points.

Shared by the special-file tests (test_action_special_inputs.py) and the input table
(test_action_input_table.py).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

from tests.action.scenario import ROOT, ActionRun, PullRequest, RunnerDirs, action_env
from tests.hostile.child import run_child
from tests.special_files import NULL, device_node

ZERO = 5  # minor number of /dev/zero (major 1)
TIMEOUT = 120  # seconds one run may take before it counts as blocked


def make_special(kind: str, path: Path) -> Iterator[None]:
    """`path` made a special file of `kind` (`fifo`, `dev-null`, `dev-zero`, `socket`, `directory`,
    `dangling-link`, else a regular file) for as long as the generator is open."""
    path.parent.mkdir(parents=True, exist_ok=True)
    server = None
    if kind == "fifo":
        os.mkfifo(path)
    elif kind in ("dev-null", "dev-zero"):
        device_node(path, NULL if kind == "dev-null" else ZERO)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
    elif kind == "directory":
        path.mkdir()
    elif kind == "dangling-link":
        path.symlink_to(path.parent / "nowhere")
    else:
        path.write_text("not a directory\n")
    try:
        yield
    finally:
        if server is not None:
            server.close()


def run_action(
    pr: PullRequest, root: Path, event_name: str = "pull_request", *, merged: bool = False, **inputs: str
) -> ActionRun:
    """The Action on `pr` (checked out at its merge commit unless `merged` says it already is), or
    on a push of main's last commit, with `inputs` (and no comment) in its environment."""
    dirs = RunnerDirs(root / "runner")
    if event_name == "push":
        main = pr._git("rev-parse", "main")
        event: dict[str, object] = {
            "ref": "refs/heads/main",
            "before": pr._git("rev-parse", "main~1"),
            "after": main,
            "repository": {"full_name": "octo/demo", "default_branch": "main"},
        }
        pr._git("checkout", "-q", "--detach", "main")
    else:
        if not merged:
            pr.check_out_merge()
        event = pr.event()
    dirs.prepare(event)
    env = action_env(
        dirs.places(pr.workspace),
        "http://127.0.0.1:9",
        "ghs_test",
        inputs={"GITHUB_EVENT_NAME": event_name, "INPUT_COMMENT": "false", **inputs},
    )
    return entrypoint(pr.workspace, dirs, env, inputs)


def entrypoint(workspace: Path, dirs: RunnerDirs, env: dict[str, str], inputs: dict[str, str]) -> ActionRun:
    """`run_entrypoint` as a child the test can stop: a git stuck matching a pattern does not
    outlive it."""
    argv, blocked = [sys.executable, str(ROOT / "entrypoint.py")], f"the Action blocked (inputs {inputs})"
    done = run_child(argv, cwd=workspace, env=env, timeout=TIMEOUT, blocked=blocked)
    return ActionRun(done.code, done.out, done.err, dirs.outputs(), dirs.summary())


def refused(run: ActionRun) -> str:
    """The run's first `::error` line, after checking it was a configuration error (exit 2) and
    neither a traceback nor an internal error."""
    assert run.code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stdout
    errors = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    assert errors, run.stdout
    return errors[0]
