"""The end-to-end scenario run directly and inside the Docker image, and the two results compared.

`scripts/docker-e2e.sh` runs this (it needs a Docker engine and the image, so pytest does not
collect it: no `test_` prefix). Each runner gets a fresh, byte-identical build of the scenario
(scenario.py fixes every commit date, so the SHAs match) and its own loopback GitHub, and goes
through the same pull request: a push that drifts the golden (expect exit 1, comment created),
then a push that updates it (expect exit 0, the same comment updated), then a push that renames
a corpus file, leaving an anchor stale and the golden drifted (expect exit 1, updated again). When running as root the
workspace is handed to uid 1001 first, as GitHub mounts it, so git's `safe.directory` and the
hand-back of the report files are exercised too.

The container sees the runner's directories where GitHub mounts them (/github/workspace,
/github/workflow, /github/file_commands, /github/home) and reaches the fake API on 127.0.0.1
through the host network.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.action import scenario
from tests.action.fake_github import FakeGitHub

RUNNER_UID = 1001  # the runner user's uid on GitHub's hosted runners
EXPECTED_CODES = [1, 0, 1]

Runner = Callable[[Path, scenario.RunnerDirs, FakeGitHub], scenario.ActionRun]


def direct(workspace: Path, dirs: scenario.RunnerDirs, fake: FakeGitHub) -> scenario.ActionRun:
    return scenario.run_entrypoint(
        workspace, dirs, scenario.action_env(dirs.places(workspace), fake.url, fake.token)
    )


def in_container(smoke: str) -> Runner:
    """A runner that starts the image with `docker-smoke.sh run`, GitHub's mounts and variables."""

    def run(workspace: Path, dirs: scenario.RunnerDirs, fake: FakeGitHub) -> scenario.ActionRun:
        env = scenario.action_env(scenario.CONTAINER_PLACES, fake.url, fake.token)
        del env["PATH"]  # the image's own PATH, not this machine's
        env_file = dirs.root / "env"
        env_file.write_text("".join(f"{name}={value}\n" for name, value in env.items()), encoding="utf-8")
        inside = scenario.CONTAINER_PLACES
        mounts = {
            dirs.workflow: inside.workflow,
            dirs.file_commands: inside.file_commands,
            dirs.home: inside.home,
        }
        extra = " ".join(f"-v {host}:{there}" for host, there in mounts.items())
        done = subprocess.run(
            [smoke, "run", str(workspace), str(env_file)],
            env={**os.environ, "DOCKER_EXTRA": extra},
            capture_output=True,
            text=True,
            timeout=600,
        )
        return scenario.ActionRun(done.returncode, done.stdout, done.stderr, dirs.outputs(), dirs.summary())

    return run


def play(root: Path, runner: Runner) -> dict[str, Any]:
    """The pull request's two pushes through `runner`; everything a user could observe."""
    pr = scenario.PullRequest(root)
    dirs = scenario.RunnerDirs(root / "runner")
    steps = []
    with FakeGitHub() as fake:
        fake.add_repo(scenario.REPO)
        for push in (
            lambda: pr.push(scenario.RANKING_CHANGE, "h1: reports module"),
            lambda: pr.update_golden("h2: accept the new ranking"),
            lambda: pr.rename("corpus/billing.py", "corpus/invoices.py", "h3: billing.py renamed"),
        ):
            push()
            pr.check_out_merge()
            if os.geteuid() == 0:
                subprocess.run(["chown", "-R", f"{RUNNER_UID}:{RUNNER_UID}", str(pr.workspace)], check=True)
            dirs.prepare(pr.event())
            steps.append(_observe(pr.workspace, runner(pr.workspace, dirs, fake)))
        comments = [
            {k: c[k] for k in ("id", "html_url", "body")}
            for c in fake.comments(scenario.REPO, scenario.PR_NUMBER)
        ]
        requests = [r.method for r in fake.requests]
    return {"steps": steps, "comments": comments, "requests": requests}


def _observe(workspace: Path, run: scenario.ActionRun) -> dict[str, Any]:
    output = workspace / ".cce-relevance"
    # the index cache (cache/) is SQLite: its bytes differ from run to run, its scores do not
    files = sorted(p for p in output.rglob("*") if p.is_file() and p.relative_to(output).parts[0] != "cache")
    not_owned = [
        str(p.relative_to(workspace))
        for p in workspace.rglob("*")
        if os.geteuid() == 0 and p.lstat().st_uid != RUNNER_UID
    ]
    if run.code not in (0, 1):
        print(run.stdout, run.stderr, sep="\n", file=sys.stderr)
    return {
        "code": run.code,
        "outputs": run.outputs,
        "summary": run.summary,
        "files": {str(p.relative_to(workspace)): p.read_text(encoding="utf-8") for p in files},
        "not_owned_by_runner": not_owned,
    }


def check(direct_result: dict[str, Any], container_result: dict[str, Any]) -> list[str]:
    """What is wrong: any difference between the two, or a result the scenario does not expect."""
    problems = []
    if direct_result != container_result:
        a, b = (
            json.dumps(r, indent=1, sort_keys=True, ensure_ascii=False).splitlines()
            for r in (direct_result, container_result)
        )
        problems.append(
            "direct and container results differ:\n"
            + "\n".join(difflib.unified_diff(a, b, "direct", "container", lineterm="", n=2))
        )
    for name, result in (("direct", direct_result), ("container", container_result)):
        codes = [step["code"] for step in result["steps"]]
        if codes != EXPECTED_CODES:
            problems.append(f"{name}: exit codes {codes}, expected {EXPECTED_CODES}")
        if len(result["comments"]) != 1 or result["requests"].count("PATCH") != len(EXPECTED_CODES) - 1:
            problems.append(
                f"{name}: expected one comment, created then updated; requests {result['requests']}"
            )
        if not any("| `invoice-total` | `billing.py` | — | missing-file |" in c["body"] for c in result["comments"]):
            problems.append(f"{name}: the last comment does not list the stale anchor")
        if any(step["not_owned_by_runner"] for step in result["steps"]):
            problems.append(
                f"{name}: files left not owned by uid {RUNNER_UID}: "
                f"{[step['not_owned_by_runner'] for step in result['steps']]}"
            )
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", default="../shared/tools/docker-smoke.sh", help="the docker-smoke.sh to run"
    )
    parser.add_argument("--keep", action="store_true", help="keep the scenario directories and print where")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="cce-docker-e2e-"))
    direct_result = play(root / "direct", direct)
    container_result = play(root / "container", in_container(os.path.abspath(args.smoke)))
    problems = check(direct_result, container_result)
    for step, (d, c) in enumerate(
        zip(direct_result["steps"], container_result["steps"], strict=True), start=1
    ):
        print(
            f"push {step}: exit direct={d['code']} container={c['code']}; verdict: {c['outputs'].get('verdict')}"
        )
    print(f"comment: {len(container_result['comments'])} comment(s), requests {container_result['requests']}")
    if args.keep:
        print(f"scenario directories kept in {root}")
    else:
        subprocess.run(["rm", "-rf", str(root)], check=False)
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    if not problems:
        print(
            "OK: the container's comment, outputs, step summary, report files and exit codes "
            "are identical to the direct run's"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
