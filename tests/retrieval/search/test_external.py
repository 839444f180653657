"""External retrievers (`cce.retriever/v1`) as real processes and a real HTTP server on 127.0.0.1.

Every way a retriever can misbehave is played by a small script (or server) that does exactly
that, and must end the run with an error naming the backend and the query; every process must be
gone when its backend is closed, however it ended.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.errors import CceError
from cce_relevance.retrieval.chunking.chunk import chunk_id
from cce_relevance.retrieval.hit import Hit
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.search import external
from cce_relevance.retrieval.search.external import (
    AnswerFault,
    AnswerReader,
    CommandRetriever,
    HttpRetriever,
    encode_request,
    open_external,
)
from tests.cli.helpers import cli
from tests.conftest import REPO_ROOT

AUTH = 'def hash_password(pw):\n    return pw + "salt"\n'
NOTES = "# Notes\n\nPasswords are hashed with salt.\n"

# Answers the n-th request with the n-th template (the last one repeats), `$ID` replaced by the
# request's id as JSON. Written as bytes, so a template can carry invalid UTF-8 (`\udcff` → 0xFF).
REPLAY = """\
import json, os, sys
templates = json.load(open(sys.argv[1], encoding="utf-8"))
open(sys.argv[2], "w").write(str(os.getpid()))
for n, line in enumerate(sys.stdin):
    request = json.loads(line)
    text = templates[min(n, len(templates) - 1)].replace("$ID", json.dumps(request["id"]))
    sys.stdout.buffer.write(text.encode("utf-8", "surrogateescape") + b"\\n")
    sys.stdout.flush()
open(sys.argv[2] + ".eof", "w").write("stdin closed")
"""


def small_corpus(corpus: Path) -> Path:
    """`corpus` holding auth.py (AUTH) and notes.md (NOTES), the corpus these tests search."""
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "auth.py").write_text(AUTH)
    (corpus / "notes.md").write_text(NOTES)
    return corpus


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Index:
    return build_index(small_corpus(tmp_path_factory.mktemp("corpus")))


def script(tmp_path: Path, body: str, *args: str, timeout: float = 30.0) -> CommandRetriever:
    path = tmp_path / "retriever.py"
    path.write_text(body, encoding="utf-8")
    return CommandRetriever((sys.executable, str(path), *args), str(tmp_path), timeout)


def replay(tmp_path: Path, *templates: str) -> CommandRetriever:
    (tmp_path / "answers.json").write_text(json.dumps(list(templates)), encoding="utf-8")
    return script(tmp_path, REPLAY, str(tmp_path / "answers.json"), str(tmp_path / "pid"))


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def ask(
    spec: CommandRetriever | HttpRetriever, index: Index, *queries: tuple[str, str, int]
) -> list[list[Hit]]:
    with open_external("mine", spec, index) as search:
        return [search(query, k, query_id) for query_id, query, k in queries]


def error(spec: CommandRetriever | HttpRetriever, index: Index, *queries: tuple[str, str, int]) -> str:
    with pytest.raises(CceError) as caught:
        ask(spec, index, *queries)
    return caught.value.message


def result(**fields: object) -> str:
    return '{"id": $ID, "results": [' + json.dumps(fields) + "]}"


Q1 = ("q1", "where is the password hashed", 3)


def test_requests_are_one_ascii_json_line() -> None:
    assert encode_request("q-ü", 'say "hé"', 5) == b'{"id":"q-\\u00fc","query":"say \\"h\\u00e9\\"","k":5}'


def test_hits_take_the_span_of_the_index_chunk_they_name(tmp_path: Path, index: Index) -> None:
    spec = replay(
        tmp_path,
        '{"id": $ID, "results": ['
        '{"file_path": "auth.py", "start_line": 1, "end_line": 2, "score": 2},'
        '{"file_path": "auth.py", "start_line": 1, "end_line": 1, "kind": null},'
        '{"file_path": "notes.md", "start_line": 1, "end_line": 4, "kind": "heading",'
        ' "extra": [1, 2]}]}',
    )
    [hits] = ask(spec, index, Q1)
    [auth] = [c for c in index.chunks if c.file_path == "auth.py"]
    [notes] = [c for c in index.chunks if c.file_path == "notes.md"]
    assert (notes.start_line, notes.end_line) == (1, 4)
    assert hits == [
        Hit(auth.chunk_id, "auth.py", 1, 2, "function", "function_definition", 1, 2.0),
        Hit(chunk_id("auth.py", 1, 1, b""), "auth.py", 1, 1, "external", "", 2, 0.0),
        Hit(notes.chunk_id, "notes.md", 1, 4, "module", "heading", 3, 0.0),
    ]


def test_the_process_serves_the_whole_run_then_sees_eof_and_is_gone(tmp_path: Path, index: Index) -> None:
    spec = replay(
        tmp_path, result(file_path="auth.py", start_line=1, end_line=2), '{"id": $ID, "results": []}'
    )
    first, second, third = ask(spec, index, Q1, ("q2", "salt", 1), ("q3", "x", 2))
    assert [len(first), len(second), len(third)] == [1, 0, 0]
    assert (tmp_path / "pid.eof").read_text() == "stdin closed"
    assert gone(int((tmp_path / "pid").read_text()))


def test_the_process_runs_in_the_config_directory_with_our_environment(
    tmp_path: Path, index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CCE_TEST_KIND", "from-the-environment")
    spec = script(
        tmp_path,
        """\
