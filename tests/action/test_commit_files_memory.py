"""The commits' files are checked out in memory when their trees fit (action/workspace/git.py
`memory_directory`), and are then the same files a checkout on disk writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cce_relevance.action.workspace import git as git_module
from cce_relevance.action.workspace.git import MEMORY_FILESYSTEM, commit_files, memory_directory, tree_bytes
from cce_relevance.errors import CceError
from tests.action.test_git import Upstream, commit, isolated_git, tree_files, upstream

__all__ = ["isolated_git", "upstream"]  # the fixtures of test_git.py, used here too

memory = pytest.mark.skipif(
    not os.access(MEMORY_FILESYSTEM, os.W_OK | os.X_OK), reason=f"no writable {MEMORY_FILESYSTEM}"
)


def written_bytes(tree: Path) -> tuple[int, int]:
    """The files' sizes, and the entries (files, directories, links) under `tree`."""
    paths = list(tree.rglob("*"))
    return sum(p.stat().st_size for p in paths if p.is_file() and not p.is_symlink()), len(paths)


def test_tree_bytes_bounds_what_a_checkout_writes(upstream: Upstream) -> None:
    (upstream.path / "link").symlink_to("big.txt")
    head = commit(upstream.path, {"big.txt": "x" * 10_000, "deep/er/empty.txt": ""}, "big")
    for sha in (upstream.c1, upstream.f1, head):
        with commit_files(upstream.path) as files:
            size, entries = written_bytes(files.check_out(sha))
        bound = tree_bytes(upstream.path, sha)
        assert size < bound and 4096 * entries <= bound <= size + 4096 * entries  # a page an entry at most
    with pytest.raises(CceError, match="is not a commit"):
        tree_bytes(upstream.path, "--help")


@memory
def test_trees_that_fit_are_checked_out_in_memory_with_the_same_files(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TMPDIR", raising=False)
    commits = [upstream.c2, upstream.f1]
    assert memory_directory(upstream.path, commits) == str(MEMORY_FILESYSTEM)
    with commit_files(upstream.path, commits) as files:
        assert files.path.parent.parent == MEMORY_FILESYSTEM
        in_memory = [tree_files(files.check_out(sha)) for sha in commits]
        place = files.path.parent
    assert not place.exists()
    with commit_files(upstream.path) as files:
        assert files.path.parent.parent != MEMORY_FILESYSTEM
        assert [tree_files(files.check_out(sha)) for sha in commits] == in_memory


def test_the_default_temporary_directory_when_trees_do_not_fit_or_tmpdir_is_chosen(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TMPDIR", raising=False)
    assert memory_directory(upstream.path, []) is None  # nothing to size
    monkeypatch.setattr(git_module, "_MEMORY_SHARE", 10**15)  # no filesystem is that large
    assert memory_directory(upstream.path, [upstream.f1]) is None
    monkeypatch.undo()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert memory_directory(upstream.path, [upstream.f1]) is None
    monkeypatch.delenv("TMPDIR")
    monkeypatch.setattr(git_module, "MEMORY_FILESYSTEM", tmp_path / "no-such-filesystem")
    assert memory_directory(upstream.path, [upstream.f1]) is None
