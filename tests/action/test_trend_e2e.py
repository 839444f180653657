"""The trend on the default branch, end to end: pushes to main record their means in the history
file, and a pull request's comment shows them as a sparkline beside its head's value.

Real git repositories (scenario.py's, with commits pushed to main at chosen committer dates), the
entry point as a real process, the loopback GitHub. Between runs the history file is kept outside
the workspace and put back, as actions/cache saves and restores it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from cce_relevance import __version__
from cce_relevance.reporting.markdown_safe import escape_md
from cce_relevance.reporting.numbers import format3
from cce_relevance.reporting.sparkline import sparkline
from tests.action.fake_github import FakeGitHub
from tests.action.scenario import (
    _GIT_ENV,
    CORPUS,
    FIXTURE,
    PR_NUMBER,
    RANKING_CHANGE,
    REPO,
    ActionRun,
    PullRequest,
    RunnerDirs,
    action_env,
    run_entrypoint,
)
from tests.action.test_schemas import validator
from tests.action.test_workflow_commands import runner_commands

HISTORY = ".cce-relevance-history/history.json"
INVOICE_REPORT = {
    "corpus/invoice_report.py": RANKING_CHANGE["corpus/reports.py"]
}  # pushes the invoice answer down
SHIPPING_REPORT = {
    "corpus/shipping_report.py": 'def shipment_carrier_report(shipments):\n    """Record a shipment carrier '
    'for every shipment in the report."""\n    return [s.carrier for s in shipments]\n'
}


class Repository(PullRequest):
    """The scenario's pull request, plus pushes to main: each a commit at a given committer date,
    checked out as actions/checkout leaves a push (detached at the pushed commit)."""

    def push_main(self, files: dict[str, str | None], message: str, date: str) -> tuple[str, str]:
        """Commit `files` on main (None deletes one) dated `date`; returns (before, after)."""
        self._git("checkout", "-q", "main")
        before = self._git("rev-parse", "HEAD")
        self._write({name: text for name, text in files.items() if text is not None})
        for name in (name for name, text in files.items() if text is None):
            self._git("rm", "-q", name)
        self._git("add", "-A")
        subprocess.run(
            ["git", "commit", "-q", "-m", message],
            cwd=self.workspace,
            env={**os.environ, **_GIT_ENV, "GIT_COMMITTER_DATE": date},
            check=True,
        )
        after = self._git("rev-parse", "HEAD")
        self._git("checkout", "-q", "--detach", after)
        return before, after

    def push_event(self, before: str, after: str, branch: str = "main") -> dict[str, object]:
        return {
            "ref": f"refs/heads/{branch}",
            "before": before,
            "after": after,
            "repository": {"full_name": REPO, "default_branch": "main"},
        }


class Workflow:
    """Runs of the Action in the repository's workspace, the history restored before each run
    and saved after it (`cache`, outside the workspace, stands for actions/cache)."""

    def __init__(self, repo: Repository, root: Path, github: FakeGitHub) -> None:
        self.repo, self.github = repo, github
        self.dirs = RunnerDirs(root / "runner")
        self.cache = root / "cache" / "history.json"
        self.cache.parent.mkdir()
        self.heads: list[dict[str, object]] = []  # each push's saved head report, in push order
        self.owners: tuple[int, int] | None = None  # uid of the history's directory and file, last run

    def run(
        self, event_name: str, event: dict[str, object], owner: str | None = None, **inputs: str
    ) -> ActionRun:
        target = self.repo.workspace / HISTORY
        if owner is not None:  # the runner's user owns the checkout, as GitHub mounts it
            subprocess.run(["chown", "-R", owner, str(self.repo.workspace)], check=True)
        if self.cache.exists():
            target.parent.mkdir(exist_ok=True)
            shutil.copyfile(self.cache, target)
        self.dirs.prepare(event)
        env = action_env(
            self.dirs.places(self.repo.workspace),
            self.github.url,
            self.github.token,
            inputs={
                "GITHUB_EVENT_NAME": event_name,
                "INPUT_GOLDEN": "",
                "INPUT_FAIL-ON": "none",
                "INPUT_HISTORY": HISTORY,
                **inputs,
            },
        )
        run = run_entrypoint(self.repo.workspace, self.dirs, env)
        if target.exists():
            self.owners = (target.parent.stat().st_uid, target.stat().st_uid)
            shutil.copyfile(target, self.cache)
            shutil.rmtree(target.parent)  # the repository's next commit must not include it
        return run

    def push(self, files: dict[str, str | None], message: str, date: str, **inputs: str) -> ActionRun:
        before, after = self.repo.push_main(files, message, date)
        run = self.run("push", self.repo.push_event(before, after), **inputs)
        assert run.code == 0, run.stdout + run.stderr
        head = self.repo.workspace / ".cce-relevance" / "sets" / "01-search" / "head.json"
        self.heads.append(json.loads(head.read_text(encoding="utf-8")))
        return run

    def pull_request(self, **inputs: str) -> ActionRun:
        self.repo.check_out_merge()
        return self.run("pull_request", self.repo.event(), **inputs)

    def history(self) -> dict:
        return json.loads(self.cache.read_text(encoding="utf-8"))


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    return Repository(tmp_path)


