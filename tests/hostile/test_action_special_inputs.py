"""The Action's path inputs and the workspace it reads, end to end (a real repository, the entry
point as a real process with a timeout): a special file where a file or directory is expected
is an `::error` naming the input, exit 2 — never a block, never exit 70; and no pattern a pull
request commits makes git (or the walk) match for longer than a run may take.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.action.scenario import PullRequest
from tests.hostile.action_runs import make_special, refused, run_action

pytestmark = pytest.mark.slow  # the Action end to end, in a real repository

KINDS = ("fifo", "dev-null", "dev-zero", "socket", "directory", "dangling-link", "regular-file")


@pytest.mark.parametrize("event_name", ["pull_request", "push"])
@pytest.mark.parametrize("kind", KINDS[:-1])
def test_a_history_input_that_is_no_regular_file_is_refused(
    tmp_path: Path, kind: str, event_name: str
) -> None:
    """A FIFO blocked both runs forever (the read, then the write of a push); /dev/zero was a
    MemoryError (exit 70)."""
    pr = PullRequest(tmp_path)
    made = make_special(kind, pr.workspace / "history" / "h.json")
    next(made)
    error = refused(run_action(pr, tmp_path, event_name, INPUT_HISTORY="history/h.json"))
    assert "input 'history': history/h.json" in error
    made.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("where", ["cache-dir", "output directory"])
def test_a_directory_the_action_writes_that_is_anything_else_is_refused(
    tmp_path: Path, kind: str, where: str
) -> None:
    """A file named `.cce-relevance` in the checkout (the output directory's name, and the default
    cache's parent) was a NotADirectoryError, exit 70."""
    if kind == "directory":
        pytest.skip("a directory is what is expected")
    pr = PullRequest(tmp_path)
    name = "cache" if where == "cache-dir" else ".cce-relevance"
    made = make_special(kind, pr.workspace / name)
    next(made)
    inputs = {"INPUT_CACHE-DIR": "cache"} if where == "cache-dir" else {}
    error = refused(run_action(pr, tmp_path, **inputs))
    assert "input 'cache-dir'" in error and name in error
    if where == "output directory" and kind != "dangling-link":
        assert "the Action writes its reports there" in error
    made.close()


def _merge_without_matching(pr: PullRequest, files: dict[str, str]) -> None:
    """Push `files` to the feature branch and leave the workspace at the pull request's merge
    commit, as actions/checkout does, without git ever matching the new files against the new
    patterns (`git add`, `checkout` and `merge` would: the very stall under test). The commits
    are made with a private index; the workspace gets the merge's index and the files written
    by hand."""
    index = {"GIT_INDEX_FILE": str(pr.workspace.parent / "hostile-index")}
    env = {**os.environ, **index}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]

    def out(*args: str, text: str | None = None) -> str:
        done = subprocess.run(
            [*git, *args], cwd=pr.workspace, env=env, input=text, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    out("read-tree", "feature")
    for name, text in files.items():
        blob = out("hash-object", "-w", "--stdin", text=text)
        out("update-index", "--add", "--cacheinfo", f"100644,{blob},{name}")
    head = out("commit-tree", out("write-tree"), "-p", "feature", "-m", "hostile patterns")
    out("update-ref", "refs/heads/feature", head)
    pr._git("checkout", "-q", "--detach", "main")
    tree = out("merge-tree", "--write-tree", "main", head).split()[0]
    merge = out("commit-tree", tree, "-p", "main", "-p", head, "-m", "merge")
    pr._git("read-tree", merge)  # the index only: no file is checked out, nothing matched
    pr._git("update-ref", "--no-deref", "HEAD", merge)
    for name, text in files.items():
        (pr.workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (pr.workspace / name).write_text(text)


RUNAWAY = "*a" * 16 + "b"  # against 40 `a`s, a backtracking matcher tries ~10^10 ways
LONG_NAME = "a" * 40 + ".py"


def test_a_runaway_gitignore_line_does_not_stall_the_action(tmp_path: Path) -> None:
    """The head adds the line and a matching name. Switching the commit checkout from head to
    base with a two-tree `read-tree -m -u` made git match them (hours); the walk is linear."""
    pr = PullRequest(tmp_path)
    _merge_without_matching(
        pr, {"corpus/.gitignore": RUNAWAY + "\n", f"corpus/{LONG_NAME}": "def f():\n    return 1\n"}
    )
    run = run_action(pr, tmp_path, merged=True, INPUT_GOLDEN="")
    assert run.code == 0, run.stdout + run.stderr
    assert "internal error" not in run.stdout


def test_a_runaway_gitattributes_line_is_refused_before_git_matches_it(tmp_path: Path) -> None:
    """git looks every checked-out file up in `.gitattributes`; such a line stalled the checkout."""
    pr = PullRequest(tmp_path)
    _merge_without_matching(
        pr, {"corpus/.gitattributes": f"{RUNAWAY} text\n", f"corpus/{LONG_NAME}": "def f():\n    return 1\n"}
    )
    error = refused(run_action(pr, tmp_path, merged=True, INPUT_GOLDEN=""))
    assert "corpus/.gitattributes line 1" in error and "16 `*` wildcards" in error


def test_attributes_of_three_stars_are_checked_out(tmp_path: Path) -> None:
    pr = PullRequest(tmp_path)
    _merge_without_matching(pr, {"corpus/.gitattributes": "*_*_*.py text\n**/x/** -diff\n"})
    run = run_action(pr, tmp_path, merged=True, INPUT_GOLDEN="")
    assert run.code == 0, run.stdout + run.stderr


def test_special_files_are_made_as_the_table_says(tmp_path: Path) -> None:
    """The table's files are what their names say (a typo would test nothing)."""
    tests = {
        "fifo": stat.S_ISFIFO,
        "dev-null": stat.S_ISCHR,
        "dev-zero": stat.S_ISCHR,
        "socket": stat.S_ISSOCK,
    }
    for kind, test in tests.items():
        made = make_special(kind, tmp_path / kind)
        next(made)
        assert test((tmp_path / kind).lstat().st_mode), kind
        made.close()
