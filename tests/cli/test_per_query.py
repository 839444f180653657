"""`run --per-query text|csv|tsv`: every query's numbers (like `trec_eval -q`) and a labeller's view."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.cli.helpers import cli, cli_process


@pytest.mark.parametrize(("fmt", "delimiter"), [("csv", ","), ("tsv", "\t")])
def test_one_row_per_query_backend_and_metric_equal_to_the_json(
    small_project: Path, fmt: str, delimiter: str
) -> None:
    args = ("run", "set.jsonl", "--metrics", "ndcg,p@1,recall@10")
    doc = json.loads(cli(*args, "--json", cwd=small_project).out)
    table = cli(*args, "--per-query", fmt, cwd=small_project).out
    rows = list(csv.reader(io.StringIO(table), delimiter=delimiter))
    assert rows[0] == ["backend", "query", "metric", "value"]
    expected = []
    for backend in doc["backends"]:
        for entry in backend["per_query"]:
            for key in ("precision_at_k", "recall", "mrr", "f1"):
                expected.append([backend["backend"], entry["id"], key, entry[key]])
            for key, value in sorted(
                entry.get("tokens", {}).items(), key=lambda kv: ["precision", "recall", "iou"].index(kv[0])
            ):
                expected.append([backend["backend"], entry["id"], f"tokens.{key}", value])
            for key in ("ndcg_at_k", "precision_at_1", "recall_at_10"):
                expected.append([backend["backend"], entry["id"], key, entry["extra"][key]])
    assert rows[1:] == expected
    assert len({r[0] for r in rows[1:]}) == 3  # every default backend


def test_awkward_query_ids_stay_one_field(small_project: Path) -> None:
    text = (
        (small_project / "set.jsonl")
        .read_text(encoding="utf-8")
        .replace('"id":"pay"', '"id":"pay, \\"now\\"\\tx"')
    )
    (small_project / "odd.jsonl").write_text(text, encoding="utf-8")
    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        rows = list(
            csv.reader(
                io.StringIO(cli("run", "odd.jsonl", "--per-query", fmt, cwd=small_project).out),
                delimiter=delimiter,
            )
        )
        assert {r[1] for r in rows[1:]} == {"hash", 'pay, "now"\tx', "session"}
        assert all(len(r) == 4 for r in rows)


def test_text_shows_the_first_relevant_rank_and_the_top_hits(small_project: Path) -> None:
    doc = json.loads(cli("run", "set.jsonl", "--backend", "bm25", "--json", cwd=small_project).out)
    text = cli("run", "set.jsonl", "--backend", "bm25", "--per-query", "text", cwd=small_project).out
    assert text.startswith(
        "query hash (k=3): where is the password hashed\n"
        "  expected: auth.py#function_definition, notes.md\n  bm25: "
    )
    for entry in doc["backends"][0]["per_query"]:
        rank = entry["first_relevant_rank"]
        block = text[text.index(f"query {entry['id']} ") :]
        block = block[: block.index("\n\n")]
        assert (f"first relevant rank {rank}" if rank else "nothing relevant in the top") in block
        hits = [line for line in block.splitlines() if line.startswith("    ")]
        assert 0 < len(hits) <= entry["k"]
        if rank:  # the first starred hit is at the first relevant rank
            first_star = next(line for line in hits if line[8] == "*")
            assert int(first_star.split()[0]) == rank
        # every hit above the first relevant one matches no anchor: nobody labeled it
        assert all(line[8] == "?" for line in hits[: (rank or len(hits) + 1) - 1])
    assert text.endswith(
        "  * = the hit matches an expected anchor, ? = it matches no anchor (nobody labeled it: a miss "
        "here may be an unlabeled hit), - = a reviewer judged it not relevant\n"
    )


def test_per_query_is_not_json(small_project: Path) -> None:
    result = cli_process("run", "set.jsonl", "--per-query", "csv", "--json", cwd=small_project)
    assert result.code == 2 and "--per-query and --json cannot be used together" in result.err


def test_default_output_is_unchanged_by_the_option_existing(small_project: Path) -> None:
    plain = cli("run", "set.jsonl", cwd=small_project).out
    assert "first relevant rank" not in plain and plain.startswith("CCE relevance")
