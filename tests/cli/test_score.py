"""`score RUN --fixtures F`: rankings made elsewhere are scored exactly as a backend's results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval

from tests.cli.helpers import cli, cli_process

CODE = "eval/relevance/code.jsonl"


@pytest.fixture(scope="module")
def exported(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The code set's runs of bm25 and hybrid as TREC files, and the run's own reports."""
    out = tmp_path_factory.mktemp("runs")
    for args, name in (((), "plain.json"), (("--metrics", "ndcg,ap,p@1,recall@3"), "metrics.json")):
        result = cli(
            "run",
            CODE,
            "--backend",
            "bm25,hybrid",
            "--json",
            "--trec-run",
            str(out / "{backend}.run"),
            *args,
            cwd=repo_root,
        )
        assert result.code == 0, result.err
        (out / name).write_text(result.out, encoding="utf-8")
    return out


def test_a_run_file_scores_to_the_same_report_bytes(repo_root: Path, exported: Path) -> None:
    runs = [str(exported / "bm25.run"), str(exported / "hybrid.run")]
    plain = cli("score", *runs, "--fixtures", CODE, "--json", cwd=repo_root)
    assert plain.code == 0, plain.err
    assert plain.out == (exported / "plain.json").read_text(encoding="utf-8")
    more = cli(
        "score", *runs, "--fixtures", CODE, "--json", "--metrics", "ndcg,ap,p@1,recall@3", cwd=repo_root
    )
    assert more.out == (exported / "metrics.json").read_text(encoding="utf-8")


def test_a_comparison_of_two_runs_equals_run_compare(repo_root: Path, exported: Path) -> None:
    runs = [str(exported / "bm25.run"), str(exported / "hybrid.run")]
    ours = cli(
        "score", *runs, "--fixtures", CODE, "--compare", "bm25,hybrid", "--stats", "full", cwd=repo_root
    ).out
    direct = cli("run", CODE, "--compare", "bm25,hybrid", "--stats", "full", cwd=repo_root).out
    assert ours == direct


def _spans_and_json_lines(repo_root: Path, exported: Path, tmp_path: Path) -> tuple[Path, Path]:
    chunks = {
        c["chunk_id"]: c
        for c in json.loads(cli("chunks", "test/fixture/samples", "--json", cwd=repo_root).out)["chunks"]
    }
    spans, answers = [], {}
    for line in (exported / "hybrid.run").read_text(encoding="utf-8").splitlines():
        qid, q0, docno, rank, score, tag = line.split()
        c = chunks[docno]
        spans.append(f"{qid} {q0} {c['file_path']}:{c['start_line']}-{c['end_line']} {rank} {score} {tag}")
        answers.setdefault(qid, []).append(
            {
                "file_path": c["file_path"],
                "start_line": c["start_line"],
                "end_line": c["end_line"],
                "kind": c["kind"],
            }
        )
    (tmp_path / "spans.run").write_text("\n".join(spans) + "\n", encoding="utf-8")
    (tmp_path / "hybrid.jsonl").write_text(
        "".join(json.dumps({"id": q, "results": r}) + "\n" for q, r in answers.items()), encoding="utf-8"
    )
    return tmp_path / "spans.run", tmp_path / "hybrid.jsonl"


def test_span_docnos_and_json_lines_score_like_chunk_ids(
    repo_root: Path, exported: Path, tmp_path: Path
) -> None:
    spans, lines = _spans_and_json_lines(repo_root, exported, tmp_path)
    by_id = json.loads(
        cli("score", str(exported / "hybrid.run"), "--fixtures", CODE, "--json", cwd=repo_root).out
    )
    for path in (spans, lines):
        doc = json.loads(cli("score", str(path), "--fixtures", CODE, "--json", cwd=repo_root).out)
        assert doc["backends"][0]["backend"] == "hybrid"
        assert doc == by_id


