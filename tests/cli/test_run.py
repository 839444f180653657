"""`cce-relevance run`: corpus resolution, errors and exit codes, --output, golden discipline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import cli, cli_process

CORPUS = {
    "auth.py": 'def hash_password(pw):\n    return pw + "salt"\n',
    "payments.py": "import auth\n\ndef process_payment(amount):\n"
    "    return auth.hash_password(str(amount))\n",
}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in CORPUS.items():
        (corpus / name).write_text(text)
    (tmp_path / "set.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
        '{"id":"hash","query":"where is the password hashed","expected":["auth.py"],"k":3}\n'
        '{"id":"pay","query":"process payment amount","expected":["payments.py@3-4"],"k":2}\n'
    )
    return tmp_path


def test_header_corpus_is_resolved_against_the_fixture_file(project: Path, tmp_path: Path) -> None:
    result = cli("run", str(project / "set.jsonl"), "--json")
    assert result.code == 0, result.err
    doc = json.loads(result.out)
    assert doc["corpus"] == str(project / "corpus")
    assert doc["queries"] == 2
    assert [b["backend"] for b in doc["backends"]] == ["bm25", "vector", "hybrid"]


def test_dir_overrides_header_and_is_shown_as_typed(project: Path) -> None:
    result = cli(
        "run", "set.jsonl", "--dir", "corpus/", "--backend", " hybrid , bm25,hybrid", "--json", cwd=project
    )
    doc = json.loads(result.out)
    assert doc["corpus"] == "corpus/"
    assert [b["backend"] for b in doc["backends"]] == ["hybrid", "bm25"]


def test_hybrid_scores_of_worked_example(project: Path) -> None:
    """§hybrid-examples corpus A: auth.py 1-2 first, so MRR 1 for the `hash` case."""
    doc = json.loads(cli("run", "set.jsonl", "--backend", "hybrid", "--json", cwd=project).out)
    first = doc["backends"][0]["per_query"][0]
    assert first["id"] == "hash" and first["first_relevant_rank"] == 1 and first["mrr"] == "1.000000"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["missing.jsonl"],
            "error: could not read fixtures missing.jsonl: No such file or directory (os error 2)\n",
        ),
        (["set.jsonl", "--dir", "nope"], "error: corpus is not a directory: nope\n"),
        (
            ["set.jsonl", "--backend", "bm25,BM25"],
            'error: unknown backend "BM25" (expected bm25, vector, or hybrid)\n',
        ),
        (
            ["set.jsonl", "--backend", " , "],
            "error: --backend requires at least one of bm25, vector, hybrid\n",
        ),
        (["set.jsonl", "--compare", ","], "error: --backend requires at least one of bm25, vector, hybrid\n"),
        (
            ["set.jsonl", "--compare", "bm25,bm25"],
            "error: --compare requires exactly two distinct backends, e.g. bm25,hybrid\n",
        ),
        (
            ["set.jsonl", "--compare", "hybrid"],  # E21 keeps the reference's words though 3+ are allowed
            "error: --compare requires exactly two distinct backends, e.g. bm25,hybrid\n",
        ),
        (
            ["set.jsonl", "--store", "nowhere.json"],
            "error: could not load store nowhere.json: No such file or directory (os error 2)\n",
        ),
    ],
)
def test_input_errors_exit_2_with_one_line_and_empty_stdout(
    project: Path, args: list[str], message: str
) -> None:
    result = cli_process("run", *args, cwd=project)
    assert (result.code, result.out, result.err) == (2, "", message)


def test_missing_corpus_error(tmp_path: Path) -> None:
    (tmp_path / "f.jsonl").write_text('{"query":"x","expected":["a.py"]}\n')
    result = cli("run", "f.jsonl", cwd=tmp_path)
    assert result.code == 2 and result.out == ""
    assert (
        result.err
        == 'error: no corpus: pass --dir <corpus>, or declare "corpus" in the fixture header line\n'
    )


@pytest.mark.parametrize(
    "args",
    [
        ["--store", "s.json", "--dir", "corpus"],
        ["--compare", "bm25,hybrid", "--backend", "bm25"],
        ["--bogus"],
        [],
    ],
)
def test_parser_usage_errors_exit_2(project: Path, args: list[str]) -> None:
    fixture = [] if args == [] else ["set.jsonl"]
    result = cli_process("run", *fixture, *args, cwd=project)
    assert result.code == 2 and result.out == ""


def test_output_writes_file_atomically_and_not_stdout(project: Path) -> None:
    result = cli("run", "set.jsonl", "--json", "--output", "out/report.json", cwd=project)
    assert result.code == 0 and result.out == ""  # the missing directory is created
    written = (project / "out/report.json").read_text()
    assert json.loads(written)["schema"] == "cce.relevance.report/v2"
    assert [p.name for p in (project / "out").iterdir()] == ["report.json"]


def test_golden_cycle(project: Path) -> None:
    missing = cli("run", "set.jsonl", "--golden", "g.json", cwd=project)
    assert missing.code == 2 and "--update-golden" in missing.err
    created = cli("run", "set.jsonl", "--golden", "g.json", "--update-golden", cwd=project)
    assert created.code == 0 and created.err == "golden report g.json created\n"
    same = cli("run", "set.jsonl", "--golden", "g.json", cwd=project)
    assert same.code == 0 and same.err == "golden report g.json matches\n"
    again = cli("run", "set.jsonl", "--golden", "g.json", "--update-golden", cwd=project)
    assert again.code == 0 and again.err == "golden report g.json unchanged\n" and again.out == same.out
    # a ranking-relevant change in the corpus moves the report: drift, exit 1, unified diff
    (project / "corpus" / "auth.py").write_text("def unrelated():\n    return 0\n")
    drift = cli("run", "set.jsonl", "--golden", "g.json", cwd=project)
    assert drift.code == 1
    assert "--- g.json (golden)" in drift.err and "+++ current run" in drift.err
    assert "error: report drifted from golden g.json" in drift.err
    assert drift.out.startswith("CCE relevance")
    updated = cli("run", "set.jsonl", "--golden", "g.json", "--update-golden", cwd=project)
    assert updated.code == 0 and updated.err == "golden report g.json updated\n"


def test_output_is_deterministic_across_processes(project: Path) -> None:
    first = cli_process("run", "set.jsonl", "--compare", "bm25,hybrid", "--json", cwd=project)
    second = cli_process("run", "set.jsonl", "--compare", "bm25,hybrid", "--json", cwd=project)
    assert first.code == 0 and first.out == second.out


def test_search_human_and_json(project: Path) -> None:
    human = cli("search", "corpus", "where is the password hashed", "-k", "3", cwd=project)
    assert human.code == 0
    lines = human.out.splitlines()
    assert lines[0] == " 1. [0.825000] auth.py:1-2 (function/function_definition)"
    assert lines[1].strip() == "def hash_password(pw):"
    assert lines[2] == " 2. [0.816803] payments.py:3-4 (function/function_definition)"
    records = json.loads(cli("search", "corpus", "where is the password hashed", "--json", cwd=project).out)
    assert records[0] == {
        "rank": 1,
        "score": "0.825000",
        "chunk_id": "188febb74a94633e",
        "file_path": "auth.py",
        "start_line": 1,
        "end_line": 2,
        "chunk_type": "function",
        "kind": "function_definition",
    }
    bm25 = json.loads(
        cli("search", "corpus", "process_payment", "--backend", "bm25", "--json", cwd=project).out
    )
    assert [r["file_path"] for r in bm25] == ["payments.py"]


def test_search_and_chunks_reject_a_missing_directory(tmp_path: Path) -> None:
    for args in (["search", "nope", "q"], ["chunks", "nope"]):
        result = cli_process(*args, cwd=tmp_path)
        assert (result.code, result.out, result.err) == (2, "", "error: corpus is not a directory: nope\n")
