"""`run --metrics`: rank metrics appear only under `extra` and in their own table, nowhere else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cce_relevance.reporting.canonical_json import dumps_report
from tests.cli.helpers import cli, cli_process


def without_extra(doc: dict) -> dict:
    for backend in doc["backends"]:
        del backend["extra"]
        for entry in backend["per_query"]:
            del entry["extra"]
    return doc


@pytest.mark.parametrize("args", [[], ["--compare", "bm25,hybrid"]])
def test_json_differs_from_the_default_only_by_extra_members(repo_root: Path, args: list[str]) -> None:
    plain = cli("run", "eval/relevance/code.jsonl", "--json", *args, cwd=repo_root)
    more = cli("run", "eval/relevance/code.jsonl", "--json", "--metrics", "ndcg,ap,hit,rprec", *args, cwd=repo_root)
    assert plain.code == more.code == 0, more.err
    doc = json.loads(more.out)
    assert set(doc["backends"][0]["extra"]) == {"ndcg_at_k", "average_precision", "hit_at_k", "r_precision"}
    assert dumps_report(without_extra(doc)) == plain.out


def test_text_adds_one_table_in_the_order_asked(repo_root: Path) -> None:
    plain = cli("run", "eval/relevance/docs.jsonl", "--compare", "bm25,hybrid", cwd=repo_root).out
    more = cli("run", "eval/relevance/docs.jsonl", "--compare", "bm25,hybrid", "--metrics", "hit, ndcg,hit",
               cwd=repo_root).out
    head, sep, tail = plain.partition("\n  per-query deltas")
    assert more.startswith(head) and more.endswith(sep + tail)
    block = more[len(head): len(more) - len(sep + tail)].splitlines()
    assert block[:3] == ["", "  rank metrics over corpus judgments (relevant = a chunk matching an anchor)",
                         "  backend          hit@k      nDCG@k"]
    assert [line.split()[0] for line in block[3:]] == ["bm25", "hybrid"]
    json_doc = json.loads(cli("run", "eval/relevance/docs.jsonl", "--json", "--metrics", "hit,ndcg",
                              cwd=repo_root).out)
    assert list(json_doc["backends"][0]["per_query"][0]["extra"]) == ["hit_at_k", "ndcg_at_k"]
    # every docs query finds its document at some rank: hit@k is 1 wherever recall is
    for backend in json_doc["backends"]:
        assert backend["extra"]["hit_at_k"] == "1.000000"


@pytest.mark.parametrize(("value", "message"), [
    ("ndcg,mapp", 'error: unknown metric "mapp" (expected ndcg, ap, hit, rprec)\n'),
    (" , ", "error: --metrics requires at least one of ndcg, ap, hit, rprec\n"),
])
def test_bad_metric_lists_are_usage_errors(small_project: Path, value: str, message: str) -> None:
    result = cli_process("run", "set.jsonl", "--metrics", value, cwd=small_project)
    assert (result.code, result.out, result.err) == (2, "", message)


def test_malformed_grades_fail_only_when_grades_are_read(small_project: Path) -> None:
    (small_project / "graded.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
        '{"id":"x","query":"hash","expected":["auth.py"],"grades":{"payments.py":2}}\n')
    assert cli("run", "graded.jsonl", cwd=small_project).code == 0
    for extra in (["--metrics", "ap"], ["--backend", "bm25", "--trec-qrels", "q.qrels"]):
        result = cli_process("run", "graded.jsonl", *extra, cwd=small_project)
        assert (result.code, result.out) == (2, "")
        assert result.err == ('error: fixture line 2: "grades" names "payments.py", '
                              'which is not an anchor in "expected"\n')


def test_graded_run_is_deterministic_across_processes(small_project: Path) -> None:
    args = ("run", "set.jsonl", "--json", "--metrics", "ndcg,ap,hit,rprec", "--compare", "bm25,hybrid")
    first, second = cli_process(*args, cwd=small_project), cli_process(*args, cwd=small_project)
    assert first.code == 0 and first.out == second.out
    doc = json.loads(first.out)
    assert {q["id"]: q["extra"]["hit_at_k"] for q in doc["backends"][1]["per_query"]} == {
        "hash": "1.000000", "pay": "1.000000", "session": "1.000000"}
