"""The living PR comment against the loopback GitHub, and the body budget."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.action.report.fit import fit_body
from cce_relevance.action.runner.github import GitHubClient, GitHubError
from cce_relevance.action.runner.pr_comment import (
    COMMENT_LIMIT,
    CommentResult,
    comment_marker,
    upsert_comment,
)
from tests.action.conftest import REPO
from tests.action.fake_github import FakeGitHub

PR = 12
MARKER = comment_marker()


def _body(text: str, marker: str = MARKER) -> str:
    return f"{marker}\n## Relevance\n{text}"


def test_created_then_updated_then_unchanged(fake_github: FakeGitHub, client: GitHubClient) -> None:
    first = upsert_comment(client, REPO, PR, _body("base 0.50 → head 0.60"), MARKER)
    [stored] = fake_github.comments(REPO, PR)
    assert first == CommentResult(stored["html_url"], "created")
    assert stored["body"] == _body("base 0.50 → head 0.60")

    second = upsert_comment(client, REPO, PR, _body("base 0.50 → head 0.70"), MARKER)
    [updated] = fake_github.comments(REPO, PR)
    assert second == CommentResult(stored["html_url"], "updated")
    assert updated["id"] == stored["id"]
    assert updated["body"] == _body("base 0.50 → head 0.70")

    writes_before = len(fake_github.requests_for("PATCH")) + len(fake_github.requests_for("POST"))
    third = upsert_comment(client, REPO, PR, _body("base 0.50 → head 0.70"), MARKER)
    assert third == CommentResult(stored["html_url"], "unchanged")
    assert len(fake_github.requests_for("PATCH")) + len(fake_github.requests_for("POST")) == writes_before


def test_finds_its_comment_on_the_third_page(fake_github: FakeGitHub, client: GitHubClient) -> None:
    for i in range(240):
        fake_github.add_comment(REPO, PR, f"review chatter {i}")
    ours = fake_github.add_comment(REPO, PR, _body("old"), login="github-actions[bot]")
    for i in range(20):
        fake_github.add_comment(REPO, PR, f"more chatter {i}")

    result = upsert_comment(client, REPO, PR, _body("new"), MARKER)

    assert result.action == "updated"
    assert len(fake_github.requests_for("GET")) == 3
    [patch] = fake_github.requests_for("PATCH")
    assert patch.path.endswith(f"/issues/comments/{ours['id']}")
    assert fake_github.requests_for("POST") == []
    assert len(fake_github.comments(REPO, PR)) == 261


def test_updates_the_oldest_of_several_and_leaves_the_rest(
    fake_github: FakeGitHub, client: GitHubClient
) -> None:
    oldest = fake_github.add_comment(REPO, PR, _body("first run"))
    newer = fake_github.add_comment(REPO, PR, _body("duplicate from a race"))

    result = upsert_comment(client, REPO, PR, _body("third run"), MARKER)

    assert result.action == "updated"
    bodies = {c["id"]: c["body"] for c in fake_github.comments(REPO, PR)}
    assert bodies == {oldest["id"]: _body("third run"), newer["id"]: _body("duplicate from a race")}


def test_keys_keep_separate_comments(fake_github: FakeGitHub, client: GitHubClient) -> None:
    unit, nightly = comment_marker("unit"), comment_marker("nightly")

    assert upsert_comment(client, REPO, PR, _body("u1", unit), unit).action == "created"
    assert upsert_comment(client, REPO, PR, _body("n1", nightly), nightly).action == "created"
    assert upsert_comment(client, REPO, PR, _body("plain", MARKER), MARKER).action == "created"
    assert upsert_comment(client, REPO, PR, _body("u2", unit), unit).action == "updated"

    bodies = [c["body"] for c in fake_github.comments(REPO, PR)]
    assert bodies == [_body("u2", unit), _body("n1", nightly), _body("plain", MARKER)]


@given(st.text(), st.text())
def test_marker_keys_are_distinct_and_cannot_close_the_html_comment(a: str, b: str) -> None:
    marker_a, marker_b = comment_marker(a), comment_marker(b)
    assert marker_a.startswith("<!-- cce-relevance:v1 key=") and marker_a.endswith(" -->")
    assert marker_a.count("-->") == 1 and "\n" not in marker_a
    assert (marker_a == marker_b) == (a == b)
    assert marker_a not in marker_b or a == b  # no key's marker hides inside another's
    assert comment_marker() not in marker_a


def test_author_filter_ignores_a_pasted_marker(fake_github: FakeGitHub, client: GitHubClient) -> None:
    pasted = fake_github.add_comment(REPO, PR, _body("quoted by a human"), login="someone")

    result = upsert_comment(client, REPO, PR, _body("ours"), MARKER, author="github-actions[bot]")

    assert result.action == "created"
    comments = fake_github.comments(REPO, PR)
    assert [c["body"] for c in comments] == [pasted["body"], _body("ours")]
    assert comments[1]["user"]["login"] == "github-actions[bot]"


def test_read_only_token_gives_a_warning_not_an_exception(
    fake_github: FakeGitHub, client: GitHubClient
) -> None:
    fake_github.read_only = True

    result = upsert_comment(client, REPO, PR, _body("from a fork"), MARKER)

    assert result.action == "skipped" and result.url is None
    assert result.warning is not None
    assert "HTTP 403" in result.warning and "fork" in result.warning
    assert "pull-requests: write" in result.warning
    assert f"comment on {REPO}#{PR}" in result.warning
    assert fake_github.token not in result.warning
    assert fake_github.comments(REPO, PR) == []


def test_read_only_update_is_a_warning_too(fake_github: FakeGitHub, client: GitHubClient) -> None:
    fake_github.add_comment(REPO, PR, _body("old"))
    fake_github.read_only = True
    result = upsert_comment(client, REPO, PR, _body("new"), MARKER)
    assert result.action == "skipped"
    assert result.warning is not None and "update the comment on" in result.warning


def test_missing_repository_gives_a_warning(fake_github: FakeGitHub, client: GitHubClient) -> None:
    result = upsert_comment(client, "octo/missing", PR, _body("x"), MARKER)
    assert result.action == "skipped"
    assert result.warning is not None
    assert "HTTP 404" in result.warning and "list the comments of octo/missing#12" in result.warning


def test_server_errors_that_persist_raise(fake_github: FakeGitHub, client: GitHubClient) -> None:
    fake_github.fail_next(502, count=5)
    with pytest.raises(GitHubError) as caught:
        upsert_comment(client, REPO, PR, _body("x"), MARKER)
    assert caught.value.status == 502


def test_lost_answer_to_create_does_not_duplicate(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.add_comment(REPO, PR, "unrelated")
    fake_github.fail_next(502, apply=True, method="POST")  # created, but the answer is lost

    result = upsert_comment(client, REPO, PR, _body("only once"), MARKER)

    assert result.action == "created"
    assert [c["body"] for c in fake_github.comments(REPO, PR)] == ["unrelated", _body("only once")]
    # search, post, recheck (the post had created it), then the re-list that looks for a racing duplicate
    assert [r.method for r in fake_github.requests] == ["GET", "POST", "GET", "GET"]
    assert sleeps == [1.0]


def test_create_that_failed_before_acting_is_repeated(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.fail_next(500, method="POST")  # nothing created

    result = upsert_comment(client, REPO, PR, _body("eventually"), MARKER)

    assert result.action == "created"
    assert [c["body"] for c in fake_github.comments(REPO, PR)] == [_body("eventually")]
    assert [r.method for r in fake_github.requests] == ["GET", "POST", "GET", "POST", "GET"]
    assert sleeps == [1.0]


def test_enterprise_server_prefix(
    make_fake_github: Callable[..., FakeGitHub], make_client: Callable[..., GitHubClient]
) -> None:
    ghes = make_fake_github(prefix="/api/v3")
    client = make_client(ghes)
    assert upsert_comment(client, REPO, PR, _body("on GHES"), MARKER).action == "created"
    assert upsert_comment(client, REPO, PR, _body("on GHES, again"), MARKER).action == "updated"
    assert all(r.path.startswith("/api/v3/repos/") for r in ghes.requests)


def test_body_must_carry_its_marker_and_fit(client: GitHubClient) -> None:
    with pytest.raises(ValueError, match="marker"):
        upsert_comment(client, REPO, PR, "no marker here", MARKER)
    with pytest.raises(ValueError, match="65536"):
        upsert_comment(client, REPO, PR, MARKER + "\n" + "x" * COMMENT_LIMIT, MARKER)
    with pytest.raises(ValueError, match="owner/name"):
        upsert_comment(client, "octo/..", PR, _body(""), MARKER)
    with pytest.raises(ValueError, match="positive integer"):
        upsert_comment(client, REPO, 0, _body(""), MARKER)
    with pytest.raises(ValueError, match="start with its marker"):  # anywhere but first is not ours
        upsert_comment(client, REPO, PR, "text\n" + MARKER + "\n", MARKER)


def test_a_marker_inside_fixture_text_does_not_make_a_comment_ours(
    fake_github: FakeGitHub, client: GitHubClient
) -> None:
    """A fixture id equal to another step's marker shows up (in a code span) in this step's
    comment; that comment must not be taken for the other step's."""
    keyed = comment_marker("nightly")
    fake_github.add_comment(REPO, PR, _body(f"| `{MARKER}` | 1 → 3 |", keyed), login=fake_github.login)

    result = upsert_comment(client, REPO, PR, _body("the unkeyed step's report"), MARKER)

    assert result.action == "created"
    bodies = [c["body"] for c in fake_github.comments(REPO, PR)]
    assert bodies == [_body(f"| `{MARKER}` | 1 → 3 |", keyed), _body("the unkeyed step's report")]


