"""Backend variants from `cce-relevance.toml` through the real CLI: identity, hand-checked deltas, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cce_relevance.reporting.canonical_json import dumps_report
from tests.cli.helpers import cli, cli_process
from tests.conftest import REPO_ROOT

CODE_SET = "eval/relevance/code.jsonl"
VARIANTS = """\
[backends.bm25-same]
base = "bm25"

[backends.vector-same]
base = "vector"

[backends.hybrid-same]
base = "hybrid"

[backends.hybrid-rrf30]
base = "hybrid"
rrf_k = 30

[backends.hybrid-cap1]
base = "hybrid"
max_chunks_per_file = 1
"""


@pytest.fixture()
def config(tmp_path: Path) -> str:
    path = tmp_path / "cce-relevance.toml"
    path.write_text(VARIANTS, encoding="utf-8")
    return str(path)


def run_json(*args: str) -> dict:
    result = cli("run", *args, "--json", cwd=REPO_ROOT)
    assert result.code == 0, result.err
    return json.loads(result.out)


@pytest.mark.parametrize("fixtures", [CODE_SET, "eval/relevance/docs.jsonl"])
def test_unchanged_variants_score_byte_identically_to_their_base(config: str, fixtures: str) -> None:
    reference = run_json(fixtures)
    variants = run_json(fixtures, "--backend", "bm25-same,vector-same,hybrid-same", "--config", config)
    assert [b["backend"] for b in variants["backends"]] == ["bm25-same", "vector-same", "hybrid-same"]
    for ours, theirs in zip(variants["backends"], reference["backends"], strict=True):
        assert dumps_report({**ours, "backend": theirs["backend"]}) == dumps_report(theirs)


def test_compare_prints_real_delta_rows_for_a_variant(config: str) -> None:
    """hybrid-cap1 keeps one chunk per file. For `code-rate-limiter` (expected: any rust.rs chunk, k 5)
    hybrid ranks notes.md 1-5, rust.rs 9-16, rust.rs 8-17, rust.rs 19-22, ruby.rb 4-12: P@5 3/5,
    recall 1, MRR 1/2, F1 2·0.6/1.6 = 0.75. The cap only filters that score order (scores do not
    depend on it) and notes.md has one chunk, so rust.rs 9-16 stays at rank 2 and is the only
    rust.rs chunk left: P@5 1/5, recall 1, MRR 1/2, F1 2·0.2/1.2 = 1/3. Deltas: −0.4, 0, 0, −5/12."""
    hybrid = cli(
        "search",
        "test/fixture/samples",
        "token bucket rate limiter allow client",
        "-k",
        "5",
        "--json",
        cwd=REPO_ROOT,
    )
    assert [(h["file_path"], h["start_line"], h["end_line"]) for h in json.loads(hybrid.out)] == [
        ("notes.md", 1, 5),
        ("rust.rs", 9, 16),
        ("rust.rs", 8, 17),
        ("rust.rs", 19, 22),
        ("ruby.rb", 4, 12),
    ]
    result = cli("run", CODE_SET, "--compare", "hybrid,hybrid-cap1", "--config", config, cwd=REPO_ROOT)
    assert result.code == 0, result.err
    assert "  per-query deltas (hybrid → hybrid-cap1; positive = hybrid-cap1 wins)\n" in result.out
    assert "  code-rate-limiter          -0.400000   +0.000000   +0.000000   -0.416667\n" in result.out
    assert "  hybrid-cap1    " in result.out


def test_rrf_k_reaches_the_fusion_as_the_formula_says(config: str) -> None:
    """`where is record_shipment defined` is a code lookup (w 1.5). python.py 14-16 holds vector rank 3
    and BM25 rank 0 and has the largest fusion score at either k; python.py 10-16 holds ranks 4 and
    1. Its confidence does not depend on k, so its final score moves by half the change of
    norm = rrf(10-16) / rrf(14-16), rrf = 1/(k + vrank) + 1.5/(k + frank)."""
    query = "where is record_shipment defined"

    def spans(backend: str, k: int) -> list[tuple[str, int, int, str]]:
        out = cli(
            "search",
            "test/fixture/samples",
            query,
            "--backend",
            backend,
            "-k",
            str(k),
            "--json",
            "--config",
            config,
            cwd=REPO_ROOT,
        ).out
        return [(h["file_path"], h["start_line"], h["end_line"], h["score"]) for h in json.loads(out)]

    vector = [s[:3] for s in spans("vector", 15)]
    bm25 = [s[:3] for s in spans("bm25", 15)]
    first, second = ("python.py", 14, 16), ("python.py", 10, 16)
    assert (vector.index(first), vector.index(second), bm25.index(first), bm25.index(second)) == (3, 4, 0, 1)

    def norm(k: float) -> float:
        return (1 / (k + 4) + 1.5 / (k + 1)) / (1 / (k + 3) + 1.5 / (k + 0))

    at60 = {s[:3]: float(s[3]) for s in spans("hybrid", 5)}
    at30 = {s[:3]: float(s[3]) for s in spans("hybrid-rrf30", 5)}
    assert at30[first] == at60[first]  # norm 1 at both k
    assert at30[second] - at60[second] == pytest.approx(0.5 * (norm(30) - norm(60)), abs=2e-6)
    assert at30[second] < at60[second]


def test_compare_rows_are_the_per_query_deltas_of_the_two_reports(config: str) -> None:
    text = cli("run", CODE_SET, "--compare", "hybrid,hybrid-rrf30", "--config", config, cwd=REPO_ROOT).out
    doc = run_json(CODE_SET, "--compare", "hybrid,hybrid-rrf30", "--config", config)
    a, b = doc["backends"]
    assert (a["backend"], b["backend"], doc["compare"]["a"], doc["compare"]["b"]) == (
        "hybrid",
        "hybrid-rrf30",
        "hybrid",
        "hybrid-rrf30",
    )
    keys = ("precision_at_k", "recall", "mrr", "f1")
    for qa, qb in zip(a["per_query"], b["per_query"], strict=True):
        row = "".join(f"{float(qb[k]) - float(qa[k]):+12.6f}" for k in keys)
        assert f"  {qa['id']:<24}{row}\n" in text
    # rrf_k 30 swaps typescript.ts 16-22 for javascript.js 3-9 in the top 5 of code-record-shipment,
    # which changes the retrieved token mass of that ranged case and nothing at chunk level.
    assert a["per_query"][0]["tokens"] != b["per_query"][0]["tokens"]
    assert "  code-record-shipment       +0.000000   +0.000000   +0.000000   +0.000000\n" in text


def test_search_scores_a_variant_as_worked_by_hand(tmp_path: Path) -> None:
    """§hybrid-examples corpus A with rrf_k 30: confidence 0.65 for both chunks, vector ranks 0 and
    1, no BM25 hits, so norm is 1 and 30/31: 0.325 + 0.5 = 0.825000 and 0.325 + 0.5·30/31 = 0.808871."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "auth.py").write_text('def hash_password(pw):\n    return pw + "salt"\n')
    (corpus / "payments.py").write_text(
        "import auth\n\ndef process_payment(amount):\n    return auth.hash_password(str(amount))\n"
    )
    (tmp_path / "cce-relevance.toml").write_text('[backends.rrf30]\nbase = "hybrid"\nrrf_k = 30\n')
    out = cli(
        "search", "corpus", "where is the password hashed", "--backend", "rrf30", "--json", cwd=tmp_path
    ).out
    assert [(h["file_path"], h["score"]) for h in json.loads(out)] == [
        ("auth.py", "0.825000"),
        ("payments.py", "0.808871"),
    ]


