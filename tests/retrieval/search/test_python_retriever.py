"""In-process Python retrievers (`python = "package.module:factory"`): real modules imported from the
config's directory, checked by the rules and messages of `command` retrievers."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from cce_relevance.errors import CceError
from cce_relevance.project_config import load_config
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search.python_retriever import PythonRetriever, open_python
from tests.cli.helpers import cli
from tests.retrieval.search.test_external import BAD_ANSWERS, PREFIX, Q1, small_corpus

RETRIEVER = """\
import json
import sqlite3
import threading
from dataclasses import dataclass

import numpy as np


@dataclass
class Result:
    file_path: str
    start_line: int
    end_line: int
    score: float


class Retriever:
    def __init__(self, corpus, table):
        self.corpus, self.table = corpus, table
        self.db = sqlite3.connect(":memory:")  # bound to the thread that made it
        self.thread = threading.get_ident()
        self.closed = False

    def search(self, query, k):
        assert threading.get_ident() == self.thread
        self.db.execute("SELECT 1")
        mode = self.table.get("mode", "good")
        if mode == "answers":
            with open(self.table["answers"], encoding="utf-8") as answers:
                return json.load(answers)
        if mode == "raise":
            raise ValueError(f"no index for {query!r}")
        if mode == "sleep":
            import time
            time.sleep(5)
        return [
            {"file_path": "auth.py", "start_line": np.int64(1), "end_line": np.int32(2),
             "score": np.float32(0.5)},
            Result("notes.md", 1, 3, 0.25),
        ][:k]

    def close(self):
        self.closed = True


def make(corpus, table):
    if table.get("mode") == "fail":
        raise RuntimeError("cannot open the vector store")
    if table.get("mode") == "none":
        return None
    return Retriever(corpus, table)


NOT_CALLABLE = 3
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_index(small_corpus(tmp_path_factory.mktemp("corpus")))


def project(tmp_path: Path, body: str = RETRIEVER, package: str = "tools") -> Path:
    (tmp_path / package).mkdir(parents=True, exist_ok=True)
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "retriever.py").write_text(body, encoding="utf-8")
    return tmp_path


def spec(
    tmp_path: Path, target: str = "tools.retriever:make", timeout: float = 30.0, **table
) -> PythonRetriever:
    return PythonRetriever(target, str(tmp_path), timeout, {"python": target, **table})


def ask(retriever: PythonRetriever, index: Index):
    with open_python("mine", retriever, index, "/the/corpus") as search:
        return [search(query, k, query_id) for query_id, query, k in (Q1,)]


def error(retriever: PythonRetriever, index: Index) -> str:
    with pytest.raises(CceError) as caught:
        ask(retriever, index)
    return caught.value.message


def test_results_of_mappings_objects_and_numpy_numbers_become_hits(tmp_path: Path, index: Index) -> None:
    [hits] = ask(spec(project(tmp_path)), index)
    assert [(h.rank, h.file_path, h.start_line, h.end_line, h.score) for h in hits] == [
        (1, "auth.py", 1, 2, 0.5),
        (2, "notes.md", 1, 3, 0.25),
    ]
    assert hits[0].chunk_id == index.chunks[0].chunk_id and hits[0].kind == index.chunks[0].kind


@pytest.mark.parametrize(
    ("template", "message"),
    [(t, m) for t, m in BAD_ANSWERS if t.startswith('{"id": $ID') and not m.startswith("malformed")],
)
def test_the_results_are_checked_as_a_command_retrievers_answers_are(
    tmp_path: Path, index: Index, template: str, message: str
) -> None:
    results = json.loads(template.replace("$ID", '"q1"')).get("results")
    (tmp_path / "answers.json").write_text(json.dumps(results), encoding="utf-8")
    retriever = spec(project(tmp_path), mode="answers", answers=str(tmp_path / "answers.json"))
    assert error(retriever, index) == PREFIX + message


def test_what_search_raises_is_named_with_where_it_was_raised(tmp_path: Path, index: Index) -> None:
    line = RETRIEVER.splitlines().index('            raise ValueError(f"no index for {query!r}")') + 1
    assert error(spec(project(tmp_path), mode="raise"), index) == (
        PREFIX + "search raised ValueError: no index for 'where is the password hashed' "
        f"(at tools/retriever.py:{line}, in search)"
    )


