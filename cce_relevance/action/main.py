"""The Action's entry point (`entrypoint.py`, `cce-relevance action`): score, report, gate, comment.

One run, in an order chosen so that nothing optional can change the result (§runner-gate-first):

1. read and validate the inputs, find the repository, trust it (`safe.directory`), resolve the
   base and head commits and score every fixture set in a checkout of each (`scoring`), with the
   index cache in `cache-dir` (inside the workspace, so actions/cache can keep it across runs);
   a base side an earlier run saved there is loaded instead of scored (a shard takes its queries
   of it), and the head side is saved (`base_reuse`). A `shard: I/N` run ends here, saving its
   sides for the fan-in job;
   `mode: merge` takes the place of this step, reading the shards' sides (`shard_merge`);
2. decide the verdict and the gates from the same facts (`report.Outcome`);
3. write the report files, the step outputs and the step summary (with the trend line of the
   `history` input on a pull request; a push to the default branch records its means there,
   `trend`), print the annotations, and fix the exit code;
4. only then post or update the pull request comment. Posting is best effort: a failure to post
   is a warning and never changes the exit code.

Exit codes: 0 success, 1 a gate failed (`fail-on`), 2 a configuration error (bad inputs,
missing history, a fixture, corpus or golden outside the repository, a missing golden, an
unwritable `GITHUB_OUTPUT`), 70 an internal error (a bug: one `::error::` line asking for a
report). Expected failures print one `::error::` annotation (and the step summary explains),
never a traceback.

Bounded time: posting the comment (step 4) has `budget.POSTING_BUDGET` seconds in all, whatever the API
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
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from cce_relevance import __version__, schemas
from cce_relevance.action.config.inputs import ActionInputs, GitHubContext, read_inputs, step_summary_path
from cce_relevance.action.config.retriever_policy import withhold_token
from cce_relevance.action.modes.publish import publish
from cce_relevance.action.report.comment_body import measurable_change, render_comment
from cce_relevance.action.report.document import action_document
from cce_relevance.action.report.fit import fit_body
from cce_relevance.action.report.outcome import Outcome, counted
from cce_relevance.action.report.query_changes import Links
from cce_relevance.action.report.summary import TITLE, Markdown, render
from cce_relevance.action.runner.deadline import within_budget
from cce_relevance.action.runner.github import GitHubClient, GitHubError
from cce_relevance.action.runner.pr_comment import comment_marker, upsert_comment
from cce_relevance.action.runner.workflow_commands import (
    STEP_SUMMARY_LIMIT,
    AnnotationKind,
    annotation,
    append_step_summary,
    error_annotation,
    neutralize_untrusted,
    write_step_outputs,
)
from cce_relevance.action.saved.base_reuse import SAVED_ON, save_head, saved_base
from cce_relevance.action.saved.shards import read_shards, save_shard
from cce_relevance.action.saved.side import scoring_config
from cce_relevance.action.scoring.model import Sides
from cce_relevance.action.scoring.range_anchors import AnchorMove
from cce_relevance.action.scoring.sides import anchor_moves, score_sides, set_results
from cce_relevance.action.scoring.timings import Stopwatch
from cce_relevance.action.trend.record import (
    check_history,
    merge_repository,
    record_push,
    trend_line,
    with_trend,
)
from cce_relevance.action.workspace.git import (
    PULL_REQUEST_EVENTS,
    CommitPair,
    changed_files,
    find_repository,
    resolve_commits,
)
from cce_relevance.action.workspace.output_dir import (
    OutputFiles,
    fresh_output_dir,
    give_to_workspace_owner,
    prepare_cache_dir,
    save_comment,
    save_reports,
    save_summary,
)
from cce_relevance.errors import EXIT_OK, TRACEBACK_VARIABLE, CceError, internal_error
from cce_relevance.memory_pages import prefer_small_pages
from cce_relevance.reporting.markdown_safe import code_span, escape_md
from cce_relevance.reporting.numbers import signed6
from cce_relevance.strings import quoted

ANNOTATION_CAP = 10  # the runner shows at most 10 annotations of a kind per step (§runner-annotation-caps)


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
        print(
            error_annotation(f"{error.message} (hint: {error.hint})", title="cce-relevance: internal error"),
            flush=True,
        )
        return error.exit_code


def _ensure_home() -> None:
    """`git config --global` (for `safe.directory`) needs a HOME; a bare `docker run` may lack one."""
    if not os.environ.get("HOME"):
        os.environ["HOME"] = tempfile.mkdtemp(prefix="cce-home-")


class Evaluation(NamedTuple):
    """What the report is made of: the repository (None for a merge without a checkout), the
    working directory (relative to it), the two commits, the outcome, and the fixture sets and
    goldens the change edits."""

    repo: Path | None
    subdir: Path
    commits: CommitPair
    outcome: Outcome
    edited: tuple[str, ...]


def _run(inputs: ActionInputs) -> int:
    if inputs.mode == "publish":
        return publish(inputs)
    clock = Stopwatch()
    if inputs.mode == "merge":
        return _report(inputs, _merge(inputs, clock), clock)
    repo, commits, sides = _score(inputs, clock)
    subdir = inputs.working_directory.relative_to(repo)
    moves = anchor_moves(repo, commits, sides)
    edited = _edited(repo, commits, subdir, sides.base.keys() | sides.head.keys(), inputs)
    if inputs.shard is not None:
        return _save_shard(inputs, subdir, commits, sides, moves, edited, clock)
    sets = set_results(sides, inputs.regression_metric, moves, inputs.cost)
    outcome = Outcome(
        sets, inputs.regression_metric, inputs.alpha, inputs.fail_on, inputs.min_effect, inputs.power
    )
    return _report(inputs, Evaluation(repo, subdir, commits, outcome, edited), clock)


def _report(inputs: ActionInputs, evaluation: Evaluation, clock: Stopwatch) -> int:
    """Steps 2-4: the verdict, the report files, outputs and summary, the annotations, the exit
    code, and the comment."""
    repo, subdir, commits, outcome, edited = evaluation
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
                print(
                    annotation(
                        "warning",
                        f"Could not write the job summary GITHUB_STEP_SUMMARY="
                        f"{github.step_summary_path}: {reason}. "
                        f"The full report is {files.report}.",
                    ),
                    flush=True,
                )
    print(verdict, flush=True)
    _print_findings(outcome, inputs, subdir)
    print(f"Full report: {files.report}", flush=True)
    print(clock.line(), flush=True)
    code = outcome.exit_code
    changed = measurable_change(outcome)
    url = _comment_within_budget(inputs, body, commits.head, changed) if _wants_comment(inputs) else ""
    if github.output_path is not None:
        write_step_outputs(github.output_path, {"comment-url": url})
    return code


def _comment_within_budget(inputs: ActionInputs, body: str, head: str, changed: bool) -> str:
    """`_comment` under the overall posting deadline (`budget.POSTING_BUDGET`): an API that never
    answers costs a warning, never the job's time or result."""
    return within_budget(
        lambda lines: _comment(inputs, body, head, changed, lines),
        "posting the pull request comment",
        failed="Could not post the pull request comment",
        after="The report is in the job summary.",
    )


