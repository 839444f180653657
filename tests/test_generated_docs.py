"""The docs that the code states are generated from it, and say everything it has.

docs/cli-reference.md is every command's `--help`; docs/action.md's inputs and outputs tables
are action.yml's (scripts/generated_docs.py writes both). sqlite-utils' `test_commands_are_documented`
and `test_commands_have_help` are the model for the two checks that follow.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import click
import pytest

from cce_relevance.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("generated_docs", ROOT / "scripts" / "generated_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("doc", ["docs/cli-reference.md", "docs/action.md"])
def test_the_generated_docs_are_current(doc: str) -> None:
    expected = {path.relative_to(ROOT).as_posix(): text for path, text in _script().expected().items()}
    assert (ROOT / doc).read_text(encoding="utf-8") == expected[doc], (
        "run python scripts/generated_docs.py and commit the result"
    )


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_is_documented(name: str) -> None:
    reference = (ROOT / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    guide = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert f"\n## cce-relevance {name}\n" in reference
    assert f"[`{name}`](cli-reference.md#cce-relevance-{name})" in guide


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_and_option_has_help(name: str) -> None:
    command = main.commands[name]
    assert command.help and command.help.strip()
    undocumented = [
        param.name for param in command.params if isinstance(param, click.Option) and not param.help
    ]
    assert undocumented == []


def test_every_input_and_output_of_the_action_is_in_the_guide() -> None:
    guide = (ROOT / "docs" / "action.md").read_text(encoding="utf-8")
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    declared = re.findall(r"^  ([a-z][a-z-]*):$", action, re.M)
    assert declared and all(f"| `{name}` |" in guide for name in declared)
