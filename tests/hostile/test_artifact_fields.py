"""Every field of a shard state, tampered: refused by name, or escaped wherever it is shown.

A shard job runs the pull request's code, so its state is the attacker's to write; the merge job
holds the write token. This walks every field (and every key) of a real state, made by a real
sharded run (tests/action/test_shards_e2e.py), puts a hostile value there — a workflow command,
markup, a git option, a path out of the workspace, a NUL, the wrong JSON type — and merges. The
run must either refuse the artifact (exit 2, one `::error` naming the file) or go on with the
value shown as text: no command but ours reaches the runner, no HTML, image, link or mention
reaches the summary or the comment, no file appears outside the workspace and the runner's
directories, and nothing ends as an internal error.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cce_relevance.action.main import main
from tests.action.scenario import Copy, action_env
from tests.action.test_shards_e2e import STATE, shard_runs
from tests.action.test_untrusted_artifacts_e2e import files_outside
from tests.action.test_workflow_commands import Command, runner_commands

pytestmark = pytest.mark.slow

OURS = {"error", "warning", "notice"}
HOSTILE: list[Any] = [
    "%0A::warning::pwned",
    "\n::add-mask::pwned",
    "\r::error::pwned",
    "x ##[error]pwned",
    "<img src=x onerror=alert(1)>pwned",
    "@octocat #1 [pwned](https://evil.example/)",
    "--output={outside}",
    "../../../../pwned",
    "/tmp/pwned",
    "pwned\x00",
    "\u202epwned",
    None,
    -1,
    True,
    2**63,
    1e308,
    [],
    {},
    ["pwned"],
]
Path_ = tuple[Any, ...]  # keys and indices from the document's root; a final ("key",) renames a key


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Copy:
    side = Copy(tmp_path_factory.mktemp("fields"), None)
    shard_runs(side, 3)
    return side


def _fields(value: Any, at: Path_ = ()) -> Iterator[Path_]:
    """Every leaf's path (lists: their first element, or the list itself when empty), and every
    object key's, as a path ending in ("key", name)."""
    if isinstance(value, dict):
        if not value:
            yield at
        for key, item in value.items():
            yield (*at, ("key", key))
            yield from _fields(item, (*at, key))
    elif isinstance(value, list):
        yield from _fields(value[0], (*at, 0)) if value else iter([at])
    else:
        yield at


def _schema_path(path: Path_) -> str:
    """The path with data keys (fixture sets, backends, query ids) generalised, for one test each."""
    parts = []
    for step in path:
        if isinstance(step, tuple):
            parts.append("<key>")
        elif isinstance(step, int):
            parts.append("[0]")
        else:
            parts.append(step if step.isidentifier() else "<name>")
    return ".".join(parts)


def _state(shards: Copy) -> dict[str, Any]:
    return json.loads((shards.pr.workspace / "artifacts" / STATE.format(1)).read_text(encoding="utf-8"))


def tamper(document: dict[str, Any], path: Path_, value: Any) -> None:
    *parents, last = path
    for step in parents:
        document = document[step]
    if isinstance(last, tuple):
        document[json.dumps(value) if not isinstance(value, str) else value] = document.pop(last[1])
    elif last == ():
        raise AssertionError("the root is not a field")
    else:
        document[last] = value


def run_merge(shards: Copy, name: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`mode: merge` of `artifacts-NAME/` in this process (a subprocess a field would cost a
    second): the runner's environment in place of ours, the workspace as the directory."""
    copy = shards
    copy.pr.check_out_merge()
    copy.dirs.prepare(copy.pr.event())
    env = action_env(
        copy.dirs.places(copy.pr.workspace),
        "http://127.0.0.1:9",
        "ghs_unused",
        inputs={
            "INPUT_FIXTURES": "eval/*.jsonl",
            "INPUT_MODE": "merge",
            "INPUT_SHARDS-DIR": name,
            "INPUT_COMMENT": "false",  # comment.md is written all the same
        },
    )
    saved, cwd = dict(os.environ), Path.cwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(copy.pr.workspace)
    try:
        code = main()
    finally:
        os.environ.clear()
        os.environ.update(saved)
        os.chdir(cwd)
    return code, capsys.readouterr().out


def _without_fences(acted: list[Command]) -> list[Command]:
    """The commands but the `::stop-commands::` fences our log puts around a golden's diff."""
    kept, token = [], None
    for command in acted:
        if command[0] == "stop-commands":
            token = command[2].lower()
        elif command[0].lower() == token:
            token = None
        else:
            kept.append(command)
    return kept


def check(shards: Copy, path: Path_, value: Any, capsys: pytest.CaptureFixture[str]) -> None:
    outside = shards.pr.workspace.parent / "outside"
    if isinstance(value, str):
        value = value.replace("{outside}", str(outside / "written"))
    name = "tampered"
    root = shards.pr.workspace / name
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(shards.pr.workspace / "artifacts", root)
    document = _state(shards)
    tamper(document, path, value)
    (root / STATE.format(1)).write_text(json.dumps(document), encoding="utf-8")
    before = files_outside(shards)

    code, log = run_merge(shards, name, capsys)

    assert code in (0, 1, 2), log
    acted = _without_fences(runner_commands(log))
    assert {command for command, _, _ in acted} <= OURS, acted
    assert not any(message.startswith("pwned") for _, _, message in acted), acted
    if code == 2:
        [(_, _, message)] = acted
        assert STATE.format(1) in message, message
    else:
        out = shards.pr.workspace / ".cce-relevance"
        for shown in (shards.dirs.summary(), (out / "comment.md").read_text(encoding="utf-8")):
            html = cmarkgfm.github_flavored_markdown_to_html(shown, options=Options.CMARK_OPT_UNSAFE)
            assert "<img" not in html and 'href="https://evil' not in html, html
            assert "@octocat" not in shown and "\x00" not in shown
    assert files_outside(shards) == before
    assert not outside.exists()


def test_every_field_of_a_shard_state_is_refused_or_shown_as_text(
    shards: Copy, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each schema position once, each with the next hostile value in turn (so every value meets
    about a dozen fields and every field one value)."""
    seen: dict[str, Path_] = {}
    for path in _fields(_state(shards)):
        seen.setdefault(_schema_path(path), path)
    assert len(seen) > 100  # every field of the state, sides included
    failed = []
    for number, (where, path) in enumerate(sorted(seen.items())):
        value = HOSTILE[number % len(HOSTILE)]
        try:
            check(shards, path, value, capsys)
        except AssertionError as exc:
            failed.append(f"{where} = {value!r}: {str(exc)[:300]}")
    print("\n".join(failed))
    assert failed == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_text_in_any_field_is_refused_or_shown_as_text(
    shards: Copy, capsys: pytest.CaptureFixture[str], data: st.DataObject
) -> None:
    fields = sorted(set(_fields(_state(shards))), key=repr)
    path = data.draw(st.sampled_from(fields), label="field")
    value = data.draw(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=40)), label="value")
    check(shards, path, value, capsys)
