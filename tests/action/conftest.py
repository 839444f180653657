"""Fixtures for the Action's GitHub-facing tests: a loopback GitHub and a client that never sleeps,
and the end-to-end ones: the scenario's pull request (`pr`) and the Action run on it (`act`)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cce_relevance.action.runner.github import GitHubClient
from tests.action.fake_github import FakeGitHub
from tests.action.scenario import Act, ActionRun, PullRequest, RunnerDirs, action_env, run_entrypoint

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


@pytest.fixture
def pr(tmp_path: Path, request: pytest.FixtureRequest) -> PullRequest:
    """The scenario's pull request; parametrize it indirectly with extra files for c1."""
    return PullRequest(tmp_path, base_files=getattr(request, "param", None))


@pytest.fixture
def act(pr: PullRequest, tmp_path: Path, fake_github: FakeGitHub) -> Act:
    """Run the Action on the pull request's current head, as GitHub would after a push."""
    dirs = RunnerDirs(tmp_path / "runner")

    def run(*, token_input: str = "INPUT_GITHUB-TOKEN", owner: str | None = None, **inputs: str) -> ActionRun:
        pr.check_out_merge()
        if owner is not None:  # hand the checkout to the runner's user, as GitHub mounts it
            subprocess.run(["chown", "-R", owner, str(pr.workspace)], check=True)
        dirs.prepare(pr.event())
        env = action_env(
            dirs.places(pr.workspace),
            fake_github.url,
            fake_github.token,
            token_input=token_input,
            inputs=inputs,
        )
        return run_entrypoint(pr.workspace, dirs, env)

    return run
