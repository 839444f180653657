"""A stand-in for the GitHub REST API on 127.0.0.1, so tests exercise real HTTP.

It speaks the issue-comment endpoints the Action uses, the way GitHub does:

* ``GET  {prefix}/repos/{owner}/{repo}/issues/{n}/comments`` with ``per_page`` (default 30, at
  most 100) and ``page``, and a ``Link`` header whose URLs name the repository by numeric id
  (``/repositories/{id}/...``, as GitHub's do), so a client must follow links, not rebuild them;
* ``POST`` to the same path (201; 422 when the body is missing or over 65,536 characters);
* ``PATCH {prefix}/repos/{owner}/{repo}/issues/comments/{id}`` (200; 404 for an unknown id);
* ``DELETE`` of the same path (204; 404 for an unknown id);
* ``GET  {prefix}/repos/{owner}/{repo}/pulls/{n}``: the pull request with its ``head.sha``, for
  the numbers given a head in `pull_heads` (404 for the others);
* ``GET  {prefix}/repos/{owner}/{repo}/actions/runs/{run}/artifacts`` (``name`` filters) and
  ``GET  {prefix}/repos/{owner}/{repo}/actions/artifacts/{id}/zip``, which answers 302 to the zip's
  bytes on another host name (``localhost`` instead of ``127.0.0.1``), as GitHub redirects to its
  storage; the storage needs no token, and `blob_requests` records whether one was sent anyway.

``prefix`` emulates GitHub Enterprise Server (``/api/v3``). Every request is recorded, a wrong
token gets 401, ``read_only`` makes writes 403 like a fork's token, and `fail_next` scripts
failures (optionally after performing the request, like a 502 from a proxy that lost the
answer). Unknown repositories and routes get 404.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

BODY_LIMIT = 65_536
_EPOCH = datetime(2024, 1, 1, tzinfo=UTC)

_LIST = re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<issue>\d+)/comments")
_LIST_BY_ID = re.compile(r"/repositories/(?P<repo_id>\d+)/issues/(?P<issue>\d+)/comments")
_ONE = re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/issues/comments/(?P<id>\d+)")
_PULL = re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/pulls/(?P<number>\d+)")
_ARTIFACTS = re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/actions/runs/(?P<run>\d+)/artifacts")
_ARTIFACT_ZIP = re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/actions/artifacts/(?P<id>\d+)/zip")
_BLOB = re.compile(r"/_blobs/(?P<id>\d+)")


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str  # as received: prefix, path and query
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass(frozen=True)
class _Scripted:
    status: int
    headers: dict[str, str]
    message: str
    apply: bool
    method: str | None


@dataclass
class _Reply:
    status: int
    payload: Any
    headers: dict[str, str] = field(default_factory=dict)


class FakeGitHub:
    """The fake API. Use as a context manager; `url` is what ``GITHUB_API_URL`` would be."""

    def __init__(self, *, token: str = "ghs_fakeTokenForTests0123456789", prefix: str = "") -> None:
        self.token = token
        self.prefix = prefix
        self.login = "github-actions[bot]"  # the author of comments this token writes
        self.read_only = False
        self.pull_heads: dict[tuple[str, int], str] = {}  # (repo, number) -> the pull request's head sha
        self.link_base: str | None = None  # override the host in Link headers (to test refusal)
        # Bodies another run posts (as this token's bot) just before the next POST lands: a race.
        self.racing_posts: list[str] = []
        self.blob_requests: list[RecordedRequest] = []  # downloads from the storage host
        self._artifacts: dict[int, dict[str, Any]] = {}
        self.requests: list[RecordedRequest] = []
        self._repos: dict[str, int] = {}
        self._comments: dict[int, dict[str, Any]] = {}
        self._next_id = 1001
        self._failures: deque[_Scripted] = deque()
        self.hanging: re.Pattern[str] | None = None  # requests whose path matches get no answer
        self.released = threading.Event()  # set on exit: hanging requests end with the fake
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.fake = self  # type: ignore[attr-defined]
        # A short poll interval: shutdown() waits up to one interval for the loop to notice.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def url(self) -> str:
        return self.origin + self.prefix

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    # -- test set-up and inspection ------------------------------------------------------------

    def add_repo(self, repo: str) -> None:
        with self._lock:
            self._repos.setdefault(repo, 100_000 + len(self._repos))

    def add_comment(self, repo: str, issue: int, body: str, *, login: str = "someone") -> dict[str, Any]:
        """Seed a comment (written by `login`, a human by default); returns GitHub's view of it."""
        with self._lock:
            self._repos.setdefault(repo, 100_000 + len(self._repos))
            return self._public(self._create(repo, issue, body, login))

    def add_artifact(
        self,
        repo: str,
        run_id: int,
        name: str,
        data: bytes,
        *,
        expired: bool = False,
        size: int | None = None,
    ) -> int:
        """An artifact of workflow run `run_id`; `size` overrides the size GitHub reports."""
        with self._lock:
            artifact_id = 5000 + len(self._artifacts)
            self._artifacts[artifact_id] = {
                "repo": repo,
                "run": run_id,
                "name": name,
                "data": data,
                "expired": expired,
                "size": len(data) if size is None else size,
            }
            return artifact_id

    def comments(self, repo: str, issue: int) -> list[dict[str, Any]]:
        with self._lock:
            return [self._public(c) for c in self._stored(repo, issue)]

    def fail_next(
        self,
        status: int,
        *,
        count: int = 1,
        headers: dict[str, str] | None = None,
        message: str | None = None,
        apply: bool = False,
        method: str | None = None,
    ) -> None:
        """Answer the next `count` authorised requests (of `method`, if given) with `status`.

        With ``apply=True`` the request is carried out first and only the answer is lost.
        """
        failure = _Scripted(status, headers or {}, message or HTTPStatus(status).phrase, apply, method)
        with self._lock:
            self._failures.extend([failure] * count)

    def hang(self, path: str) -> None:
        """Never answer a request whose path (query excluded) matches the regex `path` (a stalled
        GitHub or storage host): the connection stays open, silent, until the fake shuts down."""
        self.hanging = re.compile(path)

    def requests_for(self, method: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.method == method]

    # -- request handling ----------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> _Reply:
        split = urlsplit(raw_path)
        query = parse_qs(split.query)
        with self._lock:
            if (blob := _BLOB.fullmatch(split.path)) and method == "GET":
                self.blob_requests.append(RecordedRequest(method, raw_path, query, headers, body))
                artifact = self._artifacts.get(int(blob["id"]))
                return _Reply(200, artifact["data"]) if artifact else _not_found()
            self.requests.append(RecordedRequest(method, raw_path, query, headers, body))
            if headers.get("authorization") not in (f"Bearer {self.token}", f"token {self.token}"):
                return _Reply(401, {"message": "Bad credentials"})
            failure = next((f for f in self._failures if f.method in (None, method)), None)
            if failure is not None:
                self._failures.remove(failure)
            if failure is not None and not failure.apply:
                return _Reply(failure.status, {"message": failure.message}, failure.headers)
            reply = self._route(method, split.path, query, body)
            if failure is not None:
                return _Reply(failure.status, {"message": failure.message}, failure.headers)
            return reply

    def _route(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> _Reply:
        if not path.startswith(self.prefix + "/"):
            return _not_found()
        path = path[len(self.prefix) :]
        if match := _LIST.fullmatch(path):
            repo, issue = match["repo"], int(match["issue"])
            if repo not in self._repos:
                return _not_found()
            if method == "GET":
                return self._list(repo, issue, query)
            if method == "POST":
                return self._post(repo, issue, body)
        elif (match := _LIST_BY_ID.fullmatch(path)) and method == "GET":
            names = [name for name, repo_id in self._repos.items() if repo_id == int(match["repo_id"])]
            if names:
                return self._list(names[0], int(match["issue"]), query)
        elif (match := _ONE.fullmatch(path)) and method == "PATCH":
            return self._patch(match["repo"], int(match["id"]), body)
        elif (match := _ONE.fullmatch(path)) and method == "DELETE":
            return self._delete(match["repo"], int(match["id"]))
        elif (match := _ARTIFACTS.fullmatch(path)) and method == "GET":
            name = query.get("name", [None])[0]
            found = [
                {
                    "id": i,
                    "name": a["name"],
                    "size_in_bytes": a["size"],
                    "expired": a["expired"],
                    "archive_download_url": f"{self.url}/repos/{a['repo']}/actions/artifacts/{i}/zip",
                }
                for i, a in self._artifacts.items()
                if a["repo"] == match["repo"] and a["run"] == int(match["run"]) and name in (None, a["name"])
            ]
            return _Reply(200, {"total_count": len(found), "artifacts": found})
        elif (match := _ARTIFACT_ZIP.fullmatch(path)) and method == "GET":
            if int(match["id"]) in self._artifacts:
                port = self._server.server_address[1]
                return _Reply(302, None, {"Location": f"http://localhost:{port}/_blobs/{match['id']}"})
        elif (match := _PULL.fullmatch(path)) and method == "GET":
            head = self.pull_heads.get((match["repo"], int(match["number"])))
            if head is not None and match["repo"] in self._repos:
                return _Reply(200, {"number": int(match["number"]), "head": {"sha": head}})
        return _not_found()

    def _list(self, repo: str, issue: int, query: dict[str, list[str]]) -> _Reply:
        per_page = min(max(int(query.get("per_page", ["30"])[0]), 1), 100)
        page = max(int(query.get("page", ["1"])[0]), 1)
        stored = self._stored(repo, issue)
        last = max((len(stored) + per_page - 1) // per_page, 1)
        items = stored[(page - 1) * per_page : page * per_page]
        base = f"{self.link_base or self.origin}{self.prefix}/repositories/{self._repos[repo]}/issues/{issue}"
        rels = []
        if page < last:
            rels += [("next", page + 1), ("last", last)]
        if page > 1:
            rels += [("prev", page - 1), ("first", 1)]
        link = ", ".join(f'<{base}/comments?per_page={per_page}&page={n}>; rel="{rel}"' for rel, n in rels)
        return _Reply(200, [self._public(c) for c in items], {"Link": link} if link else {})

    def _post(self, repo: str, issue: int, body: bytes) -> _Reply:
        if self.read_only:
            return _forbidden()
        while self.racing_posts:
            self._create(repo, issue, self.racing_posts.pop(0), self.login)
        text, problem = _comment_body(body)
        if problem:
            return problem
        return _Reply(201, self._public(self._create(repo, issue, text, self.login)))

    def _patch(self, repo: str, comment_id: int, body: bytes) -> _Reply:
        comment = self._comments.get(comment_id)
        if comment is None or comment["repo"] != repo:
            return _not_found()
        if self.read_only:
            return _forbidden()
        text, problem = _comment_body(body)
        if problem:
            return problem
        comment["body"] = text
        comment["updated"] = self._tick()
        return _Reply(200, self._public(comment))

    def _delete(self, repo: str, comment_id: int) -> _Reply:
        comment = self._comments.get(comment_id)
        if comment is None or comment["repo"] != repo:
            return _not_found()
        if self.read_only:
            return _forbidden()
        del self._comments[comment_id]
        return _Reply(204, None)

    def _create(self, repo: str, issue: int, body: str, login: str) -> dict[str, Any]:
        comment_id = self._next_id
        self._next_id += 1
        now = self._tick()
        self._comments[comment_id] = {
            "id": comment_id,
            "repo": repo,
            "issue": issue,
            "body": body,
            "login": login,
            "created": now,
            "updated": now,
        }
        return self._comments[comment_id]

    def _tick(self) -> str:
        return (_EPOCH + timedelta(seconds=len(self.requests) + self._next_id)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _stored(self, repo: str, issue: int) -> list[dict[str, Any]]:
        return [c for c in self._comments.values() if c["repo"] == repo and c["issue"] == issue]

    def _public(self, comment: dict[str, Any]) -> dict[str, Any]:
        repo, issue, comment_id = comment["repo"], comment["issue"], comment["id"]
        return {
            "id": comment_id,
            "node_id": f"IC_{comment_id}",
            "url": f"{self.url}/repos/{repo}/issues/comments/{comment_id}",
            "html_url": f"https://github.example/{repo}/pull/{issue}#issuecomment-{comment_id}",
            "issue_url": f"{self.url}/repos/{repo}/issues/{issue}",
            "body": comment["body"],
            "user": {
                "login": comment["login"],
                "type": "Bot" if comment["login"].endswith("[bot]") else "User",
            },
            "created_at": comment["created"],
            "updated_at": comment["updated"],
        }


def _comment_body(raw: bytes) -> tuple[str, _Reply | None]:
    try:
        payload = json.loads(raw)
    except ValueError:
        return "", _Reply(400, {"message": "Problems parsing JSON"})
    if not isinstance(payload, dict) or not isinstance(payload.get("body"), str):
        return "", _Reply(422, {"message": 'Invalid request.\n\n"body" wasn\'t supplied.'})
    text = payload["body"]
    if len(text) > BODY_LIMIT:
        error = {
            "resource": "IssueComment",
            "code": "custom",
            "field": "body",
            "message": f"body is too long (maximum is {BODY_LIMIT} characters)",
        }
        return "", _Reply(422, {"message": "Validation Failed", "errors": [error]})
    return text, None


def _not_found() -> _Reply:
    return _Reply(404, {"message": "Not Found"})


def _forbidden() -> _Reply:
    return _Reply(403, {"message": "Resource not accessible by integration"})


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real API; every answer has a length
    disable_nagle_algorithm = True  # headers and body go out in two writes: avoid a 40 ms stall

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def _serve(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        fake: FakeGitHub = self.server.fake  # type: ignore[attr-defined]
        if fake.hanging is not None and fake.hanging.search(urlsplit(self.path).path):
            fake.released.wait()
            self.close_connection = True
            return
        reply = fake.handle(self.command, self.path, headers, body)
        if isinstance(reply.payload, bytes):
            data = reply.payload
        else:
            data = b"" if reply.status in (204, 302) else json.dumps(reply.payload).encode()
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the per-request stderr line."""
