"""Byte-for-byte parity with the reference implementation's published outputs.

The reference data (`conformance.json`, the code golden, the seed's text examples) lives in
`../shared/upstream-cce`; nothing of it is copied into this repository.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import cli, cli_process

SEED_SUMMARY = """\
CCE relevance — ranking quality vs labeled fixtures (cce.relevance/v1)
  corpus  : eval/relevance/../../test/fixture/samples
  embedder: hash
  queries : 7

  backend            P@k      recall         MRR          F1
  bm25          0.457143    1.000000    0.904762    0.581633
  vector        0.485714    1.000000    1.000000    0.601474
  hybrid        0.457143    1.000000    0.928571    0.581633

  token-level span metrics (1 of 7 queries carry ranged anchors)
  backend          tok-P  tok-recall     tok-IoU
  bm25          0.294118    1.000000    0.294118
  vector        0.238095    1.000000    0.238095
  hybrid        0.223881    1.000000    0.223881
"""

# §compare-block: the whole stdout of `--compare bm25,hybrid` on the code set.
SEED_COMPARE_TAIL = """\

  per-query deltas (bm25 → hybrid; positive = hybrid wins)
  query                           dP@k     drecall        dMRR         dF1
  code-read-config           +0.000000   +0.000000   +0.166667   +0.000000
  code-parse-json            +0.000000   +0.000000   +0.000000   +0.000000
  code-build-index           +0.000000   +0.000000   +0.000000   +0.000000
  code-loader-class          +0.000000   +0.000000   +0.000000   +0.000000
  code-sum-node              +0.000000   +0.000000   +0.000000   +0.000000
  code-interface-kind        +0.000000   +0.000000   +0.000000   +0.000000
  code-read-config-span      +0.000000   +0.000000   +0.000000   +0.000000
  mean                       +0.000000   +0.000000   +0.023810   +0.000000

  paired t-test on the per-query deltas (two-sided, n=7, df=6)
  metric        mean-delta           t           p                    95% CI
  P@k            +0.000000         n/a    1.000000    [+0.000000, +0.000000]
  recall         +0.000000         n/a    1.000000    [+0.000000, +0.000000]
  MRR            +0.023810   +1.000000    0.355918    [-0.034450, +0.082069]
  F1             +0.000000         n/a    1.000000    [+0.000000, +0.000000]
"""


def test_chunks_json_reproduces_conformance(upstream: Path) -> None:
    result = cli("chunks", str(upstream / "test/fixture/samples"), "--json")
    assert result.code == 0, result.err
    expected = (upstream / "conformance.json").read_text(encoding="utf-8")
    assert result.out == expected.replace('"impl_language": "rust"', '"impl_language": "python"')
    assert json.loads(result.out)["impl_language"] == "python"


def test_run_json_reproduces_code_golden(upstream: Path) -> None:
    result = cli("run", "eval/relevance/code.jsonl", "--json", cwd=upstream)
    assert result.code == 0, result.err
    assert result.err == ""
    assert result.out == (upstream / "test/fixture/relevance/code.golden.json").read_text(encoding="utf-8")


def test_run_text_equals_seed_quick_start(upstream: Path) -> None:
    result = cli("run", "eval/relevance/code.jsonl", cwd=upstream)
    assert result.code == 0, result.err
    assert result.out == SEED_SUMMARY


def test_compare_bm25_hybrid_equals_seed(upstream: Path) -> None:
    result = cli("run", "eval/relevance/code.jsonl", "--compare", "bm25,hybrid", cwd=upstream)
    assert result.code == 0, result.err
    summary = "".join(
        line for line in SEED_SUMMARY.splitlines(keepends=True) if not line.startswith("  vector")
    )
    assert result.out == summary + SEED_COMPARE_TAIL


def test_compare_json_block(upstream: Path) -> None:
    result = cli("run", "eval/relevance/code.jsonl", "--compare", "bm25,hybrid", "--json", cwd=upstream)
    doc = json.loads(result.out)
    assert [b["backend"] for b in doc["backends"]] == ["bm25", "hybrid"]
    assert doc["compare"]["a"] == "bm25" and doc["compare"]["b"] == "hybrid"
    assert doc["compare"]["metrics"]["mrr"] == {
        "ci95_high": "+0.082069",
        "ci95_low": "-0.034450",
        "mean_delta": "+0.023810",
        "n": 7,
        "p": "0.355918",
        "t": "+1.000000",
    }
    assert doc["compare"]["metrics"]["recall"]["t"] is None
    assert doc["compare"]["metrics"]["recall"]["p"] == "1.000000"


def test_docs_set_matches_spec_prototype(upstream: Path) -> None:
    """§verified-runs: every backend scores P@3 1/3, recall 1, MRR 1, F1 0.5 on the docs set."""
    result = cli_process("run", "eval/relevance/docs.jsonl", "--json", cwd=upstream)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["corpus"] == "eval/relevance/docs-corpus"
    for backend in doc["backends"]:
        assert (backend["precision_at_k"], backend["recall"], backend["mrr"], backend["f1"]) == (
            "0.333333",
            "1.000000",
            "1.000000",
            "0.500000",
        )
    again = cli_process("run", "eval/relevance/docs.jsonl", "--json", cwd=upstream)
    assert again.out == result.out
