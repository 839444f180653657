"""Misbehaving peers on loopback, each bounded in time: a retriever that drips its answer, a GitHub API
(or artifact storage) that accepts and never answers, a git origin that never answers or answers
each fetch only after a while. Every server stops itself (it holds connections at most `HOLD`
seconds) or with its test (the loopback GitHub releases what it holds when it shuts down)."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import threading
import time
import zipfile
from pathlib import Path

import pytest

from cce_relevance.action.config.inputs import read_inputs
from cce_relevance.action.modes.comment import post_comment
from cce_relevance.action.modes.publish import publish
from cce_relevance.action.runner import deadline as action_deadline
from cce_relevance.action.runner.pr_comment import comment_marker
from cce_relevance.action.workspace import git as action_git
from cce_relevance.errors import EXIT_OK, CceError
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.search.external import HttpRetriever, open_external
from tests.action.fake_github import FakeGitHub
from tests.action.test_workflow_commands import read_outputs

pytestmark = pytest.mark.slow  # each waits out a deadline of a few seconds

HOLD = 20.0  # the longest any server below keeps a connection open


class _Silent:
    """Accepts connections on 127.0.0.1 and answers with `drip` (one byte each `interval`), or never;
    with `close_after`, each connection is closed, unanswered, that many seconds after it came."""

    def __init__(self, drip: bytes = b"", interval: float = 0.5, close_after: float | None = None) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(HOLD)
        self.port = self.sock.getsockname()[1]
        self.drip, self.interval, self.close_after = drip, interval, close_after
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        deadline = time.monotonic() + HOLD
        held = []
        try:
            while time.monotonic() < deadline:
                conn, _ = self.sock.accept()
                self.connections += 1
                if self.close_after is not None:
                    time.sleep(self.close_after)
                    conn.close()
                    continue
                held.append(conn)
                for byte in self.drip:
                    if time.monotonic() > deadline:
                        break
                    conn.sendall(bytes([byte]))
                    time.sleep(self.interval)
        except OSError:
            pass
        finally:
            for conn in held:
                conn.close()
            self.sock.close()


def test_a_dripping_url_retriever_hits_the_total_deadline(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    body = b'{"id":"q1","results":[]}'
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    server = _Silent(drip=answer, interval=0.5)  # about 35 s to deliver; each byte well within the timeout
    spec = HttpRetriever(f"http://127.0.0.1:{server.port}/search", timeout=2.0)
    with (
        open_external("drip", spec, build_index(tmp_path)) as search,
        pytest.raises(CceError, match="within 2 seconds"),
    ):
        search("query", 3, "q1")


def test_a_github_api_that_never_answers_costs_a_warning_within_the_budget(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = _Silent()
    (tmp_path / "set.jsonl").write_text('{"query":"q","expected":["a.py"]}\n')
    env = {
        "GITHUB_WORKSPACE": str(tmp_path),
        "INPUT_FIXTURES": "set.jsonl",
        "INPUT_GITHUB-TOKEN": "ghs_test",
        "GITHUB_API_URL": f"http://127.0.0.1:{server.port}",
        "GITHUB_REPOSITORY": "octo/demo",
        "GITHUB_EVENT_NAME": "pull_request",
    }
    event = tmp_path / "event.json"
    event.write_text('{"pull_request": {"number": 7}}')
    env["GITHUB_EVENT_PATH"] = str(event)
    inputs = read_inputs(env)
    monkeypatch.setattr(action_deadline, "POSTING_BUDGET", 2.0)
    body = comment_marker(inputs.comment_key) + "\nreport\n"
    assert post_comment(inputs, body, "a" * 40, True) == ""
    assert "Gave up posting the pull request comment after 2 s" in capsys.readouterr().out


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def test_a_git_origin_that_never_answers_is_stopped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    server = _Silent()
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "remote", "add", "origin", f"http://127.0.0.1:{server.port}/repo.git")
    monkeypatch.setattr(action_git, "FETCH_TIMEOUT", 2.0)
    with pytest.raises(CceError, match="did not finish within 2 seconds in all"):
        action_git._ensure_history(tmp_path, ["a" * 40], lambda: False)


def _shallow_clone(path: Path, port: int) -> None:
    """A repository that says it is shallow, with an origin on `port`: every fetch deepens it."""
    _git(path, "init", "-q")
    _git(
        path,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.com",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "one",
    )
    (path / ".git" / "shallow").write_text(_git(path, "rev-parse", "HEAD"))
    _git(path, "remote", "add", "origin", f"http://127.0.0.1:{port}/repo.git")


def test_the_deepening_fetches_share_one_deadline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Each fetch fails after 1.5 s, well within a 4 s deadline on its own; the wanted commits and the
    # three deepening steps together would take 6 s, so one deadline for all of them is what stops it.
    server = _Silent(close_after=1.5)
    _shallow_clone(tmp_path, server.port)
    monkeypatch.setattr(action_git, "FETCH_TIMEOUT", 4.0)
    with pytest.raises(
        CceError, match=r"within 4 seconds in all \(stopped during `git fetch .*--(deepen|unshallow)"
    ):
        action_git._ensure_history(tmp_path, ["a" * 40], lambda: False)
    assert server.connections < 4  # the last step never ran


def test_fetches_that_end_in_time_are_not_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The same origin with room for every step: the loop ends without an error (the caller then reports
    # the commits still missing), so the test above fails if the deadline stops fetches too early.
    server = _Silent(close_after=0.2)
    _shallow_clone(tmp_path, server.port)
    monkeypatch.setattr(action_git, "FETCH_TIMEOUT", 15.0)
    action_git._ensure_history(tmp_path, ["a" * 40], lambda: False)
    assert server.connections >= 4


def _artifact(head: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("comment.md", "<!-- cce-relevance:v1 -->\nRelevance: unchanged\n")
        meta = {"number": 7, "head": head, "comment_key": None, "changed": True, "on_change": False}
        archive.writestr("pull-request.json", json.dumps({"schema": "cce.relevance.pull-request/v1", **meta}))
    return buffer.getvalue()


@pytest.mark.parametrize(
    "stalled",
    [None, r"/actions/runs/\d+/artifacts$", r"/_blobs/", r"/issues/7/comments$"],
    ids=["answers", "listing", "download", "comments"],
)
def test_a_publish_job_whose_github_never_answers_warns_and_exits_0_within_the_budget(
    stalled: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    monkeypatch.setattr(action_deadline, "POSTING_BUDGET", 2.0)
    head, repo = "b" * 40, "octo/demo"
    (tmp_path / "event.json").write_text(json.dumps({"workflow_run": {"id": 77, "head_sha": head}}))
    (tmp_path / "output").write_text("")
    with FakeGitHub() as fake:
        fake.add_repo(repo)
        fake.add_artifact(repo, 77, "cce-relevance", _artifact(head))
        fake.pull_heads[(repo, 7)] = head
        if stalled is not None:
            fake.hang(stalled)
        inputs = read_inputs(
            {
                "GITHUB_WORKSPACE": str(tmp_path),
                "GITHUB_EVENT_NAME": "workflow_run",
                "INPUT_MODE": "publish",
                "INPUT_RUN-ID": "77",
                "INPUT_GITHUB-TOKEN": fake.token,
                "GITHUB_API_URL": fake.url,
                "GITHUB_REPOSITORY": repo,
                "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
                "GITHUB_OUTPUT": str(tmp_path / "output"),
            }
        )
        assert publish(inputs) == EXIT_OK
        posted = fake.comments(repo, 7)
    out = capsys.readouterr().out
    url = read_outputs(tmp_path / "output")["comment-url"]
    if stalled is None:  # the control: the same job, answered, posts
        assert [c["html_url"] for c in posted] == [url] and "Gave up" not in out
    else:
        assert url == "" and "::warning::Gave up publishing the pull request comment after 2 s" in out