def _score(inputs: ActionInputs, clock: Stopwatch) -> tuple[Path, CommitPair, Sides]:
    """The repository, the two commits, and every fixture set scored at both (timed on `clock`);
    the base side is loaded instead when an earlier run saved it, and a branch run saves its head."""
    with clock.stage("commits"):
        repo = find_repository(inputs.working_directory)
        commits = resolve_commits(inputs.github.event_name, inputs.github.event, inputs, repo)
        print(
            f"cce-relevance {__version__}: base {commits.base or '(none)'} -> head {commits.head}", flush=True
        )
        check_history(repo, inputs)
        made = prepare_cache_dir(repo, inputs.github.workspace, inputs.cache_dir)
    config = scoring_config(inputs, inputs.working_directory.relative_to(repo))
    whole = inputs.shard is None
    try:
        started = clock.start()
        base = saved_base(inputs.cache_dir, commits.base, config, inputs.shard) if commits.base else None
        if base is not None:  # timed only when it replaces scoring the base
            clock.stop("base load", started)
        sides = score_sides(repo, commits, inputs, clock, shard=inputs.shard, base=base)
        if whole and inputs.github.event_name in SAVED_ON:  # for later runs from this head (base_reuse.py)
            with clock.stage("head save"):
                save_head(inputs.cache_dir, commits.head, config, sides.head)
    finally:  # the runner's user saves it with actions/cache and cleans the workspace up
        give_to_workspace_owner(made, inputs.github.workspace)
    return repo, commits, sides


