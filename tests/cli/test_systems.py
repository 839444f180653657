"""`run --compare A,B,C` and `compare R1 R2 R3`: several systems, pairwise tests with Holm, and a
randomised Tukey HSD; two systems keep the paired comparison, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cce_relevance.stats.multi_system import compare_systems
from tests.cli.helpers import cli, cli_process
from tests.cli.saved_reports import report, rows, write

CODE = "eval/relevance/code.jsonl"


def test_run_compare_of_three_backends(repo_root: Path) -> None:
    doc = json.loads(
        cli("run", CODE, "--compare", "bm25,vector,hybrid", "--json", "--metrics", "ndcg", cwd=repo_root).out
    )
    assert "compare" not in doc
    systems = doc["systems"]
    assert systems["systems"] == ["bm25", "vector", "hybrid"] and systems["hsd"] == {
        "seed": 2012,
        "trials": 10000,
    }
    assert set(systems["metrics"]) == {"precision_at_k", "recall", "mrr", "f1", "ndcg_at_k"}
    mrr = systems["metrics"]["mrr"]
    assert [(p["a"], p["b"]) for p in mrr["pairs"]] == [
        ("bm25", "vector"),
        ("bm25", "hybrid"),
        ("vector", "hybrid"),
    ]
    per = {b["backend"]: [float(q["mrr"]) for q in b["per_query"]] for b in doc["backends"]}
    # the exact per-case values give the same six-decimal statistics as the report's values here
    expected = compare_systems(
        "mrr", ["bm25", "vector", "hybrid"], [per["bm25"], per["vector"], per["hybrid"]]
    )
    for got, want in zip(mrr["pairs"], expected.pairs, strict=True):
        assert got["hsd_p"] == f"{want.hsd_p:.6f}" and got["holm_p"] == f"{want.holm_p:.6f}"
    text = cli("run", CODE, "--compare", "bm25,vector,hybrid", cwd=repo_root).out
    assert "\n  comparison of 3 backends\n" in text and "  HSD-p matrix\n" in text
    assert all(line == line.rstrip() for line in text.splitlines())


def test_two_backends_keep_the_paired_comparison(repo_root: Path) -> None:
    doc = json.loads(cli("run", CODE, "--compare", "bm25,hybrid", "--json", cwd=repo_root).out)
    assert "compare" in doc and "systems" not in doc


def test_three_backends_and_full_stats_or_a_chart_are_usage_errors(repo_root: Path, tmp_path: Path) -> None:
    result = cli_process("run", CODE, "--compare", "bm25,vector,hybrid", "--stats", "full", cwd=repo_root)
    assert result.code == 2 and "--stats full compares two backends" in result.err


@pytest.fixture
def three_reports(tmp_path: Path) -> list[str]:
    values = {
        "r1": [[0.2, 0.5, 1.0, 0.3], [0.4, 1.0, 0.5, 0.6], [0.0, 0.0, 0.0, 0.0], [0.2, 0.5, 0.25, 0.3]],
        "r2": [[0.4, 0.5, 1.0, 0.4], [0.4, 1.0, 1.0, 0.6], [0.2, 0.5, 0.5, 0.3], [0.2, 0.5, 0.25, 0.3]],
        "r3": [[0.6, 1.0, 1.0, 0.7], [0.6, 1.0, 1.0, 0.7], [0.4, 1.0, 1.0, 0.6], [0.4, 1.0, 0.5, 0.6]],
    }
    return [
        write(tmp_path / f"{name}.json", report({"bm25": rows(v), f"only-{name}": rows(v)}))
        for name, v in values.items()
    ]


def test_compare_three_saved_reports(three_reports: list[str]) -> None:
    doc = json.loads(cli("compare", *three_reports, "--json").out)
    assert doc["schema"] == "cce.relevance.systems/v1" and doc["reports"] == three_reports
    assert [b["backend"] for b in doc["backends"]] == ["bm25"]  # the only backend in all three
    mrr = doc["backends"][0]["metrics"]["mrr"]
    assert mrr["means"] == {
        three_reports[0]: "0.437500",
        three_reports[1]: "0.687500",
        three_reports[2]: "0.875000",
    }
    assert mrr["n"] == 4 and len(mrr["pairs"]) == 3
    text = cli("compare", *three_reports).out
    assert text.startswith("CCE relevance — comparison of saved reports\n  1: ")
    md = cli("compare", *three_reports, "--markdown").out
    assert (
        "| system | mean | HSD p vs" in md
        and "| pair | mean Δ | W/L/T | t p | perm p | Holm p | HSD p |" in md
    )
    again = cli("compare", *three_reports, "--json").out
    assert again == cli("compare", *three_reports, "--json").out


def test_compare_usage_errors(three_reports: list[str]) -> None:
    one = cli_process("compare", three_reports[0])
    assert one.code == 2 and "compare needs at least two reports" in one.err
    full = cli_process("compare", *three_reports, "--stats", "full")
    assert full.code == 2 and "--stats full compares two reports" in full.err
    chart = cli_process("compare", *three_reports, "--chart", "x.svg")
    assert chart.code == 2 and "needs exactly two reports" in chart.err
