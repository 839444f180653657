"""Our own starter sets: they run from the repository root and the code set is byte-pinned."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.helpers import cli, cli_process

GOLDEN = "test/fixture/relevance/code.golden.json"


def test_code_set_matches_committed_golden(repo_root: Path) -> None:
    result = cli_process("run", "eval/relevance/code.jsonl", "--golden", GOLDEN, "--json", cwd=repo_root)
    assert result.code == 0, result.err
    assert result.out == (repo_root / GOLDEN).read_text(encoding="utf-8")


def test_code_set_uses_every_anchor_form(repo_root: Path) -> None:
    anchors = []
    lines = (repo_root / "eval/relevance/code.jsonl").read_text().splitlines()
    for line in lines[1:]:
        anchors += json.loads(line)["expected"]
    assert len(lines) - 1 >= 8
    assert any("#" not in a and "@" not in a for a in anchors)  # path
    assert any(a.startswith("#") for a in anchors)  # #kind
    assert any("#" in a and not a.startswith("#") and "@" not in a for a in anchors)  # path#kind
    assert any("@" in a and "#" not in a for a in anchors)  # path@a-b
    assert any("#" in a and "@" in a and not a.startswith("#") for a in anchors)  # path#kind@a-b


def test_sample_corpus_is_seven_files_in_six_languages(repo_root: Path) -> None:
    names = sorted(p.name for p in (repo_root / "test/fixture/samples").iterdir())
    assert names == ["c.c", "javascript.js", "notes.md", "python.py", "ruby.rb", "rust.rs", "typescript.ts"]


def test_docs_set_runs_and_every_query_finds_its_document(repo_root: Path) -> None:
    result = cli("run", "eval/relevance/docs.jsonl", "--json", cwd=repo_root)
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["corpus"] == "eval/relevance/docs-corpus"
    for backend in doc["backends"]:
        assert backend["recall"] == "1.000000"


def test_hybrid_beats_bm25_on_a_query_graph_expansion_or_fusion_helps(repo_root: Path) -> None:
    """The compare block of our code set has real, non-zero deltas in both directions."""
    result = cli("run", "eval/relevance/code.jsonl", "--compare", "bm25,hybrid", "--json", cwd=repo_root)
    doc = json.loads(result.out)
    bm25, hybrid = ({q["id"]: q for q in b["per_query"]} for b in doc["backends"])
    deltas = {i: float(hybrid[i]["mrr"]) - float(bm25[i]["mrr"]) for i in bm25}
    assert any(d > 0 for d in deltas.values()) and any(d < 0 for d in deltas.values())
    assert doc["compare"]["metrics"]["mrr"]["n"] == 10
