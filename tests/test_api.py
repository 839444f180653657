"""The facade's contract: `__all__` is what the front doors use, and names are sequences."""

from __future__ import annotations

import ast
import re

import pytest

from cce_relevance import api

from .import_graph import PACKAGE_DIR


def _names_taken_from_api(source: str) -> set[str]:
    names = set(re.findall(r"\bapi\.([A-Za-z_]\w*)", source))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "cce_relevance.api":
            names.update(alias.name for alias in node.names)
    return names


def test_every_exported_name_exists_once():
    assert len(api.__all__) == len(set(api.__all__))
    assert [name for name in api.__all__ if not hasattr(api, name)] == []


def test_the_front_doors_use_only_exported_names():
    front_doors = [PACKAGE_DIR / "cli.py", *sorted((PACKAGE_DIR / "action").glob("*.py"))]
    used = set().union(*(_names_taken_from_api(path.read_text(encoding="utf-8")) for path in front_doors))
    assert used - set(api.__all__) - {"github"} == set()  # `api.github.com` in URLs is no attribute
    assert {"run", "validate", "compare_saved", "gated_test"} <= used


@pytest.mark.parametrize("check", [api.backend_names, api.backend_pair, api.rank_metric_specs])
def test_one_string_where_names_are_expected_is_refused(check):
    with pytest.raises(TypeError, match="sequence of names"):
        check("bm25,hybrid")


def test_names_keep_their_first_occurrence_order():
    assert api.backend_names(["hybrid", "bm25", "hybrid"]) == ["hybrid", "bm25"]
    assert api.backend_pair(("vector", "bm25", "vector")) == ("vector", "bm25")
    assert [s.name for s in api.rank_metric_specs(["hit", "ndcg", "hit"])] == ["hit", "ndcg"]