def _save_shard(
    inputs: ActionInputs,
    subdir: Path,
    commits: CommitPair,
    sides: Sides,
    moves: dict[str, tuple[AnchorMove, ...]],
    edited: tuple[str, ...],
    clock: Stopwatch,
) -> int:
    """A `shard: I/N` job's end: its state in the output directory, for actions/upload-artifact;
    no report, no comment, no gate (the `mode: merge` job has them)."""
    assert inputs.shard is not None
    github = inputs.github
    with clock.stage("report"):
        directory = fresh_output_dir(github.workspace, keep=inputs.cache_dir)
        try:
            config = scoring_config(inputs, subdir)
            path = save_shard(github.workspace, inputs.shard, commits, config, sides, moves, edited)
        finally:
            give_to_workspace_owner(directory, github.workspace)
        shown = path.relative_to(github.workspace).as_posix()
        if github.output_path is not None:
            write_step_outputs(github.output_path, {"shard-state": shown})
    queries = sum(len(r.expected) for r in sides.head.values())
    print(
        f"Shard {inputs.shard}: {counted(queries, 'query', 'queries')} of "
        f"{counted(len(sides.head), 'fixture set')}, at "
        f"{'base and head' if commits.base else 'head'}; state {shown} (upload it for the `mode: merge` job)",
        flush=True,
    )
    print(clock.line(), flush=True)
    return EXIT_OK


def _merge(inputs: ActionInputs, clock: Stopwatch) -> Evaluation:
    """`mode: merge`: the shards' states put back together, reported as the unsharded run."""
    assert inputs.shards_dir is not None
    with clock.stage("merge"):
        merged = read_shards(inputs.shards_dir)
    commits = merged.commits
    print(
        f"cce-relevance {__version__}: base {commits.base or '(none)'} -> head {commits.head} "
        f"({merged.count} shards merged)",
        flush=True,
    )
    if merged.regression_metric != inputs.regression_metric:
        raise CceError(
            f"input 'regression-metric': {inputs.regression_metric}, but the shards were scored for "
            f"{merged.regression_metric}",
            hint="give the merge job the shard jobs' 'regression-metric'",
        )
    sets = set_results(merged.sides, merged.regression_metric, merged.moves)
    outcome = Outcome(
        sets, merged.regression_metric, inputs.alpha, inputs.fail_on, inputs.min_effect, inputs.power
    )
    repo = merge_repository(inputs)  # the trend's store reads git: a checkout, if any
    return Evaluation(repo, merged.subdir, commits, outcome, merged.edited)


