"""`cce-relevance bootstrap`: a proposed set that parses, resolves, spreads, leaves out what it
should, never shows redacted text, is the same for a seed, and is scored at each backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cce_relevance import api
from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.evaluation.fixtures import load_fixtures
from tests.cli.helpers import cli, cli_process
from tests.cli.proposal_project import SECRET, write_project


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    write_project(tmp_path / "repo")
    (tmp_path / "repo" / "eval").mkdir()
    return tmp_path / "repo"


def _path(line: str) -> str | None:
    """The file of a fixture line's first anchor."""
    return parse_anchor(json.loads(line)["expected"][0]).path


def _cases(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]


def test_bootstrap_writes_a_set_that_resolves_with_notes_and_a_relative_corpus(project: Path) -> None:
    out = cli("bootstrap", ".", "--queries", "8", "--out", "eval/proposed.jsonl", "--no-cache", cwd=project)
    assert out.code == 0, out.err
    assert out.out == "" and "8 proposed cases written to eval/proposed.jsonl\n" in out.err
    written = project / "eval/proposed.jsonl"
    header = json.loads(written.read_text().splitlines()[0])
    assert header == {"schema": "cce.relevance/v1", "corpus": ".."}
    cases = _cases(written)
    assert len(cases) == 8
    assert all(c["note"] and c["expected"] for c in cases)
    assert len({c["id"] for c in cases}) == 8
    checked = cli("validate", "eval/proposed.jsonl", "--no-cache", cwd=project)
    assert checked.code == 0, checked.out
    assert "ok: every anchor resolves" in checked.out
    assert len(load_fixtures(str(written)).cases) == 8  # the note is read past, as any unknown key


def test_asking_for_more_than_the_corpus_has_says_so(project: Path) -> None:
    out = cli("bootstrap", ".", "--queries", "100", "--no-score", "--no-cache", cwd=project)
    assert out.code == 0
    assert "10 proposed cases written to stdout (of 100 asked: each definition is labeled once" in out.err


def test_bootstrap_leaves_out_tests_vendored_generated_and_redacted_text(project: Path) -> None:
    out = cli("bootstrap", ".", "--queries", "100", "--no-score", "--no-cache", cwd=project)
    assert out.code == 0, out.err
    paths = {_path(x) for x in out.out.splitlines()[1:]}
    assert paths == {"app/config.py", "app/server.py", "app/storage.py", "web/router.js", "README.md"}
    assert SECRET not in out.out and "REDACTED" not in out.out
    assert "connect_storage" not in out.out.split('"note"')[0]
    assert "files left out: 1 generated, 1 test, 1 vendored" in out.err
    kept = cli(
        "bootstrap",
        ".",
        "--queries",
        "100",
        "--no-score",
        "--no-cache",
        "--include-tests",
        "--include-vendored",
        "--include-generated",
        "--skip",
        "web/",
        cwd=project,
    )
    paths = {_path(x) for x in kept.out.splitlines()[1:]}
    assert {"tests/test_config.py", "vendor/pad.py", "api/models_pb2.py"} <= paths
    assert "web/router.js" not in paths


def test_every_form_is_proposed_and_hard_forms_avoid_the_definitions_own_words(project: Path) -> None:
    out = cli("bootstrap", ".", "--queries", "100", "--no-score", "--no-cache", cwd=project)
    cases = [json.loads(x) for x in out.out.splitlines()[1:]]
    forms = {
        next(f for f in ("doc-unnamed", "callers", "name", "doc") if c["id"].startswith(f + "-"))
        for c in cases
    }
    assert {"name", "doc", "doc-unnamed", "callers"} <= forms
    by_id = {c["id"]: c for c in cases}
    assert by_id["callers-read-settings"]["query"] == "handle get"  # RequestHandler.handle_get calls it
    assert by_id["callers-read-settings"]["note"].startswith("hard: names of the definitions that call")
    for c in cases:
        if c["id"].startswith("doc-unnamed"):
            assert c["note"].startswith("hard:")
            name = c["note"].split(" without")[0].rsplit(" ", 1)[-1].split(".")[-1]
            assert name.lower() not in c["query"].lower()


