"""`run --metrics`: rank metrics appear only under `extra` and in their own table, nowhere else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cce_relevance.reporting.canonical_json import dumps_report
from tests.cli.helpers import cli, cli_process


def without_extra(doc: dict) -> dict:
    """The report without its rank metrics: `extra` members, and their tests in the compare block."""
    for backend in doc["backends"]:
        del backend["extra"]
        for entry in backend["per_query"]:
            del entry["extra"]
    if "compare" in doc:
        doc["compare"]["metrics"] = {
            k: v
            for k, v in doc["compare"]["metrics"].items()
            if k in ("precision_at_k", "recall", "mrr", "f1")
        }
    return doc


@pytest.mark.parametrize("args", [[], ["--compare", "bm25,hybrid"]])
def test_json_differs_from_the_default_only_by_extra_members(repo_root: Path, args: list[str]) -> None:
    plain = cli("run", "eval/relevance/code.jsonl", "--json", *args, cwd=repo_root)
    more = cli(
        "run", "eval/relevance/code.jsonl", "--json", "--metrics", "ndcg,ap,hit,rprec", *args, cwd=repo_root
    )
    assert plain.code == more.code == 0, more.err
    doc = json.loads(more.out)
    assert set(doc["backends"][0]["extra"]) == {"ndcg_at_k", "average_precision", "hit_at_k", "r_precision"}
    assert dumps_report(without_extra(doc)) == plain.out


def test_text_adds_one_table_in_the_order_asked(repo_root: Path) -> None:
    plain = cli("run", "eval/relevance/docs.jsonl", "--backend", "bm25,hybrid", cwd=repo_root).out
    more = cli(
        "run",
        "eval/relevance/docs.jsonl",
        "--backend",
        "bm25,hybrid",
        "--metrics",
        "hit, ndcg,hit",
        cwd=repo_root,
    ).out
    assert more.startswith(plain)
    block = more[len(plain) :].splitlines()
    assert block[:3] == [
        "",
        "  rank metrics over corpus judgments (relevant = a chunk matching an anchor)",
        "  backend          hit@k      nDCG@k",
    ]
    assert [line.split()[0] for line in block[3:]] == ["bm25", "hybrid"]
    json_doc = json.loads(
        cli("run", "eval/relevance/docs.jsonl", "--json", "--metrics", "hit,ndcg", cwd=repo_root).out
    )
    assert list(json_doc["backends"][0]["per_query"][0]["extra"]) == ["hit_at_k", "ndcg_at_k"]
    # every docs query finds its document at some rank: hit@k is 1 wherever recall is
    for backend in json_doc["backends"]:
        assert backend["extra"]["hit_at_k"] == "1.000000"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            "ndcg,mapp",
            'error: unknown metric "mapp" (expected ndcg, ap, hit, rprec, judged, ttfr, a cut-off such as '
            "ndcg@10, ap@10, hit@1, p@5, recall@20, or a token budget such as recall@budget=2000)\n",
        ),
        (
            " , ",
            "error: --metrics requires at least one of ndcg, ap, hit, rprec, judged, ttfr, a cut-off such "
            "as ndcg@10 or a budget such as recall@budget=2000\n",
        ),
        ("p", "error: p needs a cut-off, e.g. p@10 (the fixture's k P@k is always reported)\n"),
        (
            "recall",
            "error: recall needs a cut-off, e.g. recall@10 (the fixture's k recall is always reported)\n",
        ),
        ("rprec@5", "error: rprec takes no cut-off: R-precision cuts at R, the number of relevant chunks\n"),
        ("ndcg@0", 'error: metric "ndcg@0": the cut-off must be a whole number from 1 to 10000\n'),
        ("ndcg@x", 'error: metric "ndcg@x": the cut-off must be a whole number from 1 to 10000\n'),
        (
            "tok-recall",
            'error: unknown metric "tok-recall" (expected ndcg, ap, hit, rprec, judged, ttfr, a cut-off '
            "such as ndcg@10, ap@10, hit@1, p@5, recall@20, or a token budget such as recall@budget=2000) "
            "(it takes a token budget: tok-recall@budget=2000)\n",
        ),
        (
            "ndcg@budget=5",
            'error: metric "ndcg@budget=5": a token budget is taken by recall and tok-recall '
            "(recall@budget=2000, tok-recall@budget=2000)\n",
        ),
        (
            "recall@budget=0",
            'error: metric "recall@budget=0": the budget must be a whole number of tokens from 1 to '
            "10,000,000\n",
        ),
        ("judged@0", 'error: metric "judged@0": the cut-off must be a whole number from 1 to 10000\n'),
    ],
)
def test_bad_metric_lists_are_usage_errors(small_project: Path, value: str, message: str) -> None:
    result = cli_process("run", "set.jsonl", "--metrics", value, cwd=small_project)
    assert (result.code, result.out, result.err) == (2, "", message)


def test_malformed_grades_fail_only_when_grades_are_read(small_project: Path) -> None:
    (small_project / "graded.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
        '{"id":"x","query":"hash","expected":["auth.py"],"grades":{"payments.py":2}}\n'
    )
    assert cli("run", "graded.jsonl", cwd=small_project).code == 0
    for extra in (["--metrics", "ap"], ["--backend", "bm25", "--trec-qrels", "q.qrels"]):
        result = cli_process("run", "graded.jsonl", *extra, cwd=small_project)
        assert (result.code, result.out) == (2, "")
        assert result.err == (
            'error: fixture line 2: "grades" names "payments.py", which is not an anchor in "expected"\n'
        )


def test_graded_run_is_deterministic_across_processes(small_project: Path) -> None:
    args = ("run", "set.jsonl", "--json", "--metrics", "ndcg,ap,hit,rprec", "--compare", "bm25,hybrid")
    first, second = cli_process(*args, cwd=small_project), cli_process(*args, cwd=small_project)
    assert first.code == 0 and first.out == second.out
    doc = json.loads(first.out)
    assert {q["id"]: q["extra"]["hit_at_k"] for q in doc["backends"][1]["per_query"]} == {
        "hash": "1.000000",
        "pay": "1.000000",
        "session": "1.000000",
    }


CUTOFFS = "ndcg@5,ndcg@10,p@1,p@5,recall@20"


def test_cutoffs_leave_the_reference_metrics_and_read_one_deep_ranking(repo_root: Path) -> None:
    plain = cli("run", "eval/relevance/code.jsonl", "--json", cwd=repo_root)
    more = cli("run", "eval/relevance/code.jsonl", "--json", "--metrics", CUTOFFS, cwd=repo_root)
    assert more.code == 0, more.err
    doc = json.loads(more.out)
    assert set(doc["backends"][0]["extra"]) == {
        "ndcg_at_5",
        "ndcg_at_10",
        "precision_at_1",
        "precision_at_5",
        "recall_at_20",
    }  # canonical JSON sorts keys
    assert dumps_report(without_extra(json.loads(more.out))) == plain.out
    for backend in doc["backends"]:
        for entry in backend["per_query"]:
            extra = {k: float(v) for k, v in entry["extra"].items()}
            # P@1 is 1 exactly when the first result is relevant (fixture k ≥ 1 ranks it first)
            assert extra["precision_at_1"] == (1.0 if entry["first_relevant_rank"] == 1 else 0.0)
            assert 0.0 <= extra["ndcg_at_5"] <= 1.0 and 0.0 <= extra["recall_at_20"] <= 1.0


def test_a_cutoff_deeper_than_k_searches_once_more_at_that_depth() -> None:
    from cce_relevance.evaluation.anchors import parse_anchor
    from cce_relevance.evaluation.fixtures import Case
    from cce_relevance.evaluation.harness import evaluate_backend
    from cce_relevance.evaluation.judgments import Judgments
    from cce_relevance.evaluation.rank_metrics import rank_metric
    from cce_relevance.evaluation.spans import LineWeights
    from cce_relevance.retrieval.hit import Hit

    depths: list[int] = []

    def search(query: str, k: int, qid: str) -> list[Hit]:
        depths.append(k)
        return [
            Hit(f"c{i}", f"f{i}.py", 1, 2, "function", "function_definition", i + 1, 1.0 / (i + 1))
            for i in range(k)
        ]

    case = Case(line=2, id="q", query="x", anchors=(parse_anchor("f7.py"),), k=3)
    judgment = Judgments(case, (("c7", 1),))
    specs = [rank_metric(n) for n in ("ndcg", "p@1", "recall@10", "hit@8")]
    report = evaluate_backend("fake", search, [case], LineWeights([]), [judgment], specs)
    assert depths == [3, 10]  # the fixture's k, then the deepest cut-off, once
    ranking = report.cases[0].ranking
    assert ranking == {"ndcg_at_k": 0.0, "precision_at_1": 0.0, "recall_at_10": 1.0, "hit_at_8": 1.0}
    depths.clear()
    evaluate_backend("fake", search, [case], LineWeights([]), [judgment], [rank_metric("p@2")])
    assert depths == [3]  # no deeper cut-off, no second search


def test_run_compare_tests_the_rank_metrics_too(repo_root: Path) -> None:
    """`--metrics` with `--compare`: each rank metric gets its delta column and its t-test row."""
    doc = json.loads(
        cli(
            "run",
            "eval/relevance/code.jsonl",
            "--compare",
            "bm25,hybrid",
            "--json",
            "--metrics",
            "ndcg,ap@5",
            "--stats",
            "full",
            "--primary-metric",
            "ndcg_at_k",
            cwd=repo_root,
        ).out
    )
    compare = doc["compare"]
    assert set(compare["metrics"]) == {
        "precision_at_k",
        "recall",
        "mrr",
        "f1",
        "ndcg_at_k",
        "average_precision_at_5",
    }
    assert compare["full"]["primary"] == "ndcg_at_k"
    a, b = (next(x for x in doc["backends"] if x["backend"] == name) for name in ("bm25", "hybrid"))
    deltas = [
        float(qb["extra"]["ndcg_at_k"]) - float(qa["extra"]["ndcg_at_k"])
        for qa, qb in zip(a["per_query"], b["per_query"], strict=True)
    ]
    from cce_relevance.reporting.numbers import signed6
    from cce_relevance.stats.paired import paired_t

    # the run's exact per-case values round to the report's; the mean delta agrees at six decimals
    assert compare["metrics"]["ndcg_at_k"]["mean_delta"] == signed6(paired_t(deltas).mean_delta)
    text = cli(
        "run",
        "eval/relevance/code.jsonl",
        "--compare",
        "bm25,hybrid",
        "--metrics",
        "ndcg,ap@5",
        cwd=repo_root,
    ).out
    assert "dnDCG@k" in text and "  AP@5     " in text
