"""The runner-native action (runner/action.yml) agrees with the Docker action, and works.

Its inputs, defaults and outputs are the Docker action's (it is generated from action.yml, and
`--check` fails when it is stale). Its steps are then run the way a Linux runner runs a
composite action: each `run` script with `bash --noprofile --norc -eo pipefail`, `${{ }}`
expressions replaced from the step's context, a fresh GITHUB_OUTPUT file per step, and no
`INPUT_*` variable except those the step's `env` lists. The install step builds a real venv in
RUNNER_TEMP from this checkout; the run step scores the scenario's pull request against the
loopback GitHub, and must leave the same files, outputs, comment and exit code as the Docker
action's entry point.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.action import test_packaging
from tests.action.fake_github import FakeGitHub
from tests.action.scenario import RANKING_CHANGE, ROOT, PullRequest, RunnerDirs, action_env, run_entrypoint
from tests.action.test_packaging import load_yaml
from tests.action.test_repository_retrievers import RETRIEVER, WITH_RETRIEVER
from tests.action.test_workflow_commands import read_outputs

EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")


action = test_packaging.action  # action.yml, parsed


@pytest.fixture(scope="module")
def runner() -> dict[str, Any]:
    return load_yaml(ROOT / "runner" / "action.yml")


def test_it_is_generated_from_action_yml_and_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "runner_action.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_the_inputs_and_their_defaults_are_the_docker_actions(action: dict, runner: dict) -> None:
    assert list(runner["inputs"]) == list(action["inputs"])
    for name, spec in action["inputs"].items():
        mine = runner["inputs"][name]
        assert (mine.get("required"), mine.get("default")) == (spec.get("required"), spec.get("default")), (
            name
        )


def test_the_outputs_are_the_docker_actions_taken_from_the_run_step(action: dict, runner: dict) -> None:
    assert list(runner["outputs"]) == list(action["outputs"])
    for name, spec in runner["outputs"].items():
        assert spec["value"] == f"${{{{ steps.run.outputs.{name} }}}}"


def test_every_input_reaches_the_entry_point(runner: dict) -> None:
    [run] = [s for s in runner["runs"]["steps"] if s["id"] == "run"]
    mapped = {key: value for key, value in run["env"].items() if key.startswith("INPUT_")}
    assert mapped == {
        f"INPUT_{n.upper().replace('-', '_')}": f"${{{{ inputs.{n} }}}}" for n in runner["inputs"]
    }


def test_every_step_runs_in_bash_so_it_works_on_each_os(runner: dict) -> None:
    assert runner["runs"]["using"] == "composite"
    assert {s["shell"] for s in runner["runs"]["steps"]} == {"bash"}


class CompositeRun:
    """One use of the composite action on a Linux runner layout (see the module docstring)."""

    def __init__(
        self,
        action: dict[str, Any],
        action_path: Path,
        temp: Path,
        base_env: dict[str, str],
        with_: dict[str, str],
        github: dict[str, str],
    ) -> None:
        self.action, self.action_path, self.temp = action, action_path, temp
        self.base_env = {k: v for k, v in base_env.items() if not k.startswith("INPUT_")}
        self.context = {"github.action_path": str(action_path), "runner.temp": str(temp), **github}
        for name, spec in action["inputs"].items():
            value = with_.get(name, spec.get("default", ""))
            self.context[f"inputs.{name}"] = self.evaluate(str(value))

    def evaluate(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.context[m.group(1)], text)  # an unknown expression: KeyError

    def run(self, cwd: Path, only: str | None = None) -> tuple[int, str, dict[str, str]]:
        """Run the steps in order (or just the step `only`), stopping at the first failure; the
        last exit code, the log and the action's outputs."""
        log, code = "", 0
        for number, step in enumerate(self.action["runs"]["steps"]):
            if only is not None and step["id"] != only:
                continue
            script = self.temp / f"step-{number}.sh"
            script.write_text(step["run"], encoding="utf-8")
            output = self.temp / f"output-{number}"
            output.write_text("", encoding="utf-8")
            env = {
                **self.base_env,
                "GITHUB_ACTION_PATH": str(self.action_path),
                "RUNNER_TEMP": str(self.temp),
                "RUNNER_OS": "Linux",
                "GITHUB_OUTPUT": str(output),
                **{key: self.evaluate(str(value)) for key, value in step.get("env", {}).items()},
            }
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            log += done.stdout + done.stderr
            for key, value in read_outputs(output).items():
                self.context[f"steps.{step['id']}.outputs.{key}"] = value
            code = done.returncode
            if code:
                break
        # an output its step did not set is empty, as on GitHub
        outputs = {
            name: EXPRESSION.sub(lambda m: self.context.get(m.group(1), ""), spec["value"])
            for name, spec in self.action["outputs"].items()
        }
        return code, log, outputs


