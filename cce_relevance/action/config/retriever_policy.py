"""When the Action may run the repository's own retrievers (`command` and `url` backends).

A team's retriever is code in the repository the pull request changes, so scoring it means
running that code: base's retriever in the base tree, head's in the head tree. Whether that is
safe depends on the event, not on the code:

- under `pull_request`, `push`, `workflow_dispatch` and `schedule` the workflow file itself comes
  from the code being run (or from a maintainer), and a fork's `pull_request` job gets a read-only
  token and no secrets: running the head's retriever gives it nothing the workflow did not have;
- under `pull_request_target` and `workflow_run` the job runs the default branch's workflow with
  the repository's secrets and a write token, so running code from the pull request would hand
  both to whoever opened it. Those events are always refused, whatever the input says.

Any other event is refused too: its trust is not known here, and a retriever that cannot run is
a configuration error, never a silent downgrade to the built-ins. The input is opt-in
(`allow-repository-retrievers: true`), so a repository that adds a `command` backend does not
start running code in a workflow that was not written for it.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from cce_relevance.errors import CceError

INPUT = "allow-repository-retrievers"
ALLOWED_EVENTS = ("pull_request", "push", "workflow_dispatch", "schedule")
PRIVILEGED_EVENTS = ("pull_request_target", "workflow_run")
# Spellings of the token input; a retriever inherits this process's environment.
TOKEN_VARIABLES = ("INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN")

REFUSED_BY_DEFAULT = (
    "the Action runs repository retrievers only when asked: set `allow-repository-retrievers: true` "
    "(under pull_request, push, workflow_dispatch or schedule), or score it with `cce-relevance run` "
    "in a step of your own"
)


def check_repository_retrievers(allowed: bool, event_name: str) -> bool:
    """Whether `command`/`url` backends may run for `event_name`; a `CceError` (exit 2) when they
    were asked for under an event where running the pull request's code is unsafe.

    An empty event name is a run outside GitHub Actions (a local `cce-relevance action`), where the
    user runs their own checkout."""
    if not allowed:
        return False
    if event_name in PRIVILEGED_EVENTS:
        raise CceError(
            f"input '{INPUT}': repository retrievers never run under {event_name}: that job holds the "
            "repository's secrets and a write token while the code it would run comes from the pull "
            "request, so anyone opening one could take both",
            hint="score the retriever in a `pull_request` workflow "
            "(a fork's job gets a read-only token and no "
            "secrets) and post its comment from `workflow_run` with `mode: publish`; or set "
            f"`{INPUT}: false` here to score the built-in backends only",
        )
    if event_name and event_name not in ALLOWED_EVENTS:
        raise CceError(
            f"input '{INPUT}': repository retrievers run only under {', '.join(ALLOWED_EVENTS)}; "
            f"{event_name} is not one of them",
            hint=f"run this step under one of those events, or set `{INPUT}: false`",
        )
    return True


def withhold_token(environ: MutableMapping[str, str]) -> None:
    """Drop the token input from the environment retrievers inherit: the Action has read it
    already, and a retriever has no use for it."""
    for name in TOKEN_VARIABLES:
        environ.pop(name, None)
