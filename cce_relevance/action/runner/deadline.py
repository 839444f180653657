"""One overall deadline for the Action's best-effort GitHub work (posting or publishing a comment).

Once the result of a job is decided, talking to GitHub must neither change it nor hold the job:
an API that accepts connections and never answers, answers slowly, or asks for retries would
otherwise keep the runner busy for as long as each call's own timeouts and retries allow. So the
work runs in a worker thread that gets `POSTING_BUDGET` seconds in all, whatever it does (every
API call, retry wait and artifact download included). Past the deadline the caller warns and
moves on; the worker is a daemon thread, so it ends with the process.

What the work would print goes to a list of lines, printed by the caller only when the work
finished in time, so nothing appears in the log after the warning. Any exception in the work,
expected or not (junk in the API's replies), is a warning too: posting is best effort.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from cce_relevance.action.runner.workflow_commands import annotation, log

POSTING_BUDGET = 90.0  # seconds for all the GitHub API calls made after the result is decided


def within_deadline(work: Callable[[list[str]], str], task: str, *, failed: str, after: str) -> str:
    """`work(lines)` given `POSTING_BUDGET` seconds; its result (a comment URL), or '' with a warning.

    `task` names the work in the timeout warning ("posting the pull request comment"), `failed`
    starts the warning for an exception ("Could not post the pull request comment"), and `after` is
    the sentence that tells the user where to look instead when it was given up.
    """
    outcome: list[tuple[str, list[str]]] = []

    def attempt() -> None:
        lines: list[str] = []
        try:
            outcome.append((work(lines), lines))
        except Exception as exc:  # noqa: BLE001 - best effort: the job's result is already decided
            lines.append(annotation("warning", f"{failed}: {type(exc).__name__}: {str(exc)[:200]}"))
            outcome.append(("", lines))

    budget = POSTING_BUDGET
    worker = threading.Thread(target=attempt, name="cce-relevance-github", daemon=True)
    worker.start()
    worker.join(budget)
    if not outcome:
        log(
            annotation(
                "warning",
                f"Gave up {task} after {budget:g} s: the GitHub API did not finish in time. {after}",
            )
        )
        return ""
    url, lines = outcome[0]
    for line in lines:
        log(line)
    return url
