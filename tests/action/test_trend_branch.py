"""The trend history on a data branch (input `history-branch`), end to end with plain git: origin
is a real bare repository, the Action fetches the branch, commits the history on top and pushes
it; a pull request reads it. Nothing is force-pushed: a writer that comes second is refused by
origin and records again on top of the first."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cce_relevance.action.trend.branch_store import HistoryBranch
from cce_relevance.action.trend.history import Entry, History
from tests.action.fake_github import FakeGitHub
from tests.action.scenario import PR_NUMBER, RANKING_CHANGE, REPO
from tests.action.test_trend_e2e import INVOICE_REPORT, SHIPPING_REPORT, Repository, Workflow, warnings

BRANCH = "cce-relevance-data"
ON_BRANCH = {"INPUT_HISTORY": "", "INPUT_HISTORY-BRANCH": BRANCH}


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    bare = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    return bare


@pytest.fixture
def repo(tmp_path: Path, origin: Path) -> Repository:
    repository = Repository(tmp_path)
    repository._git("remote", "add", "origin", str(origin))
    return repository


@pytest.fixture
def flow(repo: Repository, tmp_path: Path, fake_github: FakeGitHub) -> Workflow:
    return Workflow(repo, tmp_path, fake_github)


def branch_log(origin: Path) -> list[str]:
    """The data branch's commits on origin, newest first: author, date, subject."""
    done = subprocess.run(
        ["git", "--git-dir", str(origin), "log", "--format=%an|%cI|%s", f"refs/heads/{BRANCH}"],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.splitlines()


def history_on(origin: Path, path: str = "history.json") -> dict:
    shown = subprocess.run(
        ["git", "--git-dir", str(origin), "show", f"refs/heads/{BRANCH}:{path}"],
        check=True,
        capture_output=True,
    )
    return json.loads(shown.stdout)


@pytest.mark.slow
def test_pushes_commit_the_history_on_the_branch_and_a_pull_request_reads_it(
    flow: Workflow, repo: Repository, origin: Path, fake_github: FakeGitHub
) -> None:
    flow.push(INVOICE_REPORT, "m1", "2024-02-01T10:00:00Z", **ON_BRANCH)
    before, after = repo.push_main(SHIPPING_REPORT, "m2", "2024-02-02T10:00:00Z")
    event = repo.push_event(before, after)
    second = flow.run("push", event, **ON_BRANCH)
    assert second.code == 0, second.stdout + second.stderr
    assert (
        f"Trend history history.json on branch {BRANCH}: recorded {after[:12]} (2 entries)." in second.stdout
    )
    assert not flow.cache.exists()  # nothing in the workspace to save

    assert branch_log(origin) == [
        f"github-actions[bot]|2024-02-02T10:00:00+00:00|cce-relevance: record {after[:12]}",
        f"github-actions[bot]|2024-02-01T10:00:00+00:00|cce-relevance: record {before[:12]}",
    ]
    history = history_on(origin)
    assert [e["commit"] for e in history["entries"]] == [before, after]
    rerun = flow.run("push", event, **ON_BRANCH)  # the same push again: the same history, no new commit
    assert rerun.code == 0 and len(branch_log(origin)) == 2

    repo.push(RANKING_CHANGE, "h1")
    run = flow.pull_request(**ON_BRANCH)
    assert run.code == 0, run.stdout + run.stderr
    [comment] = fake_github.comments(REPO, PR_NUMBER)
    [line] = [x for x in comment["body"].splitlines() if x.startswith("📈 Trend of MRR on ")]
    assert "at `main` (last 2 pushes" in line and line in run.summary


@pytest.mark.slow
def test_a_writer_that_comes_second_is_refused_and_the_next_run_records_on_top(
    flow: Workflow, repo: Repository, origin: Path
) -> None:
    store = HistoryBranch(repo.workspace, repo.workspace, BRANCH, "data/history.json")
    first = Entry("1" * 40, "2024-01-01T00:00:00Z", "0.1.0", {"eval/search.jsonl": {"bm25": {"mrr": 0.5}}})
    second = Entry("2" * 40, "2024-01-02T00:00:00Z", "0.1.0", {"eval/search.jsonl": {"bm25": {"mrr": 0.6}}})
    assert store.fetch() is None and store.read(None) is None
    assert store.write(History("main", (first,)), None, "the other run", 1_704_067_200)
    # This writer fetched before the other run pushed: origin refuses its commit, nothing is lost.
    assert store.write(History("main", (second,)), None, "this run", 1_704_153_600) is False
    tip = store.fetch()
    assert tip is not None and store.read(tip) == History("main", (first,))

    run = flow.push(
        INVOICE_REPORT, "m1", "2024-02-01T10:00:00Z", **{**ON_BRANCH, "INPUT_HISTORY": "data/history.json"}
    )
    head = repo._git("rev-parse", "HEAD")
    assert [e["commit"] for e in history_on(origin, "data/history.json")["entries"]] == ["1" * 40, head]
    assert [line.split("|")[2] for line in branch_log(origin)] == [
        f"cce-relevance: record {head[:12]}",
        "the other run",
    ]
    assert warnings(run) == []


@pytest.mark.slow
def test_a_symlink_on_the_branch_is_never_followed(
    flow: Workflow, repo: Repository, fake_github: FakeGitHub
) -> None:
    """A history file that is a symlink (to a file of the runner) is refused, not read."""
    secret = repo.workspace.parent / "secret.json"
    secret.write_text(json.dumps(History("main").document()), encoding="utf-8")  # a valid history, even
    index = {**os.environ, "GIT_INDEX_FILE": str(repo.workspace.parent / "index")}

    def plumb(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=repo.workspace,
            env=index,
            input=stdin,
            check=True,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip()

    link = plumb("hash-object", "-w", "--stdin", stdin=str(secret))
    plumb("update-index", "--add", "--cacheinfo", f"120000,{link},history.json")
    commit = plumb(
        "-c",
        "user.name=x",
        "-c",
        "user.email=x@example.invalid",
        "commit-tree",
        plumb("write-tree"),
        "-m",
        "a link",
    )
    plumb("push", "-q", "origin", f"{commit}:refs/heads/{BRANCH}")

    repo.push(RANKING_CHANGE, "h1")
    run = flow.pull_request(**ON_BRANCH)
    assert run.code == 0, run.stdout + run.stderr
    assert warnings(run) == [
        f"input 'history-branch': the trend history history.json on branch {BRANCH} is not a regular "
        "file on the branch; "
        "no trend line in the comment."
    ]
    [comment] = fake_github.comments(REPO, PR_NUMBER)
    assert "Trend of" not in comment["body"]


@pytest.mark.slow
def test_an_origin_that_cannot_be_reached_is_a_warning(
    flow: Workflow, repo: Repository, tmp_path: Path
) -> None:
    repo._git("remote", "set-url", "origin", f"https://token-value@127.0.0.1:9/{REPO}.git")
    run = flow.push(INVOICE_REPORT, "m1", "2024-02-01T10:00:00Z", **ON_BRANCH)
    [warning] = warnings(run)
    assert warning.startswith(
        f"Could not record in the trend history history.json on branch {BRANCH}: git ls-remote"
    )
    # git quotes the URL without its credentials
    assert "token-value" not in run.stdout + run.stderr and "'https://127.0.0.1:9/octo/demo.git/'" in warning


def test_the_default_branch_is_refused_as_the_history_branch(flow: Workflow, repo: Repository) -> None:
    before, after = repo.push_main(INVOICE_REPORT, "m1", "2024-02-01T10:00:00Z")
    run = flow.run("push", repo.push_event(before, after), **{**ON_BRANCH, "INPUT_HISTORY-BRANCH": "main"})
    assert run.code == 2, run.stdout + run.stderr
    assert "input 'history-branch': 'main' is the repository's default branch" in run.stdout


def test_a_history_branch_and_its_file_are_checked(tmp_path: Path) -> None:
    from cce_relevance.errors import CceError
    from tests.action.test_inputs import read

    workspace = tmp_path / "workspace"
    (workspace / "eval/relevance").mkdir(parents=True)
    (workspace / "eval/relevance/code.jsonl").write_text("{}\n")
    inputs = read(workspace, **{"history-branch": "data/trend"})
    assert (inputs.history, inputs.history_branch, inputs.history_file) == (
        None,
        "data/trend",
        "history.json",
    )
    assert read(workspace, history="a/b.json", **{"history-branch": "d"}).history_file == "a/b.json"
    for branch in ("-f", "a..b", ".hidden", "a/", "x.lock", "a b", "refs/heads/../x", "a//b", "ü"):
        with pytest.raises(CceError, match=f"input 'history-branch': {branch!r} is not a branch name"):
            read(workspace, **{"history-branch": branch})
    for path in ("../h.json", "/h.json", "a/./b.json", ".git/config", "a\\b"):
        with pytest.raises(CceError, match="is not a file path on branch 'data'"):
            read(workspace, history=path, **{"history-branch": "data"})


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root, as in the container")
def test_as_root_what_git_wrote_is_handed_to_the_workspace_owner(flow: Workflow, repo: Repository) -> None:
    before, after = repo.push_main(INVOICE_REPORT, "m1", "2024-02-01T10:00:00Z")
    run = flow.run("push", repo.push_event(before, after), owner="1001:1001", **ON_BRANCH)
    assert run.code == 0, run.stdout + run.stderr
    assert "recorded" in run.stdout
    not_owned = subprocess.run(
        ["find", str(repo.workspace), "!", "-uid", "1001"], check=True, capture_output=True, text=True
    ).stdout
    assert not_owned == ""  # the fetched objects, the private ref, the new commit's objects