@pytest.fixture
def flow(repo: Repository, tmp_path: Path, fake_github: FakeGitHub) -> Workflow:
    return Workflow(repo, tmp_path, fake_github)


def _mean(report: dict[str, object], backend: str, metric: str) -> float:
    [entry] = [b for b in report["backends"] if b["backend"] == backend]  # type: ignore[union-attr,index]
    return float(entry[metric])


def warnings(run: ActionRun) -> list[str]:
    return [data for name, _, data in runner_commands(run.stdout) if name == "warning"]


@pytest.mark.slow
def test_three_pushes_then_a_pull_request_shows_their_trend_beside_its_head(
    flow: Workflow, repo: Repository, fake_github: FakeGitHub
) -> None:
    dates = ["2024-02-01T10:00:00Z", "2024-02-02T11:30:00+01:00", "2024-02-03T09:15:00Z"]
    first = flow.push(INVOICE_REPORT, "m1: an invoice report", dates[0])
    flow.push(SHIPPING_REPORT, "m2: a shipping report", dates[1])
    flow.push({"corpus/invoice_report.py": None}, "m3: the invoice report goes", dates[2])
    assert f"Trend history {HISTORY}: recorded " in first.stdout and "(1 entry)." in first.stdout

    history = flow.history()
    validator("cce.relevance.history.v1").validate(history)  # docs/schemas/ describes what we wrote
    main = repo._git("rev-list", "--reverse", "HEAD~3..HEAD").split()
    assert [e["commit"] for e in history["entries"]] == main
    assert [e["date"] for e in history["entries"]] == [
        "2024-02-01T10:00:00Z",
        "2024-02-02T10:30:00Z",  # the committer date, in UTC
        "2024-02-03T09:15:00Z",
    ]
    assert {e["version"] for e in history["entries"]} == {__version__} and history["branch"] == "main"
    for entry, head in zip(history["entries"], flow.heads, strict=True):
        assert list(entry["sets"]) == [FIXTURE]
        for backend in ("bm25", "vector", "hybrid"):
            for metric in ("f1", "mrr", "precision_at_k", "recall"):
                assert entry["sets"][FIXTURE][backend][metric] == _mean(head, backend, metric)

    repo.push(RANKING_CHANGE, "h1: a ranking change on the feature branch")
    run = flow.pull_request()

    assert run.code == 0, run.stdout + run.stderr
    [comment] = fake_github.comments(REPO, PR_NUMBER)
    [line] = [x for x in comment["body"].splitlines() if x.startswith("📈 Trend of ")]
    backend = re.match(r"📈 Trend of MRR on `(\w+)` at `main`", line).group(1)  # type: ignore[union-attr]
    series = [_mean(head, backend, "mrr") for head in flow.heads]
    assert len(set(series)) > 1, "the pushes must move the mean for this test to mean anything"
    pr_head = json.loads(
        (repo.workspace / ".cce-relevance" / "sets" / "01-search" / "head.json").read_text(encoding="utf-8")
    )
    low, high = format3(min(series)), format3(max(series))
    assert line == (
        f"📈 Trend of MRR on `{backend}` at `main` (last 3 pushes, {low}–{high}): "
        f"{sparkline(series)} latest {format3(series[-1])} "
        f"· this PR {format3(_mean(pr_head, backend, 'mrr'))}"
    )
    assert sparkline(series)[0] != sparkline(series)[-1] or min(series) == max(series)
    assert line in run.summary  # the step summary too
    assert flow.history() == history  # a pull request only reads it


