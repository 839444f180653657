"""`cce-relevance trend`: the series of a trend history file, as text and as JSON, through the
real CLI; a missing, damaged or ambiguous history is exit 2 with a message that says what to do."""

from __future__ import annotations

import json
from pathlib import Path

from cce_relevance.action.trend.history import Entry, History, write_history
from tests.action.test_schemas import validator
from tests.cli.helpers import cli

SETS = ("eval/code.jsonl", "eval/docs.jsonl")
MRR = (0.5, 0.55, 0.7)


def history(tmp_path: Path, sets: tuple[str, ...] = SETS[:1]) -> Path:
    entries = tuple(
        Entry(
            f"{i + 1:x}" * 40,
            f"2024-02-0{i + 1}T10:00:00Z",
            "0.1.0",
            {s: {"bm25": {"mrr": MRR[i], "f1": 0.25}, "hybrid": {"mrr": 0.75}} for s in sets},
        )
        for i in range(3)
    )
    path = tmp_path / "history.json"
    write_history(path, History("main", entries))
    return path


def test_text_lists_every_backend_with_a_sparkline_and_each_push(tmp_path: Path) -> None:
    done = cli("trend", str(history(tmp_path)))
    assert done.code == 0, done.err
    assert done.out == (
        "eval/code.jsonl · bm25 · mrr (3 pushes to main, 0.500000–0.700000)\n"
        "▁▃█\n"  # 0.55 is (0.55 - 0.5) / 0.2 · 7 = 1.75 steps up
        f"  2024-02-01T10:00:00Z  {'1' * 12}  0.500000  cce-relevance 0.1.0\n"
        f"  2024-02-02T10:00:00Z  {'2' * 12}  0.550000  cce-relevance 0.1.0\n"
        f"  2024-02-03T10:00:00Z  {'3' * 12}  0.700000  cce-relevance 0.1.0\n"
        "\n"
        "eval/code.jsonl · hybrid · mrr (3 pushes to main, 0.750000–0.750000)\n"
        "▄▄▄\n"
        f"  2024-02-01T10:00:00Z  {'1' * 12}  0.750000  cce-relevance 0.1.0\n"
        f"  2024-02-02T10:00:00Z  {'2' * 12}  0.750000  cce-relevance 0.1.0\n"
        f"  2024-02-03T10:00:00Z  {'3' * 12}  0.750000  cce-relevance 0.1.0\n"
    )


def test_json_is_the_selected_series_with_every_point(tmp_path: Path) -> None:
    path = history(tmp_path, SETS)
    done = cli("trend", str(path), "--set", SETS[1], "--backend", "bm25", "--metric", "f1", "--json")
    assert done.code == 0, done.err
    document = json.loads(done.out)
    validator("cce.relevance.trend.v1").validate(document)
    [series] = document["series"]
    assert (series["set"], series["backend"], series["metric"]) == (SETS[1], "bm25", "f1")
    assert [p["value"] for p in series["points"]] == [0.25] * 3
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert [p["commit"] for p in series["points"]] == [e["commit"] for e in saved["entries"]]


def test_what_cannot_be_shown_is_exit_2_with_what_there_is(tmp_path: Path) -> None:
    path = history(tmp_path, SETS)
    ambiguous = cli("trend", str(path))
    assert ambiguous.code == 2 and ambiguous.out == ""
    assert f"holds 2 fixture sets: choose one with --set ({', '.join(SETS)})" in ambiguous.err
    absent = cli("trend", str(path), "--set", SETS[0], "--metric", "ndcg_at_k")
    assert absent.code == 2
    assert f"no values of 'ndcg_at_k' in '{SETS[0]}'" in absent.err and "metrics f1, mrr" in absent.err
    missing = cli("trend", str(tmp_path / "none.json"))
    assert missing.code == 2 and "none.json does not exist" in missing.err
    damaged = tmp_path / "damaged.json"
    damaged.write_text(path.read_text(encoding="utf-8").replace('"main"', '""', 1), encoding="utf-8")
    broken = cli("trend", str(damaged))
    assert broken.code == 2 and "damaged.json branch is '': expected a non-empty string" in broken.err
    truncated = tmp_path / "truncated.json"  # a cache saved while the file was half written
    truncated.write_bytes(path.read_bytes()[:100])
    cut = cli("trend", str(truncated))
    assert cut.code == 2 and cut.out == "" and "Traceback" not in cut.err
    assert cut.err.count("invalid JSON") == 1 and "truncated.json cannot be parsed: invalid JSON:" in cut.err