def test_ties_are_ordered_as_trec_eval_orders_them(small_project: Path) -> None:
    """Equal scores: trec_eval ranks the larger docno first; so do we (P@1 agrees)."""
    (small_project / "tie.run").write_text(
        "pay Q0 auth.py:1-2 1 5 sys\npay Q0 payments.py:4-5 2 5 sys\n", encoding="utf-8"
    )
    doc = json.loads(
        cli(
            "score", "tie.run", "--fixtures", "set.jsonl", "--json", "--metrics", "p@1", cwd=small_project
        ).out
    )
    pay = next(q for q in doc["backends"][0]["per_query"] if q["id"] == "pay")
    trec = pytrec_eval.RelevanceEvaluator({"pay": {"payments.py:4-5": 1}}, {"P_1"}).evaluate(
        {"pay": {"auth.py:1-2": 5.0, "payments.py:4-5": 5.0}}
    )
    assert float(pay["extra"]["precision_at_1"]) == trec["pay"]["P_1"] == 1.0
    assert pay["first_relevant_rank"] == 1


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("a.run", "hash Q0 x 1\n", "a.run line 1: expected 6 columns `qid Q0 docno rank score tag`, got 4"),
        (
            "a.run",
            "\nhash Q0 nope 1 1 s\n",
            'a.run line 2: document "nope" is neither a chunk id of the corpus nor a span',
        ),
        ("a.run", "hash Q0 auth.py:1-2 1 nan s\n", 'a.run line 1: the score "nan" is not a finite number'),
        (
            "a.run",
            "hash Q0 auth.py:1-2 1 1 s\nhash Q0 auth.py:1-2 2 0 s\n",
            'a.run line 2: document "auth.py:1-2" is listed for query "hash" of run "s" on line 1 already',
        ),
        (
            "a.run",
            "hash Q0 gone.py:1-2 1 1 s\n",
            'a.run line 1: document "gone.py:1-2": "gone.py" is not a file of',
        ),
        (
            "a.run",
            "hash Q0 auth.py:5-2 1 1 s\n",
            'a.run line 1: document "auth.py:5-2": end_line 2 is before',
        ),
        (
            "b.jsonl",
            '{"id":"hash","results":[]}\n{"id":"pay","results":[{"file_path":"auth.py"}]}\n',
            'b.jsonl line 2: query "pay": result 1: "start_line" is missing',
        ),
        ("b.jsonl", '{"id":"hash","results":[]}\n{oops\n', "b.jsonl line 2: not a JSON object"),
        (  # json.loads raised RecursionError here: a crash, exit 70
            "b.jsonl",
            '{"id": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
            "b.jsonl line 1: not a JSON object (nested 100001 levels deep; at most 64 are allowed)",
        ),
        (
            "b.jsonl",
            '{"id":"hash","results":[]}\n{"id":"hash","results":[]}\n',
            'b.jsonl line 2: query "hash" was answered on line 1 already',
        ),
        ("c.run", "\n\n", "c.run: no run lines"),
    ],
)
def test_errors_name_the_file_and_line(small_project: Path, name: str, text: str, message: str) -> None:
    (small_project / name).write_text(text, encoding="utf-8")
    result = cli_process("score", name, "--fixtures", "set.jsonl", cwd=small_project)
    assert result.code == 2 and result.out == "" and message in result.err, result.err
    assert "Traceback" not in result.err


def test_missing_and_unknown_queries(small_project: Path) -> None:
    (small_project / "part.run").write_text(
        "pay Q0 payments.py:4-5 1 1 s\nother Q0 auth.py:1-2 1 1 s\n", encoding="utf-8"
    )
    result = cli_process("score", "part.run", "--fixtures", "set.jsonl", "--json", cwd=small_project)
    assert result.code == 0
    assert 'warning: run s: 1 ranked query is not in set.jsonl and not scored (first: "other")' in result.err
    per_query = {q["id"]: q for q in json.loads(result.out)["backends"][0]["per_query"]}
    assert per_query["hash"]["mrr"] == "0.000000" and per_query["pay"]["mrr"] == "1.000000"


def test_two_files_may_not_name_the_same_run(small_project: Path) -> None:
    for name in ("x.run", "y.run"):
        (small_project / name).write_text("pay Q0 payments.py:4-5 1 1 s\n", encoding="utf-8")
    result = cli_process("score", "x.run", "y.run", "--fixtures", "set.jsonl", cwd=small_project)
    assert result.code == 2 and 'y.run: run "s" is also in x.run' in result.err