def test_the_config_file_is_found_from_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "cce-relevance.toml").write_text(VARIANTS, encoding="utf-8")
    fixtures = str(REPO_ROOT / CODE_SET)
    result = cli("run", fixtures, "--backend", "hybrid-cap1", "--json", cwd=tmp_path)
    assert [b["backend"] for b in json.loads(result.out)["backends"]] == ["hybrid-cap1"]


def test_unknown_backend_text_is_the_reference_without_a_config_file(tmp_path: Path) -> None:
    fixtures = str(REPO_ROOT / CODE_SET)
    result = cli_process("run", fixtures, "--backend", "hybrid-rrf30", cwd=tmp_path)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        'error: unknown backend "hybrid-rrf30" (expected bm25, vector, or hybrid)\n',
    )
    result = cli_process(
        "search", str(REPO_ROOT / "test/fixture/samples"), "q", "--backend", "nope", cwd=tmp_path
    )
    assert (result.code, result.err) == (
        2,
        'error: unknown backend "nope" (expected bm25, vector, or hybrid)\n',
    )


def test_unknown_backend_lists_the_configured_ones(tmp_path: Path, config: str) -> None:
    result = cli_process(
        "run", str(REPO_ROOT / CODE_SET), "--compare", "hybrid,hybrid-rrf3", "--config", config, cwd=tmp_path
    )
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        'error: unknown backend "hybrid-rrf3" (expected bm25, vector, hybrid, or a backend of '
        f"{config}: bm25-same, hybrid-cap1, hybrid-rrf30, hybrid-same, vector-same)\n"
    )


def test_a_bad_config_file_fails_the_run_with_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "cce-relevance.toml").write_text(
        '[backends.hybrid-rrf30]\nbase = "hybrid"\nrrf_k = "thirty"\n'
    )
    result = cli_process("run", str(REPO_ROOT / CODE_SET), cwd=tmp_path)
    assert (result.code, result.out, result.err) == (
        2,
        "",
        'error: cce-relevance.toml: [backends.hybrid-rrf30] rrf_k: expected a number > 0, got "thirty"\n',
    )


def test_a_missing_config_path_and_an_empty_one(tmp_path: Path) -> None:
    result = cli("run", str(REPO_ROOT / CODE_SET), "--config", "nope.toml", cwd=tmp_path)
    assert (result.code, result.err) == (
        2,
        "error: could not read config nope.toml: No such file or directory\n",
    )
    result = cli("run", str(REPO_ROOT / CODE_SET), "--config", "", cwd=tmp_path)
    assert result.code == 2 and "a value is required for '--config'" in result.err
