"""`cce-relevance compare BASE.json HEAD.json`: pairing by name, one-sided queries, renderings."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cce_relevance.stats.paired import paired_t
from tests.cli.helpers import cli, cli_process


def _report(backends: dict[str, dict[str, float]]) -> dict:
    """A minimal saved run report: per backend, query id → MRR (other metrics derived)."""
    out = []
    for name, queries in backends.items():
        per_query = [
            {
                "id": qid,
                "k": 5,
                "first_relevant_rank": None,
                "precision_at_k": f"{v / 5:.6f}",
                "recall": f"{min(1.0, v * 2):.6f}",
                "mrr": f"{v:.6f}",
                "f1": "0.000000",
            }
            for qid, v in queries.items()
        ]
        mean = sum(queries.values()) / len(queries)
        out.append(
            {
                "backend": name,
                "per_query": per_query,
                "mrr": f"{mean:.6f}",
                "precision_at_k": "0.000000",
                "recall": "0.000000",
                "f1": "0.000000",
            }
        )
    return {
        "schema": "cce.relevance.report/v2",
        "corpus": "c",
        "embedder": "hash",
        "queries": 1,
        "backends": out,
    }


@pytest.fixture()
def reports(tmp_path: Path) -> tuple[Path, Path]:
    base = _report(
        {"bm25": {"a": 1.0, "b": 0.5, "c": 0.0, "gone": 1.0}, "hybrid": {"a": 1.0, "b": 1.0, "c": 0.5}}
    )
    # head lists queries in another order, drops `gone`, adds `new`; pairing must be by id
    head = _report(
        {"hybrid": {"c": 0.25, "a": 1.0, "b": 0.5}, "bm25": {"b": 1.0, "a": 1.0, "c": 0.5, "new": 0.2}}
    )
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    return tmp_path / "base.json", tmp_path / "head.json"


def test_pairs_by_backend_and_query_id_not_position(reports: tuple[Path, Path]) -> None:
    result = cli("compare", str(reports[0]), str(reports[1]), "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["schema"] == "cce.relevance.compare/v1"
    bm25 = doc["backends"][0]
    assert bm25["backend"] == "bm25"
    rows = {q["id"]: q for q in bm25["per_query"]}
    assert rows["b"]["delta"]["mrr"] == "+0.500000" and rows["c"]["delta"]["mrr"] == "+0.500000"
    assert rows["gone"]["status"] == "base-only" and rows["new"]["status"] == "head-only"
    mrr = bm25["metrics"]["mrr"]
    assert (mrr["wins"], mrr["losses"], mrr["ties"], mrr["n"]) == (2, 0, 1, 3)
    expected = paired_t([0.0, 0.5, 0.5])
    assert mrr["mean_delta"] == "+0.333333" and mrr["p"] == f"{expected.p:.6f}"
    hybrid = doc["backends"][1]["metrics"]["mrr"]
    assert (hybrid["wins"], hybrid["losses"], hybrid["ties"]) == (0, 2, 1)


def test_text_lists_one_sided_queries(reports: tuple[Path, Path]) -> None:
    out = cli("compare", str(reports[0]), str(reports[1])).out
    assert "gone" in out and "only in base" in out and "only in head" in out
    assert "MDE@80%" in out


def test_markdown_escapes_untrusted_ids(tmp_path: Path) -> None:
    evil = "@octocat <img src=x> | #1"
    base = _report({"bm25": {evil: 0.0, "b": 1.0}})
    head = _report({"bm25": {evil: 1.0, "b": 1.0}})
    (tmp_path / "b.json").write_text(json.dumps(base))
    (tmp_path / "h.json").write_text(json.dumps(head))
    md = cli("compare", str(tmp_path / "b.json"), str(tmp_path / "h.json"), "--markdown").out
    # ids are shown as code spans, where GitHub renders HTML and mentions as literal text
    outside_code = re.sub(r"`[^`]*`", "", md)
    assert "<img" not in outside_code and "@octocat" not in outside_code
    assert "`@octocat <img src=x> \\| #1`" in md
    assert "1 unchanged query" in md and "1 unchanged queries" not in md


def test_deterministic_and_errors(reports: tuple[Path, Path], tmp_path: Path) -> None:
    a = cli_process("compare", str(reports[0]), str(reports[1]), "--json")
    b = cli_process("compare", str(reports[0]), str(reports[1]), "--json")
    assert a.out == b.out and a.code == 0
    (tmp_path / "bad.json").write_text("{not json")
    bad = cli_process("compare", str(tmp_path / "bad.json"), str(reports[1]))
    assert bad.code == 2 and bad.out == "" and bad.err.startswith("error: could not read report")
    (tmp_path / "other.json").write_text('{"schema": "something/else"}')
    other = cli_process("compare", str(tmp_path / "other.json"), str(reports[1]))
    assert other.code == 2 and "is not a cce.relevance report" in other.err
    both = cli_process("compare", str(reports[0]), str(reports[1]), "--json", "--markdown")
    assert both.code == 2


def test_compare_real_runs(repo_root: Path, tmp_path: Path) -> None:
    """Two real runs of the same set compare as all ties."""
    out = tmp_path / "r.json"
    assert cli("run", "eval/relevance/code.jsonl", "--json", "--output", str(out), cwd=repo_root).code == 0
    doc = json.loads(cli("compare", str(out), str(out), "--json").out)
    for backend in doc["backends"]:
        assert backend["metrics"]["mrr"]["ties"] == 10 and backend["metrics"]["mrr"]["p"] == "1.000000"