def test_same_seed_same_bytes_other_seed_other_set(project: Path) -> None:
    first = cli_process(
        "bootstrap", ".", "--queries", "6", "--seed", "3", "--no-score", "--no-cache", cwd=project
    )
    again = cli_process(
        "bootstrap", ".", "--queries", "6", "--seed", "3", "--no-score", "--no-cache", cwd=project
    )
    other = [
        cli("bootstrap", ".", "--queries", "6", "--seed", str(s), "--no-score", "--no-cache", cwd=project).out
        for s in range(4, 10)
    ]
    assert first.code == 0 and first.out == again.out
    assert any(o != first.out for o in other)


def test_spread_over_files_before_repeating_one(project: Path) -> None:
    out = cli("bootstrap", ".", "--queries", "5", "--no-score", "--no-cache", cwd=project)
    paths = [_path(x) for x in out.out.splitlines()[1:]]
    assert len(paths) == 5 and len(set(paths)) == 5


def test_the_report_scores_the_set_at_each_backend_as_run_does(project: Path) -> None:
    report_file = project.parent / "report.txt"  # outside the corpus, which a later run indexes
    out = cli(
        "bootstrap",
        ".",
        "--queries",
        "10",
        "--out",
        "eval/p.jsonl",
        "--report",
        str(report_file),
        "--no-cache",
        cwd=project,
    )
    assert out.code == 0 and out.err == ""
    report = report_file.read_text()
    run = api.run(
        str(project / "eval/p.jsonl"), api.RunOptions(indexing=api.BuildOptions.with_cache(use_cache=False))
    )
    row = next(line for line in report.splitlines() if line.startswith("  all "))
    assert row.split()[2:] == [cell for r in run.reports for cell in (f"{r.mrr:.3f}", "/", f"{r.recall:.2f}")]
    assert "backends disagree on" in report and "MRR hybrid − bm25" in report
    for group in ("easy", "hard", "name", "doc"):
        assert f"\n  {group} " in report


