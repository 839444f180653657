"""Rank metrics (`run --metrics`, under `extra`) are paired by `compare`, tested like the reference
metrics (t, permutation, bootstrap, Holm, MDE, Wilcoxon, sign), usable as `--primary-metric` and by
`power --metric`; checked against scipy."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from cce_relevance.stats.multiplicity import holm_adjust
from tests.cli.helpers import cli, cli_process
from tests.cli.saved_reports import report, rows, write

NDCG_BASE = [0.5, 0.25, 1.0, 0.0, 0.630930, 0.386853, 0.0, 1.0, 0.5]
NDCG_HEAD = [0.630930, 0.5, 1.0, 0.386853, 1.0, 0.386853, 0.5, 0.630930, 0.5]
HIT = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]


def _with_extra(doc: dict[str, Any], ndcg: list[float], hit: list[float]) -> dict[str, Any]:
    for backend in doc["backends"]:
        backend["extra"] = {"ndcg_at_k": f"{np.mean(ndcg):.6f}", "hit_at_5": f"{np.mean(hit):.6f}"}
        for entry, n, h in zip(backend["per_query"], ndcg, hit, strict=True):
            entry["extra"] = {"ndcg_at_k": f"{n:.6f}", "hit_at_5": f"{h:.6f}"}
    return doc


@pytest.fixture
def saved(tmp_path: Path) -> tuple[str, str]:
    values = [[0.2, 0.5, 1.0, 0.3]] * len(NDCG_BASE)
    base = _with_extra(report({"bm25": rows(values)}), NDCG_BASE, HIT)
    head = _with_extra(report({"bm25": rows(values)}), NDCG_HEAD, [1.0] * 9)
    return write(tmp_path / "base.json", base), write(tmp_path / "head.json", head)


def test_compare_pairs_and_tests_the_rank_metrics(saved: tuple[str, str]) -> None:
    doc = json.loads(cli("compare", *saved, "--json", "--stats", "full", "--primary-metric", "ndcg_at_k").out)
    backend = doc["backends"][0]
    ndcg = backend["metrics"]["ndcg_at_k"]
    deltas = [h - b for b, h in zip(NDCG_BASE, NDCG_HEAD, strict=True)]
    scipy_t = stats.ttest_1samp(deltas, 0.0)
    assert float(ndcg["t"]) == pytest.approx(scipy_t.statistic, abs=5e-7)
    assert float(ndcg["p"]) == pytest.approx(scipy_t.pvalue, abs=5e-7)
    ci = scipy_t.confidence_interval()
    assert (float(ndcg["ci95_low"]), float(ndcg["ci95_high"])) == pytest.approx((ci.low, ci.high), abs=5e-7)
    sd, n = float(np.std(deltas, ddof=1)), len(deltas)
    mde = (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * sd / math.sqrt(n)
    assert float(ndcg["mde80"]) == pytest.approx(mde, abs=5e-7)
    assert (ndcg["wins"], ndcg["losses"], ndcg["ties"]) == (5, 1, 3)
    full = backend["full"]
    assert full["primary"] == "ndcg_at_k" and set(full["metrics"]) == {
        "precision_at_k",
        "recall",
        "mrr",
        "f1",
        "ndcg_at_k",
        "hit_at_5",
    }
    # the permutation p over the 7 changed queries, enumerated independently
    changed = [d for d in deltas if d != 0]
    sums = [
        abs(sum(s * d for s, d in zip(signs, changed, strict=True)))
        for signs in itertools.product([1, -1], repeat=len(changed))
    ]
    perm = sum(1 for x in sums if x >= abs(sum(changed)) - 1e-12) / len(sums)
    assert float(full["metrics"]["ndcg_at_k"]["permutation_p"]) == pytest.approx(perm, abs=5e-7) == 10 / 64
    # two |deltas| tie (0.36907), so scipy's exact method does not apply; its permutation method enumerates
    wilcoxon = stats.wilcoxon(changed, method=stats.PermutationMethod()).pvalue
    assert float(full["metrics"]["ndcg_at_k"]["wilcoxon"]["p"]) == pytest.approx(wilcoxon, abs=5e-7)
    # Holm runs over every metric tested: the four reference metrics (no change, p = 1) and both rank metrics
    raw = [float(m["permutation_p"]) for m in full["metrics"].values()]
    holm = dict(zip(full["metrics"], holm_adjust(raw), strict=True))
    assert float(full["metrics"]["hit_at_5"]["holm_p"]) == pytest.approx(holm["hit_at_5"], abs=1e-6)
    assert backend["per_query"][0]["delta"]["hit_at_5"] == "+1.000000"
    # the percentile bootstrap as docs/statistics.md describes it: resample r reads n raw words of
    # PCG64(1979), word w picks delta w mod n; the 250th and 9,750th of the 10,000 sorted means
    words = np.random.PCG64(1979).random_raw(10_000 * n).reshape(10_000, n) % np.uint64(n)
    means = np.sort(np.array(deltas)[words].sum(axis=1) / n)
    boot = full["metrics"]["ndcg_at_k"]
    assert (float(boot["bootstrap_ci95_low"]), float(boot["bootstrap_ci95_high"])) == pytest.approx(
        (means[249], means[9749]), abs=5e-7
    )


def test_compare_text_and_markdown_show_the_rank_metrics(saved: tuple[str, str]) -> None:
    text = cli("compare", *saved).out
    assert "dnDCG@k" in text and "dhit@5" in text and "\n  nDCG@k  " in text
    md = cli("compare", *saved, "--markdown", "--stats", "full").out
    assert "| ΔnDCG@k | Δhit@5 |" in md and "| nDCG@k |" in md


def test_reports_without_extra_on_both_sides_compare_as_before(
    tmp_path: Path, saved: tuple[str, str]
) -> None:
    plain = report({"bm25": rows([[0.2, 0.5, 1.0, 0.3]] * 9)})
    p = write(tmp_path / "plain.json", plain)
    one_sided = json.loads(cli("compare", p, saved[1], "--json").out)["backends"][0]
    assert set(one_sided["metrics"]) == {"precision_at_k", "recall", "mrr", "f1"}
    assert set(one_sided["per_query"][0]["delta"]) == {"precision_at_k", "recall", "mrr", "f1"}
    result = cli_process("compare", p, saved[1], "--stats", "full", "--primary-metric", "ndcg_at_k")
    assert result.code == 2 and 'primary metric "ndcg_at_k" is not one of the metrics compared' in result.err
    assert "hint: score both sides with --metrics ndcg" in result.err


def test_power_plans_a_rank_metric(tmp_path: Path, saved: tuple[str, str]) -> None:
    compared = cli("compare", *saved, "--json").out
    (tmp_path / "c.json").write_text(compared, encoding="utf-8")
    doc = json.loads(
        cli("power", str(tmp_path / "c.json"), "--delta", "0.1", "--metric", "ndcg_at_k", "--json").out
    )
    (row,) = doc["rows"]
    deltas = [h - b for b, h in zip(NDCG_BASE, NDCG_HEAD, strict=True)]
    assert row["metric"] == "ndcg_at_k" and float(row["sd"]) == pytest.approx(
        np.std(deltas, ddof=1), abs=5e-7
    )
    missing = cli_process("power", str(tmp_path / "c.json"), "--delta", "0.1", "--metric", "ndcg_at_5")
    assert missing.code == 2 and 'holds no metric "ndcg_at_5"' in missing.err


def test_unknown_extra_keys_are_named(tmp_path: Path, saved: tuple[str, str]) -> None:
    doc = json.loads(Path(saved[0]).read_text(encoding="utf-8"))
    doc["backends"][0]["per_query"][2]["extra"]["ndgc"] = "0.5"
    bad = write(tmp_path / "bad.json", doc)
    result = cli_process("compare", bad, saved[1])
    assert result.code == 2 and "bm25/q3: unknown rank metric 'ndgc' under extra" in result.err


def test_a_rank_metric_can_be_charted(tmp_path: Path, saved: tuple[str, str]) -> None:
    chart = tmp_path / "ndcg.mmd"
    assert cli("compare", *saved, "--chart", str(chart), "--chart-metric", "ndcg_at_k").code == 0
    text = chart.read_text(encoding="utf-8")
    assert "nDCG@k per query, base to head, backend bm25" in text
    missing = cli_process("compare", *saved, "--chart", str(chart), "--chart-metric", "ndcg_at_5")
    assert missing.code == 2 and 'cannot chart "ndcg_at_5"' in missing.err


def test_a_compare_document_with_rank_metrics_meets_its_published_schema(saved: tuple[str, str]) -> None:
    from tests.action.test_schemas import validator

    doc = json.loads(cli("compare", *saved, "--json", "--stats", "full", "--primary-metric", "hit_at_5").out)
    validator("cce.relevance.compare.v1").validate(doc)
    assert doc["backends"][0]["full"]["metrics"]["ndcg_at_k"]["wilcoxon"]["method"] == "exact"
