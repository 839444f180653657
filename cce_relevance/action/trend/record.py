"""The trend on the default branch: record each push's means, show them on every pull request.

With the `history` input set (a file in the workspace that the workflow keeps between runs with
actions/cache or an artifact, `HistoryFile`) or `history-branch` (a file on a data branch of
origin, `history_branch.HistoryBranch`):

* a `push` to the repository's default branch (the event's `ref` is
  `refs/heads/<repository.default_branch>`) records the head's means per fixture set, backend and
  metric in the history (`history.py`), after the reports are written and whatever the gate
  decides: the means are facts about the commit. A push to another branch records nothing;
* a pull request reads it and adds one line to the comment and the step summary: the gated
  metric on the verdict's backend over the last `TREND_POINTS` pushes as a sparkline, the latest
  push's value and the pull request head's, e.g. `📈 Trend of MRR on `hybrid` at `main` (last 20
  pushes, 0.380–0.431): ▁▂▁▃▂▃▃▄▄▄▅▅▆▆▆▆▇█▇█ latest 0.429 · this PR 0.412`.

The history is a convenience beside the gate, never part of it: a file that is not a history
(damaged, hand-edited, from a newer version) is a warning; a push then starts a new history, and
a pull request shows no trend line. No history yet means no line at all, so the comment is then
exactly what it is without the input. Where a workspace file may be is checked before any
scoring (`check_history`): inside the workspace (`inputs`), not inside the Action's output
directory (replaced on every run), not through a symlink and not a file the repository tracks
(the code under review must not supply its own trend). Only the `mode: merge` job of a sharded
run has the whole head to show or record: a `shard` job given the inputs says it ignores them,
and a merge job, which needs no checkout otherwise, needs one for them (`merge_repository`).
Recording reads, changes and writes the history in one loop for both stores; a data branch that
another run moved on in between is read again (`ATTEMPTS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from cce_relevance import __version__
from cce_relevance.action.config.inputs import ActionInputs, GitHubContext
from cce_relevance.action.config.paths import refuse_blocked_steps
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.report.summary import TrimmableBody
from cce_relevance.action.runner.workflow_commands import annotation, log
from cce_relevance.action.scoring.model import ComparedSet
from cce_relevance.action.trend.branch_store import HistoryBranch
from cce_relevance.action.trend.history import (
    Entry,
    History,
    HistoryError,
    commit_date,
    read_history,
    write_history,
)
from cce_relevance.action.workspace.git import (
    PULL_REQUEST_EVENTS,
    CommitPair,
    commit_sha,
    find_repository,
    git,
)
from cce_relevance.action.workspace.output_dir import OUTPUT_DIR, give_to_workspace_owner
from cce_relevance.errors import CceError
from cce_relevance.evaluation.pairing import backend_means
from cce_relevance.input_files import SpecialFileError, check_input
from cce_relevance.reporting.markdown_safe import code_span, name_span
from cce_relevance.reporting.numbers import SIX, THREE
from cce_relevance.reporting.sparkline import sparkline

TREND_POINTS = 20  # pushes the trend line draws
ATTEMPTS = 3  # reads and writes of a history that others record in at the same time


def check_history(repo: Path, inputs: ActionInputs) -> None:
    """Refuse a `history` path the Action must not read or write (see the module's docstring),
    and a `history-branch` that is the default branch (the history would be committed to it)."""
    path, workspace = inputs.history, inputs.github.workspace
    if inputs.history_branch is not None and inputs.history_branch == _default_branch(inputs.github):
        raise CceError(
            f"input 'history-branch': {inputs.history_branch!r} is the repository's default branch: "
            "the history needs a branch of its own",
            hint="name a branch that holds nothing else, such as cce-relevance-data",
        )
    if inputs.shard is not None and (path is not None or inputs.history_branch is not None):
        log(
            annotation(
                "notice",
                f"input '{_trend_input(inputs)}': a `shard: I/N` job neither shows nor records the trend; "
                "give it to the `mode: merge` job, which does",
            )
        )
    if path is None:
        return
    shown = path.relative_to(workspace).as_posix()
    if path.is_relative_to(workspace / OUTPUT_DIR):
        raise CceError(
            f"input 'history': {shown} is inside {OUTPUT_DIR}/, which the Action replaces on every run",
            hint="keep the history elsewhere in the workspace, such as .cce-relevance-history/history.json",
        )
    refuse_blocked_steps(
        workspace,
        path,
        "history",
        directory=False,
        plain="use a plain file path, such as .cce-relevance-history/history.json",
        blocked="name the history's file path, such as .cce-relevance-history/history.json",
    )
    if path.is_dir():
        raise CceError(f"input 'history': {shown} is a directory: expected the history's file path")
    try:
        check_input(path)  # a FIFO blocked both the read and the write; a device never ended
    except SpecialFileError as exc:
        raise CceError(
            f"input 'history': {shown} {exc}",
            hint="name the history's file path, such as .cce-relevance-history/history.json",
        ) from None
    if path.is_relative_to(repo) and git(repo, "ls-files", "-z", "--", str(path)):
        raise CceError(
            f"input 'history': {shown} is a file committed to the repository; the Action never reads a "
            "history the code under review supplies",
            hint="remove it from the repository and keep it with actions/cache or an artifact",
        )


def merge_repository(inputs: ActionInputs) -> Path | None:
    """The checkout a `mode: merge` job reads and records its trend with (after `check_history`),
    None without a trend: the shards' states need none, so a missing one is named for the input."""
    if inputs.history is None and inputs.history_branch is None:
        return None
    try:
        repo = find_repository(inputs.github.workspace)
    except CceError:
        raise CceError(
            f"input '{_trend_input(inputs)}': the trend history is read with git, and the `mode: merge` "
            f"job has no checkout in the workspace {inputs.github.workspace}",
            hint="add actions/checkout before this step (the job needs `contents: read`, or `write` to "
            "record on a history-branch), or leave the trend inputs out of the merge job",
        ) from None
    check_history(repo, inputs)
    return repo


def _trend_input(inputs: ActionInputs) -> str:
    return "history-branch" if inputs.history_branch is not None else "history"


def default_branch_push(github: GitHubContext) -> str | None:
    """The default branch's name when this run is a push to it, else None."""
    if github.event_name != "push":
        return None
    default = _default_branch(github)
    return default if default is not None and github.event.get("ref") == f"refs/heads/{default}" else None


def _default_branch(github: GitHubContext) -> str | None:
    """The repository's default branch as the event names it (every repository event does)."""
    repository = github.event.get("repository")
    default = repository.get("default_branch") if isinstance(repository, Mapping) else None
    return default if isinstance(default, str) and default else None


class HistoryFile:
    """The history as a file in the workspace (input `history`), kept by actions/cache or an
    artifact: `fetch` and `write` have the shape of `HistoryBranch`'s, with nothing to fetch."""

    def __init__(self, path: Path, workspace: Path) -> None:
        self.path, self.workspace = path, workspace
        self.shown = path.relative_to(workspace).as_posix()

    def fetch(self) -> str | None:
        return None

    def read(self, _version: str | None) -> History | None:
        return read_history(self.path)

    def write(self, history: History, _version: str | None, _message: str, _seconds: int) -> bool:
        created = next(
            (p for p in reversed(self.path.parents) if p.is_relative_to(self.workspace) and not p.exists()),
            self.path,
        )
        try:
            write_history(self.path, history)
        finally:  # actions/cache, on the host, saves it as the workspace's owner
            if created.exists():
                give_to_workspace_owner(created, self.workspace)
        return True


def history_store(inputs: ActionInputs, repo: Path) -> HistoryFile | HistoryBranch | None:
    """Where this run's history is kept, if anywhere."""
    if inputs.history_branch is not None:
        return HistoryBranch(repo, inputs.github.workspace, inputs.history_branch, inputs.history_file)
    if inputs.history is not None:
        return HistoryFile(inputs.history, inputs.github.workspace)
    return None


def record_push(inputs: ActionInputs, repo: Path, commits: CommitPair, outcome: Outcome) -> None:
    """On a push to the default branch, record the head's means in the history (printing what it
    did). A store that moved on while this run recorded (another push's run, on a data branch) is
    read again, up to `ATTEMPTS` times; a failure is a warning: the gate is already decided."""
    store, github = history_store(inputs, repo), inputs.github
    if store is None or github.event_name != "push":
        return
    branch = default_branch_push(github)
    if branch is None:
        log(f"Trend history {store.shown}: not recorded, this push is not to the default branch.")
        return
    head = commit_sha(commits.head, "the head commit")  # a merge job's comes from the shards' states
    seconds = int(git(repo, "show", "-s", "--format=%ct", "--end-of-options", head).strip())
    entry = Entry(head, commit_date(seconds), __version__, head_means(outcome.sets))
    try:
        for _ in range(ATTEMPTS):
            version = store.fetch()
            history = _read(store, version, "starting a new history") or History(branch)
            recorded = history.with_entry(entry, branch, inputs.history_size)
            if store.write(recorded, version, f"cce-relevance: record {head[:12]}", seconds):
                count = len(recorded.entries)
                log(
                    f"Trend history {store.shown}: recorded {head[:12]} "
                    f"({count} {'entry' if count == 1 else 'entries'})."
                )
                return
        problem = f"it changed {ATTEMPTS} times while this run recorded (other runs recording at once)"
    except CceError as exc:
        problem = exc.message
    log(annotation("warning", f"Could not record in the trend history {store.shown}: {problem}"))


def head_means(sets: tuple[ComparedSet, ...]) -> dict[str, dict[str, dict[str, float]]]:
    """Per fixture set scored at head, each backend's means by metric key."""
    return {s.fixture: backend_means(s.document("head"), f"{s.fixture} at head") for s in sets if s.head}


def trend_line(inputs: ActionInputs, repo: Path, outcome: Outcome) -> str:
    """The comment's trend line on a pull request with a history, else ''."""
    store = history_store(inputs, repo)
    if store is None or inputs.github.event_name not in PULL_REQUEST_EVENTS:
        return ""
    try:
        history = _read(store, store.fetch(), "no trend line in the comment")
    except CceError as exc:
        log(annotation("warning", f"Could not read the trend history {store.shown}: {exc.message}"))
        return ""
    if history is None:
        log(f"Trend history {store.shown}: none yet (a push to the default branch starts it).")
        return ""
    return render_trend(history, outcome)


def render_trend(history: History, outcome: Outcome) -> str:
    """One line: the gated metric of the verdict's set and backend over the last pushes, and the
    pull request head's value; '' when the history holds none of it."""
    headline = outcome.headline
    if headline is None:
        return ""
    the_set = next(s for s in outcome.sets if s.fixture == headline.fixture)
    now = head_means((the_set,)).get(the_set.fixture, {}).get(headline.backend, {}).get(outcome.metric)
    series = [v for _, v in history.series(headline.fixture, headline.backend, outcome.metric)]
    shown = series[-TREND_POINTS:]
    if not shown or now is None:
        return ""
    where = code_span(headline.backend) + (
        f" in {code_span(headline.fixture)}" if len(outcome.sets) > 1 else ""
    )
    pushes = "the last push" if len(shown) == 1 else f"last {len(shown)} pushes"
    # The line is scaled to this range, so it is printed whenever there is one: with six decimals
    # when three would show one number twice (a change of 0.0004 must not pass for a large one),
    # and then the latest push's value and the head's too, which are read against it.
    low, high = min(shown), max(shown)
    digits = SIX if low != high and THREE.fixed(low) == THREE.fixed(high) else THREE
    scale = f", {digits.fixed(low)}–{digits.fixed(high)}" if low != high else ""
    return (
        f"📈 Trend of {headline.label} on {where} at {name_span(history.branch)} ({pushes}{scale}): "
        f"{sparkline(shown)} latest {digits.fixed(shown[-1])} · this PR {digits.fixed(now)}"
    )


def with_trend(markdown: TrimmableBody, line: str) -> TrimmableBody:
    """`markdown` with `line` last in its head (never trimmed); unchanged for ''."""
    if not line:
        return markdown
    return TrimmableBody(f"{markdown.head}\n\n{line}", markdown.sections, markdown.tail)


def _read(store: HistoryFile | HistoryBranch, version: str | None, otherwise: str) -> History | None:
    """The history; None when there is none, or (with a warning) when it is not one."""
    try:
        return store.read(version)
    except HistoryError as exc:
        name = "history-branch" if isinstance(store, HistoryBranch) else "history"
        log(annotation("warning", f"input '{name}': the trend history {store.shown} {exc}; {otherwise}."))
        return None
