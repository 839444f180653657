"""Every path the CLI reads refuses what is not a regular file before reading it (exit 2, one
`error:` line naming the input); every path it expects to be a directory refuses anything else.

The table crosses each path input with each kind of special file: a FIFO (which blocked the run
forever: nobody writes to it), the character devices `/dev/null` (empty, it read as an empty
file) and `/dev/zero` (endless), a socket, a directory and a symbolic link to nothing. The child
runs with a timeout, so a reader that blocks fails the test instead of hanging it.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.helpers import Outcome, cli
from tests.hostile.child import run_child

KINDS = ("fifo", "dev-null", "dev-zero", "socket", "directory", "dangling-link")

# (name, argv with X where the special path goes): every path-of-a-file input of the CLI.
FILE_INPUTS = (
    ("run FIXTURES", ["run", "X", "--backend", "bm25", "--no-cache"]),
    ("validate FIXTURES", ["validate", "X"]),
    ("run --config", ["run", "set.jsonl", "--backend", "bm25", "--no-cache", "--config", "X"]),
    ("run --golden", ["run", "set.jsonl", "--backend", "bm25", "--no-cache", "--golden", "X"]),
    ("run --store", ["run", "set.jsonl", "--backend", "bm25", "--store", "X"]),
    ("score RUN", ["score", "X", "--fixtures", "set.jsonl", "--no-cache"]),
    ("score --fixtures", ["score", "bm25.run", "--fixtures", "X", "--no-cache"]),
    ("compare BASE", ["compare", "X", "r.json"]),
    ("compare HEAD", ["compare", "r.json", "X"]),
    ("power", ["power", "X", "--delta", "0.1"]),
    ("merge STATE", ["merge", "X"]),
    ("trend HISTORY", ["trend", "X"]),
    ("validate --accept", ["validate", "set.jsonl", "--unjudged", "--suggest", "--accept", "X"]),
)
# Inputs that name a directory: anything else is refused, with E18's words for a corpus.
DIRECTORY_INPUTS = (
    ("chunks DIR", ["chunks", "X", "--no-cache"]),
    ("index DIR", ["index", "X", "--no-cache"]),
    ("search DIR", ["search", "X", "query", "--no-cache"]),
    ("run --dir", ["run", "set.jsonl", "--backend", "bm25", "--no-cache", "--dir", "X"]),
    ("bootstrap DIR", ["bootstrap", "X"]),
    ("run --cache", ["run", "set.jsonl", "--backend", "bm25", "--cache", "X"]),
)


@pytest.fixture(scope="module")
def specials(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A project (corpus, fixtures, a saved report and run file) and one special file of each kind."""
    from tests.hostile.conftest import CORPUS, FIXTURES
    from tests.retrieval.corpora import write_corpus

    root = tmp_path_factory.mktemp("specials")
    write_corpus(root / "corpus", CORPUS)
    (root / "set.jsonl").write_text(FIXTURES, encoding="utf-8")
    done = cli("run", "set.jsonl", "--backend", "bm25", "--no-cache", "--json", cwd=root)
    assert done.code == 0, done
    (root / "r.json").write_text(done.out, encoding="utf-8")
    done = cli("run", "set.jsonl", "--backend", "bm25", "--no-cache", "--trec-run", "bm25.run", cwd=root)
    assert done.code == 0, done
    os.mkfifo(root / "fifo")
    (root / "directory").mkdir()
    (root / "dangling-link").symlink_to(root / "nowhere")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "socket"))
    paths = {
        "fifo": str(root / "fifo"),
        "dev-null": "/dev/null",
        "dev-zero": "/dev/zero",
        "socket": str(root / "socket"),
        "directory": str(root / "directory"),
        "dangling-link": str(root / "dangling-link"),
        "root": str(root),
    }
    yield paths
    server.close()


def _run(argv: list[str], special: str, cwd: str) -> Outcome:
    args = [special if a == "X" else a for a in argv]
    blocked = f"cce-relevance {' '.join(args)} blocked reading {special}"
    done = run_child([sys.executable, "-m", "cce_relevance", *args], cwd=cwd, timeout=90, blocked=blocked)
    return Outcome(done.code, done.out, done.err)


def _refused(result: Outcome, special: str) -> None:
    assert result.code == 2, result
    assert result.out == ""
    assert result.err.startswith("error: ") and "Traceback" not in result.err, result.err
    assert special in result.err or os.path.basename(special) in result.err, result.err


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("name", "argv"), FILE_INPUTS, ids=[n for n, _ in FILE_INPUTS])
def test_a_file_input_refuses_a_special_file(
    specials: dict[str, str], name: str, argv: list[str], kind: str
) -> None:
    result = _run(argv, specials[kind], specials["root"])
    _refused(result, specials[kind])
    if kind not in ("directory", "dangling-link"):
        assert "not a regular file" in result.err, result.err
    if kind == "dangling-link":
        assert "does not exist" in result.err or "No such file" in result.err or "not found" in result.err


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("name", "argv"), DIRECTORY_INPUTS, ids=[n for n, _ in DIRECTORY_INPUTS])
def test_a_directory_input_refuses_anything_else(
    specials: dict[str, str], name: str, argv: list[str], kind: str
) -> None:
    if kind == "directory":
        pytest.skip("a directory is what these inputs expect")
    _refused(_run(argv, specials[kind], specials["root"]), specials[kind])


def test_a_shard_state_directory_holding_a_fifo_is_refused(specials: dict[str, str], tmp_path: Path) -> None:
    """`merge DIR` reads every `*.json` inside: one of them a FIFO blocked the merge."""
    os.mkfifo(tmp_path / "shard-1.json")
    _refused(_run(["merge", str(tmp_path)], "", specials["root"]), "shard-1.json")
