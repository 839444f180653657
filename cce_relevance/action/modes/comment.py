"""The pull request comment: posted or updated once the gate is decided, best effort, in bounded
time (`deadline.POSTING_BUDGET`): a failure to post is a warning and never changes the exit code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cce_relevance.action.config.inputs import ActionInputs
from cce_relevance.action.runner.deadline import within_deadline
from cce_relevance.action.runner.github import GitHubClient, GitHubError
from cce_relevance.action.runner.pr_comment import comment_marker, upsert_comment
from cce_relevance.action.runner.workflow_commands import annotation
from cce_relevance.action.workspace.git import PULL_REQUEST_EVENTS


def wants_comment(inputs: ActionInputs) -> bool:
    """A comment is asked for (`comment`), and there is a pull request to post it on."""
    return inputs.comment and inputs.github.event_name in PULL_REQUEST_EVENTS


def post_comment(inputs: ActionInputs, body: str, head: str, changed: bool) -> str:
    """Create or update the pull request comment (`_comment`) under the overall posting deadline
    (`deadline.POSTING_BUDGET`): an API that never answers costs a warning, never the job's time
    or result. Returns the comment's URL, or '' when none was posted."""
    return within_deadline(
        lambda lines: _comment(inputs, body, head, changed, lines),
        "posting the pull request comment",
        failed="Could not post the pull request comment",
        after="The report is in the job summary.",
    )


def _comment(inputs: ActionInputs, body: str, head: str, changed: bool, lines: list[str]) -> str:
    """Create or update the pull request comment; the URL, or '' (with a warning) when not posted.
    With `comment: on-change` and nothing changed, an existing comment is updated, none created.
    What it would print goes to `lines` (printed by the caller, so nothing prints after a timeout).

    A run that scored `head` leaves the comment alone when the pull request has moved on to
    another head since (a push while it ran): the run for the newer commit writes it, and a
    slower, older run must not overwrite that. When the pull request cannot be read, the
    comment is written as usual."""
    github = inputs.github
    number = pull_request_number(github.event)
    if not inputs.github_token or number is None or not github.repository:
        missing = (
            "github-token" if not inputs.github_token else "the pull request number or GITHUB_REPOSITORY"
        )
        lines.append(
            annotation("warning", f"Not commenting: {missing} is missing. The report is in the job summary.")
        )
        return ""
    try:
        with GitHubClient(github.api_url, inputs.github_token) as client:
            current = _pull_request_head(client, github.repository, number)
            if current is not None and current != head:
                lines.append(
                    annotation(
                        "notice",
                        f"Not updating the pull request comment: this run scored {head[:12]}, "
                        f"and the pull request's head is now {current[:12]}; its run writes it.",
                    )
                )
                return ""
            result = upsert_comment(
                client,
                github.repository,
                number,
                body,
                comment_marker(inputs.comment_key),
                create=changed or not inputs.comment_on_change,
            )
    except (GitHubError, ValueError) as exc:
        # ValueError: an argument was refused before any request (GITHUB_API_URL, the token's
        # characters, GITHUB_REPOSITORY). The gate is already decided; posting is best effort.
        lines.append(annotation("warning", f"Could not post the pull request comment: {exc}"))
        return ""
    if result.warning:
        lines.append(annotation("warning", result.warning))
        return ""
    if result.action == "not needed":
        lines.append("No pull request comment: nothing changed (`comment: on-change`).")
        return ""
    lines.append(f"Pull request comment {result.action}: {result.url}")
    return result.url or ""


def _pull_request_head(client: GitHubClient, repository: str, number: int) -> str | None:
    """The pull request's head commit now, or None when it cannot be read."""
    try:
        pull = client.get(f"/repos/{repository}/pulls/{number}")
    except GitHubError:
        return None
    head = pull.get("head") if isinstance(pull, dict) else None
    sha = head.get("sha") if isinstance(head, dict) else None
    return sha if isinstance(sha, str) and sha else None


def pull_request_number(event: Mapping[str, Any]) -> int | None:
    pull = event.get("pull_request")
    number = pull.get("number") if isinstance(pull, dict) else None
    return number if isinstance(number, int) and not isinstance(number, bool) and number > 0 else None
