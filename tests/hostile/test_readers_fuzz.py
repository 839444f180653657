"""Hypothesis over the readers of saved documents a run reads back: a trend history, a run file,
a shard state (`cce-relevance merge`), a saved comparison (`power`), and `open_input` itself.
Each document starts as one the tool wrote and is damaged at a random place (a value replaced by
any JSON, a key dropped, a line cut or changed); the reader accepts it or refuses it with its one
input error (exit 2 for the CLI) — never an internal error, never a block.

Saved sides, shard states of the Action and publish artifacts have their own sweep
(tests/hostile/test_artifacts_fuzz.py)."""

from __future__ import annotations

import json
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cce_relevance.action.trend.history import History, HistoryError, dumps_history, parse_history
from cce_relevance.errors import EXIT_USAGE
from cce_relevance.input_files import SpecialFileError, open_input
from tests.action.test_history import histories
from tests.cli.helpers import cli
from tests.hostile.conftest import CORPUS, FIXTURES
from tests.retrieval.corpora import write_corpus

_SCALAR = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8)
_JSONISH = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _damaged(draw: st.DrawFn, value: Any, depth: int = 0) -> Any:
    """`value` with one place changed: replaced by any JSON, or (in a container) a key or item
    dropped, or a child damaged in turn."""
    containers = isinstance(value, dict | list) and bool(value)
    choice = draw(
        st.sampled_from(["replace", "drop", "descend"] if containers and depth < 12 else ["replace"])
    )
    if choice == "replace":
        return draw(_JSONISH)
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    key = draw(st.sampled_from(keys))
    copy = dict(value) if isinstance(value, dict) else list(value)
    if choice == "drop":
        del copy[key]
    else:
        copy[key] = _damaged(draw, value[key], depth + 1)
    return copy


@st.composite
def damaged(draw: st.DrawFn, document: Any) -> Any:
    return _damaged(draw, document)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A project and the documents the tool writes about it: a report with a compare block, a
    compare document, a shard state and a TREC run file."""
    root = tmp_path_factory.mktemp("readers")
    write_corpus(root / "corpus", CORPUS)
    (root / "set.jsonl").write_text(FIXTURES, encoding="utf-8")
    run = cli("run", "set.jsonl", "--compare", "bm25,hybrid", "--json", "--no-cache", cwd=root)
    assert run.code == 0, run
    (root / "r.json").write_text(run.out, encoding="utf-8")
    compare = cli("compare", "r.json", "r.json", "--json", cwd=root)
    assert compare.code == 0, compare
    shard = cli(
        "run",
        "set.jsonl",
        "--backend",
        "bm25",
        "--no-cache",
        "--shard",
        "1/1",
        "--shard-state",
        "s.json",
        cwd=root,
    )
    assert shard.code == 0, shard
    trec = cli("run", "set.jsonl", "--backend", "bm25", "--no-cache", "--trec-run", "bm25.run", cwd=root)
    assert trec.code == 0, trec
    return {
        "root": root,
        "report": json.loads(run.out),
        "compare": json.loads(compare.out),
        "shard": json.loads((root / "s.json").read_text()),
        "run": (root / "bm25.run").read_text().splitlines(),
    }


def _refused_or_accepted(result: Any) -> None:
    assert result.code in (0, EXIT_USAGE), result
    if result.code == EXIT_USAGE:
        assert result.err.startswith("error: ") and "internal error" not in result.err, result.err


_FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_FUZZ
@given(data=st.data())
def test_a_damaged_saved_comparison_is_read_or_refused(saved: dict[str, Any], data: st.DataObject) -> None:
    which = data.draw(st.sampled_from(["report", "compare"]))
    document = data.draw(damaged(saved[which]))
    path = saved["root"] / f"damaged-{which}.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    _refused_or_accepted(cli("power", str(path), "--delta", "0.1"))
    _refused_or_accepted(cli("compare", str(path), str(saved["root"] / "r.json")))


@_FUZZ
@given(data=st.data())
def test_a_damaged_shard_state_is_merged_or_refused(saved: dict[str, Any], data: st.DataObject) -> None:
    path = saved["root"] / "damaged-shard.json"
    path.write_text(json.dumps(data.draw(damaged(saved["shard"]))), encoding="utf-8")
    _refused_or_accepted(cli("merge", str(path), cwd=saved["root"]))


_TREC_PIECE = st.sampled_from(["Q0", "0", "-1", "1e9", "nan", "auth.py", "auth.py:1-2", "\t", " ", "#", "é"])


@_FUZZ
@given(data=st.data())
def test_a_damaged_run_file_is_scored_or_refused(saved: dict[str, Any], data: st.DataObject) -> None:
    lines = list(saved["run"])
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(lines)))
        kind = data.draw(st.sampled_from(["cut", "replace", "insert"]))
        if kind == "cut" and at < len(lines):
            lines[at] = lines[at][: data.draw(st.integers(0, len(lines[at])))]
        elif kind == "replace" and at < len(lines):
            fields = lines[at].split(" ")
            fields[data.draw(st.integers(0, len(fields) - 1))] = data.draw(_TREC_PIECE | st.text(max_size=6))
            lines[at] = " ".join(fields)
        else:
            lines.insert(at, " ".join(data.draw(st.lists(_TREC_PIECE, max_size=7))))
    path = saved["root"] / "damaged.run"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _refused_or_accepted(cli("score", str(path), "--fixtures", "set.jsonl", "--no-cache", cwd=saved["root"]))


@settings(max_examples=200, deadline=None)
@given(histories, st.data())
def test_a_damaged_history_is_read_or_refused_by_name(history: History, data: st.DataObject) -> None:
    document = data.draw(damaged(json.loads(dumps_history(history))))
    encoded = json.dumps(document).encode()
    cut = data.draw(st.none() | st.integers(0, len(encoded)))
    try:
        parse_history(encoded if cut is None else encoded[:cut])
    except HistoryError:
        pass


@pytest.fixture
def kinds(tmp_path: Path) -> Iterator[dict[str, Path]]:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "directory").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "regular").write_bytes(b"text\n")
    (tmp_path / "link-to-fifo").symlink_to(tmp_path / "fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "socket"))
    try:
        yield {p.name: p for p in tmp_path.iterdir()} | {"null": Path("/dev/null"), "zero": Path("/dev/zero")}
    finally:
        server.close()


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError("open_input blocked")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_open_input_reads_a_regular_file_and_refuses_anything_else_at_once(
    kinds: dict[str, Path], data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(sorted(kinds)))
    mode = data.draw(st.sampled_from(["rb", "r"]))
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)
    try:
        with open_input(kinds[name], mode) as handle:
            content = handle.read()
        assert name == "regular" and content in (b"text\n", "text\n")
    except SpecialFileError as exc:
        assert name in ("fifo", "socket", "dangling", "link-to-fifo", "null", "zero"), name
        assert "not a regular file" in str(exc) or "does not exist" in str(exc)
    except IsADirectoryError:
        assert name == "directory"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_open_input_refuses_to_write() -> None:
    with pytest.raises(ValueError, match="reads"):
        open_input("x", "w")