import json, os, sys
for line in sys.stdin:
    request = json.loads(line)
    kind = os.environ["CCE_TEST_KIND"] + ":" + os.path.basename(os.getcwd())
    print(json.dumps({"id": request["id"], "results": [
        {"file_path": "auth.py", "start_line": 1, "end_line": 2, "kind": kind}]}), flush=True)
""",
    )
    [[hit]] = ask(spec, index, Q1)
    assert hit.kind == f"from-the-environment:{tmp_path.name}"


PREFIX = 'backend "mine": query "q1": '
NOT_JSON_HINT = " (stdout carries responses only; log to stderr)"


BAD_ANSWERS = [
    (
        "searching...",
        "malformed response (invalid JSON: Expecting value: line 1 column 1 (char 0)): searching..."
        + NOT_JSON_HINT,
    ),
    (
        "",
        "malformed response (invalid JSON: Expecting value: line 1 column 1 (char 0)): (empty)"
        + NOT_JSON_HINT,
    ),
    (
        '{"id": $ID, "results": [{"file_path": "auth.py", "start_line": 1, "end_line": 2, "score": NaN}]}',
        "malformed response (NaN is not a JSON number): "
        '{"id": "q1", "results": [{"file_path": "auth.py", "start_line": 1, "end_line": 2, '
        '"score": NaN}]}' + NOT_JSON_HINT,
    ),
    (
        '{"id": $ID, "results": [], "note": "\udcff"}',
        "malformed response (not UTF-8 text: byte 0xff at line 1): "
        '{"id": "q1", "results": [], "note": "\ufffd"}' + NOT_JSON_HINT,
    ),
    ("[1]", 'expected a JSON object with "id" and "results", got [1]'),
    ('{"results": []}', 'the response has no "id"'),
    (
        '{"id": "q0", "results": []}',
        'the response is for query "q0", expected "q1": answer every request, in order',
    ),
    (
        '{"id": 1, "results": []}',
        'the response is for query 1, expected "q1": answer every request, in order',
    ),
    ('{"id": $ID}', '"results": expected an array, got null'),
    ('{"id": $ID, "results": {}}', '"results": expected an array, got {}'),
    ('{"id": $ID, "results": [3]}', "result 1: expected an object, got 3"),
    (result(start_line=1, end_line=2), 'result 1: "file_path" is missing'),
    (result(file_path=3, start_line=1, end_line=2), 'result 1: "file_path": expected a string, got 3'),
    (result(file_path="auth.py", end_line=2), 'result 1: "start_line" is missing'),
    (
        result(file_path="auth.py", start_line=0, end_line=2),
        'result 1: "start_line": expected an integer >= 1, got 0',
    ),
    (
        result(file_path="auth.py", start_line="1", end_line=2),
        'result 1: "start_line": expected an integer >= 1, got "1"',
    ),
    (
        result(file_path="auth.py", start_line=1.0, end_line=2),
        'result 1: "start_line": expected an integer >= 1, got 1.0',
    ),
    (
        result(file_path="auth.py", start_line=True, end_line=2),
        'result 1: "start_line": expected an integer >= 1, got true',
    ),
    (
        result(file_path="auth.py", start_line=1, end_line=None),
        'result 1: "end_line": expected an integer >= 1, got null',
    ),
    (
        result(file_path="auth.py", start_line=2, end_line=1),
        "result 1: end_line 1 is before start_line 2",
    ),
    (
        result(file_path="auth.py", start_line=1, end_line=2, kind=3),
        'result 1: "kind": expected a string, got 3',
    ),
    (
        result(file_path="auth.py", start_line=1, end_line=2, score="high"),
        'result 1: "score": expected a finite number, got "high"',
    ),
    (
        result(file_path="auth.py", start_line=1, end_line=2, score=False),
        'result 1: "score": expected a finite number, got false',
    ),
    (
        result(file_path="missing.py", start_line=1, end_line=2),
        'result 1: "missing.py" is not a file of the corpus (paths are relative to the corpus root with '
        "'/' separators, as `cce-relevance chunks DIR` lists them)",
    ),
    (
        result(file_path="./auth.py", start_line=1, end_line=2),
        'result 1: "./auth.py" is not a file of the corpus (paths are relative to the corpus root with '
        "'/' separators, as `cce-relevance chunks DIR` lists them)",
    ),
    (
        '{"id": $ID, "results": ['
        + ", ".join(['{"file_path": "auth.py", "start_line": 1, "end_line": 2}'] * 2)
        + "]}",
        'result 2 repeats result 1 ("auth.py" lines 1-2)',
    ),
    (
        '{"id": $ID, "results": ['
        + ", ".join(f'{{"file_path": "auth.py", "start_line": {n}, "end_line": {n}}}' for n in (1, 2, 3, 4))
        + "]}",
        "4 results for k = 3: return at most k",
    ),
]
"""Answers (templates for `replay`) that break a rule, and the error each gives after `PREFIX`."""


@pytest.mark.parametrize(("template", "message"), BAD_ANSWERS)
def test_a_bad_answer_is_an_error_naming_backend_and_query(
    tmp_path: Path, index: Index, template: str, message: str
) -> None:
    assert error(replay(tmp_path, template), index, Q1) == PREFIX + message
    assert gone(int((tmp_path / "pid").read_text()))


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
# Results close to valid, so that the checks past the first one are reached too.
NEAR = st.one_of(JSON, st.sampled_from(["auth.py", "notes.md", "x.py"]), st.integers(-1, 5))
RESULT = st.dictionaries(
    st.sampled_from(["file_path", "start_line", "end_line", "kind", "score", "other"]), NEAR
)
ANSWER = st.fixed_dictionaries(
    {"id": st.sampled_from(["q1", "q2"]) | JSON, "results": st.lists(RESULT, max_size=5)}
)


def check_read(index: Index, body: bytes) -> None:
    """Whatever the bytes: hits that keep every rule, or an AnswerFault, never another exception."""
    try:
        hits = AnswerReader(index).read(body, "q1", 3)
    except AnswerFault:
        return
    assert len(hits) <= 3 and [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert all(h.file_path in ("auth.py", "notes.md") and 1 <= h.start_line <= h.end_line for h in hits)
    assert len({(h.file_path, h.start_line, h.end_line) for h in hits}) == len(hits)


@settings(max_examples=200, deadline=None)
@given(answer=ANSWER | JSON)
def test_any_json_answer_is_hits_or_a_fault(index: Index, answer: object) -> None:
    check_read(index, json.dumps(answer).encode())


@settings(max_examples=200, deadline=None)
@given(body=st.binary(max_size=64))
def test_any_bytes_are_hits_or_a_fault(index: Index, body: bytes) -> None:
    check_read(index, body)


def test_answers_out_of_order(tmp_path: Path, index: Index) -> None:
    spec = replay(tmp_path, '{"id": "q1", "results": []}')
    message = error(spec, index, Q1, ("q2", "salt", 3))
    assert (
        message == 'backend "mine": query "q2": the response is for query "q1", expected "q2": '
        "answer every request, in order"
    )


def test_a_crash_shows_the_exit_status_and_the_last_20_lines_of_stderr(tmp_path: Path, index: Index) -> None:
    spec = script(
        tmp_path,
        """\
