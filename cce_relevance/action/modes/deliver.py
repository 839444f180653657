"""What every evaluating mode ends with (steps 2-4 of main.py's order): the verdict, the report
files, the step outputs and summary, the trend, the annotations, the exit code, and — last, so
that nothing optional can change the result — the pull request comment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from cce_relevance import schemas
from cce_relevance.action.config.inputs import ActionInputs, GitHubContext
from cce_relevance.action.modes.comment import post_comment, pull_request_number, wants_comment
from cce_relevance.action.report.annotations import finding_lines
from cce_relevance.action.report.comment_body import measurable_change, render_comment
from cce_relevance.action.report.document import action_document
from cce_relevance.action.report.fit import fit_body
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.report.query_changes import Links
from cce_relevance.action.report.summary import TrimmableBody, render
from cce_relevance.action.runner.pr_comment import comment_marker
from cce_relevance.action.runner.workflow_commands import (
    STEP_SUMMARY_LIMIT,
    annotation,
    append_step_summary,
    log,
    write_step_outputs,
)
from cce_relevance.action.scoring.timings import Stopwatch
from cce_relevance.action.trend.record import record_push, trend_line, with_trend
from cce_relevance.action.workspace.git import PULL_REQUEST_EVENTS, CommitPair
from cce_relevance.action.workspace.output_dir import (
    OutputFiles,
    fresh_output_dir,
    give_to_workspace_owner,
    save_comment,
    save_reports,
    save_summary,
)
from cce_relevance.reporting.markdown_safe import code_span, escape_md


class ReportInput(NamedTuple):
    """What the report is made of: the repository (None for a merge without a checkout), the
    working directory (relative to it), the two commits, the outcome, and the fixture sets and
    goldens the change edits."""

    repo: Path | None
    subdir: Path
    commits: CommitPair
    outcome: Outcome
    edited: tuple[str, ...]


def deliver(inputs: ActionInputs, report: ReportInput, clock: Stopwatch) -> int:
    """Steps 2-4: the verdict, the report files, outputs and summary, the annotations, the exit
    code, and the comment."""
    repo, subdir, commits, outcome, edited = report
    github = inputs.github
    with clock.stage("report"):
        verdict = outcome.verdict()
        marker = comment_marker(inputs.comment_key)
        run_link = _run_link(github)
        trend = trend_line(inputs, repo, outcome) if repo is not None else ""
        markdown = with_trend(render(outcome, verdict, commits, marker, run_link), trend)
        links = (
            Links(github.server_url, github.repository, commits.base, commits.head)
            if github.repository
            else None
        )
        comment = render_comment(
            outcome,
            verdict,
            commits,
            marker,
            links=links,
            run_link=run_link,
            edited=edited,
        )
        comment = with_trend(comment, trend)
        body = fit_body(
            comment.head,
            list(comment.sections),
            comment.tail,
            full_report=(f"[the job summary]({_run_url(github)})" if _run_url(github) else "the job summary"),
        )
        meta = _pull_request_meta(inputs, commits, measurable_change(outcome))
        files = _save(github.workspace, outcome, verdict, commits, markdown, body, meta, inputs.cache_dir)
        if repo is not None:
            record_push(inputs, repo, commits, outcome)
        if github.output_path is not None:
            drift = "true" if outcome.drifted else "false"
            outputs = {"report": files.report, "compare": files.compare, "drift": drift, "verdict": verdict}
            write_step_outputs(github.output_path, outputs)
        if github.step_summary_path is not None:
            try:
                _write_summary(github.step_summary_path, markdown, files)
            except (OSError, ValueError) as exc:  # ValueError: the summary is already at the runner's limit
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                log(
                    annotation(
                        "warning",
                        f"Could not write the job summary GITHUB_STEP_SUMMARY="
                        f"{github.step_summary_path}: {reason}. "
                        f"The full report is {files.report}.",
                    )
                )
    log(verdict)
    for line in finding_lines(outcome, subdir):
        log(line)
    log(f"Full report: {files.report}")
    log(clock.line())
    code = outcome.exit_code
    changed = measurable_change(outcome)
    url = post_comment(inputs, body, commits.head, changed) if wants_comment(inputs) else ""
    if github.output_path is not None:
        write_step_outputs(github.output_path, {"comment-url": url})
    return code


def _save(
    workspace: Path,
    outcome: Outcome,
    verdict: str,
    commits: CommitPair,
    markdown: TrimmableBody,
    comment: str,
    meta: dict[str, Any] | None,
    cache_dir: Path,
) -> OutputFiles:
    directory = fresh_output_dir(workspace, keep=cache_dir)
    try:
        reports = save_reports(directory, workspace, outcome.sets)
        document = action_document(outcome, verdict, commits, reports)
        save_comment(directory, comment, meta)
        return save_summary(directory, workspace, markdown.whole(), document)
    finally:
        give_to_workspace_owner(directory, workspace)


def _run_url(github: GitHubContext) -> str | None:
    if not github.repository or not github.run_id:
        return None
    attempt = f"/attempts/{github.run_attempt}" if github.run_attempt.isdigit() else ""
    return f"{github.server_url}/{github.repository}/actions/runs/{github.run_id}{attempt}"


def _run_link(github: GitHubContext) -> str | None:
    """The footer's link to this job's run (GitHub gives a job no URL of its own to a step)."""
    url = _run_url(github)
    if url is None:
        return None
    job = f"job {code_span(github.job)} of " if github.job else ""
    return f"[{job}run {escape_md(github.run_id)}]({url})"


def _pull_request_meta(inputs: ActionInputs, commits: CommitPair, changed: bool) -> dict[str, Any] | None:
    """What `mode: publish` needs besides the comment: which pull request, at which head, under
    which key, and whether anything changed (for `comment: on-change`)."""
    number = pull_request_number(inputs.github.event)
    if inputs.github.event_name not in PULL_REQUEST_EVENTS or number is None:
        return None
    return {
        "schema": schemas.PULL_REQUEST,
        "number": number,
        "head": commits.head,
        "comment_key": inputs.comment_key,
        "changed": changed,
        "on_change": inputs.comment_on_change,
    }


def _write_summary(path: Path, markdown: TrimmableBody, files: OutputFiles) -> None:
    """The report in the step summary, trimmed to what the runner accepts (§runner-summary-size)."""
    existing = path.stat().st_size if path.exists() else 0
    body = fit_body(
        markdown.head,
        list(markdown.sections),
        markdown.tail,
        limit=STEP_SUMMARY_LIMIT - existing - 1,  # append_step_summary may add a final newline
        full_report=f"`{files.report}`",
        measure=lambda text: len(text.encode()),
    )
    append_step_summary(path, body)
