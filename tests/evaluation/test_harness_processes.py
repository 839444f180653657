"""Scoring cases in forked worker processes gives the reports one process gives, byte for byte,
and is only used where a fork copies everything a search needs (built-in rankings over the hash
embedder)."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import struct
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance import api
from cce_relevance.evaluation import harness
from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.harness import MIN_CASES_PER_PROCESS, _ranges, evaluate_backends
from cce_relevance.evaluation.metrics import QueryMetrics
from cce_relevance.evaluation.spans import LineWeights, TokenScore
from cce_relevance.project_config import load_config
from cce_relevance.reporting.run_report import run_report_json, run_report_text
from cce_relevance.retrieval.hit import Hit
from cce_relevance.retrieval.index.build import BuildOptions, build_index

pytestmark = pytest.mark.skipif(not harness.can_fork(), reason="worker processes are forked")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few hundred cases over our samples: a query from each chunk's first line and a few
    shuffled words, anchored at its file, its kind, or its line range (token metrics), with grades."""
    root = tmp_path_factory.mktemp("set")
    shutil.copytree(ROOT / "test/fixture/samples", root / "corpus")
    chunks = build_index(root / "corpus", workers=1).chunks
    lines = [json.dumps({"schema": "cce.relevance/v1", "corpus": "corpus"})]
    for i in range(3 * MIN_CASES_PER_PROCESS + 17):
        c = chunks[(i * 7) % len(chunks)]
        words = c.content.split()
        query = " ".join(words[(i % 3) : (i % 3) + 3 + i % 4]) or "buffer"
        anchor = [c.file_path, f"{c.file_path}#{c.kind}", f"{c.file_path}@{c.start_line}-{c.end_line}"][i % 3]
        lines.append(
            json.dumps(
                {"id": f"q{i}", "query": query, "expected": [anchor], "k": 1 + i % 6, "grades": {anchor: 2}}
            )
        )
    (root / "set.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "set.jsonl"


@pytest.fixture
def forked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many ranges each parallel scoring split the cases into."""
    seen: list[int] = []
    real = harness._scored_in_workers

    def counting(backends, cases, weights, judgments, ranges, *rest):
        seen.append(len(ranges))
        return real(backends, cases, weights, judgments, ranges, *rest)

    monkeypatch.setattr(harness, "_scored_in_workers", counting)
    return seen


@pytest.mark.parametrize(
    "kwargs",
    [
        {"compare": ("bm25", "hybrid")},
        {"backends": ("bm25", "vector", "hybrid"), "metrics": ("ndcg", "ap", "hit", "rprec")},
    ],
)
def test_reports_from_worker_processes_equal_one_process(fixtures, forked, kwargs):
    one = api.run(str(fixtures), api.RunOptions(indexing=BuildOptions(workers=1), **kwargs))
    assert forked == []
    several = api.run(str(fixtures), api.RunOptions(indexing=BuildOptions(workers=3), **kwargs))
    assert forked == [3]
    assert run_report_json(several) == run_report_json(one) and run_report_text(several) == run_report_text(
        one
    )


def test_an_external_retriever_is_never_forked(fixtures, forked, tmp_path):
    retriever = ROOT / "docs" / "examples" / "retriever.py"
    (tmp_path / "cce-relevance.toml").write_text(
        f"[backends.grep]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(retriever))}, "
        f"{json.dumps(str(fixtures.parent / 'corpus'))}]\n",
        encoding="utf-8",
    )
    config = load_config(str(tmp_path / "cce-relevance.toml"))
    options = api.RunOptions(compare=("bm25", "grep"), config=config, indexing=BuildOptions(workers=3))
    result = api.run(str(fixtures), options)
    assert forked == [] and len(result.reports) == 2


@given(st.integers(0, 5000), st.integers(1, 8))
def test_ranges_deal_out_every_case_once(n, processes):
    ranges = _ranges(n, processes)
    assert sorted(i for r in ranges for i in r) == list(range(n))
    assert all(list(r) == sorted(r) for r in ranges)
    assert 1 <= len(ranges) <= processes
    assert len(ranges) == 1 or all(len(r) >= MIN_CASES_PER_PROCESS for r in ranges)


def _cases(n: int, anchor: str = "a.py") -> list[Case]:
    return [Case(i + 1, f"q{i}", f"query {i}", (parse_anchor(anchor),), 5) for i in range(n)]


def _finding(path: str):
    def search(query: str, k: int, query_id: str = "") -> list[Hit]:
        return [Hit("0" * 16, path, 1, 1, "function", "function_definition", 1, 1.0)]

    return search


def test_a_worker_that_dies_leaves_its_cases_to_this_process():
    parent = os.getpid()

    def dying(query: str, k: int, query_id: str = "") -> list[Hit]:
        if query_id == "q350" and os.getpid() != parent:
            os._exit(3)  # as the OOM killer would end it
        return _finding("a.py")(query, k, query_id)

    cases = _cases(400)
    (report,) = evaluate_backends([("dying", dying)], cases, LineWeights([]), None, processes=4)
    assert report.recall == 1.0 and [r.case.id for r in report.cases] == [c.id for c in cases]


def test_callers_in_two_threads_get_their_own_results():
    cases = _cases(300)
    results: dict[str, float] = {}

    def evaluate(name: str, path: str) -> None:
        (report,) = evaluate_backends([(name, _finding(path))], cases, LineWeights([]), None, processes=2)
        results[name] = report.recall

    threads = [threading.Thread(target=evaluate, args=args) for args in (("a", "a.py"), ("b", "b.py"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"a": 1.0, "b": 0.0}


_FLOATS = st.floats(allow_nan=False)
_HIT = st.builds(
    Hit,
    st.integers(1, 50),
    st.text(max_size=16),
    st.text(max_size=20),
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.text(max_size=8),
    st.text(max_size=20),
    st.floats(allow_nan=False),
)


@given(
    st.tuples(_FLOATS, _FLOATS, _FLOATS, _FLOATS, st.none() | st.integers(1, 50)),
    st.none() | st.tuples(_FLOATS, _FLOATS, _FLOATS),
    st.lists(_HIT, max_size=12),
    st.none() | st.dictionaries(st.text(max_size=8), _FLOATS, max_size=4),
    st.none() | st.integers(1, 10**7),
    st.floats(min_value=0.0, allow_infinity=False),
)
def test_outcomes_come_back_from_workers_as_they_were(metrics, tokens, hits, ranking, first_tokens, seconds):
    """A worker sends a case's outcome as plain tuples (`_flat`): pickled and rebuilt, it is the
    outcome scored, field for field, its latency too."""
    outcome = (
        QueryMetrics(*metrics),
        None if tokens is None else TokenScore(*tokens),
        tuple(hits),
        ranking,
        first_tokens,
        seconds,
    )
    back = harness._unflat(pickle.loads(pickle.dumps(harness._flat(outcome))))
    assert back == outcome
    assert [struct.pack("<d", h.score) for h in back[2]] == [struct.pack("<d", h.score) for h in hits]


class _WarmedSearch:
    """A search function with a `warm_up`, recording where and with what it was called."""

    def __init__(self) -> None:
        self.warmed: list[tuple[int, list[str]]] = []

    def __call__(self, query: str, k: int, query_id: str = "") -> list[Hit]:
        return _finding("a.py")(query, k, query_id)

    def warm_up(self, queries):
        self.warmed.append((os.getpid(), list(queries)))


def test_search_functions_warm_up_once_before_the_workers_fork():
    cases = _cases(250, "a.py@1-1")
    search = _WarmedSearch()
    (several,) = evaluate_backends([("w", search)], cases, LineWeights([]), None, processes=2)
    assert search.warmed == [(os.getpid(), [c.query for c in cases])]
    one_process = _WarmedSearch()
    (one,) = evaluate_backends([("w", one_process)], cases, LineWeights([]), None, processes=1)
    assert one_process.warmed == []  # nothing to share: each thing is made when first needed
    assert several == one


def test_a_pool_that_breaks_before_this_process_scores_leaves_every_case_to_it(monkeypatch):
    """A pool can break as the workers are forked (no memory for one, say): this process then
    scores its own cases and the workers' too, and the report is the one-process report."""

    class Broken(harness.ProcessPoolExecutor):
        def submit(self, *args, **kwargs):
            raise harness.BrokenProcessPool("no worker could start")

    cases = _cases(300, "a.py@1-1")
    (one,) = evaluate_backends([("f", _finding("a.py"))], cases, LineWeights([]), None, processes=1)
    monkeypatch.setattr(harness, "ProcessPoolExecutor", Broken)
    (several,) = evaluate_backends([("f", _finding("a.py"))], cases, LineWeights([]), None, processes=3)
    assert several == one and [r.case.id for r in several.cases] == [c.id for c in cases]


def test_every_backend_searches_the_first_case_here_before_the_workers_fork():
    """What a search builds on first use is built once, before the fork: the parent searches the
    first case with each backend, then scores its own share (every other case, the first one
    again) while its worker scores the rest."""
    parent = os.getpid()
    here: list[tuple[str, str]] = []

    def recording(name: str):
        def search(query: str, k: int, query_id: str = "") -> list[Hit]:
            if os.getpid() == parent:
                here.append((name, query_id))
            return _finding("a.py")(query, k, query_id)

        return search

    cases = _cases(250)
    forked = evaluate_backends([(n, recording(n)) for n in ("x", "y")], cases, LineWeights([]), None, 2)
    own_share = [(n, f"q{i}") for n in ("x", "y") for i in range(0, len(cases), 2)]
    assert here == [("x", "q0"), ("y", "q0"), *own_share]
    alone = evaluate_backends([(n, recording(n)) for n in ("x", "y")], cases, LineWeights([]), None, 1)
    assert forked == alone and len(here) == 2 + len(own_share) + 2 * len(cases)