def test_a_search_past_the_timeout_stops_the_run(tmp_path: Path, index: Index) -> None:
    assert error(spec(project(tmp_path), timeout=0.2, mode="sleep"), index) == (
        PREFIX + "no results within 0.2 seconds"
    )


@pytest.mark.parametrize(
    ("target", "table", "message"),
    [
        (
            "tools.absent:make",
            {},
            'could not import "tools.absent" from "{dir}": '
            "ModuleNotFoundError: No module named 'tools.absent'",
        ),
        ("tools.retriever:nothing", {}, '"tools.retriever" has no attribute "nothing"'),
        ("tools.retriever:NOT_CALLABLE", {}, '"tools.retriever:NOT_CALLABLE" is not callable'),
        (
            "tools.retriever:make",
            {"mode": "fail"},
            '"tools.retriever:make" raised RuntimeError: cannot open the vector store '
            "(at tools/retriever.py:{fail}, in make)",
        ),
        (
            "tools.retriever:make",
            {"mode": "none"},
            '"tools.retriever:make" returned None, not an object with a search(query, k) method',
        ),
    ],
)
def test_a_factory_that_cannot_start_is_a_clear_error(
    tmp_path: Path, index: Index, target: str, table: dict, message: str
) -> None:
    fail = RETRIEVER.splitlines().index('        raise RuntimeError("cannot open the vector store")') + 1
    assert error(spec(project(tmp_path), target, **table), index) == (
        'backend "mine": ' + message.format(dir=tmp_path, fail=fail)
    )


def test_the_factory_gets_the_corpus_and_the_table_and_close_is_called(tmp_path: Path, index: Index) -> None:
    body = RETRIEVER + textwrap.dedent(
        """
        SEEN = []

        def recording(corpus, table):
            retriever = Retriever(corpus, table)
            SEEN.append(retriever)
            return retriever
        """
    )
    retriever = spec(project(tmp_path, body), "tools.retriever:recording", top_k=7)
    with open_python("mine", retriever, index, "/the/corpus") as search:
        search("q", 1, "q1")
        module = sys.modules["tools.retriever"]
        [made] = module.SEEN
    assert (made.corpus, made.table) == ("/the/corpus", {"python": "tools.retriever:recording", "top_k": 7})
    assert made.closed
    assert "tools.retriever" not in sys.modules and "tools" not in sys.modules  # forgotten after the run


def test_each_tree_runs_its_own_module_of_the_same_name(tmp_path: Path, index: Index) -> None:
    trees = []
    for name, path in (("base", "auth.py"), ("head", "notes.md")):
        body = (
            "def make(corpus, table):\n    return Finder()\n\n"
            "class Finder:\n    def search(self, query, k):\n"
            f"        return [{{'file_path': {path!r}, 'start_line': 1, 'end_line': 1}}]\n"
        )
        trees.append(project(tmp_path / name, body))
    found = [ask(spec(tree), index)[0][0].file_path for tree in trees]
    assert found == ["auth.py", "notes.md"]


def test_a_python_retriever_scores_from_the_config_and_the_action_refuses_it(tmp_path: Path) -> None:
    small_corpus(tmp_path / "corpus")
    project(tmp_path)
    (tmp_path / "cce-relevance.toml").write_text('[backends.mine]\npython = "tools.retriever:make"\n')
    (tmp_path / "set.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
        '{"id":"q1","query":"where is the password hashed","expected":["auth.py"],"k":2}\n'
    )
    result = cli("run", "set.jsonl", "--compare", "bm25,mine", "--json", cwd=tmp_path)
    assert result.code == 0, result.err
    mine = json.loads(result.out)["backends"][1]
    assert mine["backend"] == "mine" and mine["mrr"] == "1.000000"
    config = load_config(None, str(tmp_path)).without_external("refused")
    assert dict(config.refused) == {"mine": "is an external retriever: refused"}


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("tools.retriever", '"tools.retriever"'),
        ("tools/retriever.py:make", '"tools/retriever.py:make"'),
        ("3", '"3"'),
    ],
)
def test_a_target_that_is_not_module_colon_factory_is_refused(tmp_path: Path, value: str, shown: str) -> None:
    (tmp_path / "cce-relevance.toml").write_text(f'[backends.mine]\npython = "{value}"\n')
    with pytest.raises(CceError) as caught:
        load_config(None, str(tmp_path))
    assert caught.value.message == (
        f'cce-relevance.toml: [backends.mine] python: expected "package.module:factory" (a module to import '
        f'from "{tmp_path}" and a callable in it), got {shown}'
    )
