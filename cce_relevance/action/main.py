"""The Action's entry point (`entrypoint.py`, `cce-relevance action`): score, report, gate, comment.

One run, in an order chosen so that nothing optional can change the result (§runner-gate-first):

1. read and validate the inputs (`config.inputs`) and dispatch on `mode`. `modes.evaluate` finds
   the repository, trusts it (`safe.directory`), resolves the base and head commits and scores
   every fixture set in a checkout of each, with the index cache in `cache-dir` (inside the
   workspace, so actions/cache can keep it across runs); a base side an earlier run saved there
   is loaded instead of scored, and the head side is saved (`saved.base_reuse`). A `shard: I/N`
   run ends there, saving its state for the fan-in job (`modes.shard`); `mode: merge` takes the
   place of this step, reading the shards' states (`modes.merge`); `mode: publish` only posts
   the comment a fork's run prepared (`modes.publish`);
2. decide the verdict and the gates from the same facts (`report.outcome`);
3. write the report files, the step outputs and the step summary (with the trend line of the
   `history` input on a pull request; a push to the default branch records its means there,
   `trend`), print the annotations (`report.annotations`), and fix the exit code
   (`modes.deliver`);
4. only then post or update the pull request comment (`modes.comment`). Posting is best effort:
   a failure to post is a warning and never changes the exit code.

Exit codes: 0 success, 1 a gate failed (`fail-on`), 2 a configuration error (bad inputs,
missing history, a fixture, corpus or golden outside the repository, a missing golden, an
unwritable `GITHUB_OUTPUT`), 70 an internal error (a bug: one `::error::` line asking for a
report). Expected failures print one `::error::` annotation (and the step summary explains),
never a traceback.

Bounded time: posting the comment (step 4) has `deadline.POSTING_BUDGET` seconds in all, whatever the API
does (no answer, slow answers, retries); past it the run warns and ends with the decided code.

Log hygiene: untrusted text (anything read from the trees: paths, diffs) reaches the log only
inside annotations, whose data cannot hold a line break, or through `neutralize_untrusted`; the
token is never printed.
"""

from __future__ import annotations

import os
import sys
import tempfile
import traceback
from pathlib import Path

from cce_relevance.action.config.inputs import ActionInputs, read_inputs, step_summary_path
from cce_relevance.action.config.retriever_policy import withhold_token
from cce_relevance.action.modes.deliver import deliver
from cce_relevance.action.modes.evaluate import evaluate
from cce_relevance.action.modes.merge import merge
from cce_relevance.action.modes.publish import publish
from cce_relevance.action.report.summary import TITLE
from cce_relevance.action.runner.workflow_commands import append_step_summary, error_annotation, log
from cce_relevance.action.scoring.timings import Stopwatch
from cce_relevance.errors import TRACEBACK_VARIABLE, CceError, internal_error
from cce_relevance.memory_pages import prefer_small_pages
from cce_relevance.reporting.markdown_safe import escape_md


def main() -> int:
    """Run the Action from `os.environ`; returns the exit code."""
    prefer_small_pages()
    _ensure_home()
    try:
        inputs = read_inputs(os.environ)
        if inputs.repository_retrievers:
            withhold_token(os.environ)
        return _run(inputs)
    except CceError as exc:
        # from the environment, not the inputs: an error may come before they could be read
        _report_configuration_error(exc, step_summary_path(os.environ))
        return exc.exit_code
    except Exception as exc:  # noqa: BLE001 - the boundary: a bug is one ::error:: line, not a traceback
        if os.environ.get(TRACEBACK_VARIABLE):
            traceback.print_exception(exc, file=sys.stderr)
        error = internal_error(exc)
        log(error_annotation(f"{error.message} (hint: {error.hint})", title="cce-relevance: internal error"))
        return error.exit_code


def _ensure_home() -> None:
    """`git config --global` (for `safe.directory`) needs a HOME; a bare `docker run` may lack one."""
    if not os.environ.get("HOME"):
        os.environ["HOME"] = tempfile.mkdtemp(prefix="cce-home-")


def _run(inputs: ActionInputs) -> int:
    if inputs.mode == "publish":
        return publish(inputs)
    clock = Stopwatch()
    if inputs.mode == "merge":
        return deliver(inputs, merge(inputs, clock), clock)
    return evaluate(inputs, clock)


def _report_configuration_error(exc: CceError, summary: Path | None) -> None:
    """One `::error::` line in the log, and the step summary: what failed, the hint when there is
    one, and where to look. Errors found before the inputs could be read (a bad input, an event
    file or workspace that cannot be read) reach the summary too: it is the first place a
    reviewer looks when a check fails."""
    message = f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message
    log(error_annotation(message, title="cce-relevance: configuration error"))
    if summary is None:
        return
    hint = f"\n\nHint: {escape_md(exc.hint)}" if exc.hint else ""
    try:
        append_step_summary(
            summary,
            f"{TITLE}\n\n**❌ Configuration error:** {escape_md(exc.message)}{hint}\n\n"
            "The run stopped here: no gate was decided and no pull request comment was posted. "
            "The step's log shows the same error as an annotation; every input is described in "
            "the Action's `action.yml` and its README.\n",
        )
    except (OSError, ValueError):
        pass  # the ::error:: line above already said it; a summary that cannot take it changes nothing
