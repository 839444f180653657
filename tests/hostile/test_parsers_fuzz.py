"""Hypothesis fuzzing of every parser of outside input: each either accepts or raises its one
documented error (`JsonInputError`, `CceError`), never anything else."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance import untrusted_json
from cce_relevance.action.workspace import git as action_git
from cce_relevance.errors import CceError
from cce_relevance.evaluation.fixtures import parse_fixtures
from cce_relevance.evaluation.pairing import pair_reports
from cce_relevance.project_config import parse_config
from cce_relevance.retrieval.store.store import load_store

_SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_JSONISH = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


def _report_like() -> st.SearchStrategy:
    query = st.fixed_dictionaries(
        {"id": _JSONISH | st.text(max_size=4)},
        optional={"mrr": _JSONISH, "recall": _JSONISH, "f1": _JSONISH, "precision_at_k": _JSONISH},
    )
    backend = st.fixed_dictionaries(
        {
            "backend": _JSONISH | st.sampled_from(["bm25", "hybrid"]),
            "per_query": st.lists(query, max_size=3) | _JSONISH,
        }
    )
    return st.fixed_dictionaries(
        {
            "schema": st.sampled_from(["cce.relevance/v2", "cce.relevance.report/v2"]),
            "backends": st.lists(backend, max_size=2) | _JSONISH,
        }
    )


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(alphabet='[]{}",:0123456789.eE-+ntrufalsNIy\\\ud800', max_size=200))
def test_untrusted_json_raises_only_its_error(data: bytes | str) -> None:
    try:
        untrusted_json.loads(data)
    except untrusted_json.JsonInputError:
        pass


@settings(max_examples=200, deadline=None)
@given(_report_like() | _JSONISH, _report_like() | _JSONISH)
def test_saved_reports_pair_or_raise_cce_error(base: object, head: object) -> None:
    try:
        pair_reports(base, head)
    except CceError:
        pass


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["backends", "languages", "x"]),
        _JSONISH
        | st.dictionaries(
            st.text(max_size=6),
            st.dictionaries(
                st.sampled_from(["base", "url", "command", "rrf_k", "timeout", "bm25_b"]),
                _JSONISH,
                max_size=3,
            ),
            max_size=2,
        ),
        max_size=2,
    )
)
def test_config_documents_parse_or_raise_cce_error(document: dict) -> None:
    try:
        parse_config(document, "cce-relevance.toml", "/nonexistent")
    except CceError:
        pass


@settings(max_examples=300, deadline=None)
@given(st.lists(_JSONISH.map(json.dumps) | st.text(max_size=30), max_size=4))
def test_fixture_text_parses_or_raises_cce_error(lines: list[str]) -> None:
    try:
        parse_fixtures("\n".join(lines), "set.jsonl", grades=True)
    except CceError:
        pass


@settings(max_examples=200, deadline=None)
@given(
    _JSONISH
    | st.fixed_dictionaries(
        {"pull_request": _JSONISH | st.fixed_dictionaries({"base": _JSONISH, "head": _JSONISH})}
    )
)
def test_pull_request_payloads_of_any_shape_are_named_errors(payload: object) -> None:
    """Wrong types anywhere in the payload are refused before git runs (the repository is never read)."""
    event = payload if isinstance(payload, dict) else {"pull_request": payload}
    try:
        action_git._pull_request_commits(Path("/nonexistent"), "pull_request", event)
    except CceError as exc:
        assert "None" not in exc.message


def _store_like() -> st.SearchStrategy:
    chunk = st.fixed_dictionaries(
        {
            "chunk_id": _JSONISH | st.just("c"),
            "file_path": _JSONISH | st.just("a.py"),
            "chunk_type": st.just("code"),
            "start_line": _JSONISH | st.integers(0, 2**65),
            "end_line": _JSONISH | st.integers(0, 2**65),
            "language": st.just("python"),
            "content": _JSONISH | st.text(max_size=20),
            "token_count": _JSONISH | st.integers(-1, 2**65),
        },
        optional={
            "embedding": st.lists(st.floats() | st.integers(), max_size=4) | _JSONISH,
            "kind": _JSONISH,
        },
    )
    return st.fixed_dictionaries(
        {
            "spec_version": _JSONISH | st.just("1"),
            "chunks": st.lists(chunk, max_size=3),
            "file_imports": _JSONISH | st.just({}),
            "file_tokens": _JSONISH | st.just({}),
        }
    )


@settings(max_examples=200, deadline=None)
@given(_store_like() | _JSONISH)
def test_stores_load_or_raise_cce_error(document: object) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "index.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        try:
            load_store(str(path))
        except CceError:
            pass