def test_two_first_runs_that_both_create_keep_the_oldest(
    fake_github: FakeGitHub, client: GitHubClient
) -> None:
    fake_github.racing_posts.append(_body("the other run's report"))  # lands between our list and post

    result = upsert_comment(client, REPO, PR, _body("this run's report"), MARKER)

    [kept] = fake_github.comments(REPO, PR)
    assert result.action == "updated" and result.url == kept["html_url"]
    assert kept["body"] == _body("this run's report") and kept["id"] == 1001
    assert [r.method for r in fake_github.requests] == ["GET", "POST", "GET", "DELETE", "PATCH"]


def test_on_change_creates_nothing_but_still_updates(fake_github: FakeGitHub, client: GitHubClient) -> None:
    assert (
        upsert_comment(client, REPO, PR, _body("nothing changed"), MARKER, create=False).action
        == "not needed"
    )
    assert fake_github.comments(REPO, PR) == []
    upsert_comment(client, REPO, PR, _body("a change"), MARKER)
    result = upsert_comment(client, REPO, PR, _body("nothing changed now"), MARKER, create=False)
    assert result.action == "updated"
    assert [c["body"] for c in fake_github.comments(REPO, PR)] == [_body("nothing changed now")]


# -- fit_body ----------------------------------------------------------------------------------

