"""The Ollama embedder (§ollama): chunk and query vectors from a local Ollama server.

One endpoint, `POST {base}/api/embed` with `{"model": M, "input": [texts]}`, answers
`{"embeddings": [[numbers], ...]}`. The reply is checked the way the reference checks it:
exactly one vector per input, non-numeric entries dropped, an empty vector for a non-empty
input an error. Vectors are used as returned (no normalisation). A store built with Ollama
lives in the model's embedding space, so scoring it with any other query embedder would be
meaningless; callers refuse instead (§store-mode, E16).

The server and model come from `CCE_OLLAMA_URL` and `CCE_OLLAMA_MODEL` (an empty value counts
as unset), read only when an Ollama store or `--embedder ollama` asks for them.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import requests

from cce_relevance.errors import CceError
from cce_relevance.reference import EMBED_BATCH_SIZE
from cce_relevance.reference import OLLAMA_EMBEDDER as OLLAMA_EMBEDDER
from cce_relevance.retrieval._http import connection_reason
from cce_relevance.retrieval.embedding.embed import HASH_DOCUMENTS, HASH_EMBEDDER, DocumentEmbedder

URL_VARIABLE = "CCE_OLLAMA_URL"
MODEL_VARIABLE = "CCE_OLLAMA_MODEL"
DEFAULT_URL = "http://localhost:11434"
DEFAULT_MODEL = "nomic-embed-text"
MAX_INPUT_CHARS = 2000
HEALTH_PROBE = "ping"
# (connect, read) seconds: a local server connects at once, a batch of 64 chunks can take a while.
DEFAULT_TIMEOUT = (5.0, 120.0)
_ERROR_SNIPPET_CHARS = 200


class OllamaError(Exception):
    """The server could not be reached, or its reply is not one usable vector per input."""


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _transport_reason(exc: requests.RequestException) -> str:
    return "timed out" if isinstance(exc, requests.Timeout) else connection_reason(exc)


def _server_message(response: requests.Response) -> str:
    """Ollama's `{"error": "..."}` text when it sent one, quoted so control characters stay inert."""
    try:
        body = json.loads(response.content)
    except (ValueError, RecursionError):
        return ""
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        return ": " + json.dumps(body["error"][:_ERROR_SNIPPET_CHARS])
    return ""


def _numbers(entries: list[Any]) -> np.ndarray:
    """The numeric entries of one reply vector, in order; anything else is silently dropped."""
    values = []
    for x in entries:
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            continue
        try:
            value = float(x)
        except OverflowError:
            value = math.inf
        if not math.isfinite(value):
            raise OllamaError("Ollama returned a number out of range")
        values.append(value)
    return np.asarray(values, dtype=np.float64)


def parse_embeddings(payload: bytes, texts: Sequence[str]) -> list[np.ndarray]:
    """The vectors of an `/api/embed` reply for `texts`, or `OllamaError` naming what is wrong."""
    try:
        body = json.loads(payload, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise OllamaError(f"Ollama returned invalid JSON: {exc}") from None
    embeddings = body.get("embeddings") if isinstance(body, dict) else None
    if not isinstance(embeddings, list):
        raise OllamaError('Ollama reply has no "embeddings" array')
    if len(embeddings) != len(texts):
        raise OllamaError(f"Ollama returned {len(embeddings)} embeddings for {len(texts)} inputs")
    vectors = []
    for position, (entries, text) in enumerate(zip(embeddings, texts, strict=True)):
        if not isinstance(entries, list):
            raise OllamaError(f"Ollama embedding {position} is not an array")
        vector = _numbers(entries)
        if vector.size == 0 and text:
            raise OllamaError(f"Ollama returned an empty embedding for input {position}")
        vectors.append(vector)
    return vectors


class OllamaClient:
    """A client for one server and model; one HTTP session is kept for the whole run."""

    def __init__(
        self,
        base_url: str = DEFAULT_URL,
        model: str = DEFAULT_MODEL,
        timeout: float | tuple[float, float] = DEFAULT_TIMEOUT,
    ) -> None:
        self.base_url = base_url
        self.model = model
        self.timeout = timeout
        self._session = requests.Session()

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> OllamaClient:
        return cls(environ.get(URL_VARIABLE) or DEFAULT_URL, environ.get(MODEL_VARIABLE) or DEFAULT_MODEL)

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/api/embed"

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One request: a vector per text, each text cut to its first 2000 characters."""
        cut = [t[:MAX_INPUT_CHARS] for t in texts]
        try:
            response = self._session.post(
                self.endpoint, json={"model": self.model, "input": cut}, timeout=self.timeout
            )
        except requests.RequestException as exc:
            raise OllamaError(
                f"could not reach Ollama at {self.endpoint}: {_transport_reason(exc)}"
            ) from None
        if not response.ok:
            raise OllamaError(
                f"Ollama at {self.endpoint} answered HTTP {response.status_code}{_server_message(response)}"
            )
        return parse_embeddings(response.content, cut)

    def embed_batches(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Index-time embedding in batches of 64; the first failure aborts (nothing half-built)."""
        vectors: list[np.ndarray] = []
        for start in range(0, len(texts), EMBED_BATCH_SIZE):
            vectors.extend(self.embed(texts[start : start + EMBED_BATCH_SIZE]))
        return vectors

    def check_health(self) -> None:
        """Embed `["ping"]`; `OllamaError` unless that gives exactly one non-empty vector."""
        self.embed([HEALTH_PROBE])

    def embed_query(self, text: str) -> np.ndarray:
        """A query vector; the empty text needs no request and gets the empty vector."""
        if not text:
            return np.zeros(0)
        return self.embed([text])[0]

    def documents(self) -> DocumentEmbedder:
        """This client as an index build's chunk embedder, recorded as `ollama` in the store."""
        return DocumentEmbedder(OLLAMA_EMBEDDER, self.embed_batches)

    def forgiving_query_embedder(self, warn: Callable[[str], None]) -> Callable[[str], np.ndarray]:
        """Query embedding that never aborts a run (§embedder-name).

        A failure is reported through `warn` and that query proceeds with the empty vector, which
        the ranking code reads as "no vector recall". Successful vectors are kept per query text,
        so backends scoring the same query share one request.
        """
        known: dict[str, np.ndarray] = {}

        def embed(query: str) -> np.ndarray:
            if query not in known:
                try:
                    known[query] = self.embed_query(query)
                except OllamaError as exc:
                    warn(f"{exc}; vector recall disabled for this query")
                    return np.zeros(0)
            return known[query]

        return embed


def document_embedder(name: str) -> tuple[DocumentEmbedder, str | None]:
    """The index-time embedder called `name` (hash or ollama), and the model it records (Ollama
    only). Ollama is checked before anything is indexed."""
    if name == HASH_EMBEDDER:
        return HASH_DOCUMENTS, None
    if name != OLLAMA_EMBEDDER:
        raise CceError(f"unknown embedder {name!r} (expected hash or ollama)")
    client = OllamaClient.from_env()
    try:
        client.check_health()
    except OllamaError as exc:
        raise CceError(
            f"Ollama is not ready: {exc}",
            hint="start Ollama (or set CCE_OLLAMA_URL / CCE_OLLAMA_MODEL), or index with the hash embedder",
        ) from None
    return client.documents(), client.model
