"""`--chart FILE` on `run --compare` and on `compare`: files by suffix, metric and backend choice,
determinism across processes, and errors before any work is done."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cce_relevance import api
from cce_relevance.errors import CceError
from cce_relevance.evaluation.comparison import compare_documents
from cce_relevance.reporting.chart import charted, compare_chart, comparison_chart, mermaid_block
from tests.cli import saved_reports
from tests.cli.helpers import cli, cli_process


def test_run_compare_writes_the_mermaid_block_of_its_deltas(repo_root: Path, tmp_path: Path) -> None:
    chart = tmp_path / "mrr.md"
    result = cli(
        "run", "eval/relevance/code.jsonl", "--compare", "bm25,hybrid", "--chart", str(chart), cwd=repo_root
    )
    assert result.code == 0, result.err
    text = chart.read_text(encoding="utf-8")
    assert text.startswith("```mermaid\nxychart-beta\n") and text.endswith("```\n")
    assert '    title "MRR per query, bm25 to hybrid"\n' in text
    # the deltas of the human table, in case order (hybrid − bm25 MRR of our starter set)
    assert (
        "    bar [0.000000, 0.000000, 0.000000, 0.500000, 0.000000, 0.500000, 0.500000, -0.500000, "
        "0.000000, 0.000000]\n" in text
    )


def test_chart_of_a_rank_metric_needs_it_computed(small_project: Path) -> None:
    base = ("run", "set.jsonl", "--compare", "bm25,hybrid", "--chart", "c.mmd", "--chart-metric", "ndcg_at_k")
    missing = cli_process(*base, cwd=small_project)
    assert (missing.code, missing.out) == (2, "")
    assert missing.err == 'error: cannot chart "ndcg_at_k": it needs --metrics ndcg\n'
    assert not (small_project / "c.mmd").exists()
    ok = cli(*base, "--metrics", "ndcg", cwd=small_project)
    assert ok.code == 0, ok.err
    assert (
        (small_project / "c.mmd")
        .read_text()
        .startswith('xychart-beta\n    title "nDCG@k per query, bm25 to hybrid"')
    )


def test_svg_is_byte_identical_across_processes(small_project: Path) -> None:
    outputs = []
    for name in ("a.svg", "b.svg"):
        result = cli_process(
            "run",
            "set.jsonl",
            "--compare",
            "vector,hybrid",
            "--chart",
            name,
            "--chart-metric",
            "f1",
            cwd=small_project,
        )
        assert result.code == 0, result.err
        outputs.append((small_project / name).read_bytes())
    assert outputs[0] == outputs[1]
    assert ET.fromstring(outputs[0]).tag == "{http://www.w3.org/2000/svg}svg"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--chart", "c.md"], "--chart needs --compare A,B"),
        (["--compare", "bm25,hybrid", "--chart", "c.png"], "unknown chart format"),
        (["--compare", "bm25,hybrid", "--chart", "c.md", "--chart-metric", "map"], 'cannot chart "map"'),
        (["--compare", "bm25,hybrid", "--chart-metric", "f1"], "--chart-metric needs --chart FILE"),
    ],
)
def test_chart_errors_exit_2_and_write_nothing(small_project: Path, args: list[str], message: str) -> None:
    result = cli_process("run", "set.jsonl", *args, cwd=small_project)
    assert result.code == 2 and result.out == "" and message in result.err
    assert sorted(p.name for p in small_project.iterdir()) == ["corpus", "set.jsonl"]


@pytest.fixture()
def saved(tmp_path: Path) -> tuple[str, str]:
    base = saved_reports.report(
        {
            "bm25": saved_reports.rows([(0.2, 0.5, 0.5, 0.3), (0.4, 1, 1, 0.6)]),
            "hybrid": saved_reports.rows([(0.2, 0.5, 0.25, 0.3)]),
        }
    )
    head = saved_reports.report(
        {
            "bm25": saved_reports.rows([(0.2, 0.5, 1, 0.3), (0.4, 1, 0.5, 0.6)]),
            "hybrid": saved_reports.rows([(0.2, 0.5, 1, 0.3)]),
        }
    )
    return saved_reports.write(tmp_path / "base.json", base), saved_reports.write(
        tmp_path / "head.json", head
    )


def test_compare_charts_the_last_backend_in_both_reports_by_default_as_the_action_does(
    saved: tuple[str, str], tmp_path: Path
) -> None:
    chart = tmp_path / "c.mmd"
    assert cli("compare", *saved, "--chart", str(chart)).code == 0
    text = chart.read_text()
    assert '    title "MRR per query, base to head, backend hybrid"\n' in text
    assert "    bar [0.750000]\n" in text
    comparisons = api.compare_saved(saved[0], saved[1])
    assert compare_chart(comparisons) == comparison_chart(charted(comparisons) or comparisons[0], "mrr")
    assert (
        cli(
            "compare", *saved, "--chart", str(chart), "--chart-backend", "bm25", "--chart-metric", "recall"
        ).code
        == 0
    )
    assert "    bar [0.000000, 0.000000]\n" in chart.read_text() and "backend bm25" in chart.read_text()


def test_compare_chart_errors(saved: tuple[str, str], tmp_path: Path) -> None:
    unknown = cli_process("compare", *saved, "--chart", str(tmp_path / "c.md"), "--chart-backend", "vector")
    assert unknown.code == 2 and unknown.out == ""
    assert unknown.err == (
        'error: backend "vector" is not scored in both reports, nothing to chart '
        "(backends in both: bm25, hybrid)\n"
    )
    lonely = cli_process("compare", *saved, "--chart-backend", "bm25")
    assert lonely.code == 2 and "--chart-backend needs --chart FILE" in lonely.err


def test_a_comparison_charts_one_backend_as_a_fenced_block(saved: tuple[str, str]) -> None:
    comparisons = api.compare_saved(saved[0], saved[1])
    block = mermaid_block(comparison_chart(comparisons[1], "mrr"))
    assert block.startswith("```mermaid\nxychart-beta\n") and "    bar [0.750000]\n" in block
    with pytest.raises(
        CceError, match='cannot chart "ndcg_at_k": expected one of precision_at_k, recall, mrr, f1'
    ):
        comparison_chart(comparisons[0], "ndcg_at_k")
    only_base = compare_documents(
        json.loads(Path(saved[0]).read_text()),
        saved_reports.report({"other": saved_reports.rows([(0, 0, 0, 0)])}),
    )
    with pytest.raises(CceError, match="no backend is scored in both reports"):
        compare_chart(only_base)