HEAD = f"{MARKER}\n### ❌ Relevance regressed: nDCG@10 0.71 → 0.64"
TAIL = "<sub>base abc123 → head def456 · cce-relevance 0.1.0</sub>"


def _table(rows: int, label: str = "q") -> str:
    lines = ["| query | base | head | Δ |", "|---|---|---|---|"]
    lines += [f"| {label}{i:05d} | 0.500000 | 0.600000 | +0.100000 |" for i in range(rows)]
    return "\n".join(lines)


def test_everything_that_fits_is_returned_whole() -> None:
    sections = ["## Set A\n" + _table(3), "## Set B\n" + _table(2)]
    assert fit_body(HEAD, sections, TAIL) == "\n\n".join([HEAD, *sections, TAIL])


def test_overflow_keeps_head_and_tail_and_says_where_the_report_is() -> None:
    small = "## Summary table\n" + _table(5, "s")
    huge = "## Per-query deltas\n" + _table(5000)
    dropped = "## Drift\n```diff\n-a\n+b\n```"

    body = fit_body(HEAD, [small, huge, dropped], TAIL, full_report="[the run](https://ci.example/run/1)")

    assert len(body) <= COMMENT_LIMIT
    assert body.startswith(HEAD + "\n\n" + small + "\n\n## Per-query deltas\n| query |")
    assert body.endswith(TAIL)
    assert "Detail truncated" in body and "[the run](https://ci.example/run/1)" in body
    assert "## Drift" not in body
    kept_rows = [line for line in body.split("\n") if line.startswith("| q")]
    assert 100 < len(kept_rows) < 5000
    assert set(kept_rows) <= set(huge.split("\n"))  # whole rows only, never a cut line
    assert len(body) > COMMENT_LIMIT - 200  # and the budget is actually used


