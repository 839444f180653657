"""`bootstrap DIR --from-history [REV_RANGE]` on real git repositories built here (history_repo.py):
the yield per rule, the cases and their notes, a set that validates, the same bytes twice, the
time split, the body paragraph, and the errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cce_relevance.evaluation.history import subjects
from tests.cli.helpers import cli, cli_process
from tests.cli.history_repo import EXPECTED_SKIPS, KEPT, History, build, git


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    return build(tmp_path_factory.mktemp("history") / "repo")


def _cases(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()[1:]]


def _yield(report: str) -> dict[str, int]:
    """The `left out` table of the report, rule → count."""
    table = report.split("left out, by the first rule that applies:\n", 1)[1].split("\n  cases:", 1)[0]
    rows = [line.rsplit(None, 1) for line in table.splitlines()]
    return {rule.strip(): int(n.replace(",", "")) for rule, n in rows}


def test_the_yield_per_rule_and_the_cases_kept(history: History) -> None:
    done = cli("bootstrap", "src", "--from-history", "--no-score", "--no-cache", cwd=history.repo)
    assert done.code == 0, done.err
    assert done.err.startswith("cce-relevance bootstrap --from-history: 4 cases written to stdout\n")
    assert "  commits seen: 21 of HEAD, 4 kept\n" in done.err
    assert _yield(done.err) == EXPECTED_SKIPS
    assert sum(EXPECTED_SKIPS.values()) + len(KEPT) == 21
    cases = _cases(done.out)
    assert [c["expected"] for c in cases] == list(KEPT.values())
    for case, subject in zip(cases, KEPT, strict=True):
        sha = history.shas[subject]
        parent = git(history.repo, "rev-parse", f"{sha}^").strip()
        assert f"commit {sha[:12]}" in case["note"] and f"at its parent {parent[:12]}" in case["note"]
        assert json.dumps(subject) in case["note"]
    assert [c["id"] for c in cases][1] == "pr-41" and cases[1]["note"].startswith("history: PR #41, commit")
    assert cases[3]["query"] == "tolerate status lines without a reason"  # prefix, ticket, reference gone
    assert json.loads(done.out.splitlines()[0]) == {"schema": "cce.relevance/v1", "corpus": "src"}


def test_the_set_validates_scores_and_is_the_same_bytes_every_time(history: History) -> None:
    args = ("bootstrap", "src", "--from-history", "--out", "eval/history.jsonl", "--force", "--no-cache")
    first = cli(*args, "--report", "eval/report.txt", cwd=history.repo)
    assert first.code == 0, first.err
    text = (history.repo / "eval/history.jsonl").read_text(encoding="utf-8")
    report = (history.repo / "eval/report.txt").read_text(encoding="utf-8")
    assert json.loads(text.splitlines()[0])["corpus"] == "../src"
    assert "how each backend scores it" in report and "merged PRs" in report
    checked = cli("validate", "eval/history.jsonl", "--no-cache", cwd=history.repo)
    assert checked.code == 0 and "ok: every anchor resolves" in checked.out
    again = cli(*args, "--report", "eval/report.txt", cwd=history.repo)
    assert again.code == 0
    assert (history.repo / "eval/history.jsonl").read_text(encoding="utf-8") == text
    assert (history.repo / "eval/report.txt").read_text(encoding="utf-8") == report
    run = cli("run", "eval/history.jsonl", "--json", "--no-cache", cwd=history.repo)
    assert run.code == 0 and json.loads(run.out)["queries"] == 4


def test_a_range_and_a_limit(history: History) -> None:
    since_fix = f"{history.shas['Mark the client closed after closing its transport']}^..main"
    ranged = cli(
        "bootstrap", "src", "--from-history", since_fix, "--no-score", "--no-cache", cwd=history.repo
    )
    assert [c["expected"] for c in _cases(ranged.out)] == list(KEPT.values())[:3]
    assert "commits seen: 4 of" in ranged.err  # the three kept and the merge
    limited = cli(
        "bootstrap", "src", "--from-history", "--queries", "2", "--no-score", "--no-cache", cwd=history.repo
    )
    assert len(_cases(limited.out)) == 2
    assert "2 kept; the walk stopped at --queries 2" in limited.err


def test_a_time_split_scores_later_commits_at_an_earlier_checkout(history: History, tmp_path: Path) -> None:
    """Cases drawn from the commits until the day the legacy codec was last changed, scored at a
    checkout of that day: its definition, gone at HEAD, is there, so that commit is kept."""
    encoded = history.shas["Encode legacy codec output as bytes for old servers"]
    checkout = tmp_path / "at-split"
    git(history.repo, "worktree", "add", "-q", "--detach", str(checkout), encoded)
    try:
        done = cli(
            "bootstrap", str(checkout / "src"), "--from-history", "main", "--until", "2024-01-16T23:59:59Z",
            "--no-score", "--out", str(tmp_path / "split.jsonl"), "--no-cache",
        )  # fmt: skip
        assert done.code == 0, done.err
        cases = _cases((tmp_path / "split.jsonl").read_text(encoding="utf-8"))
        assert cases[0]["expected"] == ["legacy.py::old_codec"]
        assert "commits seen: 16 of main until 2024-01-16T23:59:59Z" in done.err
        checked = cli("validate", str(tmp_path / "split.jsonl"), "--no-cache")
        assert checked.code == 0, checked.out
        later = cli(
            "bootstrap", str(checkout / "src"), "--from-history", "main", "--since", "2024-01-18T00:00:00Z",
            "--no-score", "--no-cache",
        )  # fmt: skip
        assert [c["expected"] for c in _cases(later.out)] == list(KEPT.values())[:3]
    finally:
        git(history.repo, "worktree", "remove", "--force", str(checkout))


TERMUI = """\
def prompt(text):
    return input(text)


