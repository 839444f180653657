"""A stand-in for an OpenAI-compatible `POST /v1/embeddings` on 127.0.0.1, over real HTTP.

By default it answers as OpenAI does: `{"object": "list", "data": [{"object": "embedding",
"index": i, "embedding": [...]}], "model": M, "usage": {"prompt_tokens": n, "total_tokens": n}}`,
with each input's hash embedding (cut to `dimensions` when the request asks for them) and one token
per whitespace-separated word. Every request is recorded with its headers. `script` holds replies
to send first, one per request (a `Reply`, or `DROP` to close the connection unanswered); then the
default answers again.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from cce_relevance.retrieval.embedding.embed import hash_embed


@dataclass(frozen=True)
class Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
        return cls(status, json.dumps(payload).encode(), headers or {})


DROP = object()


def embeddings(request: dict) -> dict:
    """OpenAI's answer to `request`: the hash embedding of each input, in input order."""
    width = request.get("dimensions")
    data = []
    for i, text in enumerate(request["input"]):
        vector = hash_embed(text).tolist()
        data.append({"object": "embedding", "index": i, "embedding": vector[:width] if width else vector})
    tokens = sum(len(t.split()) for t in request["input"])
    return {
        "object": "list",
        "data": data,
        "model": request["model"],
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }


class FakeOpenAI:
    """Use as a context manager; `base_url` is what a config's `base_url` would be."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.script: list[Reply | object] = []
        self.answer: Callable[[dict], Reply] = lambda request: Reply.json(embeddings(request))
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server naming
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.path != "/v1/embeddings":
                    self._send(Reply.json({"error": {"message": "not found"}}, 404))
                    return
                request = json.loads(body)
                with fake._lock:
                    fake.requests.append(request)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    scripted = fake.script.pop(0) if fake.script else None
                if scripted is DROP:
                    self.close_connection = True
                    return
                self._send(scripted if isinstance(scripted, Reply) else fake.answer(request))

            def _send(self, reply: Reply) -> None:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply.body)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