@pytest.mark.slow
def test_on_a_linux_runner_it_scores_comments_and_gates_as_the_docker_action_does(
    pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub, runner: dict
) -> None:
    pr.push(RANKING_CHANGE, "h1: a new file outranks billing.py for the invoice query")
    pr.check_out_merge()
    inputs = {"fail-on": "regression", "backends": "bm25", "comment": "false"}

    dirs = RunnerDirs(tmp_path / "docker-runner")
    dirs.prepare(pr.event())
    env = action_env(
        dirs.places(pr.workspace),
        fake_github.url,
        fake_github.token,
        inputs={f"INPUT_{k.upper()}": v for k, v in inputs.items()},
    )
    expected = run_entrypoint(pr.workspace, dirs, env)
    expected_files = {
        p.relative_to(pr.workspace): p.read_bytes()
        for p in sorted((pr.workspace / ".cce-relevance").rglob("*"))
        if p.is_file()
    }
    shutil.rmtree(pr.workspace / ".cce-relevance")

    temp = tmp_path / "runner-temp"
    temp.mkdir()
    composite = dirs.places(pr.workspace)
    base_env = {**action_env(composite, fake_github.url, fake_github.token), "RUNNER_TEMP": str(temp)}
    (dirs.file_commands / "summary").write_text("", encoding="utf-8")
    with_ = {"fixtures": base_env["INPUT_FIXTURES"], "golden": base_env["INPUT_GOLDEN"], **inputs}
    run = CompositeRun(
        runner,
        ROOT / "runner",
        temp,
        base_env,
        with_,
        {"github.token": fake_github.token, "toJSON(matrix)": "null"},
    )
    code, log, outputs = run.run(pr.workspace)

    assert expected.code == 1, expected.stdout + expected.stderr  # the regression gate failed
    assert code == expected.code, log
    assert outputs == {**dict.fromkeys(outputs, ""), **expected.outputs}  # shard-state: not set, so empty
    files = {
        p.relative_to(pr.workspace): p.read_bytes()
        for p in sorted((pr.workspace / ".cce-relevance").rglob("*"))
        if p.is_file()
    }
    assert files == expected_files  # report.md, compare.json, comment.md, every saved report
    assert dirs.summary() == expected.summary
    assert Path(outputs["report"]).as_posix() == ".cce-relevance/report.md"
    venv_python = run.context["steps.install.outputs.python"]
    assert venv_python.startswith(str(temp)) and os.path.isfile(venv_python)  # isolated, in RUNNER_TEMP
    assert not (ROOT / "runner" / "build").exists()


# The team's retriever needs a package that neither the Docker image nor the action's own venv
# has (PyYAML: a test dependency here, absent from requirements/runtime.txt).
TEAM_RETRIEVER = "import yaml  # the team's dependency\n" + RETRIEVER
TEAM_CONFIG = '[backends.mine]\ncommand = ["python3", "tools/retriever.py", "corpus"]\n'


@pytest.mark.slow
@pytest.mark.parametrize(
    "pr",
    [
        {
            **WITH_RETRIEVER,
            "cce-relevance.toml": TEAM_CONFIG,
            "tools/retriever.py": TEAM_RETRIEVER.format(order=1),
        }
    ],
    indirect=True,
)
def test_the_teams_retriever_runs_with_the_teams_packages_at_base_and_head(
    pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub, runner: dict
) -> None:
    pr.push(
        {"tools/retriever.py": TEAM_RETRIEVER.format(order=-1)},
        "h1: the retriever ranks the worst match first",
    )
    pr.check_out_merge()
    dirs = RunnerDirs(tmp_path / "runner")
    dirs.prepare(pr.event())
    temp, log = tmp_path / "runner-temp", tmp_path / "retriever-log"
    temp.mkdir()
    log.mkdir()
    team_bin = str(Path(sys.executable).parent)  # the workflow's setup-python + pip install: yaml importable
    base_env = {
        **action_env(dirs.places(pr.workspace), fake_github.url, fake_github.token),
        "PATH": f"{team_bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
        "RETRIEVER_LOG": str(log),
    }
    with_ = {
        "fixtures": base_env["INPUT_FIXTURES"],
        "backends": "bm25,mine",
        "comment": "false",
        "allow-repository-retrievers": "true",
    }
    github = {"github.token": fake_github.token, "toJSON(matrix)": "null"}
    run = CompositeRun(runner, ROOT / "runner", temp, base_env, with_, github)

    code, output_log, outputs = run.run(pr.workspace)

    assert code == 0, output_log
    comment = (pr.workspace / ".cce-relevance" / "comment.md").read_text(encoding="utf-8")
    assert "| `mine` | 0.333→0.000 (-0.333) | 1.000→0.000 (-1.000) |" in comment  # head's script scored head
    assert len((log / "calls").read_text(encoding="utf-8").splitlines()) == 2  # once per side
    isolated = subprocess.run(
        [run.context["steps.install.outputs.python"], "-c", "import yaml"], capture_output=True
    )
    assert isolated.returncode != 0  # the action's own venv does not lend the retriever its packages

    refused = CompositeRun(
        runner, ROOT / "runner", temp, {**base_env, "GITHUB_EVENT_NAME": "pull_request_target"}, with_, github
    )
    refused.context.update({k: v for k, v in run.context.items() if k.startswith("steps.")})
    code, output_log, _ = refused.run(pr.workspace, only="run")
    assert code == 2
    assert "repository retrievers never run under pull_request_target" in output_log
    assert len((log / "calls").read_text(encoding="utf-8").splitlines()) == 2  # nothing ran


def test_the_documented_workflow_uses_the_runner_action_with_its_inputs(runner: dict) -> None:
    workflow = load_yaml(ROOT / "docs" / "examples" / "own-retriever" / "relevance.yml")
    assert "pull_request_target" not in workflow[True] and "workflow_run" not in workflow[True]  # `on:`
    [step] = [
        s
        for job in workflow["jobs"].values()
        for s in job["steps"]
        if s.get("uses", "").split("@")[0].endswith("/cce-relevance/runner")
    ]
    assert set(step["with"]) <= set(runner["inputs"])
    assert step["with"]["allow-repository-retrievers"] is True
