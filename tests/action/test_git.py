"""The Action's git layer against real repositories built in tmp_path.

Every scenario is a real `git` history: an upstream with `main` and a `feature` branch whose base
moved on after it was cut, full and shallow (`--depth 1`) clones of it over `file://`, and event
payloads written to disk and read back through `read_inputs`, as the runner would hand them over.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cce_relevance.action.config.inputs import ActionInputs, read_inputs
from cce_relevance.action.config.paths import is_within
from cce_relevance.action.workspace.git import (
    CommitPair,
    changed_files,
    commit_files,
    find_repository,
    git,
    resolve_commits,
)
from cce_relevance.errors import CceError

ZERO = "0" * 40


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private global git config and a fixed identity: tests never touch the user's ~/.gitconfig."""
    config = tmp_path / "home" / ".gitconfig"
    config.parent.mkdir()
    monkeypatch.setenv("HOME", str(config.parent))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "test@example.invalid")
    return config


def sh(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def has_commit(repo: Path, rev: str) -> bool:
    probe = subprocess.run(
        ["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=repo, check=False, capture_output=True
    )
    return probe.returncode == 0


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", message)
    return sh(repo, "rev-parse", "HEAD")


class Upstream:
    """main: c1 - c2 - c3 - c4 ; feature: branched at c2, one commit f1 (base moved on by two)."""

    def __init__(self, root: Path) -> None:
        self.path = root / "upstream"
        self.path.mkdir()
        sh(self.path, "init", "-q", "-b", "main")
        self.c1 = commit(self.path, {"eval/relevance/code.jsonl": "{}\n", "src/a.py": "a = 1\n"}, "c1")
        self.c2 = commit(self.path, {"src/b.py": "b = 2\n"}, "c2")
        sh(self.path, "checkout", "-q", "-b", "feature")
        self.f1 = commit(self.path, {"src/a.py": "a = 10\n", "docs/new.md": "# new\n"}, "f1")
        sh(self.path, "checkout", "-q", "main")
        self.c3 = commit(self.path, {"src/c.py": "c = 3\n"}, "c3")
        self.c4 = commit(self.path, {"src/d.py": "d = 4\n"}, "c4")

    def clone(self, dest: Path, *options: str) -> Path:
        sh(self.path.parent, "clone", "-q", *options, f"file://{self.path}", str(dest))
        return dest


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    return Upstream(tmp_path)


def event_inputs(
    tmp: Path, workspace: Path, event_name: str, payload: dict[str, Any], **inputs: str
) -> ActionInputs:
    """Write the payload to a file and read everything back the way the container does."""
    event_path = tmp / f"{event_name}.json"
    event_path.write_text(json.dumps(payload))
    env = {
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_WORKSPACE": str(workspace),
        "INPUT_FIXTURES": "eval/relevance/code.jsonl",
        **{f"INPUT_{name.upper()}": value for name, value in inputs.items()},
    }
    return read_inputs(env)


def pull_request_payload(up: Upstream, action: str = "synchronize") -> dict[str, Any]:
    """The parts of GitHub's pull_request payload we read, in GitHub's shape."""
    return {
        "action": action,
        "number": 7,
        "pull_request": {
            "number": 7,
            "base": {"ref": "main", "sha": up.c4, "repo": {"full_name": "o/r"}},
            "head": {"ref": "feature", "sha": up.f1, "repo": {"full_name": "fork/r"}},
        },
        "repository": {"full_name": "o/r"},
    }


def resolve(inputs: ActionInputs, repo: Path) -> CommitPair:
    github = inputs.github
    return resolve_commits(
        github.event_name, github.event, repo, base_ref=inputs.base_ref, head_ref=inputs.head_ref
    )


@pytest.mark.parametrize("event_name", ["pull_request", "pull_request_target"])
def test_pull_request_base_is_the_merge_base_when_base_moved_on(
    tmp_path: Path, upstream: Upstream, event_name: str
) -> None:
    clone = upstream.clone(tmp_path / "clone")
    inputs = event_inputs(tmp_path, clone, event_name, pull_request_payload(upstream))
    assert resolve(inputs, clone) == CommitPair(upstream.c2, upstream.f1)


def test_shallow_clone_is_deepened_until_the_merge_base_is_found(tmp_path: Path, upstream: Upstream) -> None:
    clone = upstream.clone(tmp_path / "shallow", "--depth", "1", "--branch", "feature")
    assert sh(clone, "rev-parse", "--is-shallow-repository") == "true"
    assert not has_commit(clone, upstream.c4)

    inputs = event_inputs(tmp_path, clone, "pull_request", pull_request_payload(upstream))
    assert resolve(inputs, clone) == CommitPair(upstream.c2, upstream.f1)


def test_unreachable_commit_after_unshallowing_says_fetch_depth_0(tmp_path: Path, upstream: Upstream) -> None:
    clone = upstream.clone(tmp_path / "shallow", "--depth", "1", "--branch", "feature")
    payload = pull_request_payload(upstream)
    payload["pull_request"]["base"]["sha"] = "1234567890" * 4  # in no repository
    inputs = event_inputs(tmp_path, clone, "pull_request", payload)
    with pytest.raises(CceError, match=r"(1234567890){4} \(pull_request\.base\.sha\).*fetch-depth: 0"):
        resolve(inputs, clone)
    assert sh(clone, "rev-parse", "--is-shallow-repository") == "false"  # deepened before giving up


def test_shallow_clone_without_a_remote_fails_with_fetch_depth_hint(
    tmp_path: Path, upstream: Upstream
) -> None:
    clone = upstream.clone(tmp_path / "shallow", "--depth", "1", "--branch", "feature")
    sh(clone, "remote", "remove", "origin")
    inputs = event_inputs(tmp_path, clone, "pull_request", pull_request_payload(upstream))
    with pytest.raises(CceError, match="fetch-depth: 0"):
        resolve(inputs, clone)


def test_pull_request_payload_without_shas_is_a_config_error(tmp_path: Path, upstream: Upstream) -> None:
    inputs = event_inputs(tmp_path, upstream.path, "pull_request", {"action": "opened"})
    with pytest.raises(CceError, match=r"pull_request\.base\.sha"):
        resolve(inputs, upstream.path)


def test_push_compares_before_with_after(tmp_path: Path, upstream: Upstream) -> None:
    clone = upstream.clone(tmp_path / "clone")
    payload = {"ref": "refs/heads/main", "before": upstream.c2, "after": upstream.c4, "forced": False}
    inputs = event_inputs(tmp_path, clone, "push", payload)
    assert resolve(inputs, clone) == CommitPair(upstream.c2, upstream.c4)


def test_push_of_a_new_branch_uses_the_first_parent_even_from_a_shallow_clone(
    tmp_path: Path, upstream: Upstream
) -> None:
    clone = upstream.clone(tmp_path / "shallow", "--depth", "1", "--branch", "feature")
    payload = {"ref": "refs/heads/feature", "before": ZERO, "after": upstream.f1, "created": True}
    inputs = event_inputs(tmp_path, clone, "push", payload)
    assert resolve(inputs, clone) == CommitPair(upstream.c2, upstream.f1)


def test_push_of_a_new_branch_at_a_root_commit_has_no_base(tmp_path: Path) -> None:
    repo = tmp_path / "solo"
    repo.mkdir()
    sh(repo, "init", "-q", "-b", "main")
    root = commit(repo, {"eval/relevance/code.jsonl": "{}\n"}, "root")
    inputs = event_inputs(tmp_path, repo, "push", {"before": ZERO, "after": root})
    assert resolve(inputs, repo) == CommitPair(None, root)


def test_push_that_deletes_the_branch_is_refused(tmp_path: Path, upstream: Upstream) -> None:
    inputs = event_inputs(
        tmp_path, upstream.path, "push", {"before": upstream.c4, "after": ZERO, "deleted": True}
    )
    with pytest.raises(CceError, match="deleted the branch"):
        resolve(inputs, upstream.path)


def test_workflow_dispatch_uses_the_ref_inputs_and_finds_remote_branches(
    tmp_path: Path, upstream: Upstream
) -> None:
    clone = upstream.clone(tmp_path / "clone", "--branch", "feature")
    assert not has_commit(clone, "refs/heads/main")  # only origin/main
    payload = {"ref": "refs/heads/feature", "inputs": {}}
    inputs = event_inputs(tmp_path, clone, "workflow_dispatch", payload, **{"BASE-REF": "main"})
    assert resolve(inputs, clone) == CommitPair(upstream.c4, upstream.f1)


def test_workflow_dispatch_fetches_a_base_ref_missing_from_a_shallow_clone(
    tmp_path: Path, upstream: Upstream
) -> None:
    clone = upstream.clone(tmp_path / "shallow", "--depth", "1", "--branch", "feature")
    inputs = event_inputs(
        tmp_path, clone, "workflow_dispatch", {}, **{"BASE-REF": upstream.c3, "HEAD-REF": "HEAD"}
    )
    assert resolve(inputs, clone) == CommitPair(upstream.c3, upstream.f1)


def test_workflow_dispatch_without_base_ref_scores_head_only(tmp_path: Path, upstream: Upstream) -> None:
    inputs = event_inputs(tmp_path, upstream.path, "workflow_dispatch", {"inputs": {}})
    assert resolve(inputs, upstream.path) == CommitPair(None, upstream.c4)


def test_unknown_base_ref_in_a_full_clone_is_a_misspelt_name_not_missing_history(
    tmp_path: Path, upstream: Upstream
) -> None:
    clone = upstream.clone(tmp_path / "full")
    inputs = event_inputs(tmp_path, clone, "schedule", {}, **{"BASE-REF": "no-such-branch"})
    with pytest.raises(CceError) as info:
        resolve(inputs, clone)
    assert info.value.message == (
        "input 'base-ref': 'no-such-branch' names no commit: the repository has its full "
        "history and no branch, tag or commit 'no-such-branch' or "
        "'origin/no-such-branch', here or on origin"
    )
    assert info.value.hint == "check the spelling of 'base-ref' (a branch, tag or commit SHA)"
    assert "fetch-depth" not in info.value.message + str(info.value.hint)


def test_unknown_base_ref_in_a_shallow_clone_asks_for_full_history(
    tmp_path: Path, upstream: Upstream
) -> None:
    clone = upstream.clone(tmp_path / "shallow", "--depth", "1", "--branch", "feature")
    sh(clone, "remote", "remove", "origin")  # nothing more can be fetched
    inputs = event_inputs(tmp_path, clone, "schedule", {}, **{"BASE-REF": "no-such-branch"})
    with pytest.raises(CceError, match=r"input 'base-ref': 'no-such-branch'.*fetch-depth: 0"):
        resolve(inputs, clone)


def worktree_dirs(repo: Path) -> list[str]:
    listing = sh(repo, "worktree", "list", "--porcelain")
    return [line.split(" ", 1)[1] for line in listing.splitlines() if line.startswith("worktree ")]


def tree_files(root: Path) -> dict[str, str]:
    """Every entry below `root` (files with their text, symlinks with their target)."""
    found = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[name] = f"-> {os.readlink(path)}"
        elif path.is_file():
            found[name] = path.read_text()
    return found


def test_commit_files_are_exactly_the_commits_tracked_files(upstream: Upstream) -> None:
    (upstream.path / "untracked.py").write_text("left over\n")  # in the checkout, not in any commit
    with commit_files(upstream.path) as files:
        tree = files.check_out(upstream.f1)
        assert tree_files(tree) == {
            "docs/new.md": "# new\n",
            "eval/relevance/code.jsonl": "{}\n",
            "src/a.py": "a = 10\n",
            "src/b.py": "b = 2\n",
        }
        assert not (tree / ".git").exists()
        assert files.check_out(upstream.c4) == tree  # the next commit, in the same place
        assert tree_files(tree) == {
            "eval/relevance/code.jsonl": "{}\n",
            "src/a.py": "a = 1\n",
            "src/b.py": "b = 2\n",
            "src/c.py": "c = 3\n",
            "src/d.py": "d = 4\n",
        }
        assert not (tree / "docs").exists()
        outside = tree.parent
    assert not outside.exists()
    assert worktree_dirs(upstream.path) == [str(upstream.path)]  # no worktree was ever added
    assert sh(upstream.path, "status", "--porcelain") == "?? untracked.py"  # the checkout is untouched
    assert sh(upstream.path, "rev-parse", "HEAD") == upstream.c4


def test_switching_commits_never_keeps_a_file_git_did_not_write(upstream: Upstream) -> None:
    with commit_files(upstream.path) as files:
        tree = files.check_out(upstream.c2)
        (tree / "scratch.txt").write_text("written while scoring")
        (tree / "src" / "a.py").write_text("edited while scoring")
        files.check_out(upstream.f1)
        assert tree_files(tree) == {
            "docs/new.md": "# new\n",
            "eval/relevance/code.jsonl": "{}\n",
            "src/a.py": "a = 10\n",
            "src/b.py": "b = 2\n",
        }
        (tree / "src" / "b.py").write_text("edited")  # tracked and unchanged between the commits
        files.check_out(upstream.c2)
        assert tree_files(tree) == {
            "eval/relevance/code.jsonl": "{}\n",
            "src/a.py": "a = 1\n",
            "src/b.py": "b = 2\n",
        }


def test_a_changed_gitattributes_file_rewrites_every_file(upstream: Upstream) -> None:
    """`text eol=crlf` changes how an unchanged blob is checked out: the switch must redo it."""
    sh(upstream.path, "checkout", "-q", "feature")
    crlf = commit(upstream.path, {".gitattributes": "*.py text eol=crlf\n"}, "crlf")
    with commit_files(upstream.path) as files:
        tree = files.check_out(upstream.f1)
        assert (tree / "src" / "b.py").read_bytes() == b"b = 2\n"
        files.check_out(crlf)
        assert (tree / "src" / "b.py").read_bytes() == b"b = 2\r\n"
        files.check_out(upstream.f1)
        assert (tree / "src" / "b.py").read_bytes() == b"b = 2\n"
        assert not (tree / ".gitattributes").exists()


def test_commit_files_are_removed_when_the_body_raises(upstream: Upstream) -> None:
    with pytest.raises(RuntimeError, match="boom"), commit_files(upstream.path) as files:
        tree = files.check_out(upstream.c1)
        raise RuntimeError("boom")
    assert not tree.parent.exists()


def test_checking_out_never_runs_repository_hooks(upstream: Upstream, tmp_path: Path) -> None:
    marker = tmp_path / "hook-ran"
    for name in ("post-checkout", "post-index-change"):
        hook = upstream.path / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
        hook.chmod(0o755)
    with commit_files(upstream.path) as files:
        files.check_out(upstream.c1)
        files.check_out(upstream.f1)
    assert not marker.exists()


def test_checking_out_a_missing_commit_fails_and_leaves_nothing(upstream: Upstream) -> None:
    with pytest.raises(CceError, match="read-tree"), commit_files(upstream.path) as files:
        place = files.path.parent
        files.check_out("1234567890" * 4)
    assert not place.exists()
    with pytest.raises(CceError, match="is not a commit"), commit_files(upstream.path) as files:
        files.check_out("--help")


def test_changed_files_between_merge_base_and_head(upstream: Upstream) -> None:
    assert changed_files(upstream.path, upstream.c2, upstream.f1) == ("docs/new.md", "src/a.py")
    assert changed_files(upstream.path, upstream.f1, upstream.f1) == ()


def test_git_failure_quotes_stderr(upstream: Upstream) -> None:
    with pytest.raises(
        CceError,
        match=r"git rev-parse --verify nope failed in .*\(exit 128\): fatal: Needed a single revision",
    ):
        git(upstream.path, "rev-parse", "--verify", "nope")


def test_is_within_resolves_dotdot_and_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "secret").mkdir()
    (root / "escape").symlink_to(tmp_path / "secret")
    (root / "alias").symlink_to(root / "sub")
    assert is_within(root, Path("sub/file.txt"))
    assert is_within(root, Path("."))
    assert is_within(root, root / "alias" / "x")
    assert is_within(root, Path("sub/../sub/x"))
    assert not is_within(root, Path("../secret"))
    assert not is_within(root, Path("sub/../../secret/x"))
    assert not is_within(root, Path("escape/x"))
    assert not is_within(root, tmp_path / "repo-sibling")
    assert not is_within(root, Path("/etc/passwd"))


def test_find_repository_walks_up_to_the_top_level(upstream: Upstream, tmp_path: Path) -> None:
    assert find_repository(upstream.path / "src") == upstream.path
    worktree = tmp_path / "linked"
    sh(upstream.path, "worktree", "add", "-q", "--detach", str(worktree), upstream.c1)
    assert find_repository(worktree / "eval" / "relevance") == worktree  # `.git` is a file there
    outside = tmp_path / "plain"
    outside.mkdir()
    with pytest.raises(CceError, match="actions/checkout"):
        find_repository(outside)


def test_git_never_writes_the_global_config_and_needs_no_home(
    upstream: Upstream, isolated_git: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    before = isolated_git.read_bytes() if isolated_git.exists() else None
    with commit_files(upstream.path) as files:
        files.check_out(upstream.f1)
    assert (isolated_git.read_bytes() if isolated_git.exists() else None) == before
    monkeypatch.setenv("HOME", str(tmp_path / "no-such-home"))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL")
    with commit_files(upstream.path) as files:
        assert (files.check_out(upstream.f1) / "src" / "a.py").read_text() == "a = 10\n"
    monkeypatch.delenv("HOME")
    assert git(upstream.path, "rev-parse", "HEAD").strip() == upstream.c4
    assert not (tmp_path / "no-such-home").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own a repository as another user")
def test_root_uses_a_repository_owned_by_another_user_without_trusting_it_globally(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch, isolated_git: Path
) -> None:
    """What GitHub does: the workspace belongs to the runner's uid, the container runs as root."""
    monkeypatch.delenv("SUDO_UID", raising=False)
    for path in [upstream.path, *upstream.path.rglob("*")]:
        os.lchown(path, 65534, 65534)
    refused = subprocess.run(["git", "status"], cwd=upstream.path, capture_output=True, text=True)
    assert "dubious ownership" in refused.stderr
    with commit_files(upstream.path) as files:
        assert (files.check_out(upstream.f1) / "docs" / "new.md").is_file()
    assert git(upstream.path, "rev-parse", "HEAD").strip() == upstream.c4
    assert not isolated_git.exists() or b"safe" not in isolated_git.read_bytes()
    refused = subprocess.run(["git", "status"], cwd=upstream.path, capture_output=True, text=True)
    assert "dubious ownership" in refused.stderr  # still untrusted outside the Action's own calls
