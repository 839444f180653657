"""Both action manifests hold `${{ }}` expressions only where GitHub's runner evaluates them.

GitHub's action manifest schema (actions/runner, `src/Runner.Worker/action_yaml.json`) gives an
expression context to a few keys only: an input's `default`, an output's `value`, a Docker
action's `args` and `env`, and a composite step's `name`, `run`, `env`, `with`, `if`, `shell` and
`working-directory`. Anywhere else (a description, the action's name) the runner refuses the
manifest (`Unrecognized named-value: 'github'`) and nektos/act stops at once ("expressions are not
allowed here"): every job using the action fails before its first step. The check below walks each
manifest and names the key of every expression outside those places.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = [ROOT / "action.yml", ROOT / "runner" / "action.yml"]

# Dotted key paths where the schema allows expressions; `*` is one mapping key or list index, and a
# pattern ending in `.**` covers everything below that key.
ALLOWED = [
    "inputs.*.default",
    "outputs.*.value",
    "runs.args.*",
    "runs.env.*",
    "runs.steps.*.name",
    "runs.steps.*.run",
    "runs.steps.*.env.*",
    "runs.steps.*.with.*",
    "runs.steps.*.if",
    "runs.steps.*.shell",
    "runs.steps.*.working-directory",
]


def _pattern(glob: str) -> re.Pattern[str]:
    return re.compile(
        "^" + r"\.".join("[^.]+" if part == "*" else re.escape(part) for part in glob.split(".")) + "$"
    )


ALLOWED_PATTERNS = [_pattern(glob) for glob in ALLOWED]


def scalars(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Every scalar of a parsed manifest with its dotted key path (list items by index)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from scalars(value, (*path, str(key)))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from scalars(value, (*path, str(index)))
    else:
        yield ".".join(path), node


def misplaced_expressions(manifest: dict[str, Any]) -> list[str]:
    """The keys holding `${{` where the runner would refuse it (a key as well as a value counts)."""
    found = []
    for key, value in scalars(manifest):
        if "${{" in key:
            found.append(key)
        elif isinstance(value, str) and "${{" in value and not any(p.match(key) for p in ALLOWED_PATTERNS):
            found.append(key)
    return found


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_expressions_only_where_the_manifest_schema_allows_them(path: Path) -> None:
    manifest = yaml.safe_load(path.read_text(encoding="utf-8"))
    misplaced = misplaced_expressions(manifest)
    assert not misplaced, f"{path.relative_to(ROOT)}: `${{{{` is not allowed in {', '.join(misplaced)}"


def test_the_check_names_an_expression_in_a_description_and_passes_the_allowed_places() -> None:
    manifest = {
        "name": "x",
        "inputs": {
            "run-id": {"description": "the id, `${{ github.event.workflow_run.id }}`", "default": ""},
            "token": {"description": "a token", "default": "${{ github.token }}"},
        },
        "outputs": {
            "out": {"description": "${{ steps.run.outputs.out }}", "value": "${{ steps.a.outputs.b }}"}
        },
        "runs": {
            "using": "composite",
            "steps": [
                {
                    "id": "a",
                    "if": "${{ inputs.token != '' }}",
                    "shell": "bash",
                    "env": {"T": "${{ inputs.token }}"},
                    "run": "echo ${{ inputs.token }}",
                },
                {"uses": "./x@${{ inputs.token }}", "with": {"w": "${{ github.sha }}"}},
            ],
        },
    }
    assert misplaced_expressions(manifest) == [
        "inputs.run-id.description",
        "outputs.out.description",
        "runs.steps.1.uses",
    ]
    docker = {"runs": {"using": "docker", "image": "${{ inputs.image }}", "args": ["${{ inputs.a }}"]}}
    assert misplaced_expressions(docker) == ["runs.image"]
