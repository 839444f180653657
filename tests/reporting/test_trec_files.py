"""TREC file rendering on hand-built results: column layout, and what a TREC file cannot hold."""

from __future__ import annotations

import pytest

from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.evaluation.fixtures import Case
from cce_relevance.evaluation.harness import BackendReport, CaseResult
from cce_relevance.evaluation.judgments import Judgments
from cce_relevance.evaluation.metrics import score_query
from cce_relevance.reporting.trec import qrels_text, run_text
from cce_relevance.retrieval.hit import Hit

CASE = Case(line=2, id="q-1", query="q", anchors=(parse_anchor("a.py"),), k=3)


def hit(rank: int, chunk_id: str, path: str = "a.py") -> Hit:
    return Hit(chunk_id, path, 1, 2, "function", "function_definition", rank, 0.5)


def report(name: str, hits: list[Hit]) -> BackendReport:
    result = CaseResult(CASE, score_query(CASE.anchors, hits, CASE.k), None, tuple(hits))
    return BackendReport(name, (result,), 0.0, 0.0, 0.0, 0.0, None)


def test_run_and_qrels_columns() -> None:
    assert run_text(report("bm25", [hit(1, "c1"), hit(2, "c2", "b.py")])) == (
        "q-1 Q0 c1 1 3 bm25\nq-1 Q0 c2 2 2 bm25\n"
    )
    assert qrels_text([Judgments(CASE, (("c1", 1), ("c9", 2)))]) == "q-1 0 c1 1\nq-1 0 c9 2\n"


def test_a_chunk_twice_in_one_ranking_cannot_be_a_trec_run() -> None:
    with pytest.raises(CceError, match='backend ext returned chunk c1 twice for case "q-1"'):
        run_text(report("ext", [hit(1, "c1"), hit(2, "c1")]))


@pytest.mark.parametrize("name", ["my backend", "", "tab\tname"])
def test_a_backend_name_must_be_one_column(name: str) -> None:
    with pytest.raises(CceError, match="cannot be a TREC run tag"):
        run_text(report(name, [hit(1, "c1")]))
