"""The one living pull-request comment: found by a hidden marker, edited in place.

Its body is fitted to `COMMENT_LIMIT` before it gets here (report/fit.py).

Posting is best effort by design: the gate (exit code) is decided before the comment is posted,
and a token that cannot write (a fork's pull request gets a read-only token) yields a warning
result, not an exception, so a failing comment can never turn a failing check green or a green
one red.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from cce_relevance.action.runner.github import GitHubClient, GitHubError

COMMENT_LIMIT = 65_536  # GitHub rejects a longer issue comment body (characters)
MARKER_NAME = "cce-relevance:v1"

_REPO = re.compile(r"[A-Za-z0-9_-]+/(?!\.\.?$)[A-Za-z0-9_.-]+")  # owner/name; never "." or ".."

Action = Literal["created", "updated", "unchanged", "skipped", "not needed"]


@dataclass(frozen=True)
class CommentResult:
    """What happened to the comment; `warning` is set (and `action` is ``skipped``) on 403/404."""

    url: str | None
    action: Action
    warning: str | None = None


def comment_marker(key: str | None = None) -> str:
    """The hidden HTML comment that identifies our comment: always its first line.

    A `key` (a workflow or job name, say) gives each its own comment. It is percent-encoded, so
    any key is allowed, distinct keys give distinct markers, and none can close the HTML comment.
    A comment is ours only when its body *starts* with the marker and a line break
    (`is_marked`): fixture text shown in a code span can contain any marker, but never first.
    """
    if key is None:
        return f"<!-- {MARKER_NAME} -->"
    return f"<!-- {MARKER_NAME} key={quote(key, safe='')} -->"


def is_marked(body: str, marker: str) -> bool:
    """Whether `body` is a comment with `marker`: its first line, exactly."""
    return body.replace("\r\n", "\n").startswith(marker + "\n")


def upsert_comment(
    client: GitHubClient,
    repo: str,
    issue_number: int,
    body: str,
    marker: str,
    *,
    author: str | None = None,
    create: bool = True,
) -> CommentResult:
    """Create or update the comment on `repo` (``owner/name``) issue/PR `issue_number`.

    Every comment is listed (all pages); among those whose body starts with `marker` (and, if
    `author` is given, written by that login, so a copy of the marker pasted by someone else
    is ignored) the oldest is ours; any others are left alone. It is edited only when the body
    differs, so an unchanged report sends no notification. With ``create=False`` (`comment:
    on-change` when nothing changed) an existing comment is still updated, but none is created.
    `body` must start with `marker` and fit `COMMENT_LIMIT` (report/fit.py `fit_body`); breaking
    either is a programming error (ValueError).

    Creating is race-safe: two first runs can both find no comment and both create one, so after
    creating, the comments are listed again; if an older one of ours exists, the new one is
    deleted and the older one updated. A 403 or 404 gives ``action="skipped"`` with a warning to
    print; other failures raise `GitHubError`, which the caller should also report as a warning,
    not a failed gate.
    """
    if not _REPO.fullmatch(repo):
        raise ValueError(f"repository must be 'owner/name', not {repo!r}")
    if isinstance(issue_number, bool) or not isinstance(issue_number, int) or issue_number < 1:
        raise ValueError(f"issue number must be a positive integer, not {issue_number!r}")
    if not is_marked(body, marker):
        raise ValueError("the comment body does not start with its marker; later runs could not find it")
    if len(body) > COMMENT_LIMIT:
        raise ValueError(f"the comment body has {len(body)} characters; GitHub accepts {COMMENT_LIMIT}")
    comments_path = f"/repos/{repo}/issues/{issue_number}/comments"

    def find() -> dict[str, Any] | None:
        return _oldest_marked(client.paginate(comments_path), marker, author)

    step = "list the comments of"
    try:
        existing = find()
        if existing is None:
            if not create:
                return CommentResult(None, "not needed")
            step = "comment on"
            created = client.post(comments_path, {"body": body}, recheck=find)
            oldest = _oldest_marked(client.paginate(comments_path), marker, author or _login(created))
            if oldest is None or oldest["id"] == created.get("id"):
                return CommentResult(created.get("html_url"), "created")
            step = "remove the duplicate comment on"  # another run created one first: keep that one
            client.delete(f"/repos/{repo}/issues/comments/{created['id']}")
            existing = oldest
        if _same_text(existing.get("body") or "", body):
            return CommentResult(existing.get("html_url"), "unchanged")
        step = "update the comment on"
        updated = client.patch(f"/repos/{repo}/issues/comments/{existing['id']}", {"body": body})
        return CommentResult(updated.get("html_url"), "updated")
    except GitHubError as exc:
        if exc.status not in (403, 404):
            raise
        return CommentResult(None, "skipped", _warning(exc, step, repo, issue_number))


def _oldest_marked(comments: Iterable[Any], marker: str, author: str | None) -> dict[str, Any] | None:
    matches = [
        comment
        for comment in comments
        if _well_formed(comment)
        and is_marked(comment["body"], marker)
        and (author is None or _login(comment) == author)
    ]
    return min(matches, key=lambda comment: comment["id"], default=None)


def _well_formed(comment: Any) -> bool:
    """A comment we could own: an object with a string body and an integer id (the API's list is
    untrusted input; anything else in it is skipped, never a crash)."""
    return (
        isinstance(comment, dict)
        and isinstance(comment.get("body"), str)
        and isinstance(comment.get("id"), int)
        and not isinstance(comment.get("id"), bool)
    )


def _login(comment: dict[str, Any]) -> str | None:
    user = comment.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else None


def _same_text(stored: str, body: str) -> bool:
    """Equal up to line endings and trailing whitespace, which GitHub may normalise on storage."""

    def norm(text: str) -> str:
        return text.replace("\r\n", "\n").rstrip()

    return norm(stored) == norm(body)


def _warning(exc: GitHubError, step: str, repo: str, issue_number: int) -> str:
    if exc.status == 403:
        why = (
            "the token may not write to this pull request: a pull request from a fork gets a "
            "read-only token, and otherwise the workflow needs `permissions: pull-requests: write` "
            "(to comment on fork pull requests, publish from a `workflow_run` workflow)"
        )
    else:
        why = "the repository or pull request does not exist, or the token cannot see it"
    return f"Could not {step} {repo}#{issue_number}: {exc}. {why}. The report is in the job summary."
