"""`--metrics judged,recall@budget=N,tok-recall@budget=N,ttfr` from the CLI: the report's JSON and
text, the per-query views, `compare` of two saved reports, and the `irrelevant` labels."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from cce_relevance.retrieval.tokens import estimate_tokens
from tests.cli.conftest import SMALL_CORPUS
from tests.cli.helpers import cli, cli_process

METRICS = "judged,recall@budget=20,tok-recall@budget=20,recall@budget=1000,ttfr"


def _chunk_tokens(small_project: Path) -> dict[tuple[str, int, int], int]:
    """Each chunk's recorded token estimate, by (file, start, end), from `chunks --json`."""
    doc = json.loads(cli("chunks", str(small_project / "corpus"), "--json", "--no-cache").out)
    return {(c["file_path"], c["start_line"], c["end_line"]): c["token_count"] for c in doc["chunks"]}


def test_budget_metrics_read_the_results_that_fit(small_project: Path) -> None:
    report = json.loads(
        cli("run", "set.jsonl", "--backend", "bm25", "--metrics", METRICS, "--json", cwd=small_project).out
    )
    text = cli(
        "run",
        "set.jsonl",
        "--backend",
        "bm25",
        "--metrics",
        METRICS,
        "--per-query",
        "text",
        cwd=small_project,
    )
    backend = report["backends"][0]
    assert list(backend["extra"]) == sorted(
        ["judged_at_k", "recall_at_budget_20", "tok_recall_at_budget_20", "recall_at_budget_1000"]
    )
    tokens = _chunk_tokens(small_project)
    for entry in backend["per_query"]:
        extra = entry["extra"]
        # a budget larger than the whole corpus holds every result a k-deep search can give
        assert float(extra["recall_at_budget_1000"]) >= float(entry["recall"])
        assert float(extra["recall_at_budget_20"]) <= float(extra["recall_at_budget_1000"])
        # nothing is labeled `irrelevant` here: judged@k is P@k, every other hit unlabeled
        assert extra["judged_at_k"] == entry["precision_at_k"]
        rank = entry["first_relevant_rank"]
        assert (entry["first_relevant_tokens"] is None) == (rank is None)
    # the tokens to the first relevant hit are the whole chunks above it and itself
    block = text.out[text.out.index("query hash ") :].split("\n\n")[0]
    hits = [line.split() for line in block.splitlines() if line.startswith("    ")]
    hash_entry = next(e for e in backend["per_query"] if e["id"] == "hash")
    spent = 0
    for _rank, mark, where, *_ in hits:
        path, lines = where.rsplit(":", 1)
        start, end = map(int, lines.split("-"))
        spent += tokens[(path, start, end)]
        if mark == "*":
            break
    assert hash_entry["first_relevant_tokens"] == spent
    assert f"first relevant rank {hash_entry['first_relevant_rank']} (after {spent} tokens)" in block
    found = [e["first_relevant_tokens"] for e in backend["per_query"] if e["first_relevant_tokens"]]
    assert backend["first_relevant_tokens"]["queries"] == len(found)


def test_the_report_text_shows_budget_metrics_and_the_tokens_to_the_first_hit(small_project: Path) -> None:
    out = cli("run", "set.jsonl", "--metrics", METRICS, cwd=small_project).out
    assert "judged@k" in out and "recall@20t" in out and "tok-R@20t" in out
    assert "cce.tokens/v1 tokens to the first relevant hit of the top k" in out
    plain = cli("run", "set.jsonl", cwd=small_project).out
    assert "judged" not in plain and "tokens to the first" not in plain


def test_per_query_csv_has_the_new_rows(small_project: Path) -> None:
    out = cli(
        "run", "set.jsonl", "--backend", "bm25", "--metrics", METRICS, "--per-query", "csv", cwd=small_project
    ).out
    rows = list(csv.reader(io.StringIO(out)))
    metrics = {r[2] for r in rows[1:]}
    assert {
        "judged_at_k",
        "recall_at_budget_20",
        "tok_recall_at_budget_20",
        "first_relevant_tokens",
    } <= metrics
    counts = [r[3] for r in rows[1:] if r[2] == "first_relevant_tokens"]
    assert all(c == "" or int(c) >= 1 for c in counts) and len(counts) == 3


