"""Facts and names stated once: a schema id, a URL, the backend list or the metric keys written out a second
time in the package would drift from the first. Each fact is one literal in one module; every
other place (messages, help, defaults) is built from it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cce_relevance import schemas
from cce_relevance.action.runner import github
from cce_relevance.evaluation.metrics import METRIC_KEYS
from cce_relevance.reference import BUILTIN_BACKENDS

from .import_graph import PACKAGE_DIR

FACTS = sorted(
    {
        *(value for name, value in vars(schemas).items() if name.isupper() and isinstance(value, str)),
        github.DEFAULT_API_URL,
        github.DEFAULT_SERVER_URL,
    }
)


def _constants() -> list[tuple[Path, str]]:
    """Every string literal of the package that the code uses (docstrings, which only talk about
    the facts, are left out), with its module."""
    found = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        found += [
            (path, node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
        ]
    return found


CONSTANTS = _constants()


@pytest.mark.parametrize("fact", FACTS)
def test_a_fact_is_written_once(fact):
    holders = [
        f"{path.relative_to(PACKAGE_DIR.parent)}: {value!r}" for path, value in CONSTANTS if fact in value
    ]
    assert len(holders) == 1, holders


@pytest.mark.parametrize("names", [BUILTIN_BACKENDS, METRIC_KEYS])
def test_a_list_of_names_is_written_out_once(names):
    """The names one by one (a tuple of literals) once; never joined into one string literal."""
    spelled = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_display = isinstance(node, ast.Tuple | ast.List | ast.Set)
            elements = getattr(node, "elts", None) if is_display else None
            values = [e.value for e in elements or () if isinstance(e, ast.Constant)]
            if values and set(names) <= set(values):
                spelled.append(str(path.relative_to(PACKAGE_DIR.parent)))
    assert len(spelled) <= 1, spelled
    joined = [", ".join(names[:2]), ",".join(names[:2])]
    assert [(str(path), value) for path, value in CONSTANTS if any(j in value for j in joined)] == []


def test_no_two_classes_share_a_name():
    """One name, one meaning: a class name is defined in one module only."""
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(PACKAGE_DIR.parent)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
