"""Backends with an embedder of their own through the real CLI: WordLlama offline, an OpenAI-compatible
endpoint on loopback, the embedding cache across runs, `index --embedder`, and the cost report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cce_relevance import schemas
from tests.action.test_schemas import validator
from tests.cli.helpers import cli
from tests.conftest import REPO_ROOT
from tests.embedders.fake_openai import FakeOpenAI, Reply

CODE_SET = "eval/relevance/code.jsonl"
WL = """\
[backends.vector-wl]
base = "vector"
embedder = "wordllama"

[backends.hybrid-wl]
base = "hybrid"
embedder = "wordllama"
"""


def write_config(project: Path, text: str) -> None:
    (project / "cce-relevance.toml").write_text(text, encoding="utf-8")


def cache_args(tmp_path: Path) -> list[str]:
    return ["--cache", str(tmp_path / "cache")]


def test_the_repositorys_documented_variants_score_offline_and_give_the_same_bytes_twice(tmp_path: Path):
    args = ["run", CODE_SET, "--backend", "vector-wl,hybrid-wl", "--json", *cache_args(tmp_path)]
    first, second = cli(*args, cwd=REPO_ROOT), cli(*args, cwd=REPO_ROOT)
    assert first.code == 0, first.err
    assert first.out == second.out
    report = json.loads(first.out)
    assert [b["backend"] for b in report["backends"]] == ["vector-wl", "hybrid-wl"]
    assert "cost" not in report
    hashed = json.loads(cli("run", CODE_SET, "--backend", "vector", "--json", cwd=REPO_ROOT).out)
    assert (
        report["backends"][0]["per_query"] != hashed["backends"][0]["per_query"]
    )  # other vectors, other ranks


def test_the_cache_makes_a_second_run_embed_nothing(tmp_path: Path):
    args = [
        "run",
        CODE_SET,
        "--backend",
        "bm25,vector-wl,hybrid-wl",
        "--json",
        "--cost",
        *cache_args(tmp_path),
    ]
    cold = json.loads(cli(*args, cwd=REPO_ROOT).out)["cost"]["backends"]
    warm = json.loads(cli(*args, cwd=REPO_ROOT).out)["cost"]["backends"]
    assert cold["bm25"]["embedder"] is None
    made = cold["vector-wl"]["embedder"]
    assert made["name"] == "wordllama" and made["calls"] >= 1 and made["cache_hits"] == 0
    assert made["texts"] > 10  # every chunk and the ten queries, each distinct text once
    assert cold["hybrid-wl"]["embedder"]["texts"] == 0  # the chunks and queries are the run's already
    again = warm["vector-wl"]["embedder"]
    assert (again["calls"], again["texts"], again["cache_hits"]) == (0, 0, made["texts"])


def test_cost_goes_to_its_own_key_and_the_golden_never_pins_it(tmp_path: Path):
    golden = tmp_path / "golden.json"
    common = ["run", CODE_SET, "--backend", "bm25,vector-wl", *cache_args(tmp_path), "--golden", str(golden)]
    assert cli(*common, "--update-golden", "--cost", cwd=REPO_ROOT).code == 0
    plain = cli(
        "run", CODE_SET, "--backend", "bm25,vector-wl", "--json", *cache_args(tmp_path), cwd=REPO_ROOT
    )
    assert golden.read_text(encoding="utf-8") == plain.out
    checked = cli(*common, "--json", "--cost", cwd=REPO_ROOT)
    assert checked.code == 0, checked.err
    report = json.loads(checked.out)
    validator("cce.relevance.cost.v1").validate(report["cost"])
    assert report["cost"]["schema"] == schemas.COST
    assert {k: v for k, v in report.items() if k != "cost"} == json.loads(plain.out)
    assert set(report["cost"]["backends"]["bm25"]["per_query_ms"]) == {
        q["id"] for q in json.loads(plain.out)["backends"][0]["per_query"]
    }


def test_cost_in_text_per_query_and_compare(tmp_path: Path):
    text = cli(
        "run", CODE_SET, "--compare", "vector,vector-wl", "--cost", *cache_args(tmp_path), cwd=REPO_ROOT
    ).out
    block = text[text.index("  cost (wall time") :]
    lines = block.splitlines()
    assert lines[1].split() == [
        "backend", "queries", "p50", "ms", "p95", "ms", "max", "ms", "total", "ms",
        "embedder", "calls", "texts", "tokens", "cached",
    ]  # fmt: skip
    assert lines[2].split()[:2] == ["vector", "10"] and lines[2].split()[-1] == "-"
    assert lines[3].split()[:2] == ["vector-wl", "10"] and "wordllama" in lines[3]
    assert lines[4].startswith("  index: ") and lines[5].startswith("  latency vector → vector-wl: p50 ")
    per_query = cli(
        "run", CODE_SET, "--backend", "vector-wl", "--per-query", "csv", "--cost", cwd=REPO_ROOT
    ).out
    assert sum(1 for row in per_query.splitlines() if ",latency_ms," in row) == 10
    plain = cli("run", CODE_SET, "--backend", "vector-wl", "--per-query", "text", cwd=REPO_ROOT).out
    timed = cli("run", CODE_SET, "--backend", "vector-wl", "--per-query", "text", "--cost", cwd=REPO_ROOT).out
    assert " ms)\n" in timed and " ms)" not in plain


def test_compare_of_saved_reports_shows_the_latency_change_when_both_carry_cost(tmp_path: Path):
    for side in ("base", "head"):
        out = cli("run", CODE_SET, "--backend", "vector,vector-wl", "--json", "--cost", cwd=REPO_ROOT).out
        (tmp_path / f"{side}.json").write_text(out, encoding="utf-8")
    base, head = str(tmp_path / "base.json"), str(tmp_path / "head.json")
    text = cli("compare", base, head).out
    assert "latency base → head" in text and "  vector-wl: p50 " in text
    markdown = cli("compare", base, head, "--markdown").out
    assert "| backend | p50 ms | p95 ms | total ms | embedder calls |" in markdown
    (tmp_path / "plain.json").write_text(cli("run", CODE_SET, "--json", cwd=REPO_ROOT).out, encoding="utf-8")
    assert "latency" not in cli("compare", str(tmp_path / "plain.json"), head).out


def test_a_store_indexed_with_wordllama_ranks_as_the_variant_does(small_project: Path, tmp_path: Path):
    written = cli("index", "corpus", "--embedder", "wordllama", *cache_args(tmp_path), cwd=small_project)
    assert written.code == 0, written.err
    assert "embedder wordllama" in written.out
    store = json.loads((small_project / "corpus/.cce/index.json").read_text())
    assert store["embedder"] == "wordllama"
    fingerprint = json.loads((small_project / "corpus/.cce/fingerprint.json").read_text())
    assert fingerprint["model"] == "wordllama 0.4.0.post1 l2_supercat 256 unit"
    write_config(small_project, WL)
    from_store = json.loads(
        cli(
            "run",
            "set.jsonl",
            "--store",
            "corpus/.cce/index.json",
            "--backend",
            "vector",
            "--json",
            cwd=small_project,
        ).out
    )
    from_dir = json.loads(cli("run", "set.jsonl", "--backend", "vector-wl", "--json", cwd=small_project).out)
    assert from_store["embedder"] == "wordllama"
    assert from_store["backends"][0]["per_query"] == from_dir["backends"][0]["per_query"]


def test_unknown_embedders_are_clear_errors(small_project: Path):
    result = cli("index", "corpus", "--embedder", "bert", cwd=small_project)
    assert (result.code, result.out) == (2, "")
    assert result.err == 'error: unknown embedder "bert" (expected hash, ollama, wordllama, openai)\n'
    write_config(small_project, '[backends.v]\nbase = "vector"\nembedder = "bert"\n')
    result = cli("run", "set.jsonl", "--backend", "v", cwd=small_project)
    assert result.code == 2 and result.err == (
        'error: cce-relevance.toml: [backends.v] embedder: expected "hash", "ollama", "wordllama" or '
        '"openai" (a built-in embedder or an [embedders.NAME] table), got "bert"\n'
    )
    write_config(small_project, '[backends.v]\nbase = "bm25"\nembedder = "wordllama"\n')
    assert "embedder: unknown key" in cli("run", "set.jsonl", "--backend", "v", cwd=small_project).err


OPENAI_CONFIG = """\
[embedders.local-e5]
type = "openai"
base_url = "{url}"
model = "e5-small"
api_key_env = "LOCAL_E5_KEY"
batch_size = 4