import sys
sys.stdin.readline()
for n in range(1, 31):
    print(f"log line {n}", file=sys.stderr)
print("fatal: \\x1b[31mindex missing", file=sys.stderr)
sys.exit(3)
""",
    )
    tail = "\n".join(f"  log line {n}" for n in range(12, 31))
    assert error(spec, index, Q1) == (
        PREFIX + "the process exited with status 3 before answering; the last lines "
        f"of its stderr:\n{tail}\n  fatal: \\u001b[31mindex missing"
    )


def test_an_early_exit_with_empty_stderr(tmp_path: Path, index: Index) -> None:
    spec = script(tmp_path, "pass\n")
    assert (
        error(spec, index, Q1)
        == PREFIX + "the process exited with status 0 before answering (its stderr was empty)"
    )


def test_a_process_killed_by_a_signal(tmp_path: Path, index: Index) -> None:
    spec = script(
        tmp_path, "import os, signal, sys\nsys.stdin.readline()\nos.kill(os.getpid(), signal.SIGKILL)\n"
    )
    assert (
        error(spec, index, Q1)
        == PREFIX + "the process was killed by SIGKILL before answering (its stderr was empty)"
    )


def test_a_timeout_stops_the_process(tmp_path: Path, index: Index) -> None:
    spec = script(
        tmp_path,
        """\