def test_cut_closes_open_details_and_code_fences() -> None:
    folded = "<details><summary>unchanged</summary>\n\n" + _table(3000) + "\n\n</details>"
    fenced = "```diff\n" + "\n".join(f"+line {i}" for i in range(4000)) + "\n```"

    for section in (folded, fenced):
        body = fit_body(HEAD, [section], TAIL, limit=20_000)
        assert len(body) <= 20_000
        assert body.count("<details>") == body.count("</details>") == (1 if section is folded else 0)
        assert body.count("```") % 2 == 0


def test_tilde_fence_is_closed_with_tildes() -> None:
    section = "~~~~\n" + "\n".join(f"line {i}" for i in range(3000)) + "\n~~~~"
    body = fit_body(HEAD, [section], TAIL, limit=5_000)
    lines = body.split("\n")
    assert lines.count("~~~~") == 2


@pytest.mark.parametrize("budget", range(40, 400, 7))
def test_a_mermaid_chart_is_kept_whole_or_dropped(budget: int) -> None:
    chart = '```mermaid\nxychart-beta\n    x-axis ["a", "b"]\n    bar [0.5, -0.5]\n    line [0, 0]\n```'
    section = "### Set\n\nlead\n\n" + chart + "\n\nafter\n" + "\n".join(f"row {i}" for i in range(100))

    note = 130  # the truncation note and its separators
    body = fit_body(HEAD, [section], TAIL, limit=len(HEAD) + len(TAIL) + note + budget)

    kept = body.count("xychart-beta")
    assert (kept == 1 and chart in body) or (kept == 0 and "```" not in body)
    assert kept == 1 or budget < len("### Set\n\nlead\n\n" + chart)  # dropped only when it cannot fit


def test_budget_in_bytes_for_the_step_summary() -> None:
    section = "\n".join(f"| é{i} | ✓ |" for i in range(20_000))
    body = fit_body(HEAD, [section], TAIL, limit=50_000, measure=lambda s: len(s.encode()))
    assert len(body.encode()) <= 50_000 < len(section.encode())


def test_a_head_that_cannot_fit_is_an_error() -> None:
    with pytest.raises(ValueError, match="head and tail"):
        fit_body("x" * 1000, ["y" * 10], "", limit=1000)


def test_fitted_body_is_accepted_by_github(fake_github: FakeGitHub, client: GitHubClient) -> None:
    body = fit_body(HEAD, ["## Per-query\n" + _table(20_000)], TAIL)
    assert len(body) <= COMMENT_LIMIT
    assert upsert_comment(client, REPO, PR, body, MARKER).action == "created"  # the fake rejects > 65,536
    assert fake_github.comments(REPO, PR)[0]["body"] == body


@given(
    head=st.text(min_size=1, max_size=200),
    sections=st.lists(st.text(max_size=400), max_size=6),
    tail=st.text(max_size=100),
    limit=st.integers(min_value=300, max_value=2_000),
)
def test_fit_body_properties(head: str, sections: list[str], tail: str, limit: int) -> None:
    body = fit_body(head, sections, tail, limit)
    assert len(body) <= limit
    assert body.startswith(head)
    if tail:
        assert body.endswith(tail)
    whole = "\n\n".join(part for part in [head, *sections, tail] if part)
    assert (body == whole) == (len(whole) <= limit)


def test_a_cut_never_separates_a_table_header_from_its_delimiter_row() -> None:
    rows = "".join(f"\n| `q{i}` | -0.5 |" for i in range(20))
    section = "Lead paragraph of the section.\n\n| query | Δ |\n| --- | ---: |" + rows
    whole = fit_body("<!-- m -->", [section], "tail")
    smallest = len(
        "<!-- m -->\n\n> **Detail truncated** to fit GitHub's size limit. The full report is in x.\n\ntail"
    )
    headers = 0
    for limit in range(smallest, len(whole)):
        lines = fit_body("<!-- m -->", [section], "tail", limit=limit, full_report="x").split("\n")
        for i, line in enumerate(lines):
            if line.startswith("| query"):
                headers += 1
                assert lines[i + 1] == "| --- | ---: |", limit
    assert headers > 0  # some budgets keep the table