def test_irrelevant_labels_make_hits_judged_and_are_marked(small_project: Path) -> None:
    """Labelling every chunk of auth.py not relevant for `pay` makes vector's second hit judged
    (judged@k rises above P@k) and shows it as `-` in the per-query view."""
    lines = (small_project / "set.jsonl").read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"k":2}', '"k":2,"irrelevant":["auth.py","notes.md"]}')
    (small_project / "labeled.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = json.loads(
        cli(
            "run", "labeled.jsonl", "--backend", "vector", "--metrics", "judged", "--json", cwd=small_project
        ).out
    )
    pay = next(e for e in doc["backends"][0]["per_query"] if e["id"] == "pay")
    text = cli("run", "labeled.jsonl", "--backend", "vector", "--per-query", "text", cwd=small_project).out
    block = text[text.index("query pay ") :].split("\n\n")[0]
    marks = [line[8] for line in block.splitlines() if line.startswith("    ")]
    assert marks == ["*", "-"]
    assert float(pay["extra"]["judged_at_k"]) == sum(m in "*-" for m in marks) / 2
    assert float(pay["extra"]["judged_at_k"]) > float(pay["precision_at_k"])


def test_a_malformed_irrelevant_array_is_an_input_error_only_where_labels_are_read(
    small_project: Path,
) -> None:
    lines = (small_project / "set.jsonl").read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"k":2}', '"k":2,"irrelevant":"auth.py"}')
    (small_project / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cli("run", "bad.jsonl", cwd=small_project).code == 0  # the reference ignores the field
    bad = cli_process("run", "bad.jsonl", "--metrics", "judged", cwd=small_project)
    assert bad.code == 2 and bad.err == 'error: fixture line 3: "irrelevant" must be an array of anchors\n'


def test_compare_pairs_and_tests_budget_metrics(small_project: Path) -> None:
    for side, budget_chunk in (("base", "x"), ("head", "y")):
        cli(
            "run",
            "set.jsonl",
            "--metrics",
            "recall@budget=20,ttfr",
            "--json",
            "--output",
            f"{side}.json",
            cwd=small_project,
        )
        del budget_chunk
    # one backend at two commits, as the Action compares them
    base, head = (json.loads(Path(small_project, f).read_text()) for f in ("base.json", "head.json"))
    for doc, name in ((base, "base.json"), (head, "head.json")):
        doc["backends"][0]["backend"] = "b"
        Path(small_project, name).write_text(json.dumps(doc), encoding="utf-8")
    doc = json.loads(cli("compare", "base.json", "head.json", "--json", cwd=small_project).out)
    metrics = doc["backends"][0]["metrics"]
    assert "recall_at_budget_20" in metrics  # paired and tested like any rank metric
    assert not any("first_relevant_tokens" in key for key in metrics)  # a count, not a metric: not paired


def test_token_costs_are_the_estimates_of_whole_chunks(small_project: Path) -> None:
    tokens = _chunk_tokens(small_project)
    lines = SMALL_CORPUS["auth.py"].split("\n")
    assert tokens[("auth.py", 4, 5)] == estimate_tokens("\n".join(lines[3:5]))


def test_per_query_text_reads_the_irrelevant_labels_and_not_the_grades(small_project: Path) -> None:
    """A `grades` object `run` ignores cannot fail `--per-query text`, which reads only the labels."""
    lines = (small_project / "set.jsonl").read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"k":2}', '"k":2,"grades":"not an object","irrelevant":["auth.py"]}')
    (small_project / "odd.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    text = cli("run", "odd.jsonl", "--backend", "vector", "--per-query", "text", cwd=small_project)
    assert text.code == 0
    block = text.out[text.out.index("query pay ") :].split("\n\n")[0]
    assert [line[8] for line in block.splitlines() if line.startswith("    ")] == ["*", "-"]
