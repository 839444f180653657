"""README "Your first fixture set", followed as written in a git repository built here: bootstrap,
review, validate, run, commit the golden, and the workflow inputs it names resolve."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import yaml

from tests.cli.helpers import cli
from tests.cli.proposal_project import write_project
from tests.conftest import REPO_ROOT


def _section(title: str) -> str:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index(f"## {title}\n")
    return readme[start : readme.index("\n## ", start + 1)]


def _commands() -> list[list[str]]:
    block = re.search(r"```sh\n(.*?)```", _section("Your first fixture set"), re.S)
    assert block is not None
    return [shlex.split(line) for line in block.group(1).splitlines() if line.strip()]


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


def test_the_readme_walkthrough_works_as_written(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_project(repo / "src")
    (repo / "eval/relevance").mkdir(parents=True)
    _git(repo, "init", "-q")
    commands = _commands()
    assert [c[:2] for c in commands] == [
        ["cce-relevance", "bootstrap"],
        ["cce-relevance", "validate"],
        ["cce-relevance", "run"],
        ["cce-relevance", "run"],
        ["git", "add"],
        ["git", "commit"],
    ]
    bootstrap, validate, run, golden = (c[1:] for c in commands[:4])
    report = tmp_path / "proposed.txt"
    bootstrap[bootstrap.index("--report") + 1] = str(report)  # the README's /tmp path, kept per test

    made = cli(*bootstrap, "--no-cache", cwd=repo)
    assert made.code == 0, made.err
    assert "MRR" in report.read_text()
    fixtures = repo / "eval/relevance/code.jsonl"
    lines = fixtures.read_text().splitlines()
    assert json.loads(lines[0])["corpus"] == "../../src"
    # review: a person drops the case they would not ask, and adds a second anchor to another
    reviewed = [lines[0], *lines[2:]]
    case = json.loads(reviewed[1])
    case["expected"].append("README.md")
    reviewed[1] = json.dumps(case)
    fixtures.write_text("\n".join(reviewed) + "\n")

    assert cli(*validate, "--no-cache", cwd=repo).code == 0
    scored = cli(*run, "--no-cache", cwd=repo)
    assert scored.code == 0 and f"queries : {len(reviewed) - 1}" in scored.out
    assert cli(*golden, "--no-cache", cwd=repo).code == 0
    golden_file = repo / "eval/relevance/code.golden.json"
    assert json.loads(golden_file.read_text())["queries"] == len(reviewed) - 1
    check = [a for a in golden if a != "--update-golden"]
    assert cli(*check, "--no-cache", cwd=repo).code == 0  # the committed golden holds on the next run
    for git_command in commands[4:]:
        _git(repo, *git_command[1:])
    tracked = subprocess.run(
        ["git", "ls-files", "eval"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.split()
    assert tracked == ["eval/relevance/code.golden.json", "eval/relevance/code.jsonl"]

    # the README's workflow checks the set and golden the walkthrough made
    block = re.search(r"```yaml\n(.*?)```", _section("On every pull request"), re.S)
    assert block is not None
    [ours] = [
        s
        for s in yaml.safe_load(block.group(1))["jobs"]["relevance"]["steps"]
        if "with" in s and "fixtures" in s["with"]
    ]
    fixtures_input, golden_input = ours["with"]["fixtures"], ours["with"]["golden"]
    assert (repo / fixtures_input).is_file()
    assert [(repo / p).is_file() for p in golden_input.split("=")] == [True, True]