def confirm(text):
    return prompt(text) == "y"
"""
OVERLOADS = """\
from typing import overload


@overload
def prompt(text: str) -> str: ...


@overload
def prompt(text: str, default: int) -> int: ...


"""


def test_a_definition_the_scored_tree_names_twice_is_no_anchor(tmp_path: Path) -> None:
    """Overloads added later give `prompt` three definitions at HEAD: `termui.py::prompt` would
    match all of them (and fail `validate`), so it is left out, in the note or by its own rule."""
    h = History(tmp_path / "repo")
    termui = TERMUI
    h.write("src/termui.py", termui)
    h.commit("Add prompt and confirm helpers for the terminal")  # root commit
    termui = termui.replace("return input(text)", "return input(text).strip()")
    termui = termui.replace('== "y"', '.lower() == "y"')
    h.write("src/termui.py", termui)
    h.commit("Strip and lowercase what the terminal answers")  # kept: confirm; prompt ambiguous
    termui = termui.replace("input(text)", "input(text + ': ')")
    h.write("src/termui.py", termui)
    h.commit("Show a colon after the text of every prompt")  # ambiguous in the scored tree
    h.write("src/termui.py", OVERLOADS + termui)
    h.commit("Type the prompt helper with overloads per default")  # ambiguous (grows prompt)

    done = cli(
        "bootstrap", "src", "--from-history", "--no-score", "--no-cache", "--out", "set.jsonl", cwd=h.repo
    )

    assert done.code == 0, done.err
    assert _yield(done.err) == {"root commit": 1, "ambiguous in the scored tree": 2}
    [case] = _cases((h.repo / "set.jsonl").read_text(encoding="utf-8"))
    assert case["expected"] == ["termui.py::confirm"]
    assert case["note"].endswith("; 1 more changed definition named ambiguously in the scored tree")
    checked = cli("validate", "set.jsonl", "--no-cache", cwd=h.repo)
    assert checked.code == 0, checked.out


def test_the_body_paragraph_joins_the_query_without_its_trailers(history: History) -> None:
    done = cli(
        "bootstrap", "src", "--from-history", "--with-body", "--no-score", "--no-cache", cwd=history.repo
    )
    closed = next(c for c in _cases(done.out) if c["expected"] == ["client.py::Client.close"])
    assert closed["query"] == (
        "Mark the client closed after closing its transport "
        "Callers asked whether a client can still send; the flag answers it"
    )
    assert "Signed-off-by" not in done.out


def test_a_directory_outside_git_and_a_range_git_cannot_read_are_input_errors(
    tmp_path: Path, history: History
) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    outside = cli_process("bootstrap", "plain", "--from-history", "--no-score", cwd=tmp_path)
    assert (
        outside.code == 2 and "is not in a git repository" in outside.err and "Traceback" not in outside.err
    )
    bad = cli_process("bootstrap", "src", "--from-history", "no-such-branch", "--no-score", cwd=history.repo)
    assert bad.code == 2 and "error: cannot read the history 'no-such-branch'" in bad.err
    dashed = cli_process("bootstrap", "src", "--from-history=--output=/tmp/x", "--no-score", cwd=history.repo)
    assert dashed.code == 2 and not Path("/tmp/x").exists()  # a range is never read as an option


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--since", "2024-01-01"], "--since needs --from-history"),
        (["--with-body"], "--with-body needs --from-history"),
        (["--max-definitions", "3"], "--max-definitions needs --from-history"),
        (["--from-history", "--seed", "3"], "--seed draws from definitions"),
        (["--from-history", "--forms", "name"], "--forms draws from definitions"),
    ],
)
def test_options_that_need_or_refuse_the_history_are_usage_errors(
    history: History, args: list[str], message: str
) -> None:
    done = cli_process("bootstrap", "src", *args, "--no-score", cwd=history.repo)
    assert done.code == 2 and message in done.err


def test_a_wider_max_definitions_keeps_the_commit_that_touched_seven(history: History) -> None:
    done = cli(
        "bootstrap",
        "src",
        "--from-history",
        "--max-definitions",
        "7",
        "--no-score",
        "--no-cache",
        cwd=history.repo,
    )
    inverted = [c for c in _cases(done.out) if c["query"] == "Invert every arithmetic helper of the examples"]
    assert len(inverted) == 1 and len(inverted[0]["expected"]) == 7
    assert "too many definitions" not in done.err


@pytest.mark.parametrize(
    ("subject", "query"),
    [
        ("Expose `FunctionAuth` in `__all__` (#3699)", "Expose `FunctionAuth` in `__all__`"),
        ("[docs] Remove load_ssl_context DEBUG log (#3589)", "Remove load_ssl_context DEBUG log"),
        ("fix(client)!: handle proxies with auth, closes octo/demo#12", "handle proxies with auth"),
        ("cli: parser: Support --foo in the CLI parser [skip ci]", "Support --foo in the CLI parser"),
        ("JIRA-123: Allow empty bodies on GET", "Allow empty bodies on GET"),
        ("Allow empty bodies (see https://github.com/o/r/issues/9)", "Allow empty bodies"),
        ("GH-77 Allow empty bodies", "Allow empty bodies"),
    ],
)
def test_subjects_lose_their_decorations(subject: str, query: str) -> None:
    assert subjects.query_words(subject) == query
    assert subjects.query_words(query) == query  # nothing left to take off


def test_pull_requests_bots_and_reverts_are_recognised() -> None:
    assert (
        subjects.pull_request("Add retries (#1234)") == 1234
        and subjects.pull_request("Add #12 retries") is None
    )
    assert subjects.is_bot("dependabot[bot]", "x@users.noreply.github.com")
    assert subjects.is_bot("Renovate Bot", "bot@renovateapp.com") and not subjects.is_bot("Ada", "ada@x.org")
    assert subjects.is_revert('Revert "Add retries"', "") and subjects.is_revert(
        "Undo", "This reverts commit abcdef1."
    )
    assert subjects.first_paragraph("Signed-off-by: A <a@x>\n") == ""
    assert subjects.first_paragraph("* one\n* two\n") == ""
    assert subjects.too_generic("Update dependencies") and subjects.too_short("Fix typo")
    assert not subjects.too_generic("Retry failed requests with backoff")
