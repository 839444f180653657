"""Every configuration error writes the step summary, including those met before the inputs are read.

A failed check's first screen on GitHub is the job summary, so an error that only printed its
`::error::` line would leave a reviewer with an empty page. Each case runs the entry point as a
real process in a plain directory (these errors come before any git work) and reads back the
annotation and the summary file the runner would show.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action.scenario import ROOT
from tests.action.test_workflow_commands import runner_commands

TITLE = "cce-relevance: configuration error"


class Step:
    """One run of the entry point with GitHub's variables, in runner-like directories."""

    def __init__(self, root: Path) -> None:
        self.workspace = root / "workspace"
        self.workspace.mkdir()
        (self.workspace / "eval").mkdir()
        (self.workspace / "eval" / "search.jsonl").write_text("{}\n", encoding="utf-8")
        self.commands = root / "file_commands"
        self.commands.mkdir()
        self.summary = self.commands / "summary"
        self.summary.write_text("", encoding="utf-8")
        (self.commands / "output").write_text("", encoding="utf-8")
        self.event = root / "event.json"
        self.event.write_text('{"repository": {"full_name": "octo/demo"}}', encoding="utf-8")
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root),
            "LANG": "C.UTF-8",
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "workflow_dispatch",
            "GITHUB_EVENT_PATH": str(self.event),
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_OUTPUT": str(self.commands / "output"),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            "GITHUB_REPOSITORY": "octo/demo",
            "INPUT_FIXTURES": "eval/search.jsonl",
            "INPUT_COMMENT": "false",
        }

    def run(
        self, wrapper: list[str] | None = None, **env: str
    ) -> tuple[int, list[tuple[dict[str, str], str]], str]:
        """The exit code, the error annotations and the step summary."""
        done = subprocess.run(
            [*(wrapper or []), sys.executable, str(ROOT / "entrypoint.py")],
            cwd=self.commands,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.stderr == "", done.stderr  # never a traceback
        errors = [(props, data) for name, props, data in runner_commands(done.stdout) if name == "error"]
        return done.returncode, errors, self.summary.read_text(encoding="utf-8")


@pytest.fixture
def step(tmp_path: Path) -> Step:
    return Step(tmp_path)


def assert_reported(result: tuple[int, list[tuple[dict[str, str], str]], str], *expected: str) -> None:
    code, errors, summary = result
    assert code == 2
    [(props, message)] = errors
    assert props == {"title": TITLE}
    assert summary.startswith("## Retrieval relevance\n\n**❌ Configuration error:** ")
    assert "no gate was decided and no pull request comment was posted" in summary
    for text in expected:
        assert text in message, message
        assert text in summary.replace("\\", ""), summary  # the summary escapes Markdown


def test_a_glob_that_matches_nothing(step: Step) -> None:
    assert_reported(step.run(INPUT_FIXTURES="eval/nothing-*.jsonl"), "'eval/nothing-*.jsonl' matches no file")


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("INPUT_ALPHA", "1.5", "input 'alpha'"),
        ("INPUT_FAIL-ON", "sometimes", "input 'fail-on': 'sometimes' is not supported"),
        ("INPUT_COMMENT", "yes", "input 'comment': 'yes' is not a boolean"),
        ("INPUT_HISTORY-SIZE", "0", "input 'history-size'"),
        ("INPUT_MODE", "score", "input 'mode'"),
        ("INPUT_FIXTURES", "", "input 'fixtures' is empty"),
    ],
)
def test_a_bad_scalar_input(step: Step, name: str, value: str, expected: str) -> None:
    assert_reported(step.run(**{name: value}), expected)


def test_a_missing_event_file(step: Step) -> None:
    missing = step.event.with_name("gone.json")
    assert_reported(
        step.run(GITHUB_EVENT_PATH=str(missing)),
        f"could not read the event payload GITHUB_EVENT_PATH={missing}",
    )


def test_an_event_file_that_is_not_json(step: Step) -> None:
    step.event.write_text("{not json", encoding="utf-8")
    assert_reported(
        step.run(), f"could not read the event payload GITHUB_EVENT_PATH={step.event}: invalid JSON"
    )


def test_a_workspace_that_is_not_a_directory(step: Step) -> None:
    afile = step.workspace / "eval" / "search.jsonl"
    assert_reported(step.run(GITHUB_WORKSPACE=str(afile)), f"GITHUB_WORKSPACE={afile} cannot be read")


def test_a_workspace_that_does_not_exist(step: Step) -> None:
    gone = step.workspace.with_name("gone")
    assert_reported(step.run(GITHUB_WORKSPACE=str(gone)), f"GITHUB_WORKSPACE={gone} cannot be read")


# Root reads any directory through two capabilities; without them a mode-0 directory is closed
# to root too (util-linux's setpriv drops them for the one command).
WITHOUT_DAC = [
    "setpriv",
    "--inh-caps=-dac_override,-dac_read_search",
    "--bounding-set=-dac_override,-dac_read_search",
]


def test_a_workspace_the_step_cannot_read(step: Step) -> None:
    wrapper: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root reads every directory, and setpriv (util-linux) is not here to drop that")
        wrapper = WITHOUT_DAC
    step.workspace.chmod(0)
    try:
        result = step.run(wrapper=wrapper)
    finally:
        step.workspace.chmod(0o755)
    assert_reported(result, f"GITHUB_WORKSPACE={step.workspace} cannot be read: Permission denied")
    assert "actions/checkout" in result[2]  # the hint says where to look


def test_an_error_after_the_inputs_were_read_writes_the_same_summary(step: Step) -> None:
    """A workspace that is not a git checkout is found once the inputs are read."""
    assert_reported(step.run(), "no git repository at or above", "actions/checkout")