def test_an_existing_set_is_not_replaced_without_force(project: Path) -> None:
    target = project / "eval/reviewed.jsonl"
    target.write_text("reviewed\n")
    out = cli("bootstrap", ".", "--out", "eval/reviewed.jsonl", "--no-score", "--no-cache", cwd=project)
    assert out.code == 2 and "exists" in out.err and target.read_text() == "reviewed\n"
    forced = cli(
        "bootstrap", ".", "--out", "eval/reviewed.jsonl", "--no-score", "--no-cache", "--force", cwd=project
    )
    assert forced.code == 0 and target.read_text().startswith('{"schema"')


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--forms", "name,poems"], 'unknown query form "poems"'),
        (["--queries", "0"], "0 is not in the range"),
        (["--no-score", "--backend", "bm25"], "--backend needs scoring"),
        (["--backend", "bm26"], 'unknown backend "bm26"'),
        (["--skip", "src/[a"], "skip pattern 'src/[a' is not a valid gitignore pattern"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(project: Path, args: list[str], message: str) -> None:
    out = cli("bootstrap", ".", "--no-cache", *args, cwd=project)
    assert out.code == 2 and message in out.err and out.out == ""


def test_a_corpus_with_nothing_to_propose_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests/test_x.py").write_text('def test_x():\n    """Check the x thing works."""\n')
    out = cli("bootstrap", str(tmp_path), "--no-cache")
    assert out.code == 2 and "nothing to propose" in out.err and "keep test, vendored or generated" in out.err


def test_forms_chooses_what_is_proposed(project: Path) -> None:
    out = cli("bootstrap", ".", "--forms", "callers,name", "--no-score", "--no-cache", cwd=project)
    ids = [json.loads(x)["id"] for x in out.out.splitlines()[1:]]
    assert ids and all(i.startswith(("name-", "callers-")) for i in ids)
    assert ids.index(next(i for i in ids if i.startswith("callers-"))) > ids.index(ids[0])  # easy first


def test_anchors_name_symbols_and_fall_back_to_kind_then_lines(tmp_path: Path) -> None:
    (tmp_path / "temp.py").write_text(
        "class Thermometer:\n"
        '    @property\n    def celsius(self):\n        """The temperature read in degrees Celsius."""\n'
        "        return 1\n\n"
        '    @celsius.setter\n    def celsius(self, value):\n        """Store a new temperature reading."""\n'
        "        self.value = value\n\n\n"
        'class ReadingParser:\n    """Turn raw sensor lines into readings."""\n\n\n'
        'def ReadingParser(line):\n    """Parse one sensor line the quick way."""\n    return line\n'
    )
    out = cli("bootstrap", str(tmp_path), "--queries", "20", "--no-score", "--no-cache", cwd=tmp_path)
    anchors = {json.loads(x)["query"]: json.loads(x)["expected"][0] for x in out.out.splitlines()[1:]}
    assert "thermometer celsius" not in anchors and "reading parser" not in anchors  # one text, two places
    assert anchors["Store a new temperature reading"] == "temp.py#function_definition@8-10"
    assert anchors["Turn raw sensor lines into readings"] == "temp.py#class_definition::ReadingParser"
    assert anchors["Parse one sensor the quick way"] == "temp.py#function_definition::ReadingParser"
    assert (
        anchors["The temperature read in degrees"] == "temp.py#function_definition@3-5"
    )  # getter and setter
    (tmp_path / "set.jsonl").write_text(out.out)
    assert cli("validate", "set.jsonl", "--no-cache", cwd=tmp_path).code == 0


def test_comments_above_a_definition_are_its_doc_in_other_languages(project: Path) -> None:
    def proposed(forms: str) -> dict[str, str]:
        out = cli("bootstrap", ".", "--forms", forms, "--no-score", "--no-cache", cwd=project)
        return {json.loads(x)["query"]: json.loads(x)["expected"][0] for x in out.out.splitlines()[1:]}

    docs = proposed("doc")
    assert docs["Route an incoming path to the handler registered for it"] == "web/router.js::routeRequest"
    assert docs["Register a handler for every path below a prefix"] == "web/router.js::mountPrefix"
    assert docs["Demo application for serving requests"] == "README.md#module"
    unnamed = proposed("doc-unnamed")
    assert unnamed["Register for every path below"] == "web/router.js::mountPrefix"  # its parameters go


def test_backend_chooses_the_columns_and_pairs_of_the_report(project: Path) -> None:
    (project / "cce-relevance.toml").write_text('[backends.bm25-flat]\nbase = "bm25"\nbm25_b = 0.0\n')
    out = cli("bootstrap", "app", "--backend", "bm25,bm25-flat", "--no-cache", cwd=project)
    assert out.code == 0, out.err
    header = next(line for line in out.err.splitlines() if line.strip().startswith("group"))
    assert header.split() == ["group", "cases", "bm25", "bm25-flat"]
    assert [line.strip()[:22] for line in out.err.splitlines() if line.strip().startswith("MRR ")] == [
        "MRR bm25-flat − bm25: "
    ]


def test_a_report_and_set_written_into_the_corpus_do_not_change_the_next_proposal(project: Path) -> None:
    args = (
        "bootstrap",
        ".",
        "--queries",
        "6",
        "--out",
        "proposed.ndjson",
        "--report",
        "proposed.txt",
        "--no-cache",
    )
    first = cli(*args, cwd=project)
    assert first.code == 0, first.err
    text, report = (project / "proposed.ndjson").read_text(), (project / "proposed.txt").read_text()
    again = cli(*args, "--force", cwd=project)
    assert again.code == 0, again.err
    assert (project / "proposed.ndjson").read_text() == text
    assert (project / "proposed.txt").read_text() == report  # the same corpus was scored
    assert "proposed.txt" not in text and "proposed.ndjson" not in text
