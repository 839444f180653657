"""The REST client against the loopback GitHub: headers, pagination, retries, and the token."""

from __future__ import annotations

import logging
import re
import socket
from collections.abc import Callable

import pytest

from cce_relevance.action.runner.github import API_VERSION, GitHubClient, GitHubError, RetryPolicy
from tests.action.conftest import NOW, REPO
from tests.action.fake_github import FakeGitHub

COMMENTS = f"/repos/{REPO}/issues/7/comments"


def _assert_no_token(token: str, *texts: str) -> None:
    for text in texts:
        assert token not in text


def test_sends_token_and_api_headers(fake_github: FakeGitHub, client: GitHubClient) -> None:
    assert client.get(COMMENTS) == []
    [request] = fake_github.requests
    assert request.headers["authorization"] == f"Bearer {fake_github.token}"
    assert request.headers["accept"] == "application/vnd.github+json"
    assert request.headers["x-github-api-version"] == API_VERSION
    assert request.headers["user-agent"].startswith("cce-relevance/")


def test_paginates_through_three_pages_by_following_links(
    fake_github: FakeGitHub, client: GitHubClient
) -> None:
    seeded = [fake_github.add_comment(REPO, 7, f"comment {i}")["id"] for i in range(250)]

    listed = [comment["id"] for comment in client.paginate(COMMENTS)]

    assert listed == seeded
    gets = fake_github.requests_for("GET")
    assert len(gets) == 3
    assert gets[0].query["per_page"] == ["100"]
    # Pages 2 and 3 come from the Link header, which names the repository by id.
    assert [g.path.split("?")[0].startswith("/repositories/") for g in gets] == [False, True, True]
    assert [g.query.get("page") for g in gets] == [None, ["2"], ["3"]]


def test_one_page_when_everything_fits(fake_github: FakeGitHub, client: GitHubClient) -> None:
    for i in range(100):
        fake_github.add_comment(REPO, 7, f"c{i}")
    assert len(list(client.paginate(COMMENTS))) == 100
    assert len(fake_github.requests) == 1


def test_enterprise_prefix_is_kept_on_every_request(
    make_fake_github: Callable[..., FakeGitHub], make_client: Callable[..., GitHubClient]
) -> None:
    ghes = make_fake_github(prefix="/api/v3")
    for i in range(150):
        ghes.add_comment(REPO, 7, f"c{i}")
    client = make_client(ghes)

    assert len(list(client.paginate(COMMENTS))) == 150
    assert client.api_url.endswith("/api/v3")
    assert len(ghes.requests) == 2
    assert all(request.path.startswith("/api/v3/") for request in ghes.requests)


def test_refuses_to_follow_a_link_to_another_host(fake_github: FakeGitHub, client: GitHubClient) -> None:
    for i in range(101):
        fake_github.add_comment(REPO, 7, f"c{i}")
    fake_github.link_base = "http://attacker.invalid"

    with pytest.raises(GitHubError, match=re.escape("refusing to send the token to http://attacker.invalid")):
        list(client.paginate(COMMENTS))
    assert len(fake_github.requests) == 1


