"""A shard state is data a pull request's code wrote: the `mode: merge` job, which holds a write
token, must refuse a forged one by name, and nothing in it may reach git as an option or the log
as a workflow command.

Each case merges the three shards' artifacts of one real sharded run (tests/action/
test_shards_e2e.py), tampered in every state alike, so the shards still agree with each other
and only the check of each field can catch the forgery. Every run must end with one
`::error` naming the artifact file and the field, exit 2, run no command taken from the data,
and leave no file outside the workspace and the runner's directories.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from typing import Any

import pytest

from tests.action.scenario import ActionRun, Copy
from tests.action.test_shards_e2e import STATE, edit, shard_runs
from tests.action.test_workflow_commands import runner_commands

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Copy:
    side = Copy(tmp_path_factory.mktemp("untrusted"), None)
    shard_runs(side, 3)
    return side


def files_outside(side: Copy) -> set[str]:
    """Every file under the scenario's root but the workspace and the runner's directories."""
    root = side.pr.workspace.parent
    kept = (side.pr.workspace, side.dirs.root)
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if not any(p == k or k in p.parents for k in kept)
    }


def merge(
    side: Copy,
    name: str,
    change: Callable[[dict[str, Any]], None],
    event: dict[str, object] | None = None,
    **inputs: str,
) -> ActionRun:
    """`mode: merge` of a copy of the artifacts with `change` made to every shard state."""
    root = side.pr.workspace / name
    shutil.copytree(side.pr.workspace / "artifacts", root)
    for index in (1, 2, 3):
        edit(root / STATE.format(index), change)
    before = files_outside(side)
    run = side.act(event, INPUT_MODE="merge", **{"INPUT_SHARDS-DIR": name, **inputs})
    assert files_outside(side) == before, "the merge job wrote outside the workspace"
    return run


def refusal(run: ActionRun) -> str:
    """The one `::error` of a run refused as a configuration error, after every other check of
    its log: exit 2, no traceback, no command but our own error."""
    assert run.code == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    acted = runner_commands(run.stdout)
    assert [name for name, _, _ in acted] == ["error"], acted
    [(_, properties, message)] = acted
    assert properties.get("title") == "cce-relevance: configuration error"
    assert message.startswith("input 'shards-dir': "), message
    return message


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(document: dict[str, Any]) -> None:
        document[key] = value

    return change


@pytest.mark.parametrize("field", ["head", "base"])
@pytest.mark.parametrize("value", ["%0A::warning::X", "\n::warning::X", "0" * 39 + "\r::notice::X"])
def test_a_commit_field_holding_a_workflow_command_is_refused_and_runs_none(
    shards: Copy, field: str, value: str
) -> None:
    run = merge(shards, f"command-{field}-{len(value)}-{value[0] == '%'}", _set(field, value))

    message = refusal(run)
    assert STATE.format(1) in message and f'"{field}"' in message, message
    assert "X" not in [m for _, _, m in runner_commands(run.stdout)]


def test_a_commit_field_holding_a_git_option_writes_no_file_on_a_push_with_a_history(shards: Copy) -> None:
    """Merged on a push to the default branch with `history` set, the states' head went to git
    as `--output=PATH` (git wrote PATH, outside the workspace, then the run failed with exit 70)."""
    outside = shards.pr.workspace.parent / "outside" / "written-by-git"
    outside.parent.mkdir()
    event = {
        "before": shards.pr.merge_base(),
        "after": shards.pr.head_sha,
        "ref": "refs/heads/main",
        "repository": {"default_branch": "main", "full_name": "octo/demo"},
    }

    run = merge(
        shards,
        "git-option",
        _set("head", f"--output={outside}"),
        event,
        GITHUB_EVENT_NAME="push",
        INPUT_HISTORY=".cce-relevance-history/history.json",
    )

    message = refusal(run)
    assert STATE.format(1) in message and '"head"' in message, message
    assert not outside.exists() and list(outside.parent.iterdir()) == []


@pytest.mark.parametrize("junk", [[None], [1], [{}], [["eval/code.jsonl"]], "eval/code.jsonl", {"a": 1}])
def test_an_edited_list_of_junk_is_refused_naming_the_field(shards: Copy, junk: Any) -> None:
    run = merge(shards, f"edited-{json.dumps(junk).encode().hex()}", _set("edited", junk))

    message = refusal(run)
    assert STATE.format(1) in message and "edited" in message, message


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside.jsonl", "eval/../../x.jsonl", "eval/\x00.jsonl"])
def test_an_edited_path_outside_the_repository_is_refused(shards: Copy, path: str) -> None:
    run = merge(shards, f"edited-path-{path.encode().hex()}", _set("edited", [path]))

    message = refusal(run)
    assert STATE.format(1) in message and "edited" in message, message


def test_shards_of_another_head_commit_are_refused_by_name(shards: Copy) -> None:
    """Well-formed states that agree with each other, but for a commit this run is not about."""
    other = "f" * 40

    def retarget(document: dict[str, Any]) -> None:
        document["head"] = other
        document["sides"]["head"]["commit"] = other

    message = refusal(merge(shards, "other-head", retarget))
    assert STATE.format(1) in message and other in message and shards.pr.head_sha in message, message


def test_shards_of_another_base_commit_are_refused_on_a_push(shards: Copy) -> None:
    """A push names its base (`before`): shards that scored another base are not this push's."""
    event = {
        "before": "e" * 40,
        "after": shards.pr.head_sha,
        "ref": "refs/heads/feature",
        "repository": {"default_branch": "main", "full_name": "octo/demo"},
    }

    message = refusal(merge(shards, "other-base", lambda document: None, event, GITHUB_EVENT_NAME="push"))
    assert STATE.format(1) in message and "e" * 40 in message, message
