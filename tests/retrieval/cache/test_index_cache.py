"""The index cache's code digest: derived from the stage packages, and sensitive to every module
that can shape a record.

The oracle is the package's import graph read with `ast` (tests/import_graph.py): the modules of
the record stages and everything they import, directly or not, with the packages holding them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cce_relevance.retrieval.cache.index_cache import RECORD_STAGES, code_digest, key_sources
from tests.import_graph import PACKAGE, PACKAGE_DIR, closure, import_graph, module_files


def _stage_modules(graph: dict[str, set[str]]) -> set[str]:
    return {
        m
        for m in graph
        for stage in RECORD_STAGES
        if m == f"{PACKAGE}.retrieval.{stage}" or m.startswith(f"{PACKAGE}.retrieval.{stage}.")
    }


@pytest.fixture(scope="module")
def package_copy(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("source") / PACKAGE
    shutil.copytree(PACKAGE_DIR, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_hashed_modules_are_the_record_stages_and_all_they_import():
    graph = import_graph()
    sources = key_sources(PACKAGE_DIR, RECORD_STAGES)
    assert sources is not None
    assert set(sources) == closure(graph, _stage_modules(graph))
    files = module_files()
    assert all(sources[name] == files[name].read_bytes() for name in sources)


def test_the_hashed_modules_include_what_the_records_depend_on_and_not_search():
    hashed = set(key_sources(PACKAGE_DIR, RECORD_STAGES) or ())
    for name in (
        "reference",
        "unicode_rust",
        "retrieval.tokens",
        "retrieval.chunking.syntax",
        "retrieval.ranking.postings",
        "retrieval.file_indexing.file_record",
        "retrieval.index.build",
    ):
        assert f"{PACKAGE}.{name}" in hashed
    assert not any(
        name.startswith(
            (
                f"{PACKAGE}.retrieval.search",
                f"{PACKAGE}.retrieval.store",
                f"{PACKAGE}.evaluation",
                f"{PACKAGE}.api",
            )
        )
        for name in hashed
    )


def test_editing_any_hashed_module_changes_the_digest_and_others_do_not(package_copy):
    base = code_digest(package_copy, RECORD_STAGES)
    assert base is not None and base == code_digest(PACKAGE_DIR, RECORD_STAGES)
    hashed = set(key_sources(package_copy, RECORD_STAGES) or ())
    copies = module_files(package_copy)
    for name, path in sorted(copies.items()):
        original = path.read_bytes()
        path.write_bytes(original + b"\n# edited\n")
        try:
            edited = code_digest(package_copy, RECORD_STAGES)
        finally:
            path.write_bytes(original)
        assert (edited != base) == (name in hashed), name
    assert code_digest(package_copy, RECORD_STAGES) == base


def test_a_missing_module_or_stage_gives_no_digest(package_copy, tmp_path):
    copy = tmp_path / PACKAGE
    shutil.copytree(package_copy, copy)
    assert code_digest(copy, (*RECORD_STAGES, "no_such")) is None
    (copy / "unicode_rust.py").unlink()  # imported by chunking/packs.py
    assert code_digest(copy, RECORD_STAGES) is None
