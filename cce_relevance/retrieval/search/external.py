"""Retrievers that run outside this process, spoken to with the `cce.retriever/v1` protocol.

Most teams' ranking change is their own retriever, so the harness must score one it cannot
import. The protocol (docs/retrievers.md) is one JSON request per query, `{"id", "query", "k"}`,
answered by one JSON response, `{"id", "results": [{"file_path", "start_line", "end_line",
"kind"?, "score"?}]}`. A `command` retriever is started once per run and speaks it as JSON lines
on its stdin and stdout; a `url` retriever receives each request as an HTTP POST.

Answers are checked strictly and any fault stops the run with an error naming the backend and
the query: a lenient reading would score a broken retriever as a bad one, and a team would tune
the wrong thing. Accepted results become `Hit`s over the run's index, whose chunks still supply
the line weights of the token-level metrics.
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

import requests

from cce_relevance import untrusted_json
from cce_relevance.errors import CceError
from cce_relevance.numeric import is_finite_number
from cce_relevance.retrieval._http import connection_reason
from cce_relevance.retrieval.chunking.chunk import Chunk, chunk_id
from cce_relevance.retrieval.hit import Hit, SearchFn
from cce_relevance.retrieval.index.model import Index
from cce_relevance.strings import escape_unprintable, quoted

DEFAULT_TIMEOUT = 30.0  # seconds for a whole answer, however it arrives
MAX_ANSWER_BYTES = 16 * 1024 * 1024  # far above any k results; a bigger body is refused unread
STDERR_TAIL_LINES = 20
EXTERNAL_CHUNK_TYPE = "external"
STOP_GRACE_SECONDS = 5.0  # how long a stopping process may take before it is killed
_PREVIEW_CHARS = 120


@dataclass(frozen=True)
class CommandRetriever:
    """A retriever process: `command` run in `cwd` (the config file's directory)."""

    command: tuple[str, ...]
    cwd: str
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class HttpRetriever:
    """A retriever service that answers each request POSTed to `url`."""

    url: str
    timeout: float = DEFAULT_TIMEOUT


def encode_request(query_id: str, query: str, k: int) -> bytes:
    """One request as compact ASCII JSON (non-ASCII escaped), so no reader depends on a locale."""
    return json.dumps(
        {"id": query_id, "query": query, "k": k}, ensure_ascii=True, separators=(",", ":")
    ).encode("ascii")


class AnswerFault(Exception):
    """What is wrong with one answer; callers add the backend and the query."""


class MalformedAnswer(AnswerFault):
    """An answer that is not JSON at all."""


def _clip(text: str) -> str:
    """Untrusted text for an error line: cut short and unable to drive a terminal."""
    return escape_unprintable(text[:_PREVIEW_CHARS] + "…" if len(text) > _PREVIEW_CHARS else text)


def _show(value: Any) -> str:
    try:
        return _clip(json.dumps(value, ensure_ascii=False, allow_nan=True))
    except (TypeError, ValueError, RecursionError):  # a Python object an in-process retriever returned
        return _clip(f"{type(value).__name__} {value!r}")


def _preview(body: bytes) -> str:
    return _clip(body.decode("utf-8", "replace")) if body else "(empty)"


class AnswerReader:
    """Turns answers into hits over one index, checking every rule of the protocol.

    `read` returns the hits or raises `AnswerFault` (`MalformedAnswer` when the body is not JSON);
    nothing else, whatever the bytes.
    """

    def __init__(self, index: Index) -> None:
        self.files = set(index.chunks_by_file)
        self.spans: dict[tuple[str, int, int], Chunk] = {}
        for c in index.chunks:
            self.spans.setdefault((c.file_path, c.start_line, c.end_line), c)

    def read(self, body: bytes, query_id: str, k: int) -> list[Hit]:
        try:
            data = untrusted_json.loads(body)
        except ValueError as exc:
            raise MalformedAnswer(f"malformed response ({exc}): {_preview(body)}") from None
        return self.answer_hits(data, query_id, k)

    def answer_hits(self, data: Any, query_id: str, k: int) -> list[Hit]:
        """The hits of one answer already read (a JSON value, or what an in-process retriever
        returned wrapped as one), or `AnswerFault`."""
        if not isinstance(data, dict):
            raise AnswerFault(f'expected a JSON object with "id" and "results", got {_show(data)}')
        if "id" not in data:
            raise AnswerFault('the response has no "id"')
        if data["id"] != query_id:
            raise AnswerFault(
                f"the response is for query {_show(data['id'])}, expected {quoted(query_id)}: "
                "answer every request, in order"
            )
        results = data.get("results")
        if not isinstance(results, list):
            raise AnswerFault(f'"results": expected an array, got {_show(results)}')
        if len(results) > k:
            raise AnswerFault(f"{len(results)} results for k = {k}: return at most k")
        hits: list[Hit] = []
        seen: dict[tuple[str, int, int], int] = {}
        for rank, result in enumerate(results, 1):
            hit = self.result_hit(rank, result)
            span = (hit.file_path, hit.start_line, hit.end_line)
            if span in seen:
                raise AnswerFault(
                    f"result {rank} repeats result {seen[span]} "
                    f"({quoted(hit.file_path)} lines {hit.start_line}-{hit.end_line})"
                )
            seen[span] = rank
            hits.append(hit)
        return hits

    def result_hit(self, rank: int, result: Any) -> Hit:
        """One result object as a hit at `rank`, or `AnswerFault` naming what is wrong with it."""
        if not isinstance(result, dict):
            raise AnswerFault(f"result {rank}: expected an object, got {_show(result)}")
        path = _field(result, "file_path", rank, lambda v: isinstance(v, str), "a string")
        start = _field(result, "start_line", rank, _is_line, "an integer >= 1")
        end = _field(result, "end_line", rank, _is_line, "an integer >= 1")
        if end < start:
            raise AnswerFault(f"result {rank}: end_line {end} is before start_line {start}")
        kind = _optional(result, "kind", rank, lambda v: isinstance(v, str), "a string")
        score = _optional(result, "score", rank, is_finite_number, "a finite number")
        if path not in self.files:
            raise AnswerFault(
                f"result {rank}: {quoted(path)} is not a file of the corpus (paths are relative to "
                "the corpus root with '/' separators, as `cce-relevance chunks DIR` lists them)"
            )
        chunk = self.spans.get((path, start, end))
        if chunk is not None:
            cid, chunk_type, default_kind = chunk.chunk_id, chunk.chunk_type, chunk.kind
        else:
            cid, chunk_type, default_kind = chunk_id(path, start, end, b""), EXTERNAL_CHUNK_TYPE, ""
        return Hit(
            cid,
            path,
            start,
            end,
            chunk_type,
            default_kind if kind is None else kind,
            rank,
            0.0 if score is None else float(score),
        )


def _is_line(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _field(result: dict[str, Any], key: str, rank: int, ok: Any, expected: str) -> Any:
    if key not in result:
        raise AnswerFault(f"result {rank}: {quoted(key)} is missing")
    value = _optional(result, key, rank, ok, expected)
    if value is None:
        raise AnswerFault(f"result {rank}: {quoted(key)}: expected {expected}, got null")
    return value


def _optional(result: dict[str, Any], key: str, rank: int, ok: Any, expected: str) -> Any:
    """The value of an optional field; absent and null both mean "not given"."""
    value = result.get(key)
    if value is not None and not ok(value):
        raise AnswerFault(f"result {rank}: {quoted(key)}: expected {expected}, got {_show(value)}")
    return value


def failure(name: str, query_id: str, text: str) -> CceError:
    return CceError(f"backend {quoted(name)}: query {quoted(query_id)}: {text}")


class _Process:
    """A started retriever process; threads drain its stdout (into a queue) and stderr (its tail).

    Draining stderr continuously matters: a child that logs more than a pipe buffer holds would
    otherwise block forever on a write nobody reads.
    """

    def __init__(self, name: str, spec: CommandRetriever) -> None:
        try:
            self.proc = subprocess.Popen(
                list(spec.command),
                cwd=spec.cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise CceError(
                f"backend {quoted(name)}: could not start {_show(list(spec.command))} in "
                f"{quoted(spec.cwd)}: {exc.strerror or exc}"
            ) from None
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self.threads = [
            threading.Thread(target=self._drain_stdout, args=(self.proc.stdout,), daemon=True),
            threading.Thread(target=self._drain_stderr, args=(self.proc.stderr,), daemon=True),
        ]
        for t in self.threads:
            t.start()

    def _drain_stdout(self, pipe: IO[bytes]) -> None:
        for line in iter(pipe.readline, b""):
            self.lines.put(line)
        self.lines.put(None)

    def _drain_stderr(self, pipe: IO[bytes]) -> None:
        for line in iter(pipe.readline, b""):
            self.tail.append(escape_unprintable(line.decode("utf-8", "replace").rstrip("\r\n")))

    def ask(self, request: bytes, timeout: float) -> bytes | None:
        """The next line of output, None when the process closed its stdout; raises queue.Empty."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(request + b"\n")
            self.proc.stdin.flush()
        except OSError:
            pass  # the process is gone; its stdout reaches EOF and the caller reports the exit
        return self.lines.get(timeout=timeout)

    def stop(self, graceful: bool) -> None:
        """End the process: EOF on stdin and a grace period when `graceful`, then terminate, then kill."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        if graceful:
            try:
                self.proc.wait(STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for t in self.threads:
            t.join(STOP_GRACE_SECONDS)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None and not any(t.is_alive() for t in self.threads):
                pipe.close()

    def exit_text(self) -> str:
        """How the process ended, after its stdout closed (stopping it if it is still running)."""
        try:
            code = self.proc.wait(STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            self.stop(graceful=False)
            return "closed its stdout before answering (it was stopped)"
        if code < 0:
            return f"was killed by {signal.Signals(-code).name} before answering"
        return f"exited with status {code} before answering"

    def with_tail(self, text: str) -> str:
        self.threads[1].join(STOP_GRACE_SECONDS)
        if not self.tail:
            return f"{text} (its stderr was empty)"
        return f"{text}; the last lines of its stderr:\n" + "\n".join(f"  {line}" for line in self.tail)


@contextmanager
def _open_command(name: str, spec: CommandRetriever, answers: AnswerReader) -> Iterator[SearchFn]:
    process = _Process(name, spec)
    try:

        def search(query: str, k: int, query_id: str = "") -> list[Hit]:
            try:
                line = process.ask(encode_request(query_id, query, k), spec.timeout)
            except queue.Empty:
                process.stop(graceful=False)
                raise failure(
                    name,
                    query_id,
                    process.with_tail(
                        f"no response within {spec.timeout:g} seconds (the process was stopped)"
                    ),
                ) from None
            if line is None:
                raise failure(name, query_id, process.with_tail(f"the process {process.exit_text()}"))
            try:
                return answers.read(line.rstrip(b"\r\n"), query_id, k)
            except MalformedAnswer as fault:
                raise failure(
                    name, query_id, f"{fault} (stdout carries responses only; log to stderr)"
                ) from None
            except AnswerFault as fault:
                raise failure(name, query_id, str(fault)) from None

        yield search
    finally:
        process.stop(graceful=True)


def _post_within(session: requests.Session, url: str, body: bytes, timeout: float) -> tuple[int, str, bytes]:
    """POST `body` and read the whole answer within `timeout` seconds in all.

    `requests` applies its timeout to each read, so a server that drips one byte at a time could
    hold a run forever; the request runs in a daemon thread that is abandoned at the deadline
    (raising `requests.Timeout`). The body is read up to `MAX_ANSWER_BYTES`.
    """
    done: list[tuple[int, str, bytes] | BaseException] = []

    def post() -> None:
        try:
            with session.post(
                url, data=body, headers={"Content-Type": "application/json"}, timeout=timeout, stream=True
            ) as response:
                try:
                    content = response.raw.read(MAX_ANSWER_BYTES + 1, decode_content=True)
                except Exception as exc:  # noqa: BLE001 - urllib3's read errors are not requests'
                    raise requests.ConnectionError(str(exc)) from None
                done.append((response.status_code, response.reason or "", content))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            done.append(exc)

    worker = threading.Thread(target=post, name="cce-relevance-url-retriever", daemon=True)
    worker.start()
    worker.join(timeout)
    if not done:
        raise requests.Timeout(f"no complete answer within {timeout:g} seconds")
    if isinstance(done[0], BaseException):
        raise done[0]
    return done[0]


@contextmanager
def _open_http(name: str, spec: HttpRetriever, answers: AnswerReader) -> Iterator[SearchFn]:
    url = escape_unprintable(spec.url)  # as messages show it
    with requests.Session() as session:

        def search(query: str, k: int, query_id: str = "") -> list[Hit]:
            try:
                status, reason, content = _post_within(
                    session, spec.url, encode_request(query_id, query, k), spec.timeout
                )
            except requests.Timeout:
                raise failure(
                    name, query_id, f"no response from {url} within {spec.timeout:g} seconds"
                ) from None
            except (requests.RequestException, OSError) as exc:
                reason_text = (
                    connection_reason(exc) if isinstance(exc, requests.RequestException) else str(exc)
                )
                raise failure(name, query_id, f"could not reach {url}: {reason_text}") from None
            if not 200 <= status < 300:
                raise failure(
                    name,
                    query_id,
                    f"{url} answered HTTP {status} {escape_unprintable(reason)}: {_preview(content)}",
                )
            if len(content) > MAX_ANSWER_BYTES:
                raise failure(name, query_id, f"the response is larger than {MAX_ANSWER_BYTES} bytes")
            try:
                return answers.read(content, query_id, k)
            except AnswerFault as fault:
                raise failure(name, query_id, str(fault)) from None

        yield search


@contextmanager
def open_external(name: str, spec: CommandRetriever | HttpRetriever, index: Index) -> Iterator[SearchFn]:
    """The search function of an external retriever over `index`; its process or session lives
    for the `with` block and is released however the block ends."""
    answers = AnswerReader(index)
    if isinstance(spec, CommandRetriever):
        with _open_command(name, spec, answers) as search:
            yield search
    else:
        with _open_http(name, spec, answers) as search:
            yield search