import os, sys, time
open("pid", "w").write(str(os.getpid()))
print("thinking hard", file=sys.stderr, flush=True)
sys.stdin.readline()
time.sleep(120)
""",
        timeout=0.5,
    )
    assert error(spec, index, Q1) == (
        PREFIX + "no response within 0.5 seconds (the process was stopped); "
        "the last lines of its stderr:\n  thinking hard"
    )
    assert gone(int((tmp_path / "pid").read_text()))


def test_a_process_that_ignores_sigterm_is_killed(
    tmp_path: Path, index: Index, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(external, "STOP_GRACE_SECONDS", 0.2)
    spec = script(
        tmp_path,
        """\
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
open("pid", "w").write(str(os.getpid()))
sys.stdin.readline()
time.sleep(120)
""",
        timeout=0.2,
    )
    assert error(spec, index, Q1).startswith(
        PREFIX + "no response within 0.2 seconds (the process was stopped)"
    )
    assert gone(int((tmp_path / "pid").read_text()))


def test_a_chatty_stderr_never_blocks_the_process(tmp_path: Path, index: Index) -> None:
    spec = script(
        tmp_path,
        """\
import json, sys
for line in sys.stdin:
    sys.stderr.write("x" * 1_000_000 + "\\n")
    sys.stderr.flush()
    print(json.dumps({"id": json.loads(line)["id"], "results": []}), flush=True)
