"""A small GitHub REST client: the few calls the Action makes, done carefully.

It exists (rather than a full SDK) to control the four things that go wrong in Actions:

* **Enterprise Server.** Every URL is built from the caller's base URL (``GITHUB_API_URL``, e.g.
  ``https://ghes.example/api/v3``); pagination links are followed only within it, so the token
  is never sent to another host.
* **Rate limits and flaky servers.** 429, and a 403 that is a rate limit (``Retry-After``,
  ``x-ratelimit-remaining: 0`` or a "rate limit" message), wait as GitHub asks: ``Retry-After``
  seconds, else until ``x-ratelimit-reset`` when the quota is spent, else one minute. 5xx and
  network errors back off exponentially (1, 2, 4 ... s, capped). A wait longer than
  `RetryPolicy.max_wait` is not slept through: it becomes an error. ``sleep`` and ``clock`` are
  injectable so tests run instantly and can assert the waits.
* **Duplicates.** A POST that failed with 5xx or a dropped connection may still have created
  its resource, so it is repeated only if the caller supplies ``recheck`` (a lookup that
  finds the resource if it exists); refusals (429, rate-limit 403) are always safe to repeat.
* **The token.** It appears only in the ``Authorization`` header: never in exception text,
  log records or ``repr``. Error text is built from the method, path, status and GitHub's
  message, redacted again in case a server echoes the token back; exceptions from ``requests``
  are not chained (``InvalidHeader``, for one, quotes header values).
"""

from __future__ import annotations

import email.utils
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Self
from urllib.parse import urlsplit

import requests

from cce_relevance import __version__, untrusted_json

DEFAULT_API_URL = "https://api.github.com"  # GITHUB_API_URL when the runner does not set it
DEFAULT_SERVER_URL = "https://github.com"  # GITHUB_SERVER_URL likewise
API_VERSION = "2022-11-28"
PER_PAGE = 100  # GitHub's maximum page size: fewest requests for "list everything"

log = logging.getLogger(__name__)

_TOKEN_CHARS = re.compile(r"[\x21-\x7e]+")  # printable ASCII: what an HTTP header value can carry


class GitHubError(Exception):
    """A GitHub API call failed; `status` is the HTTP status, or None when no response came.

    The text names the call and GitHub's explanation and is safe to print.
    """

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(status, message)
        self.status = status
        self.message = message

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class RetryPolicy:
    """How hard the client tries. Defaults suit one CI job making a handful of calls."""

    attempts: int = 5  # total tries per call, the first included
    backoff: float = 1.0  # first wait after a 5xx or network error, doubled on each retry
    max_backoff: float = 30.0
    rate_limit_wait: float = 60.0  # GitHub's advice when a rate limit does not say how long
    max_wait: float = 120.0  # a longer requested wait fails the call instead of stalling the job


@dataclass(frozen=True)
class _Failure:
    status: int | None
    detail: str
    retryable: bool
    delay: float
    ambiguous: bool  # the server may have acted on the request before failing


class _Reply(NamedTuple):
    data: Any
    next_url: str | None


