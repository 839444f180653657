"""`cce-relevance power`: queries needed and the MDE now, from a saved comparison's per-query deltas.

The numbers are checked against the seed's formula evaluated with scipy's t quantiles, n tried
one at a time; the inputs are the deltas of the very strings the documents hold.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from tests.cli.helpers import cli, cli_process
from tests.cli.saved_reports import KEYS, report, rows, write

CODE_SET = "eval/relevance/code.jsonl"


def scipy_plan(
    deltas: list[float], delta: float, alpha: float = 0.05, power: float = 0.8
) -> tuple[float, float, int]:
    """sd, MDE now and queries needed, by the seed's formula with scipy's quantiles."""
    n, sd = len(deltas), float(np.std(deltas, ddof=1))

    def multiplier(m: int) -> float:
        return stats.t.ppf(1 - alpha / 2, m - 1) + stats.t.ppf(power, m - 1)

    needed = 2
    while needed < (multiplier(needed) * sd / delta) ** 2:
        needed += 1
    return sd, multiplier(n) * sd / math.sqrt(n), needed


@pytest.fixture(scope="module")
def run_report(repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    result = cli("run", CODE_SET, "--compare", "bm25,hybrid", "--json", cwd=repo_root)
    path = tmp_path_factory.mktemp("power") / "run.json"
    path.write_text(result.out, encoding="utf-8")
    return path


def test_run_report_rows_match_scipy(run_report: Path) -> None:
    doc = json.loads(run_report.read_text())
    a, b = doc["backends"]
    result = cli("power", str(run_report), "--delta", "0.05", "--json")
    assert result.code == 0 and result.err == ""
    out = json.loads(result.out)
    assert (out["schema"], out["delta"], out["alpha"], out["power"]) == (
        "cce.relevance.power/v1",
        "0.050000",
        0.05,
        0.8,
    )
    assert [(r["comparison"], r["metric"]) for r in out["rows"]] == [("bm25 → hybrid", k) for k in KEYS]
    for row in out["rows"]:
        deltas = [
            float(qb[row["metric"]]) - float(qa[row["metric"]])
            for qa, qb in zip(a["per_query"], b["per_query"], strict=True)
        ]
        sd, mde, needed = scipy_plan(deltas, 0.05)
        assert row["n"] == 10 and row["note"] is None
        assert float(row["sd"]) == pytest.approx(sd, abs=5e-7)
        assert float(row["mde"]) == pytest.approx(mde, abs=5e-7)
        assert row["queries_needed"] == needed


def test_levels_and_metric_filter(run_report: Path) -> None:
    doc = json.loads(run_report.read_text())
    a, b = doc["backends"]
    out = json.loads(
        cli(
            "power",
            str(run_report),
            "--delta",
            "0.1",
            "--alpha",
            "0.01",
            "--power",
            "0.9",
            "--metric",
            "recall",
            "--json",
        ).out
    )
    [row] = out["rows"]
    deltas = [
        float(qb["recall"]) - float(qa["recall"])
        for qa, qb in zip(a["per_query"], b["per_query"], strict=True)
    ]
    _, mde, needed = scipy_plan(deltas, 0.1, alpha=0.01, power=0.9)
    assert row["metric"] == "recall" and row["queries_needed"] == needed
    assert float(row["mde"]) == pytest.approx(mde, abs=5e-7)


def test_text_output(run_report: Path) -> None:
    result = cli("power", str(run_report), "--delta", "0.05", "--metric", "mrr")
    assert result.code == 0
    lines = result.out.splitlines()
    assert lines[0] == "CCE relevance — power analysis (paired t-test, two-sided alpha 0.05, power 0.8)"
    assert lines[1] == f"  source: {run_report}"
    assert lines[2] == "  target: a mean delta of 0.050000"
    assert lines[4] == "  comparison              metric         n          sd     MDE now  queries needed"
    assert lines[5] == "  bm25 → hybrid           MRR           10    0.316228    0.314556             316"
    assert "t quantiles computed (Sakai 2016)" in result.out


def test_compare_document_gives_one_comparison_per_paired_backend(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    base_vals = [[round(float(x), 6) for x in rng.uniform(0, 1, 4)] for _ in range(12)]
    head_vals = [[round(v + float(rng.normal(0.02, 0.1)), 6) for v in vals] for vals in base_vals]
    base = report({"bm25": rows(base_vals), "vector": rows(base_vals)})
    head = report({"bm25": rows(head_vals[:11]), "hybrid": rows(head_vals)})  # q12 only in base
    compared = cli("compare", write(tmp_path / "b.json", base), write(tmp_path / "h.json", head), "--json")
    path = tmp_path / "cmp.json"
    path.write_text(compared.out, encoding="utf-8")
    out = json.loads(cli("power", str(path), "--delta", "0.05", "--json").out)
    assert [(r["comparison"], r["metric"]) for r in out["rows"]] == [("bm25", k) for k in KEYS]
    for i, row in enumerate(out["rows"]):
        deltas = [head_vals[q][i] - base_vals[q][i] for q in range(11)]
        sd, mde, needed = scipy_plan(deltas, 0.05)
        assert row["n"] == 11 and row["queries_needed"] == needed
        assert float(row["sd"]) == pytest.approx(sd, abs=5e-7)


def test_missing_numbers_are_explained(tmp_path: Path) -> None:
    same = [[0.2, 0.5, 1.0, 0.3]] * 4
    doc = report(
        {"a": rows(same), "b": rows([[0.2, 0.5, 1.0, 0.3]] * 3 + [[0.2, 0.5, 0.0, 0.3]])}, ("a", "b")
    )
    out = json.loads(cli("power", write(tmp_path / "r.json", doc), "--delta", "1e-6", "--json").out)
    by_metric = {r["metric"]: r for r in out["rows"]}
    assert by_metric["recall"] == {
        "comparison": "a → b",
        "mde": None,
        "metric": "recall",
        "n": 4,
        "note": "no spread: every delta is the same",
        "queries_needed": None,
        "sd": "0.000000",
    }
    assert (
        by_metric["mrr"]["queries_needed"] is None
        and by_metric["mrr"]["note"] == "more than 10000000 queries"
    )
    assert by_metric["mrr"]["mde"] is not None
    single = report({"a": rows([[0.1] * 4]), "b": rows([[0.2] * 4])}, ("a", "b"))
    text = cli("power", write(tmp_path / "s.json", single), "--delta", "0.05").out
    assert (
        "  a → b                   MRR            1         n/a         n/a             n/a  "
        "fewer than 2 paired queries\n" in text
    )


@pytest.mark.slow
def test_output_is_identical_across_processes(run_report: Path) -> None:
    for extra in ((), ("--json",)):
        first = cli_process("power", str(run_report), "--delta", "0.03", *extra)
        second = cli_process("power", str(run_report), "--delta", "0.03", *extra)
        assert first.code == 0 and first.out == second.out


def _doc_without_compare(tmp_path: Path) -> str:
    return write(tmp_path / "plain.json", report({"a": rows([[0.1] * 4])}))


@pytest.mark.parametrize(
    ("make", "extra", "message"),
    [
        (_doc_without_compare, [], "has no compare block, so no per-query deltas"),
        (
            lambda p: write(p / "x.json", {"schema": "something/v9"}),
            [],
            "is neither a run report nor a compare document",
        ),
        (lambda p: str(p / "missing.json"), [], "could not read report"),
        (lambda p: (p / "bad.json").write_text("{") and str(p / "bad.json"), [], "invalid JSON"),
        (
            lambda p: write(p / "r.json", report({"a": rows([[0.1] * 4])}, ("a", "zzz"))),
            [],
            "names backend 'zzz', which the report does not hold",
        ),
        (
            lambda p: write(
                p / "r.json", report({"a": rows([[0.1] * 4]), "b": rows([[0.1] * 4], prefix="x")}, ("a", "b"))
            ),
            [],
            "query 1 is 'q1' in a but 'x1' in b",
        ),
        (
            lambda p: write(
                p / "r.json", report({"a": rows([[0.1] * 4] * 2), "b": rows([[0.1] * 4])}, ("a", "b"))
            ),
            [],
            "scored different numbers of queries (2 and 1)",
        ),
        (
            lambda p: write(
                p / "c.json",
                {
                    "schema": "cce.relevance.compare/v1",
                    "backends": [{"backend": "a", "status": "base-only", "per_query": []}],
                },
            ),
            [],
            "no backend was scored at both",
        ),
        # checked before the file is read (it has no comparison), in the library's words
        (_doc_without_compare, ["--delta", "0"], "the effect size delta must be finite and > 0, got 0.0"),
        (_doc_without_compare, ["--delta", "nan"], "the effect size delta must be finite and > 0, got nan"),
        (_doc_without_compare, ["--alpha", "1"], "alpha must lie strictly between 0 and 1, got 1.0"),
        (_doc_without_compare, ["--power", "0.3"], "power must lie in [0.5, 1), got 0.3"),
    ],
)
def test_clear_errors(tmp_path: Path, make, extra: list[str], message: str) -> None:
    path = make(tmp_path)
    args = ["power", path, *extra] + ([] if "--delta" in extra else ["--delta", "0.05"])
    result = cli_process(*args)
    assert result.code == 2 and result.out == ""
    assert result.err.startswith("error: ") and message in result.err and "Traceback" not in result.err


def test_non_finite_values_are_rejected(tmp_path: Path) -> None:
    doc = report({"a": rows([[0.1] * 4] * 2), "b": rows([[0.1] * 4] * 2)}, ("a", "b"))
    doc["backends"][1]["per_query"][1]["mrr"] = "NaN"
    result = cli("power", write(tmp_path / "r.json", doc), "--delta", "0.05")
    assert (
        result.code == 2
        and "b/q2 mrr: expected a finite number (a metric, at most 1e+06 in size), got 'NaN'" in result.err
    )


def test_missing_compare_block_has_a_hint(tmp_path: Path) -> None:
    result = cli("power", _doc_without_compare(tmp_path), "--delta", "0.05")
    assert "hint: make one with `cce-relevance run FIXTURES --compare A,B --json`" in result.err


def test_equal_valued_deltas_are_no_spread_in_power_and_compare(tmp_path: Path) -> None:
    """P@k 0.4/0.1/0.0 at base and 0.6/0.3/0.2 at head: every delta is 0.2 to a reader (the
    doubles differ in their last bits), so neither the t-test nor the MDE nor a plan exists."""
    base = report({"bm25": rows([[0.4, 0.5, 1.0, 0.4], [0.1, 0.5, 1.0, 0.4], [0.0, 0.5, 1.0, 0.4]])})
    head = report({"bm25": rows([[0.6, 0.5, 1.0, 0.4], [0.3, 0.5, 1.0, 0.4], [0.2, 0.5, 1.0, 0.4]])})
    b, h = write(tmp_path / "b.json", base), write(tmp_path / "h.json", head)
    compared = json.loads(cli("compare", b, h, "--json").out)
    p_at_k = compared["backends"][0]["metrics"]["precision_at_k"]
    assert p_at_k["t"] is None and p_at_k["mde80"] is None
    write(tmp_path / "c.json", compared)
    plan = json.loads(cli("power", str(tmp_path / "c.json"), "--delta", "0.05", "--json").out)
    row = next(r for r in plan["rows"] if r["metric"] == "precision_at_k")
    assert (row["mde"], row["queries_needed"], row["note"]) == (
        None,
        None,
        "no spread: every delta is the same",
    )


def test_power_reads_the_actions_compare_json(tmp_path: Path) -> None:
    """The Action's compare.json holds a compare document per set scored at both sides: each set's
    backends plan like those of `compare --json`, named after their set."""
    base = {
        "schema": "cce.relevance.report/v2",
        "corpus": "c",
        "embedder": "hash",
        "cases": 4,
        "backends": [
            {
                "backend": "bm25",
                "precision_at_k": "0.5",
                "recall": "0.5",
                "mrr": "0.5",
                "f1": "0.5",
                "per_query": [
                    {
                        "id": f"q{i}",
                        "k": 3,
                        "precision_at_k": "0.333333",
                        "recall": "1.000000",
                        "mrr": mrr,
                        "f1": "0.500000",
                        "first_relevant_rank": 1,
                    }
                    for i, mrr in enumerate(["1.0", "0.5", "0.333333", "1.0"])
                ],
            }
        ],
    }
    head = json.loads(json.dumps(base))
    for query, mrr in zip(head["backends"][0]["per_query"], ["0.5", "0.5", "1.0", "0.25"], strict=True):
        query["mrr"] = mrr
    compare_doc = json.loads(
        cli("compare", write(tmp_path / "b.json", base), write(tmp_path / "h.json", head), "--json").out
    )
    action_doc = {
        "schema": "cce.relevance.action/v1",
        "sets": [
            {"fixtures": "eval/new.jsonl", "status": "head-only", "compare": None},
            {"fixtures": "eval/code.jsonl", "status": "paired", "compare": compare_doc},
        ],
    }
    from_action = json.loads(
        cli(
            "power",
            write(tmp_path / "compare.json", action_doc),
            "--delta",
            "0.1",
            "--metric",
            "mrr",
            "--json",
        ).out
    )
    from_compare = json.loads(
        cli(
            "power", write(tmp_path / "c.json", compare_doc), "--delta", "0.1", "--metric", "mrr", "--json"
        ).out
    )
    assert [r["comparison"] for r in from_action["rows"]] == ["eval/code.jsonl: bm25"]
    assert [{k: v for k, v in r.items() if k != "comparison"} for r in from_action["rows"]] == [
        {k: v for k, v in r.items() if k != "comparison"} for r in from_compare["rows"]
    ]
    nothing = {"schema": "cce.relevance.action/v1", "sets": [action_doc["sets"][0]]}
    result = cli("power", write(tmp_path / "none.json", nothing), "--delta", "0.1")
    assert result.code == 2 and "no fixture set was scored at both base and head" in result.err
