"""The facade's contract: `__all__` is what the front doors use, and names are sequences."""

from __future__ import annotations

import ast
import dataclasses
import re

import pytest

from cce_relevance import api
from cce_relevance.evaluation.selection import backend_names, backend_pair, rank_metric_specs

from .import_graph import PACKAGE_DIR


def _names_taken_from_api(source: str) -> set[str]:
    names = set(re.findall(r"\bapi\.([A-Za-z_]\w*)", source))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "cce_relevance.api":
            names.update(alias.name for alias in node.names)
    return names


def _front_door_names() -> set[str]:
    front_doors = [PACKAGE_DIR / "cli.py", *sorted((PACKAGE_DIR / "action").rglob("*.py"))]
    used = set().union(*(_names_taken_from_api(path.read_text(encoding="utf-8")) for path in front_doors))
    return used - {"github"}  # `api.github.com` in URLs is no attribute


def test_every_exported_name_exists_once():
    assert len(api.__all__) == len(set(api.__all__))
    assert len(api.__all__) <= 35, "the facade exports use cases and what they take and give"
    assert [name for name in api.__all__ if not hasattr(api, name)] == []


def test_the_front_doors_use_only_exported_names_and_every_one_is_used():
    used = _front_door_names()
    assert used - set(api.__all__) == set()
    assert set(api.__all__) - used == set()
    assert {"run", "score_set", "validate", "compare_saved", "compare_sides"} <= used


@pytest.mark.parametrize("check", [backend_names, backend_pair, rank_metric_specs])
def test_one_string_where_names_are_expected_is_refused(check):
    with pytest.raises(TypeError, match="sequence of names"):
        check("bm25,hybrid")


@pytest.mark.parametrize("field", ["backends", "compare", "metrics", "languages", "outputs"])
def test_options_refuse_one_string_and_are_frozen_all_the_way_down(field):
    with pytest.raises(TypeError, match="sequence of names"):
        api.RunOptions(**{field: "bm25,hybrid"})
    options = api.RunOptions(**{field: ["bm25", "hybrid"]})
    assert getattr(options, field) == ("bm25", "hybrid")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.backends = ("bm25",)  # type: ignore[misc]


def test_own_files_name_every_backend_a_placeholder_stands_for():
    options = api.RunOptions(outputs=["report.json", "runs/{backend}.run"])
    assert options.own_files == ["report.json", "runs/bm25.run", "runs/vector.run", "runs/hybrid.run"]


def test_names_keep_their_first_occurrence_order():
    assert backend_names(["hybrid", "bm25", "hybrid"]) == ["hybrid", "bm25"]
    assert backend_pair(("vector", "bm25", "vector")) == ("vector", "bm25")
    assert [s.name for s in rank_metric_specs(["hit", "ndcg", "hit"])] == ["hit", "ndcg"]