class GitHubClient:
    """GitHub REST over one ``requests.Session``; use as a context manager or call `close`."""

    def __init__(
        self,
        api_url: str = DEFAULT_API_URL,
        token: str | None = None,
        *,
        timeout: tuple[float, float] = (10.0, 30.0),
        retry: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        parts = urlsplit(api_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"the GitHub API URL must be an http(s) URL, not {api_url!r}")
        token = (token or "").strip()
        if token and not _TOKEN_CHARS.fullmatch(token):
            raise ValueError(
                "the GitHub token contains spaces or non-ASCII characters; check the token input"
            )
        self.api_url = api_url.rstrip("/")
        self._token = token
        self._timeout = timeout
        self._retry = retry
        self._sleep = sleep
        self._clock = clock
        self._session = requests.Session()
        self._session.headers.update(
            {
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION,
                "User-Agent": f"cce-relevance/{__version__}",
            }
        )
        if token:
            self._session.headers["Authorization"] = f"Bearer {token}"

    def __repr__(self) -> str:
        return f"GitHubClient(api_url={self.api_url!r}, authenticated={bool(self._token)})"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._session.close()

    def get(self, path: str, params: Mapping[str, str | int] | None = None) -> Any:
        """GET `path` (relative to the API URL) and return the decoded JSON."""
        return self._call("GET", path, params=params).data

    def post(self, path: str, payload: Any, *, recheck: Callable[[], Any] | None = None) -> Any:
        """POST JSON; `recheck` returns the resource if an earlier, failed attempt created it."""
        return self._call("POST", path, payload=payload, recheck=recheck).data

    def patch(self, path: str, payload: Any) -> Any:
        """PATCH JSON. Setting the same fields twice is harmless, so it is retried freely."""
        return self._call("PATCH", path, payload=payload).data

    def download(self, path: str, limit: int) -> bytes:
        """GET `path` as bytes (an artifact's zip), at most `limit` of them, else an error.

        GitHub answers with a redirect to short-lived storage on another host; `requests` drops
        the ``Authorization`` header when a redirect changes host, so the token stays with the API.
        Not retried: a publishing job can simply be re-run.
        """
        url = self._url(path)
        where = f"GET {urlsplit(url).path}"
        try:
            with self._session.get(url, timeout=self._timeout, stream=True) as response:
                if not 200 <= response.status_code < 300:
                    failure = self._classify(response, self._retry.attempts)
                    raise self._error(where, failure, 1)
                data = bytearray()
                for chunk in response.iter_content(64 * 1024):
                    data += chunk
                    if len(data) > limit:
                        raise GitHubError(None, f"GitHub API {where}: larger than {limit} bytes, refused")
                return bytes(data)
        except requests.RequestException as exc:
            raise GitHubError(
                None, self._redact(f"GitHub API {where} failed: {type(exc).__name__}: {exc}")
            ) from None

    def delete(self, path: str) -> None:
        """DELETE `path`. Deleting twice gives 404 the second time, so it is not repeated blindly:
        only refusals that did nothing (429, a rate-limit 403) are retried."""
        self._call("DELETE", path)

    def paginate(self, path: str, params: Mapping[str, str | int] | None = None) -> Iterator[Any]:
        """Every item of a list endpoint: ``per_page=100``, following ``Link: rel="next"``.

        The next-page URL is used exactly as GitHub gives it (it often names the repository by
        numeric id), never rebuilt from a page number.
        """
        reply = self._call("GET", path, params={**(params or {}), "per_page": PER_PAGE})
        seen: set[str] = set()
        while True:
            if not isinstance(reply.data, list):
                raise GitHubError(None, f"GitHub API GET {path}: expected a JSON list")
            yield from reply.data
            if reply.next_url is None:
                return
            if reply.next_url in seen:
                raise GitHubError(None, f"GitHub API GET {path}: the pagination links form a loop")
            seen.add(reply.next_url)
            reply = self._call("GET", reply.next_url)

    def _url(self, target: str) -> str:
        if target.startswith(("http://", "https://")):
            if not target.startswith(self.api_url + "/"):
                origin = urlsplit(target)
                raise GitHubError(
                    None,
                    f"refusing to send the token to {origin.scheme}://{origin.netloc}: "
                    f"the link leads outside {self.api_url}",
                )
            return target
        if not target.startswith("/"):
            raise ValueError(f"API paths start with '/': {target!r}")
        return self.api_url + target

    def _call(
        self,
        method: str,
        target: str,
        *,
        params: Mapping[str, str | int] | None = None,
        payload: Any = None,
        recheck: Callable[[], Any] | None = None,
    ) -> _Reply:
        url = self._url(target)
        where = f"{method} {urlsplit(url).path}"
        repeatable = method not in ("POST", "DELETE")
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._session.request(
                    method, url, params=params, json=payload, timeout=self._timeout
                )
            except requests.RequestException as exc:
                failure = _Failure(None, f"{type(exc).__name__}: {exc}", True, self._backoff(attempt), True)
            else:
                if 200 <= response.status_code < 300:
                    return _Reply(_decode(response, where), response.links.get("next", {}).get("url"))
                failure = self._classify(response, attempt)
            may_repeat = repeatable or not failure.ambiguous or recheck is not None
            if not failure.retryable or not may_repeat or attempt >= self._retry.attempts:
                raise self._error(where, failure, attempt)
            if failure.delay > self._retry.max_wait:
                raise self._error(
                    where,
                    failure,
                    attempt,
                    f"GitHub asks to wait {failure.delay:.0f} s, longer than this client waits "
                    f"({self._retry.max_wait:.0f} s)",
                )
            log.warning(
                "%s",
                self._redact(
                    f"GitHub API {where}: {failure.detail}; retrying in {failure.delay:.1f} s "
                    f"(attempt {attempt + 1} of {self._retry.attempts})"
                ),
            )
            self._sleep(failure.delay)
            if failure.ambiguous and not repeatable and recheck is not None:
                found = recheck()
                if found is not None:
                    return _Reply(found, None)

    def _classify(self, response: requests.Response, attempt: int) -> _Failure:
        status = response.status_code
        message = _api_message(response)
        detail = f"HTTP {status} {response.reason or ''}".rstrip() + (f": {message}" if message else "")
        headers = response.headers
        rate_limited = status == 429 or (
            status == 403
            and (
                "retry-after" in headers
                or headers.get("x-ratelimit-remaining") == "0"
                or "rate limit" in message.lower()
            )
        )
        if rate_limited:
            return _Failure(status, detail, True, self._rate_limit_delay(headers), False)
        if status >= 500:
            retry_after = self._retry_after(headers)
            delay = self._backoff(attempt) if retry_after is None else retry_after
            return _Failure(status, detail, True, delay, True)
        return _Failure(status, detail, False, 0.0, False)

    def _rate_limit_delay(self, headers: Mapping[str, str]) -> float:
        retry_after = self._retry_after(headers)
        if retry_after is not None:
            return retry_after
        reset = headers.get("x-ratelimit-reset")
        if headers.get("x-ratelimit-remaining") == "0" and reset and reset.isdigit():
            # The reset time is an epoch second; one more second absorbs clock skew.
            return max(int(reset) - self._clock(), 0.0) + 1.0
        return self._retry.rate_limit_wait

    def _retry_after(self, headers: Mapping[str, str]) -> float | None:
        """``Retry-After`` in seconds: GitHub sends delta-seconds; HTTP also allows a date."""
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(float(value), 0.0)
        except ValueError:
            pass
        try:
            return max(email.utils.parsedate_to_datetime(value).timestamp() - self._clock(), 0.0)
        except (TypeError, ValueError):
            return None

    def _backoff(self, attempt: int) -> float:
        return float(min(self._retry.backoff * 2 ** (attempt - 1), self._retry.max_backoff))

    def _error(self, where: str, failure: _Failure, attempts: int, reason: str | None = None) -> GitHubError:
        text = f"GitHub API {where} failed: {failure.detail}"
        if reason:
            text += f" ({reason})"
        if attempts > 1:
            text += f" after {attempts} attempts"
        return GitHubError(failure.status, self._redact(text))

    def _redact(self, text: str) -> str:
        return text.replace(self._token, "***") if self._token else text


def _decode(response: requests.Response, where: str) -> Any:
    if not response.content:
        return None
    try:
        return untrusted_json.loads(response.content)
    except ValueError:
        raise GitHubError(response.status_code, f"GitHub API {where}: the response is not JSON") from None


def _api_message(response: requests.Response) -> str:
    """GitHub's own explanation (``message`` plus validation ``errors``), kept short."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300]
    if not isinstance(body, dict):
        return ""
    parts = [str(body.get("message") or "")]
    for error in body.get("errors") or []:
        if isinstance(error, dict):
            parts.append(str(error.get("message") or error.get("code") or ""))
    return "; ".join(part for part in parts if part)[:300]
