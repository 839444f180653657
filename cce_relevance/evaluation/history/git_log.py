"""What `bootstrap --from-history` reads of a git repository: commits, their changed lines, blobs.

Three git processes, whatever the range: one `git log` for every commit's metadata, one
`git diff-tree` per commit that gets that far (its changed files and the line ranges each hunk
replaces, `-U0`), and one `git cat-file --batch` kept open for the files' texts at the parent and
at the commit. The user's range is passed after `--end-of-options`, so no part of it is read as
an option; output is read as bytes and paths as git writes them with `-z` (no quoting); no
pager, colour, external diff or text conversion applies. Paths are repository-relative, `/`
separated. A range git cannot resolve is an input error that says so.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType

from cce_relevance.errors import CceError

_FIELD, _RECORD = "\x1f", "\x00"
_LOG_FORMAT = "%H%x1f%P%x1f%an%x1f%ae%x1f%cI%x1f%s%x1f%b"
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
_CONFIG = ("-c", "core.quotepath=off", "-c", "diff.noprefix=false", "-c", "log.showSignature=false")


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    email: str
    date: str  # committer date, strict ISO 8601
    subject: str
    body: str


@dataclass(frozen=True)
class FileChange:
    """One changed file of a commit against its parent: `status` is git's letter (A, M, D, R, C,
    T); `old_path` None for an added file, `new_path` None for a deleted one; `old_lines` the
    parent's line ranges the hunks replace and `new_lines` the commit's lines that replace them,
    as (first, count): count 0 is an insertion (or deletion) after line `first`."""

    status: str
    old_path: str | None
    new_path: str | None
    old_lines: tuple[tuple[int, int], ...]
    new_lines: tuple[tuple[int, int], ...] = ()


class GitError(CceError):
    pass


class Repository:
    """A git repository, read through the `git` on PATH; use it as a context manager (it keeps a
    `cat-file` process open)."""

    def __init__(self, directory: str) -> None:
        self.directory = directory
        top = self._text(["rev-parse", "--show-toplevel"], f"{directory} is not in a git repository")
        self.root = top.strip()
        prefix = self._text(["rev-parse", "--show-prefix"], f"{directory} is not in a git work tree")
        self.prefix = prefix.strip()  # the directory within the repository, `/`-terminated or ''
        self._blobs: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Repository:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        if self._blobs is not None:
            assert self._blobs.stdin is not None and self._blobs.stdout is not None
            self._blobs.stdin.close()
            self._blobs.wait()
            self._blobs.stdout.close()
            self._blobs = None

    def _run(self, args: Sequence[str]) -> subprocess.CompletedProcess[bytes]:
        env = {**os.environ, "GIT_PAGER": "cat", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
        try:
            return subprocess.run(
                ["git", *_CONFIG, "-C", self.directory, *args], capture_output=True, env=env, check=False
            )
        except FileNotFoundError:
            raise GitError(
                "git is not installed (bootstrap --from-history reads the history with it)"
            ) from None

    def _text(self, args: Sequence[str], failure: str) -> str:
        done = self._run(args)
        if done.returncode != 0:
            detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise GitError(failure + (f": {detail[-1]}" if detail else ""))
        return done.stdout.decode("utf-8", "surrogateescape")

    def commits(self, revisions: str, since: str | None, until: str | None) -> Iterator[Commit]:
        """Every commit of `revisions` (a `git log` range) committed in [since, until], newest first
        (git's default order: committer date), merges included."""
        args = ["log", "-z", "--no-color", f"--format={_LOG_FORMAT}"]
        args += [f"--since={since}"] if since is not None else []
        args += [f"--until={until}"] if until is not None else []
        text = self._text(
            [*args, "--end-of-options", revisions, "--"], f"cannot read the history {revisions!r}"
        )
        for record in text.split(_RECORD):
            if not record.strip():
                continue
            sha, parents, author, email, date, subject, body = record.lstrip("\n").split(_FIELD, 6)
            yield Commit(sha, tuple(parents.split()), author, email, date, subject, body)

    def changes(self, parent: str, commit: str) -> list[FileChange]:
        """The files `commit` changed against `parent`, renames detected, with the parent's line
        ranges each hunk replaces."""
        done = self._run(
            [
                "diff-tree", "-r", "-z", "-p", "--raw", "-U0", "-M", "--no-color", "--no-ext-diff",
                "--no-textconv", "--end-of-options", parent, commit,
            ]
        )  # fmt: skip
        if done.returncode != 0:
            raise GitError(
                f"git diff-tree {parent[:12]} {commit[:12]} failed: {done.stderr.decode(errors='replace')}"
            )
        raw, _, patch = done.stdout.partition(b"\x00\x00diff --git ")
        entries = _raw_entries(raw)
        sections = _patch_sections(b"diff --git " + patch if patch else b"")
        if len(sections) != len(entries):  # a file git printed no patch header for: no lines known
            sections = [b""] * len(entries)
        return [
            FileChange(status, old, new, *_hunk_lines(section))
            for (status, old, new), section in zip(entries, sections, strict=True)
        ]

    def blob(self, revision: str, path: str) -> bytes | None:
        """The file at `path` in `revision`, or None when it has none (or it is not a file)."""
        if self._blobs is None:
            self._blobs = subprocess.Popen(
                ["git", *_CONFIG, "-C", self.directory, "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        assert self._blobs.stdin is not None and self._blobs.stdout is not None
        if "\n" in path:
            return None  # cat-file reads one name a line
        self._blobs.stdin.write(f"{revision}:{path}\n".encode("utf-8", "surrogateescape"))
        self._blobs.stdin.flush()
        header = self._blobs.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            return None
        data = self._blobs.stdout.read(int(header[2]))
        self._blobs.stdout.read(1)  # the newline after the contents
        return data


def _raw_entries(raw: bytes) -> list[tuple[str, str | None, str | None]]:
    """`--raw -z` records: `:modes shas STATUS\\0path\\0[path\\0]` → (status, old path, new path)."""
    fields = raw.split(b"\x00")
    entries: list[tuple[str, str | None, str | None]] = []
    i = 0
    while i < len(fields):
        head = fields[i]
        if not head.startswith(b":"):
            i += 1
            continue
        status = head.split()[-1].decode("ascii")[:1]
        first = fields[i + 1].decode("utf-8", "surrogateescape")
        if status in "RC":
            second = fields[i + 2].decode("utf-8", "surrogateescape")
            entries.append((status, first, second))
            i += 3
        else:
            entries.append((status, None if status == "A" else first, None if status == "D" else first))
            i += 2
    return entries


def _patch_sections(patch: bytes) -> list[bytes]:
    """The patch split at each file's `diff --git` header (a hunk line never starts so: with -U0
    every line of a hunk starts with `-`, `+` or `\\`)."""
    if not patch:
        return []
    starts = [m.start() for m in re.finditer(rb"^diff --git ", patch, re.MULTILINE)]
    return [patch[a:b] for a, b in zip(starts, [*starts[1:], len(patch)], strict=True)]


def _hunk_lines(section: bytes) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """Each hunk's (first, count) on the old side and on the new side (a missing count is 1)."""
    hunks = [
        ((int(m[1]), 1 if m[2] is None else int(m[2])), (int(m[3]), 1 if m[4] is None else int(m[4])))
        for m in _HUNK.finditer(section)
    ]
    return tuple(old for old, _ in hunks), tuple(new for _, new in hunks)