[backends.vector-e5]
base = "vector"
embedder = "local-e5"
"""


@pytest.fixture
def openai_project(small_project: Path, monkeypatch):
    with FakeOpenAI() as server:
        write_config(small_project, OPENAI_CONFIG.format(url=server.base_url))
        monkeypatch.setenv("LOCAL_E5_KEY", "sk-local")
        yield small_project, server


def test_an_openai_compatible_endpoint_scores_a_variant(openai_project, tmp_path: Path):
    project, server = openai_project
    result = cli(
        "run", "set.jsonl", "--backend", "vector-e5", "--json", "--cost", *cache_args(tmp_path), cwd=project
    )
    assert result.code == 0, result.err
    embedder = json.loads(result.out)["cost"]["backends"]["vector-e5"]["embedder"]
    assert embedder["tokens"] is not None and embedder["tokens"] > 0
    assert all(len(r["input"]) <= 4 for r in server.requests)
    assert {h["authorization"] for h in server.headers} == {"Bearer sk-local"}
    assert "sk-local" not in result.out + result.err
    before = len(server.requests)
    again = cli("run", "set.jsonl", "--backend", "vector-e5", "--json", *cache_args(tmp_path), cwd=project)
    assert (
        again.out
        == cli("run", "set.jsonl", "--backend", "vector-e5", "--json", *cache_args(tmp_path), cwd=project).out
    )
    assert len(server.requests) == before  # every chunk and query vector came from the cache


def test_an_endpoint_fault_stops_the_run_with_nothing_printed(openai_project, tmp_path: Path):
    project, server = openai_project
    server.script = [Reply.json({"error": {"message": 'model "e5-small" not found'}}, 404)]
    result = cli("run", "set.jsonl", "--backend", "vector-e5", "--no-cache", cwd=project)
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith('error: embedder "local-e5": texts 1-4: ')
    assert 'answered HTTP 404: "model \\"e5-small\\" not found"' in result.err


def test_a_missing_key_names_its_variable(openai_project, monkeypatch):
    project, _ = openai_project
    monkeypatch.delenv("LOCAL_E5_KEY")
    result = cli("run", "set.jsonl", "--backend", "vector-e5", cwd=project)
    assert result.code == 2
    assert result.err.startswith(
        'error: embedder "local-e5": the environment variable LOCAL_E5_KEY holding its API key is not set\n'
    )


def test_index_with_a_configured_endpoint_records_its_name(openai_project, tmp_path: Path):
    project, _ = openai_project
    written = cli("index", "corpus", "--embedder", "local-e5", *cache_args(tmp_path), cwd=project)
    assert written.code == 0, written.err
    assert json.loads((project / "corpus/.cce/index.json").read_text())["embedder"] == "local-e5"
    scored = cli(
        "run", "set.jsonl", "--store", "corpus/.cce/index.json", "--backend", "vector", "--json", cwd=project
    )
    from_dir = cli("run", "set.jsonl", "--backend", "vector-e5", "--json", cwd=project)
    assert (
        json.loads(scored.out)["backends"][0]["per_query"]
        == json.loads(from_dir.out)["backends"][0]["per_query"]
    )
