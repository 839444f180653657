"""Any OpenAI-compatible embeddings endpoint: `POST {base_url}/embeddings`.

The request is `{"model": M, "input": [texts], "encoding_format": "float"}` (with `"dimensions": D`
when the project sets a width), the answer `{"data": [{"index": i, "embedding": [numbers]}, ...],
"usage": {"prompt_tokens": n, ...}}` — OpenAI's shape, which vLLM, llama.cpp's server, LiteLLM,
Ollama's `/v1`, LocalAI and the hosted providers speak too. Texts go in batches of `batch_size`.

A 429 or 5xx answer, or a lost connection, is tried again after a wait: the server's
`Retry-After` (seconds or an HTTP date; `retry-after-ms` first when it sends that), else an
exponential backoff from half a second, at most `max_retries` times; every request and wait of
the run fits inside one `deadline`, so a throttled endpoint fails the run in bounded time instead
of holding a CI job. Any other answer that is not one finite vector per input, all of one width
(the configured `dimensions` when set), is an error naming the embedder, the batch and what is
wrong; nothing is half-used. The key is read from the environment variable the project names,
never from its file, and never printed.
"""

from __future__ import annotations

import email.utils
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import requests

from cce_relevance import untrusted_json
from cce_relevance.errors import CceError
from cce_relevance.retrieval._http import connection_reason
from cce_relevance.retrieval.embedders.embedder import Embedder, unit_rows
from cce_relevance.retrieval.embedders.spec import EmbedderSpec
from cce_relevance.strings import escape_unprintable, quoted

RETRIED_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})
FIRST_BACKOFF = 0.5  # seconds; doubled after each further attempt
MAX_BACKOFF = 30.0
MAX_ANSWER_BYTES = 256 * 1024 * 1024  # 2,048 inputs of 3,072 numbers as JSON fit well inside
_MESSAGE_CHARS = 300


class _Retry(Exception):
    """An answer worth another attempt, with the wait the server asked for (None: back off)."""

    def __init__(self, reason: str, wait: float | None) -> None:
        super().__init__(reason)
        self.reason, self.wait = reason, wait


def retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """The wait in seconds a 429/503 answer asks for: `retry-after-ms`, else `Retry-After` as
    seconds or as an HTTP date (relative to `now`, a Unix time); None when it asks for none."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            value = float(millis) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value >= 0:
            return value
    text = headers.get("retry-after")
    if text is None:
        return None
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        return max(0.0, when.timestamp() - now)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _server_message(content: bytes) -> str:
    """The `error.message` (or `error` string, or `detail`) an endpoint sent, quoted and short."""
    try:
        body = json.loads(content)
    except (ValueError, RecursionError):
        text = content.decode("utf-8", "replace").strip()
        return f": {quoted(escape_unprintable(text[:_MESSAGE_CHARS]))}" if text else ""
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str) and isinstance(body, dict):
        message = body.get("detail") if isinstance(body.get("detail"), str) else None
    return f": {quoted(escape_unprintable(message[:_MESSAGE_CHARS]))}" if isinstance(message, str) else ""


class OpenAIEmbedder(Embedder):
    """One endpoint and model; a session is kept for the run, the deadline counts from the first
    request."""

    def __init__(
        self,
        spec: EmbedderSpec,
        environ: Mapping[str, str] = os.environ,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(spec)
        self._key = self._api_key(environ)
        self._sleep, self._clock = sleep, clock
        self._session = requests.Session()
        self._started: float | None = None
        self._width: int | None = spec.dimensions
        self._answered = False  # the endpoint has answered once: a lost connection is then retried

    @property
    def identity(self) -> str:
        width = "" if self.spec.dimensions is None else f" {self.spec.dimensions}"
        return f"openai {self.spec.base_url.rstrip('/')} {self.spec.model}{width} unit"

    @property
    def endpoint(self) -> str:
        return self.spec.base_url.rstrip("/") + "/embeddings"

    @property
    def _name(self) -> str:
        return f"embedder {quoted(self.spec.name)}"

    def _api_key(self, environ: Mapping[str, str]) -> str | None:
        variable = self.spec.api_key_env
        if variable is None:
            return None
        key = environ.get(variable, "")
        if not key:
            raise CceError(
                f"{self._name}: the environment variable {variable} holding its API key is not set",
                hint=f"export {variable} in the environment of the run (a server that needs no key: "
                f"leave api_key_env out of an [embedders.NAME] table of kind openai)",
            )
        return key

    def close(self) -> None:
        self._session.close()

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        size = self.spec.batch_size
        for first in range(0, len(texts), size):
            out.extend(self._batch(texts[first : first + size], first))
        return out

    def _remaining(self) -> float:
        now = self._clock()
        if self._started is None:
            self._started = now
        return self.spec.deadline - (now - self._started)

    def _batch(self, texts: Sequence[str], first: int) -> list[np.ndarray]:
        """The vectors of one batch (texts `first`, `first + 1`, ... of the call), retried as the
        module docstring says. Empty texts, which endpoints refuse, are zero vectors unsent."""
        sent = [i for i, t in enumerate(texts) if t]
        vectors: list[np.ndarray | None] = [None] * len(texts)
        if sent:
            for i, vector in zip(sent, self._request([texts[i] for i in sent], first), strict=True):
                vectors[i] = vector
        width = self._width or 0
        return [np.zeros(width, dtype=np.float32) if v is None else v for v in vectors]

    def _request(self, texts: list[str], first: int) -> list[np.ndarray]:
        where = f"{self._name}: texts {first + 1}-{first + len(texts)}"
        body: dict[str, Any] = {"model": self.spec.model, "input": texts, "encoding_format": "float"}
        if self.spec.dimensions is not None:
            body["dimensions"] = self.spec.dimensions
        headers = {"Content-Type": "application/json"}
        if self._key is not None:
            headers["Authorization"] = f"Bearer {self._key}"
        data = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        attempt = 0
        while True:
            remaining = self._remaining()
            if remaining <= 0:
                raise CceError(f"{where}: the run's embedding deadline of {self.spec.deadline:g} s passed")
            try:
                with self.timed(len(texts)):
                    return self._answer(where, texts, data, headers, min(self.spec.timeout, remaining))
            except _Retry as retry:
                attempt += 1
                wait = (
                    retry.wait
                    if retry.wait is not None
                    else min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** (attempt - 1))
                )
                if attempt > self.spec.max_retries:
                    raise CceError(
                        f"{where}: {retry.reason}; gave up after {attempt} attempts",
                        hint="raise max_retries (in an [embedders.NAME] table), or try later",
                    ) from None
                if wait >= self._remaining():
                    raise CceError(
                        f"{where}: {retry.reason}; waiting {wait:g} s more would pass the run's "
                        f"embedding deadline of {self.spec.deadline:g} s",
                        hint="raise deadline (in an [embedders.NAME] table), or try later",
                    ) from None
                self._sleep(wait)

    def _answer(
        self, where: str, texts: list[str], data: bytes, headers: dict[str, str], timeout: float
    ) -> list[np.ndarray]:
        try:
            response = self._session.post(self.endpoint, data=data, headers=headers, timeout=timeout)
        except requests.Timeout:
            raise _Retry(f"no answer from {self.endpoint} within {timeout:g} s", None) from None
        except requests.RequestException as exc:
            reason = f"could not reach {self.endpoint}: {connection_reason(exc)}"
            if not self._answered:
                raise CceError(f"{where}: {reason}") from None
            raise _Retry(reason, None) from None
        self._answered = True
        content = response.content
        status = response.status_code
        if status in RETRIED_STATUSES:
            raise _Retry(
                f"{self.endpoint} answered HTTP {status}{_server_message(content)}",
                retry_after(response.headers, time.time()),
            )
        if not 200 <= status < 300:
            hint = None
            if status in (401, 403):
                hint = (
                    f"check the key in {self.spec.api_key_env}"
                    if self.spec.api_key_env
                    else "the endpoint wants a key: set api_key_env"
                )
            raise CceError(
                f"{where}: {self.endpoint} answered HTTP {status}{_server_message(content)}", hint=hint
            )
        if len(content) > MAX_ANSWER_BYTES:
            raise CceError(f"{where}: the answer is larger than {MAX_ANSWER_BYTES} bytes")
        vectors, tokens = self._parse(where, content, len(texts))
        if tokens is not None:
            self.usage.add_tokens(tokens)
        return vectors

    def _parse(self, where: str, content: bytes, count: int) -> tuple[list[np.ndarray], int | None]:
        body = untrusted_json.parse(content, where, "the answer is not JSON")
        items = body.get("data") if isinstance(body, dict) else None
        if not isinstance(items, list):
            raise CceError(f'{where}: the answer has no "data" array')
        found: dict[int, list[Any]] = {}
        for position, item in enumerate(items):
            index = item.get("index", position) if isinstance(item, dict) else None
            embedding = item.get("embedding") if isinstance(item, dict) else None
            if not (isinstance(index, int) and not isinstance(index, bool) and 0 <= index < count):
                raise CceError(f"{where}: data[{position}] has no index from 0 to {count - 1}")
            if index in found:
                raise CceError(f"{where}: two embeddings for input {index}")
            if not isinstance(embedding, list):
                raise CceError(
                    f'{where}: data[{position}] has no "embedding" array of numbers '
                    '(the request asks for encoding_format "float")'
                )
            found[index] = embedding
        if len(found) != count:
            missing = [i for i in range(count) if i not in found]
            raise CceError(
                f"{where}: {len(found)} embeddings for {count} inputs "
                f"(none for input {', '.join(str(i + 1) for i in missing[:5])}"
                f"{', …' if len(missing) > 5 else ''} of the batch)"
            )
        rows = [self._numbers(where, i, found[i]) for i in range(count)]
        width = rows[0].shape[0]
        expected = self._width
        want = expected if expected is not None else width
        for i, row in enumerate(rows):
            if row.shape[0] != want:
                what = "the configured dimensions" if self.spec.dimensions is not None else "as the others"
                raise CceError(
                    f"{where}: the embedding of input {i + 1} of the batch has {row.shape[0]} numbers; "
                    f"expected {want} ({what})"
                )
        self._width = want
        usage = body.get("usage")
        tokens = usage.get("prompt_tokens", usage.get("total_tokens")) if isinstance(usage, dict) else None
        valid_tokens = isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0
        return list(unit_rows(np.stack(rows))), tokens if valid_tokens else None

    def _numbers(self, where: str, i: int, values: list[Any]) -> np.ndarray:
        if not values:
            raise CceError(f"{where}: the embedding of input {i + 1} of the batch is empty")
        numbers = []
        for value in values:
            try:
                number = (
                    float(value)
                    if isinstance(value, (int, float)) and not isinstance(value, bool)
                    else math.nan
                )
            except (TypeError, ValueError, OverflowError):
                number = math.nan
            if not math.isfinite(number):
                raise CceError(
                    f"{where}: the embedding of input {i + 1} of the batch holds "
                    f"{escape_unprintable(json.dumps(value)[:40])}, not a finite number"
                )
            numbers.append(number)
        return np.asarray(numbers, dtype=np.float64)