def test_5xx_is_retried_with_exponential_backoff(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.add_comment(REPO, 7, "hello")
    fake_github.fail_next(500)
    fake_github.fail_next(502)

    assert [c["body"] for c in client.get(COMMENTS)] == ["hello"]
    assert sleeps == [1.0, 2.0]
    assert len(fake_github.requests) == 3


def test_5xx_retry_after_is_honoured(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.fail_next(503, headers={"Retry-After": "9"})
    client.get(COMMENTS)
    assert sleeps == [9.0]


def test_429_waits_as_long_as_retry_after_says(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.fail_next(429, headers={"Retry-After": "7"})
    fake_github.fail_next(429, headers={"Retry-After": "3"})
    client.get(COMMENTS)
    assert sleeps == [7.0, 3.0]


def test_429_retry_after_as_http_date(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    from email.utils import formatdate

    fake_github.fail_next(429, headers={"Retry-After": formatdate(NOW + 25, usegmt=True)})
    client.get(COMMENTS)
    assert sleeps == [25.0]


def test_secondary_rate_limit_403_with_retry_after(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.fail_next(
        403, headers={"Retry-After": "4"}, message="You have exceeded a secondary rate limit."
    )
    client.get(COMMENTS)
    assert sleeps == [4.0]


def test_exhausted_quota_waits_until_the_reset_time(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 42)}
    fake_github.fail_next(403, headers=headers, message="API rate limit exceeded")
    client.get(COMMENTS)
    assert sleeps == [43.0]  # until the reset second, plus one for clock skew


def test_rate_limit_known_only_from_the_message_waits_a_minute(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.fail_next(403, message="You have exceeded a secondary rate limit. Please wait.")
    client.get(COMMENTS)
    assert sleeps == [60.0]


def test_a_wait_longer_than_max_wait_fails_instead_of_stalling(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.fail_next(429, headers={"Retry-After": "3600"})
    with pytest.raises(GitHubError, match="asks to wait 3600 s") as caught:
        client.get(COMMENTS)
    assert caught.value.status == 429
    assert sleeps == []


def test_plain_403_and_404_are_not_retried(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.fail_next(403, message="Resource not accessible by integration")
    with pytest.raises(GitHubError, match="HTTP 403 Forbidden: Resource not accessible") as caught:
        client.get(COMMENTS)
    assert caught.value.status == 403
    with pytest.raises(GitHubError) as missing:
        client.get("/repos/octo/missing/issues/7/comments")
    assert missing.value.status == 404
    assert sleeps == []
    assert len(fake_github.requests) == 2


def test_exhausted_5xx_raises_an_error_that_never_shows_the_token(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    # A misbehaving proxy echoes the Authorization header back in its error body.
    fake_github.fail_next(500, count=5, message=f"upstream said: Bearer {fake_github.token}")

    with caplog.at_level(logging.DEBUG), pytest.raises(GitHubError) as caught:
        client.get(COMMENTS)

    error = caught.value
    assert error.status == 500
    assert "after 5 attempts" in str(error)
    assert "***" in str(error)
    assert sleeps == [1.0, 2.0, 4.0, 8.0]
    assert len(fake_github.requests) == 5
    retries = [r for r in caplog.records if r.name == "cce_relevance.action.runner.github"]
    assert [r.levelname for r in retries] == ["WARNING"] * 4  # one per retry
    _assert_no_token(fake_github.token, str(error), repr(error), repr(error.args), caplog.text, repr(client))


def test_network_failure_is_retried_then_raised_without_the_token(
    loopback_without_proxy: None, sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = "ghs_networkFailureToken42"
    client = GitHubClient(
        f"http://127.0.0.1:{port}", token, sleep=sleeps.append, retry=RetryPolicy(attempts=3)
    )
    with caplog.at_level(logging.DEBUG), pytest.raises(GitHubError, match="ConnectionError") as caught:
        client.get(COMMENTS)
    client.close()

    assert caught.value.status is None
    assert sleeps == [1.0, 2.0]
    assert caught.value.__context__ is None  # requests' exception (which may quote headers) is not chained
    _assert_no_token(token, str(caught.value), repr(caught.value), caplog.text)


def test_wrong_token_gets_401_and_is_not_echoed(
    fake_github: FakeGitHub, make_client: Callable[..., GitHubClient], sleeps: list[float]
) -> None:
    wrong = "ghs_wrongTokenValue999"
    client = make_client(fake_github, token=wrong)
    with pytest.raises(GitHubError, match="HTTP 401 Unauthorized: Bad credentials") as caught:
        client.get(COMMENTS)
    assert caught.value.status == 401
    assert sleeps == []
    _assert_no_token(wrong, str(caught.value), repr(caught.value), repr(client))


def test_token_with_a_trailing_newline_is_trimmed(
    fake_github: FakeGitHub, make_client: Callable[..., GitHubClient]
) -> None:
    client = make_client(fake_github, token=fake_github.token + "\n")
    assert client.get(COMMENTS) == []


def test_token_that_cannot_be_a_header_is_rejected_without_echoing_it() -> None:
    with pytest.raises(ValueError) as caught:
        GitHubClient("https://api.github.com", "ghs_first\nsecond-half")
    _assert_no_token("ghs_first", str(caught.value))
    _assert_no_token("second-half", str(caught.value))


def test_post_is_not_repeated_after_an_ambiguous_failure_without_a_recheck(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.fail_next(502, apply=True)  # the comment was created; only the answer was lost
    with pytest.raises(GitHubError) as caught:
        client.post(COMMENTS, {"body": "once"})
    assert caught.value.status == 502
    assert len(fake_github.requests_for("POST")) == 1
    assert [c["body"] for c in fake_github.comments(REPO, 7)] == ["once"]
    assert sleeps == []


def test_post_refused_by_a_rate_limit_is_repeated(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    fake_github.fail_next(429, headers={"Retry-After": "2"})
    created = client.post(COMMENTS, {"body": "after the wait"})
    assert created["body"] == "after the wait"
    assert len(fake_github.requests_for("POST")) == 2
    assert len(fake_github.comments(REPO, 7)) == 1
    assert sleeps == [2.0]


def test_post_recheck_decides_whether_to_repeat(
    fake_github: FakeGitHub, client: GitHubClient, sleeps: list[float]
) -> None:
    def find() -> dict[str, object] | None:
        return next((c for c in client.paginate(COMMENTS) if c["body"] == "exactly once"), None)

    fake_github.fail_next(502, apply=True)
    first = client.post(COMMENTS, {"body": "exactly once"}, recheck=find)
    fake_github.fail_next(502)  # this time nothing was created: the POST must be repeated
    second = client.post(COMMENTS, {"body": "second"}, recheck=lambda: None)

    assert first["body"] == "exactly once" and second["body"] == "second"
    assert [c["body"] for c in fake_github.comments(REPO, 7)] == ["exactly once", "second"]
    assert len(fake_github.requests_for("POST")) == 3
    assert sleeps == [1.0, 1.0]


def test_rejects_an_api_url_that_is_not_http() -> None:
    with pytest.raises(ValueError, match="http"):
        GitHubClient("api.github.com", "t")