@pytest.mark.slow
def test_the_same_commit_pushed_again_replaces_its_entry_and_the_size_is_bounded(
    flow: Workflow, repo: Repository
) -> None:
    flow.push(INVOICE_REPORT, "m1", "2024-02-01T10:00:00Z")
    before, after = repo.push_main(SHIPPING_REPORT, "m2", "2024-02-02T10:00:00Z")
    event = repo.push_event(before, after)
    for _ in range(2):  # a re-run of the same push
        assert flow.run("push", event).code == 0
    history = flow.history()
    assert [e["commit"] for e in history["entries"]] == [before, after]
    saved = flow.cache.read_bytes()
    assert flow.run("push", event).code == 0 and flow.cache.read_bytes() == saved  # same commit, same bytes

    flow.push({"corpus/invoice_report.py": None}, "m3", "2024-02-03T10:00:00Z", **{"INPUT_HISTORY-SIZE": "2"})
    assert [e["commit"] for e in flow.history()["entries"]] == [after, repo._git("rev-parse", "HEAD")]


@pytest.mark.slow
def test_a_push_to_another_branch_records_nothing(flow: Workflow, repo: Repository) -> None:
    before, after = repo.push_main(INVOICE_REPORT, "m1", "2024-02-01T10:00:00Z")
    run = flow.run("push", repo.push_event(before, after, branch="release"))
    assert run.code == 0, run.stdout + run.stderr
    assert "not recorded, this push is not to the default branch" in run.stdout
    assert not flow.cache.exists()


@pytest.mark.slow
def test_a_corrupt_history_is_a_warning_a_push_starts_afresh_and_a_pull_request_shows_no_trend(
    flow: Workflow, repo: Repository, fake_github: FakeGitHub
) -> None:
    flow.cache.write_text(
        '{"schema": "cce.relevance.history/v1", "branch": "main", "entries": [{"commit": 1}]}'
    )
    repo.push(RANKING_CHANGE, "h1")
    run = flow.pull_request()
    assert run.code == 0, run.stdout + run.stderr
    [warning] = warnings(run)
    assert warning.startswith(f"input 'history': the trend history {HISTORY} entries[0] lacks date, sets")
    assert warning.endswith("; no trend line in the comment.")
    [comment] = fake_github.comments(REPO, PR_NUMBER)
    assert "Trend of" not in comment["body"]

    flow.cache.write_bytes(b"\x00garbage")
    run = flow.push(INVOICE_REPORT, "m1", "2024-02-01T10:00:00Z")
    [warning] = warnings(run)
    assert "cannot be parsed: invalid JSON" in warning and warning.endswith("; starting a new history.")
    assert [e["commit"] for e in flow.history()["entries"]] == [repo._git("rev-parse", "HEAD")]


def test_a_history_outside_the_workspace_is_refused(flow: Workflow, repo: Repository) -> None:
    before, after = repo.push_main(INVOICE_REPORT, "m1", "2024-02-01T10:00:00Z")
    for path in ("../history.json", "/tmp/history.json"):
        run = flow.run("push", repo.push_event(before, after), **{"INPUT_HISTORY": path})
        assert run.code == 2, run.stdout + run.stderr
        [error] = [data for name, _, data in runner_commands(run.stdout) if name == "error"]
        assert error.startswith(f"input 'history': {path!r} resolves outside the workspace")


def test_a_history_the_repository_tracks_or_the_output_directory_holds_is_refused(
    flow: Workflow, repo: Repository
) -> None:
    before, after = repo.push_main({"tracked/history.json": "{}\n", **CORPUS}, "m1", "2024-02-01T10:00:00Z")
    event = repo.push_event(before, after)
    cases = {
        "tracked/history.json": "is a file committed to the repository",
        ".cce-relevance/history.json": "is inside .cce-relevance/, which the Action replaces on every run",
        "corpus": "is a directory",
        ".": "is a directory",
    }
    for path, problem in cases.items():
        run = flow.run("push", event, **{"INPUT_HISTORY": path})
        assert run.code == 2, run.stdout + run.stderr
        [error] = [data for name, _, data in runner_commands(run.stdout) if name == "error"]
        assert error.startswith(f"input 'history': {path} {problem}")
    (repo.workspace / "linked").symlink_to(repo.workspace.parent)
    run = flow.run("push", event, **{"INPUT_HISTORY": "linked/workspace/h.json"})
    assert run.code == 2 and "passes through a symlink" in run.stdout
    # the file itself a symlink: out of the workspace, or into it; never read nor replaced
    (repo.workspace / "out.json").symlink_to("/etc/passwd")
    (repo.workspace / "in.json").symlink_to(repo.workspace / "corpus" / "billing.py")
    run = flow.run("push", event, **{"INPUT_HISTORY": "out.json"})
    assert run.code == 2 and "input 'history': 'out.json' resolves outside the workspace" in run.stdout
    run = flow.run("push", event, **{"INPUT_HISTORY": "in.json"})
    assert run.code == 2 and "input 'history': in.json passes through a symlink" in run.stdout
    assert (repo.workspace / "corpus" / "billing.py").read_text(encoding="utf-8") == CORPUS[
        "corpus/billing.py"
    ]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root, as in the container")
