"""Fixtures for the Action's GitHub-facing tests: a loopback GitHub and a client that never sleeps."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from cce_relevance.action.github import GitHubClient
from tests.action.fake_github import FakeGitHub

REPO = "octo/demo"
NOW = 1_700_000_000.0  # the injected clock, for x-ratelimit-reset arithmetic


@pytest.fixture
def loopback_without_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A runner's HTTP(S)_PROXY must not capture requests meant for 127.0.0.1."""
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")


@pytest.fixture
def make_fake_github(loopback_without_proxy: None) -> Iterator[Callable[..., FakeGitHub]]:
    """Start fake servers (``prefix="/api/v3"`` for Enterprise); all are stopped at teardown."""
    started: list[FakeGitHub] = []

    def make(**options: str) -> FakeGitHub:
        fake = FakeGitHub(**options).__enter__()
        started.append(fake)
        fake.add_repo(REPO)
        return fake

    yield make
    for fake in started:
        fake.__exit__(None, None, None)


@pytest.fixture
def fake_github(make_fake_github: Callable[..., FakeGitHub]) -> FakeGitHub:
    return make_fake_github()


@pytest.fixture
def sleeps() -> list[float]:
    """The waits the client asked for, in order (it is given ``sleeps.append`` to sleep with)."""
    return []


@pytest.fixture
def make_client(sleeps: list[float]) -> Iterator[Callable[..., GitHubClient]]:
    clients: list[GitHubClient] = []

    def make(fake: FakeGitHub, token: str | None = None, **options: object) -> GitHubClient:
        client = GitHubClient(
            fake.url,
            fake.token if token is None else token,
            sleep=sleeps.append,
            clock=lambda: NOW,
            **options,  # type: ignore[arg-type]
        )
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(fake_github: FakeGitHub, make_client: Callable[..., GitHubClient]) -> GitHubClient:
    return make_client(fake_github)