def _save(
    workspace: Path,
    outcome: Outcome,
    verdict: str,
    commits: CommitPair,
    markdown: Markdown,
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


def _edited(
    repo: Path, commits: CommitPair, subdir: Path, fixtures: Collection[str], inputs: ActionInputs
) -> tuple[str, ...]:
    """The fixture sets and goldens this change edits (paths as configured)."""
    if commits.base is None:
        return ()
    ours = {(subdir / fixture).as_posix(): fixture for fixture in fixtures}
    ours.update({(subdir / golden).as_posix(): golden for _, golden in inputs.golden})
    changed = set(changed_files(repo, commits.base, commits.head))
    return tuple(shown for path, shown in sorted(ours.items()) if path in changed)


def _pull_request_meta(inputs: ActionInputs, commits: CommitPair, changed: bool) -> dict[str, Any] | None:
    """What `mode: publish` needs besides the comment: which pull request, at which head, under
    which key, and whether anything changed (for `comment: on-change`)."""
    number = _pull_request_number(inputs.github.event)
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


def _write_summary(path: Path, markdown: Markdown, files: OutputFiles) -> None:
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


def _print_findings(outcome: Outcome, inputs: ActionInputs, subdir: Path) -> None:
    """Annotations on the drifted goldens, the regressed fixture files and the fixture lines whose
    anchors are stale at head (in that order, within the cap), then each drift's diff."""
    gates = ("regression", "inconclusive")
    regression_kind: AnnotationKind = "error" if inputs.fail_on in gates else "warning"
    inconclusive_kind: AnnotationKind = "error" if inputs.fail_on == "inconclusive" else "warning"
    drift_kind: AnnotationKind = "warning" if inputs.fail_on == "none" else "error"
    lines = [
        annotation(
            drift_kind,
            f"The head report of {s.fixture} no longer matches the golden report {s.golden.path}; "
            "the diff is in the log and the job summary.",
            file=(subdir / s.golden.path).as_posix(),
            title="cce-relevance: golden drift",
        )
        for s in outcome.drifted
        if s.golden is not None
    ]
    lines += [
        annotation(
            regression_kind,
            f"{f.label} got significantly worse on {f.backend}: mean delta "
            f"{signed6(f.test.mean_delta)}, p={f.test.p:.3g} < alpha {inputs.alpha:g}"
            + (f" (queries left out for a stale anchor: {f.left_out})." if f.left_out else "."),
            file=(subdir / f.fixture).as_posix(),
            title="cce-relevance: significant regression",
        )
        for f in outcome.regressions
    ]
    lines += [
        annotation(
            inconclusive_kind,
            f"{f.label} on {f.backend}: no significant change (n={f.test.n}), but this set detects only "
            + (
                f"changes of at least {f.detectable:.3f} at {inputs.power:.0%} power"
                if f.detectable is not None
                else "nothing (fewer than 2 queries)"
            )
            + f", above min-detectable-effect {f.min_effect:g}: label more queries to tell.",
            file=(subdir / f.fixture).as_posix(),
            title="cce-relevance: inconclusive",
        )
        for f in outcome.inconclusive
    ]
    lines += [
        annotation(
            "warning",
            f"Query {quoted(a.case_id)}: anchor {quoted(a.anchor or '')} is stale at head "
            f"({a.code}: {a.message}). A miss on it is not a ranking loss; the query is left out of "
            "the regression test.",
            file=(subdir / s.fixture).as_posix(),
            line=a.line,
            title="cce-relevance: stale anchor",
        )
        for s in outcome.sets
        for a in s.stale_findings("head")
    ]
    lines += [
        annotation(
            "warning",
            f"Query {quoted(m.case_id)}: the lines {m.path} {m.base_lines[0]}-{m.base_lines[1]} that anchor "
            f"{quoted(m.anchor)} labels at base "
            + (
                f"are lines {m.head_lines[0]}-{m.head_lines[1]} at head; the fixture line naming them: "
                f"{m.fixture_line}"
                if m.head_lines is not None
                else "were changed at head"
            )
            + ". The query is left out of the regression test.",
            file=(subdir / s.fixture).as_posix(),
            line=m.line,
            title="cce-relevance: line-range anchor " + m.status,
        )
        for s in outcome.sets
        for m in s.moves
    ]
    for line in lines[:ANNOTATION_CAP]:
        print(line)
    if len(lines) > ANNOTATION_CAP:
        print(annotation("notice", f"{len(lines) - ANNOTATION_CAP} more findings are in the job summary."))
    for s in outcome.drifted:
        if s.golden is not None:
            print(neutralize_untrusted(s.golden.diff.rstrip("\n")))


def _wants_comment(inputs: ActionInputs) -> bool:
    return inputs.comment and inputs.github.event_name in PULL_REQUEST_EVENTS


def _comment(inputs: ActionInputs, body: str, head: str, changed: bool, lines: list[str]) -> str:
    """Create or update the pull request comment; the URL, or '' (with a warning) when not posted.
    With `comment: on-change` and nothing changed, an existing comment is updated, none created.
    What it would print goes to `lines` (printed by the caller, so nothing prints after a timeout).

    A run that scored `head` leaves the comment alone when the pull request has moved on to
    another head since (a push while it ran): the run for the newer commit writes it, and a
    slower, older run must not overwrite that. When the pull request cannot be read, the
    comment is written as usual."""
    github = inputs.github
    number = _pull_request_number(github.event)
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


def _pull_request_number(event: Mapping[str, Any]) -> int | None:
    pull = event.get("pull_request")
    number = pull.get("number") if isinstance(pull, dict) else None
    return number if isinstance(number, int) and not isinstance(number, bool) and number > 0 else None


def _report_configuration_error(exc: CceError, summary: Path | None) -> None:
    """One `::error::` line in the log, and the step summary: what failed, the hint when there is
    one, and where to look. Errors found before the inputs could be read (a bad input, an event
    file or workspace that cannot be read) reach the summary too: it is the first place a
    reviewer looks when a check fails."""
    message = f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message
    print(error_annotation(message, title="cce-relevance: configuration error"), flush=True)
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
