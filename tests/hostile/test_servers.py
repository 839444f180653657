"""Misbehaving peers on loopback, each bounded in time: a retriever that drips its answer, a GitHub API
that accepts and never answers, a git origin that accepts and never answers. Every server stops
itself (it serves one connection and holds it at most `HOLD` seconds)."""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from cce_relevance.action import git as action_git
from cce_relevance.action import main as action_main
from cce_relevance.errors import CceError
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.search.external import HttpRetriever, open_external

pytestmark = pytest.mark.slow  # each waits out a deadline of a few seconds

HOLD = 20.0  # the longest any server below keeps a connection open


class _Silent:
    """Accepts connections on 127.0.0.1 and answers with `drip` (one byte each `interval`), or never."""

    def __init__(self, drip: bytes = b"", interval: float = 0.5) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(HOLD)
        self.port = self.sock.getsockname()[1]
        self.drip, self.interval = drip, interval
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        deadline = time.monotonic() + HOLD
        held = []
        try:
            while time.monotonic() < deadline:
                conn, _ = self.sock.accept()
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
    with open_external("drip", spec, build_index(tmp_path)) as search, pytest.raises(CceError, match="within 2 seconds"):
        search("query", 3, "q1")


def test_a_github_api_that_never_answers_costs_a_warning_within_the_budget(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    server = _Silent()
    (tmp_path / "set.jsonl").write_text('{"query":"q","expected":["a.py"]}\n')
    env = {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_FIXTURES": "set.jsonl", "INPUT_GITHUB-TOKEN": "ghs_test",
           "GITHUB_API_URL": f"http://127.0.0.1:{server.port}", "GITHUB_REPOSITORY": "octo/demo",
           "GITHUB_EVENT_NAME": "pull_request"}
    event = tmp_path / "event.json"
    event.write_text('{"pull_request": {"number": 7}}')
    env["GITHUB_EVENT_PATH"] = str(event)
    inputs = action_main.read_inputs(env)
    monkeypatch.setattr(action_main, "POSTING_BUDGET", 2.0)
    body = action_main.comment_marker(inputs.comment_key) + "\nreport\n"
    assert action_main._comment_within_budget(inputs, body, "a" * 40, True) == ""
    assert "Gave up posting the pull request comment after 2 s" in capsys.readouterr().out


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def test_a_git_origin_that_never_answers_is_stopped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    server = _Silent()
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "remote", "add", "origin", f"http://127.0.0.1:{server.port}/repo.git")
    monkeypatch.setattr(action_git, "FETCH_TIMEOUT", 2.0)
    with pytest.raises(CceError, match="did not finish within 2 seconds"):
        action_git._ensure_history(tmp_path, ["a" * 40], lambda: False)