""",
        timeout=20,
    )
    assert ask(spec, index, Q1, ("q2", "more", 3)) == [[], []]


def test_a_program_that_cannot_start(tmp_path: Path, index: Index) -> None:
    spec = CommandRetriever(("./no-such-retriever", "--fast"), str(tmp_path))
    with pytest.raises(CceError) as caught:
        ask(spec, index, Q1)
    assert caught.value.message == (
        f'backend "mine": could not start ["./no-such-retriever", "--fast"] in '
        f"{json.dumps(str(tmp_path))}: No such file or directory"
    )


# --- HTTP --------------------------------------------------------------------------------------


class Retriever(BaseHTTPRequestHandler):
    """Answers POST /search as the server's `mode` says; records every request body."""

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        server: RetrieverServer = self.server  # type: ignore[assignment]
        server.requests.append((self.path, self.headers["Content-Type"], body))
        request = json.loads(body)
        if server.mode == "slow":
            server.release.wait(30)
        status, payload = {
            "ok": (
                200,
                {
                    "id": request["id"],
                    "results": [{"file_path": "auth.py", "start_line": 1, "end_line": 2, "score": 0.5}],
                },
            ),
            "slow": (200, {"id": request["id"], "results": []}),
            "error": (503, "index is warming up"),
            "wrong-id": (200, {"id": "someone-else", "results": []}),
        }[server.mode]
        data = (payload if isinstance(payload, str) else json.dumps(payload)).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
        pass


class RetrieverServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    mode = "ok"

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Retriever)
        self.requests: list[tuple[str, str, bytes]] = []
        self.release = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/search"


@pytest.fixture()
def server() -> Iterator[RetrieverServer]:
    srv = RetrieverServer()
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.release.set()
        srv.shutdown()
        srv.server_close()
        thread.join(10)


def test_http_posts_each_request_and_reads_the_answer(server: RetrieverServer, index: Index) -> None:
    [[hit], []] = ask(HttpRetriever(server.url), index, Q1, ("q2", "salt", 1))[:1] + [[]]
    assert (hit.file_path, hit.start_line, hit.end_line, hit.kind, hit.score) == (
        "auth.py",
        1,
        2,
        "function_definition",
        0.5,
    )
    assert server.requests[0] == ("/search", "application/json", encode_request(*Q1))
    assert len(server.requests) == 2


def test_http_status_outside_2xx(server: RetrieverServer, index: Index) -> None:
    server.mode = "error"
    assert error(HttpRetriever(server.url), index, Q1) == (
        PREFIX + f"{server.url} answered HTTP 503 Service Unavailable: index is warming up"
    )


def test_http_answer_for_another_query(server: RetrieverServer, index: Index) -> None:
    server.mode = "wrong-id"
    assert error(HttpRetriever(server.url), index, Q1) == (
        PREFIX + 'the response is for query "someone-else", expected "q1": answer every request, in order'
    )


def test_http_timeout(server: RetrieverServer, index: Index) -> None:
    server.mode = "slow"
    assert error(HttpRetriever(server.url, timeout=0.3), index, Q1) == (
        PREFIX + f"no response from {server.url} within 0.3 seconds"
    )


def test_http_connection_refused(index: Index) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/search"
    assert error(HttpRetriever(url), index, Q1) == PREFIX + f"could not reach {url}: Connection refused"


# --- through the CLI -------------------------------------------------------------------------------

EXAMPLE = REPO_ROOT / "docs" / "examples" / "retriever.py"
SAMPLES = REPO_ROOT / "test" / "fixture" / "samples"


