"""A stand-in for Ollama's `/api/embed` on 127.0.0.1, so the client is tested over real HTTP.

By default it answers like Ollama: `{"model": M, "embeddings": [[...], ...]}`, one vector per
input, here the hash embedding of each input text (deterministic, and exactly the vectors the
hash embedder would give, so an Ollama-built store can be checked against a hash run). Every
request body is recorded. `reply` scripts anything else: a function from the decoded request to
a `Reply` (status and raw body bytes, so malformed JSON is possible) or `DROP` (close the
connection without answering). `hold` keeps requests waiting until the server stops, for
timeouts.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from cce_relevance.retrieval.embedding.embed import hash_embed


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes

    @classmethod
    def json(cls, payload: Any, status: int = 200) -> Reply:
        return cls(status, json.dumps(payload).encode())


DROP = object()


def hash_vectors(request: dict) -> Reply:
    return Reply.json(
        {"model": request["model"], "embeddings": [hash_embed(t).tolist() for t in request["input"]]}
    )


class FakeOllama:
    """Use as a context manager; `url` is what `CCE_OLLAMA_URL` would be."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.reply: Callable[[dict], Reply | object] = hash_vectors
        self.hold = False
        self._release = threading.Event()
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server naming
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with fake._lock:
                    fake.paths.append(self.path)
                if self.path != "/api/embed":
                    self._send(Reply.json({"error": "404 page not found"}, 404))
                    return
                request = json.loads(body)
                with fake._lock:
                    fake.requests.append(request)
                if fake.hold:
                    fake._release.wait()
                    return
                answer = fake.reply(request)
                if answer is DROP:
                    self.close_connection = True
                    return
                self._send(answer)

            def _send(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *_args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def inputs(self) -> list[list[str]]:
        """The `input` list of every `/api/embed` request, in arrival order."""
        return [r["input"] for r in self.requests]

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def closed_port_url() -> str:
    """A loopback URL nothing listens on (the port was just released), for 'unreachable'."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