def test_as_root_the_history_is_handed_to_the_workspace_owner(flow: Workflow, repo: Repository) -> None:
    """actions/cache runs as the runner's user after the step: it must be able to read and replace
    what root wrote in the container (§runner-file-owner)."""
    before, after = repo.push_main(INVOICE_REPORT, "m1", "2024-02-01T10:00:00Z")
    run = flow.run("push", repo.push_event(before, after), owner="1001:1001")
    assert run.code == 0, run.stdout + run.stderr
    assert flow.owners == (1001, 1001)


HOSTILE_TEXT = [
    "<img src=x onerror=alert(1)> @octocat #1 [pwned](https://evil.example/)",
    "`<img src=x>`` @octocat",
]


def _history_with(where: str, value: str) -> dict[str, object]:
    """A valid history of two pushes on main, with `value` put at `where` (a field, or a key)."""
    means = {m: 0.5 for m in ("f1", "mrr", "precision_at_k", "recall")}
    entries: list[dict[str, object]] = [
        {
            "commit": sha * 40,
            "date": f"2024-02-0{day}T10:00:00Z",
            "version": __version__,
            "sets": {
                FIXTURE: {
                    b: {m: v + day / 10 for m, v in means.items()} for b in ("bm25", "vector", "hybrid")
                }
            },
        }
        for day, sha in ((1, "a"), (2, "b"))
    ]
    history: dict[str, object] = {"schema": "cce.relevance.history/v1", "branch": "main", "entries": entries}
    first, sets = entries[0], entries[0]["sets"]
    bm25 = sets[FIXTURE]["bm25"]  # type: ignore[index]
    if where in ("schema", "branch"):
        history[where] = value
    elif where == "document key":
        history[value] = 1
    elif where in ("commit", "date", "version"):
        first[where] = value
    elif where == "set key":
        sets[value] = sets[FIXTURE]  # type: ignore[index]
    elif where == "backend key":
        sets[FIXTURE][value] = {"mrr": 0.5}  # type: ignore[index]
    elif where == "metric key":
        bm25[value] = 0.5
    else:
        assert where == "mean"
        bm25["mrr"] = value
    return history


def _rendered_text(markdown: str) -> str:
    """`markdown` as GitHub renders it, but for its code spans and blocks (text, whatever they hold)."""
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    return re.sub(r"<code>.*?</code>", "", html, flags=re.S)


@pytest.mark.slow
@pytest.mark.parametrize("value", HOSTILE_TEXT, ids=["markup", "backticks"])
@pytest.mark.parametrize(
    "where",
    [
        "branch",
        "version",
        "set key",
        "commit",
        "date",
        "backend key",
        "metric key",
        "mean",
        "schema",
        "document key",
    ],
)
def test_markup_in_any_text_of_a_history_reaches_the_summary_as_text_only(
    flow: Workflow, repo: Repository, fake_github: FakeGitHub, where: str, value: str
) -> None:
    """A history is data an earlier run, or whoever can write the cache, left. Of its texts only
    the branch is shown (the trend line, escaped as fixture text is); every other field is
    used as a key or refused with a warning in the log, never printed into the summary."""
    flow.cache.write_text(json.dumps(_history_with(where, value)), encoding="utf-8")
    repo.push(RANKING_CHANGE, "h1")
    run = flow.pull_request()

    assert run.code == 0, run.stdout + run.stderr
    [comment] = fake_github.comments(REPO, PR_NUMBER)
    for shown in (run.summary, comment["body"]):
        text = _rendered_text(shown)
        assert "<img" not in text and 'href="https://evil.example' not in text and "@octocat" not in text, (
            text
        )
        assert value not in shown  # not even in a code span, where it would render as text
        if where == "branch":  # drawn, the branch escaped as text, and nowhere else
            [line] = [x for x in shown.splitlines() if x.startswith("📈 Trend of ")]
            assert f" at {escape_md(value)} (last 2 pushes, " in line
    assert {name for name, _, _ in runner_commands(run.stdout)} <= {"warning", "notice"}