def test_the_documented_example_is_the_shipped_file() -> None:
    docs = (REPO_ROOT / "docs" / "retrievers.md").read_text(encoding="utf-8")
    assert f"```python\n{EXAMPLE.read_text(encoding='utf-8')}```" in docs
    code = [line for line in EXAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(code) <= 25


def test_the_example_retriever_is_scored_and_compared_with_bm25(tmp_path: Path) -> None:
    """For `token bucket rate limiter allow client` (expected: rust.rs) the example's best lines are
    notes.md 4 (`token`, `bucket`, `rate`, `limiter`) and rust.rs 9 (`allow`, `client`): rank 2."""
    (tmp_path / "cce-relevance.toml").write_text(
        f"[backends.grep]\ncommand = {json.dumps([sys.executable, str(EXAMPLE), str(SAMPLES)])}\n"
    )
    found = cli(
        "search",
        str(SAMPLES),
        "token bucket rate limiter allow client",
        "--backend",
        "grep",
        "-k",
        "2",
        "--json",
        cwd=tmp_path,
    )
    assert [
        (h["file_path"], h["start_line"], h["score"], h["chunk_type"]) for h in json.loads(found.out)
    ] == [("notes.md", 4, "4.000000", "external"), ("rust.rs", 9, "2.000000", "external")]
    fixtures = str(REPO_ROOT / "eval" / "relevance" / "code.jsonl")
    doc = json.loads(cli("run", fixtures, "--compare", "bm25,grep", "--json", cwd=tmp_path).out)
    assert [b["backend"] for b in doc["backends"]] == ["bm25", "grep"] and doc["compare"]["b"] == "grep"
    grep = {q["id"]: q for q in doc["backends"][1]["per_query"]}
    assert grep["code-rate-limiter"]["first_relevant_rank"] == 2
    text = cli("run", fixtures, "--compare", "bm25,grep", cwd=tmp_path)
    assert text.code == 0 and "  per-query deltas (bm25 → grep; positive = grep wins)\n" in text.out


def test_an_http_retriever_is_scored_and_compared_with_bm25(tmp_path: Path, server: RetrieverServer) -> None:
    """The server always answers auth.py 1-2: `hash` (expects auth.py, k 3) gets P@3 1/3, MRR 1;
    `pay` (expects payments.py) gets nothing right."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "auth.py").write_text(AUTH)
    (corpus / "payments.py").write_text(
        "import auth\n\ndef pay(amount):\n    return auth.hash_password(amount)\n"
    )
    (tmp_path / "set.jsonl").write_text(
        '{"schema":"cce.relevance/v1","corpus":"corpus"}\n'
        '{"id":"hash","query":"where is the password hashed","expected":["auth.py"],"k":3}\n'
        '{"id":"pay","query":"pay amount","expected":["payments.py"],"k":2}\n'
    )
    (tmp_path / "cce-relevance.toml").write_text(f'[backends.web]\nurl = "{server.url}"\ntimeout = 10\n')
    result = cli("run", "set.jsonl", "--compare", "bm25,web", "--json", cwd=tmp_path)
    assert result.code == 0, result.err
    web = json.loads(result.out)["backends"][1]
    assert web["backend"] == "web"
    assert [(q["id"], q["precision_at_k"], q["mrr"]) for q in web["per_query"]] == [
        ("hash", "0.333333", "1.000000"),
        ("pay", "0.000000", "0.000000"),
    ]
    assert [json.loads(body)["id"] for _, _, body in server.requests] == ["hash", "pay"]


def test_a_failing_retriever_through_the_cli(tmp_path: Path) -> None:
    (tmp_path / "r.py").write_text(
        "import sys\nsys.stdin.readline()\nprint('boom', file=sys.stderr)\nsys.exit(1)\n"
    )
    (tmp_path / "cce-relevance.toml").write_text(f'[backends.mine]\ncommand = ["{sys.executable}", "r.py"]\n')
    result = cli(
        "run", str(REPO_ROOT / "eval" / "relevance" / "code.jsonl"), "--backend", "bm25,mine", cwd=tmp_path
    )
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        'error: backend "mine": query "code-record-shipment": the process exited with status 1 '
        "before answering; the last lines of its stderr:\n  boom\n"
    )
