"""`--stats full` on `run --compare` and `compare`: extra numbers only when asked, checked independently.

The default outputs are pinned byte for byte by test_parity.py; here `--stats reference` must
equal them, `--stats full` must only add (a text block after the t-test block, a `full` key in
the JSON), the same arguments must give the same bytes in separate processes, and every number
of the full block must match a computation that does not use our statistics code.
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from cce_relevance.reporting.full_report import FULL_LEGEND
from cce_relevance.stats.resampling import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    EXACT_LIMIT,
    PERMUTATION_DRAWS,
    PERMUTATION_SEED,
)
from tests.cli.helpers import cli, cli_process
from tests.cli.saved_reports import KEYS, report, rows, write
from tests.stats.test_resampling import enumerated_p, reference_bootstrap

CODE_SET = "eval/relevance/code.jsonl"
LABELS = {"precision_at_k": "P@k", "recall": "recall", "mrr": "MRR", "f1": "F1"}


def manual_holm(p: list[float]) -> list[float]:
    """Sort, multiply the i-th smallest by m − i, carry the running maximum, cap at 1."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    out, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, (len(p) - rank) * p[i])
        out[i] = min(1.0, running)
    return out


def scipy_mde(sd: float, n: int) -> float:
    return (stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * sd / math.sqrt(n)


def check_full_block(full: dict[str, Any], deltas: dict[str, list[str]], rounded_inputs: bool) -> None:
    """Every number of a `full` JSON block against references computed here from the deltas' strings.

    With `rounded_inputs` the block was computed from the same six-decimal values we read, so
    it must agree to the printed digit; otherwise from unrounded values, within 2e-6.
    """
    tol = 0.0 if rounded_inputs else 2e-6
    perm = []
    for key in KEYS:
        block = full["metrics"][key]
        exact = [Fraction(d) for d in deltas[key]]
        values = [float(d) for d in exact]
        n = len(values)
        assert (block["wins"], block["losses"], block["ties"]) == (
            sum(d > 0 for d in exact),
            sum(d < 0 for d in exact),
            sum(d == 0 for d in exact),
        )
        assert block["no_change"] == all(d == 0 for d in exact)
        assert block["permutation_method"] == "exact" and block["changed"] == sum(d != 0 for d in exact)
        assert float(block["permutation_p"]) == pytest.approx(float(enumerated_p(exact)), abs=5e-7)
        perm.append(float(enumerated_p(exact)))
        low, high = reference_bootstrap(values, 10_000, 1979)
        assert float(block["bootstrap_ci95_low"]) == pytest.approx(low, abs=tol + 5e-7)
        assert float(block["bootstrap_ci95_high"]) == pytest.approx(high, abs=tol + 5e-7)
        sd = float(np.std(values, ddof=1))
        if sd == 0.0:
            assert block["d_z"] is None and block["mde80"] is None
        else:
            assert float(block["d_z"]) == pytest.approx(float(np.mean(values)) / sd, abs=tol * 10 + 5e-7)
            assert float(block["mde80"]) == pytest.approx(scipy_mde(sd, n), abs=tol * 10 + 5e-7)
    for key, adjusted in zip(KEYS, manual_holm(perm), strict=True):
        assert float(full["metrics"][key]["holm_p"]) == pytest.approx(adjusted, abs=5e-7)


@pytest.fixture(scope="module")
def code_runs(repo_root: Path) -> dict[str, str]:
    """`run --compare bm25,hybrid` on our code set, text and JSON, default and full."""
    args = ("run", CODE_SET, "--compare", "bm25,hybrid")
    out = {}
    for name, extra in {
        "text": (),
        "json": ("--json",),
        "full-text": ("--stats", "full"),
        "full-json": ("--stats", "full", "--json"),
    }.items():
        result = cli(*args, *extra, cwd=repo_root)
        assert result.code == 0 and result.err == "", result.err
        out[name] = result.out
    return out


def test_stats_reference_is_the_default(repo_root: Path, code_runs: dict[str, str]) -> None:
    for extra, key in (((), "text"), (("--json",), "json")):
        result = cli(
            "run", CODE_SET, "--compare", "bm25,hybrid", "--stats", "reference", *extra, cwd=repo_root
        )
        assert result.out == code_runs[key]
    assert "full" not in json.loads(code_runs["json"])["compare"]


def test_full_text_appends_one_block_after_the_t_test(code_runs: dict[str, str]) -> None:
    full = code_runs["full-text"]
    assert full.startswith(code_runs["text"])
    extra = full[len(code_runs["text"]) :]
    assert extra.startswith(
        "\n  full statistics (primary metric: MRR; Holm over the permutation p of 4 metrics)\n"
        "  metric           W/L/T         d_z      perm-p               boot 95% CI      Holm-p"
        "     MDE@80%\n"
    )
    assert (
        "  MRR              3/1/6   +0.316228    0.625000    [-0.100000, +0.300000]    1.000000    0.314556  "
        "primary\n" in extra
    )
    assert "reading the full statistics (docs/statistics.md" in extra and "MDE@80%: the smallest" in extra


def test_full_json_adds_only_compare_full(code_runs: dict[str, str]) -> None:
    full = json.loads(code_runs["full-json"])
    block = full["compare"].pop("full")
    assert full == json.loads(code_runs["json"])
    assert block["primary"] == "mrr" and block["holm_adjusts"] == "permutation_p"
    assert block["permutation"] == {"draws": 100000, "exact_limit": 20, "seed": 2010}
    assert block["bootstrap"] == {"method": "percentile", "resamples": 10000, "seed": 1979}


def test_full_run_numbers_match_independent_computations(code_runs: dict[str, str]) -> None:
    doc = json.loads(code_runs["full-json"])
    bm25, hybrid = ({q["id"]: q for q in b["per_query"]} for b in doc["backends"])
    deltas = {k: [str(Fraction(hybrid[i][k]) - Fraction(bm25[i][k])) for i in bm25] for k in KEYS}
    check_full_block(doc["compare"]["full"], deltas, rounded_inputs=False)
    for key in KEYS:  # d_z is t/√n, with t from the reference's block of the same report
        t = float(doc["compare"]["metrics"][key]["t"])
        assert float(doc["compare"]["full"]["metrics"][key]["d_z"]) == pytest.approx(
            t / math.sqrt(10), abs=1e-6
        )


@pytest.mark.slow
def test_full_outputs_are_identical_across_processes(repo_root: Path) -> None:
    for extra in ((), ("--json",)):
        args = ("run", CODE_SET, "--compare", "bm25,hybrid", "--stats", "full", *extra)
        first, second = cli_process(*args, cwd=repo_root), cli_process(*args, cwd=repo_root)
        assert first.code == 0 and first.out == second.out


@pytest.fixture()
def saved(tmp_path: Path) -> tuple[str, str]:
    """Base and head reports: `bm25` paired on 8 queries, `hybrid` with 30 changed queries
    (beyond exact enumeration), `vector` only in base."""
    rng = np.random.default_rng(3)
    base_vals = [[round(float(x), 6) for x in rng.uniform(0, 1, 4)] for _ in range(8)]
    head_vals = [list(v) for v in base_vals]
    for i, shift in enumerate([0.25, 0.0, 0.5, -0.25, 0.0, 0.125, 0.5, 0.0]):
        head_vals[i][2] = round(head_vals[i][2] + shift, 6)
        head_vals[i][0] = round(head_vals[i][0] + (0.2 if i % 3 == 0 else 0.0), 6)
    wide_base = [[0.5, 0.5, 0.5, 0.5] for _ in range(30)]
    wide_head = [[0.5, 0.5, 0.75 if i % 4 else 0.25, 0.5] for i in range(30)]  # MRR: 22 up, 8 down
    base = report({"bm25": rows(base_vals), "hybrid": rows(wide_base), "vector": rows(base_vals)})
    head = report({"bm25": rows(head_vals), "hybrid": rows(wide_head)})
    return write(tmp_path / "base.json", base), write(tmp_path / "head.json", head)


def test_compare_reference_is_the_default(saved: tuple[str, str]) -> None:
    for extra in ((), ("--json",), ("--markdown",)):
        default = cli("compare", *saved, *extra)
        assert default.code == 0
        assert cli("compare", *saved, "--stats", "reference", *extra).out == default.out


def test_compare_full_json_numbers(saved: tuple[str, str]) -> None:
    default = json.loads(cli("compare", *saved, "--json").out)
    doc = json.loads(cli("compare", *saved, "--json", "--stats", "full").out)
    bm25 = doc["backends"][0]
    deltas = {k: [q["delta"][k] for q in bm25["per_query"]] for k in KEYS}
    check_full_block(bm25["full"], deltas, rounded_inputs=True)
    for backend in doc["backends"]:
        backend.pop("full")
    assert doc == default


def test_compare_full_samples_beyond_twenty_changed_queries(saved: tuple[str, str]) -> None:
    doc = json.loads(cli("compare", *saved, "--json", "--stats", "full").out)
    mrr = doc["backends"][1]["full"]["metrics"]["mrr"]
    assert (mrr["permutation_method"], mrr["changed"]) == ("sampled", 30)
    # Equal |deltas|: |sum| ≥ 14·0.25 exactly when at least 22 of the 30 signs agree.
    exact = 2 * stats.binom.sf(21, 30, 0.5)
    assert float(mrr["permutation_p"]) == pytest.approx(
        exact, abs=4 * math.sqrt(exact * (1 - exact) / 1e5) + 2e-5
    )
    text = cli("compare", *saved, "--stats", "full").out
    assert "primary, sampled perm-p\n" in text


def test_compare_full_text_and_markdown(saved: tuple[str, str]) -> None:
    text = cli("compare", *saved, "--stats", "full").out
    default = cli("compare", *saved).out
    assert text.count("full statistics (primary metric: MRR") == 2  # bm25 and hybrid; vector is base-only
    blocks = re.compile(r"\n  full statistics \(primary.*?(?=\n  backend |\n  MDE@80%)", re.S)
    assert blocks.sub("", text) == default + FULL_LEGEND
    md = cli("compare", *saved, "--markdown", "--stats", "full", "--primary-metric", "recall").out
    assert (
        md.count("Beyond the t-test (primary metric: **recall**; Holm over the permutation p of 4 metrics)")
        == 2
    )
    assert "| **recall** |" in md and "Beyond the t-test" not in cli("compare", *saved, "--markdown").out


def test_compare_full_markdown_shows_the_rank_tests(saved: tuple[str, str]) -> None:
    """The Markdown full table carries each metric's Wilcoxon and sign p: the JSON's values, and
    for the sign test scipy's binomtest of the changed queries' directions."""
    doc = json.loads(cli("compare", *saved, "--json", "--stats", "full").out)
    md = cli("compare", *saved, "--markdown", "--stats", "full").out
    header = "| metric | d_z | perm p | bootstrap 95% CI | Holm p | Wilcoxon p | sign p | note |"
    tables = [block.split("\n\n", 1)[0].splitlines()[1:] for block in md.split(header + "\n")[1:]]
    compared = [b for b in doc["backends"] if any(q["status"] == "paired" for q in b["per_query"])]
    assert len(tables) == len(compared) == 2
    for backend, table in zip(compared, tables, strict=True):
        for key, row in zip(KEYS, table, strict=True):
            cells = [c.strip() for c in row.strip("|").split("|")]
            assert cells[0].strip("*") == LABELS[key]
            full = backend["full"]["metrics"][key]
            assert cells[5:7] == [full["wilcoxon"]["p"], full["sign"]["p"]]
            deltas = [float(q["delta"][key]) for q in backend["per_query"]]
            up, down = sum(d > 0 for d in deltas), sum(d < 0 for d in deltas)
            sign = stats.binomtest(up, up + down, 0.5).pvalue if up + down else 1.0  # nothing changed: p = 1
            assert cells[6] == f"{sign:.6f}"
    assert "Wilcoxon p = signed-rank test" in md


@pytest.mark.slow
def test_compare_full_is_identical_across_processes(saved: tuple[str, str]) -> None:
    for extra in ((), ("--json",), ("--markdown",)):
        first = cli_process("compare", *saved, "--stats", "full", *extra)
        second = cli_process("compare", *saved, "--stats", "full", *extra)
        assert first.code == 0 and first.out == second.out


def test_all_zero_deltas_and_fewer_than_two_queries(tmp_path: Path) -> None:
    base = report({"same": rows([[0.2, 0.5, 1.0, 0.3]] * 3), "one": rows([[0.2, 0.5, 1.0, 0.3]])})
    head = report({"same": rows([[0.2, 0.5, 1.0, 0.3]] * 3), "one": rows([[0.4, 0.5, 0.5, 0.3]])})
    args = (write(tmp_path / "b.json", base), write(tmp_path / "h.json", head), "--stats", "full")
    doc = json.loads(cli("compare", *args, "--json").out)
    same, one = (b["full"]["metrics"] for b in doc["backends"])
    assert same["mrr"] == {
        "bootstrap_ci95_high": "+0.000000",
        "bootstrap_ci95_low": "+0.000000",
        "changed": 0,
        "d_z": None,
        "holm_p": "1.000000",
        "losses": 0,
        "mde80": None,
        "no_change": True,
        "permutation_method": "exact",
        "permutation_p": "1.000000",
        "ties": 3,
        "wins": 0,
        "sign": {"changed": 0, "method": "exact", "p": "1.000000", "statistic": 0},
        "wilcoxon": {"changed": 0, "method": "exact", "p": "1.000000", "statistic": 0},
    }
    assert one["mrr"] == {
        "bootstrap_ci95_high": None,
        "bootstrap_ci95_low": None,
        "changed": None,
        "d_z": None,
        "holm_p": None,
        "losses": 1,
        "mde80": None,
        "no_change": False,
        "permutation_method": None,
        "permutation_p": None,
        "ties": 0,
        "wins": 0,
        "sign": None,
        "wilcoxon": None,
    }
    text = cli("compare", *args).out
    assert (
        "  P@k              0/0/3         n/a    1.000000    [+0.000000, +0.000000]    1.000000         n/a"
        "  no change\n" in text
    )
    assert (
        "  MRR              0/1/0         n/a         n/a                       n/a         n/a         n/a"
        "  primary, n < 2\n" in text
    )
    assert "(primary metric: MRR; Holm over the permutation p of 0 metrics)" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", CODE_SET, "--stats", "full"], "--stats full needs --compare A,B"),
        (
            ["run", CODE_SET, "--compare", "bm25,hybrid", "--primary-metric", "f1"],
            "--primary-metric needs --stats full",
        ),
        (["run", CODE_SET, "--compare", "bm25,hybrid", "--stats", "fuller"], "'fuller' is not one of"),
        (
            ["run", CODE_SET, "--compare", "bm25,hybrid", "--stats", "full", "--primary-metric", "ndcg"],
            'primary metric "ndcg" is not one of the metrics compared',
        ),
    ],
)
def test_usage_errors(repo_root: Path, args: list[str], message: str) -> None:
    result = cli_process(*args, cwd=repo_root)
    assert result.code == 2 and result.out == "" and message in result.err


def test_primary_metric_is_named_in_every_rendering(repo_root: Path) -> None:
    args = ("run", CODE_SET, "--compare", "bm25,hybrid", "--stats", "full", "--primary-metric", "f1")
    assert json.loads(cli(*args, "--json", cwd=repo_root).out)["compare"]["full"]["primary"] == "f1"
    text = cli(*args, cwd=repo_root).out
    assert "(primary metric: F1;" in text and text.count("  primary\n") == 1


def test_docs_state_the_settings_the_code_uses(repo_root: Path) -> None:
    text = (repo_root / "docs/statistics.md").read_text(encoding="utf-8")
    table = text[text.index("| exact permutation limit |") :]
    assert f"| exact permutation limit | m ≤ {EXACT_LIMIT} changed queries |" in table
    assert f"| sampled permutation | {PERMUTATION_DRAWS:,} draws, PCG64 seed {PERMUTATION_SEED};" in table
    assert (
        f"| bootstrap | {BOOTSTRAP_RESAMPLES:,} resamples, PCG64 seed {BOOTSTRAP_SEED}, percentile method |"
        in table
    )
    full = json.loads(
        cli("run", CODE_SET, "--compare", "bm25,hybrid", "--stats", "full", "--json", cwd=repo_root).out
    )["compare"]["full"]
    keys = text[text.index("## JSON keys") : text.index("## References")]
    for key in [*full, *full["metrics"]["mrr"]]:
        assert f"`{key}`" in keys, key
