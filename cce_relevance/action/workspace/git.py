"""git for the Action: which two commits to compare, and the files of each, exactly.

Everything goes through the `git` executable with list arguments (never a shell) and
`GIT_TERMINAL_PROMPT=0`, so a fetch that would need credentials fails at once instead of hanging
the job; fetching from origin (the wanted commits, then every deepening step) has `FETCH_TIMEOUT`
seconds in all, and a fetch still running at that deadline is stopped (an error, exit 2).
Repository hooks are switched off (`core.hooksPath=/dev/null`): the Action must never
execute anything the repository provides.

No value reaches git where an option can go: a revision follows `--end-of-options` (git 2.24;
`rev-parse` learnt it in 2.30, and the image's Debian git is 2.47) and a path follows `--`, so
a commit field such as `--output=FILE` in an event or a shard's state is a revision git cannot
find, never an option that writes a file (tests/action/test_git_arguments.py checks every call).
A commit that comes from outside is also checked to be a full SHA (`commit_sha`) first.

A side is scored from its commit's tracked files and nothing else, so that its report is byte
for byte what `cce-relevance run` prints in a fresh clone of that commit. A `git worktree` is
not that: its `.git` is a file naming a machine-specific path, and the corpus walk indexes it.
`CommitFiles` writes the commit's tree into a temporary directory through a private index file
(`read-tree -u`, which checks files out as a clone does, `.gitattributes` conversions included);
the second commit is reached by updating only the files that differ.

git is never asked to match a pattern a pull request wrote where its matcher can take
exponential time. No call here makes git read a `.gitignore` (the switch between commits is a
one-tree `read-tree --reset -u`: a two-tree merge checked each removed file against the ignore
rules, and `*a*a…*ab` with a long name stalled it for hours). `.gitattributes` cannot be kept
from git, which looks every checked-out and diffed path up in it, and its matcher takes time of
the name's length to the power of the pattern's `*` count: a tree whose attributes hold a line
with more than `MAX_ATTRIBUTE_STARS` of them is refused before git sees it (exit 2, the file and
line named). The corpus walk matches `.gitignore` lines itself, in linear time (glob_nfa.py).

What the runner imposes (docs/reference-behaviour.md, "The GitHub runner"): the container runs as
root on a workspace owned by another uid, so git refuses the repository unless it is a
`safe.directory` (§runner-safe-directory), which every call here passes on its own command line,
never in the user's global config; the head of a pull request is `pull_request.head.sha`, not
`GITHUB_SHA`, which is an ephemeral merge commit (§runner-head-sha); a shallow checkout is
deepened step by step, never re-fetched with `--depth`, which would truncate a full clone
(§runner-shallow); the checked-out files live in a temporary directory removed in `finally`
(§runner-trees).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from cce_relevance.errors import CceError
from cce_relevance.untrusted_json import describe_type

PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_target"})
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # fullmatch: `$` would let a final newline through
_ZERO_SHA = re.compile(r"^0+$")
# Each step fetches more history than the last; `--unshallow` ends the loop with everything.
_DEEPEN_STEPS = ("--deepen=50", "--deepen=1000", "--unshallow")
_FETCH_DEPTH_HINT = "check the repository out with full history: actions/checkout with `fetch-depth: 0`"
FETCH_TIMEOUT = 300.0  # seconds for all the `git fetch` calls of `_ensure_history` together
_ATTRIBUTES = ":(glob)**/.gitattributes"  # every .gitattributes file, at any depth
# git matches `*` by backtracking: a name of n bytes against k stars costs about n^k / k! steps
# (4 stars and a 200-byte name: 2 s; 5: minutes). Three keep any name under 0.1 s.
MAX_ATTRIBUTE_STARS = 3
_MAX_ATTRIBUTES_BYTES = 1 << 20


class CommitPair(NamedTuple):
    """The commits to compare. `base` is None when there is nothing to compare against."""

    base: str | None
    head: str


def git(
    repo: Path | None, *args: str, env: Mapping[str, str] | None = None, timeout: float | None = None
) -> str:
    """Run `git ARGS` in `repo` and return its stdout; a failure is a CceError quoting git's stderr.

    `env` adds variables (a private index file, say) to the process's environment; a `timeout`
    (seconds, for a call to origin) stops git and is a CceError too."""
    try:
        return _run(repo, args, check=True, env=env, timeout=timeout).stdout
    except subprocess.CalledProcessError as exc:
        where = f" in {repo}" if repo is not None else ""
        raise CceError(
            f"git {' '.join(args)} failed{where} (exit {exc.returncode}): {exc.stderr.strip()}"
        ) from exc
    except subprocess.TimeoutExpired:
        raise CceError(f"git {' '.join(args)} did not finish within {timeout:g} seconds") from None


def commit_sha(value: object, what: str) -> str:
    """`value` when it is a full commit SHA (40 or 64 lowercase hexadecimal digits), else a
    CceError naming `what` ("the head commit") and the value: a commit taken from an event
    payload or a shard's state is data from outside, refused before git reads it as a revision."""
    if isinstance(value, str) and _SHA.fullmatch(value):
        return value
    shown = json.dumps(value)[:60] if isinstance(value, str) else f"a JSON {describe_type(value)}"
    raise CceError(f"{what} {shown} is not a commit: expected a full SHA (40 or 64 lowercase hex digits)")


def find_repository(path: Path) -> Path:
    """The top-level directory of the git repository containing `path`.

    Found by looking for `.git` (a directory, or a file in a worktree or submodule) rather than by
    asking git, because git refuses to answer before it knows the repository is safe, which is
    this path: `safe.directory` is matched against the top level, not a subdirectory.
    """
    start = Path(path).resolve()
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    raise CceError(
        f"no git repository at or above {start}: run actions/checkout (with `fetch-depth: 0`) "
        "before this action, or point 'working-directory' into the checkout"
    )


def resolve_commits(
    event_name: str, event_payload: Mapping[str, Any], repo: Path, *, base_ref: str | None, head_ref: str
) -> CommitPair:
    """Choose the base and head commits for this event, fetching missing history when shallow.

    - `pull_request` / `pull_request_target`: head is `pull_request.head.sha`; base is the
      merge-base of `pull_request.base.sha` and head, i.e. what the PR's diff is computed against
      (the event's base.sha alone may have moved on since the branch was cut).
    - `push`: `before` -> `after`. A `before` of zeros is a new branch: the base is then the head's
      first parent, or None for a root commit.
    - anything else: the `base-ref` (None when not given) and `head-ref` inputs.
    """
    if event_name in PULL_REQUEST_EVENTS:
        return _pull_request_commits(repo, event_name, event_payload)
    if event_name == "push":
        return _push_commits(repo, event_payload)
    head = _resolve_ref(repo, "head-ref", head_ref)
    base = _resolve_ref(repo, "base-ref", base_ref) if base_ref else None
    return CommitPair(base, head)


class EventCommits(NamedTuple):
    """The commits an event names, as far as they are known without the repository; None where
    only git can tell (a pull request's merge-base, a new branch's first parent, a ref input)."""

    base: str | None
    head: str | None


def event_commits(event_name: str, event_payload: Mapping[str, Any], head_ref: str) -> EventCommits:
    """What `resolve_commits` would start from, read from the event alone: the `mode: merge` job
    has no checkout, and checks that the shards it merges scored these commits (a shard state
    for another commit is one from another run, or forged)."""
    if event_name in PULL_REQUEST_EVENTS:
        head = _object(_object(event_payload.get("pull_request")).get("head")).get("sha")
        return EventCommits(None, _payload_sha(event_name, "pull_request.head.sha", head))
    if event_name == "push":
        before = _payload_sha("push", "before", event_payload.get("before"))
        after = _payload_sha("push", "after", event_payload.get("after"))
        return EventCommits(None if _ZERO_SHA.match(before) else before, after)
    return EventCommits(None, head_ref if _SHA.fullmatch(head_ref) else None)


class CommitFiles:
    """A temporary directory that holds exactly the tracked files of one commit at a time.

    `check_out(sha)` makes it hold `sha`'s: the first time by writing the whole tree, then by
    updating the files that differ from the commit held before (a one-tree `read-tree --reset
    -u`, which leaves unchanged files alone and, unlike a two-tree merge, never consults
    `.gitignore`), unless a `.gitattributes` file differs (a conversion may then change files
    whose content did not) or the directory holds anything git did not put there (a file added
    or changed since); then it is written again whole. A tree whose `.gitattributes` git would
    match too slowly is refused first (`check_attributes`).
    The index is a private file beside the directory: the repository's own index, working tree
    and worktree list are never touched.
    """

    def __init__(self, repo: Path, directory: Path) -> None:
        self._repo = repo
        self.path = directory / "tree"
        self._env = {"GIT_INDEX_FILE": str(directory / "index")}
        self._held: str | None = None

    def check_out(self, sha: str) -> Path:
        """Make the directory hold `sha`'s tracked files and nothing else; returns its path."""
        commit_sha(sha, "the commit to check out")
        check_attributes(self._repo, sha)
        if self._held is None or not self._switched(self._held, sha):
            shutil.rmtree(self.path, ignore_errors=True)
            self.path.mkdir()
            self._git("read-tree", "--reset", "-u", "--end-of-options", sha)
        self._held = sha
        return self.path

    def _switched(self, held: str, sha: str) -> bool:
        """Update the files from `held` to `sha` in place; False when that would not be exact."""
        touched = self._git("ls-files", "--others", "-z") or self._git("diff-files", "--name-only", "-z")
        if touched or git(
            self._repo, "diff", "--name-only", "--end-of-options", held, sha, "--", _ATTRIBUTES
        ):
            return False
        try:
            self._git("read-tree", "--reset", "-u", "--end-of-options", sha)
        except CceError:  # write everything again
            return False
        return True

    def _git(self, *args: str) -> str:
        # checkout.workers=0: files are written by one worker per CPU (docs/dev/performance.md,
        # "The Action's checkouts").
        return git(self._repo, "-c", "checkout.workers=0", f"--work-tree={self.path}", *args, env=self._env)


def check_attributes(repo: Path, sha: str) -> None:
    """Refuse `sha` when one of its `.gitattributes` files holds a pattern with more than
    `MAX_ATTRIBUTE_STARS` single `*` wildcards (`**` is matched differently and does not count):
    git would take hours to match it against a long file name (see the module docstring)."""
    try:
        listing = git(repo, "ls-tree", "-r", "-z", "--full-tree", "--end-of-options", sha)
    except CceError:  # no such commit: the checkout says so, in its own words
        return
    for entry in listing.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if path.rsplit("/", 1)[-1] != ".gitattributes" or len(parts) != 3 or parts[1] != "blob":
            continue
        text = git(repo, "cat-file", "blob", "--end-of-options", parts[2])[:_MAX_ATTRIBUTES_BYTES]
        for number, line in enumerate(text.splitlines(), 1):
            words = line.split()
            pattern = words[0] if words and not words[0].startswith("#") else ""
            stars = pattern.replace("**", "").count("*")
            if stars > MAX_ATTRIBUTE_STARS:
                raise CceError(
                    f"{path} line {number} of commit {sha[:12]}: the pattern has {stars} `*` "
                    f"wildcards; git matches each file name against it in time that grows as the "
                    f"name's length to that power, so at most {MAX_ATTRIBUTE_STARS} are allowed",
                    hint="write the pattern with fewer `*`, or as several patterns",
                )


@contextmanager
def commit_files(repo: Path, commits: Sequence[str] = ()) -> Iterator[CommitFiles]:
    """A `CommitFiles` in a fresh temporary directory outside the workspace (nothing root-owned
    is left in the user's checkout), removed on exit even when the body raises. It is made in
    memory (`memory_directory`) when the trees of `commits`, the commits it will hold, fit."""
    directory = Path(tempfile.mkdtemp(prefix="cce-commit-", dir=memory_directory(repo, commits)))
    try:
        yield CommitFiles(repo, directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


MEMORY_FILESYSTEM = Path("/dev/shm")
_MEMORY_SHARE = 2  # a tree may take at most 1/_MEMORY_SHARE of the memory filesystem's free space
_PAGE = 4096


def memory_directory(repo: Path, commits: Sequence[str]) -> str | None:
    """`MEMORY_FILESYSTEM` (a tmpfs on Linux, in a container too) when the largest tree of
    `commits` fits in half its free space, else None (the default temporary directory, or
    `TMPDIR` when set: a choice the caller made is kept).

    Written to disk (ext4 here), checking the standard library's 1,790 files out took 2 to 4
    times the time and CPU it takes in memory, nearly all of it the kernel's (journalled file
    creation, then removal); the walk reads them back faster too. The share leaves room for the
    rest of the filesystem's users (a container's is 64 MB unless the job says otherwise)."""
    if not commits or os.environ.get("TMPDIR") or not os.access(MEMORY_FILESYSTEM, os.W_OK | os.X_OK):
        return None
    try:
        stats = os.statvfs(MEMORY_FILESYSTEM)
    except OSError:
        return None
    needed = max(tree_bytes(repo, sha) for sha in commits)
    return str(MEMORY_FILESYSTEM) if needed * _MEMORY_SHARE <= stats.f_bavail * stats.f_frsize else None


def tree_bytes(repo: Path, sha: str) -> int:
    """An upper bound of the space `sha`'s tracked files take once checked out: each file's
    size rounded up to whole pages, plus a page (for a directory or a symbolic link)."""
    commit_sha(sha, "the commit to size")
    listing = git(repo, "ls-tree", "-r", "-t", "-l", "-z", "--full-tree", "--end-of-options", sha)
    total = 0
    for entry in listing.split("\0"):
        size = entry.partition("\t")[0].rsplit(" ", 1)[-1].strip()
        total += (int(size) // _PAGE + 1) * _PAGE if size.isdigit() else _PAGE * bool(entry)
    return total


def changed_files(repo: Path, base: str, head: str) -> tuple[str, ...]:
    """Repository paths that differ between `base` and `head`, sorted (the comment notes a change
    that edits a fixture set or a golden)."""
    commit_sha(base, "the base commit")
    commit_sha(head, "the head commit")
    out = git(repo, "diff", "--name-only", "--no-renames", "-z", "--end-of-options", base, head, "--")
    return tuple(sorted(name for name in out.split("\0") if name))


def _run(
    repo: Path | None,
    args: tuple[str, ...],
    *,
    check: bool,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """git with hooks off and, in `repo`, the repository trusted for this call only
    (§runner-safe-directory): the user's global config is never written, and a missing or unset
    HOME does not matter. A `timeout` (for network calls) stops git and raises
    `subprocess.TimeoutExpired`."""
    trust = ("-c", f"safe.directory={Path(repo).resolve()}") if repo is not None else ()
    try:
        return subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", *trust, *args],
            cwd=repo,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})},
            check=check,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except FileNotFoundError as exc:
        raise CceError("git is not installed or not on PATH: the Action needs it") from exc


def _pull_request_commits(repo: Path, event_name: str, payload: Mapping[str, Any]) -> CommitPair:
    pull = _object(payload.get("pull_request"))
    base_sha = _payload_sha(event_name, "pull_request.base.sha", _object(pull.get("base")).get("sha"))
    head_sha = _payload_sha(event_name, "pull_request.head.sha", _object(pull.get("head")).get("sha"))
    _ensure_history(repo, [base_sha, head_sha], lambda: _merge_base(repo, base_sha, head_sha) is not None)
    _require_commits(repo, {"pull_request.base.sha": base_sha, "pull_request.head.sha": head_sha})
    merge_base = _merge_base(repo, base_sha, head_sha)
    if merge_base is None:
        raise CceError(
            f"no common ancestor of base {base_sha} and head {head_sha}, even with the history "
            f"fetched so far: {_FETCH_DEPTH_HINT}"
        )
    return CommitPair(merge_base, head_sha)


def _push_commits(repo: Path, payload: Mapping[str, Any]) -> CommitPair:
    before = _payload_sha("push", "before", payload.get("before"))
    after = _payload_sha("push", "after", payload.get("after"))
    if _ZERO_SHA.match(after):
        raise CceError("this push deleted the branch ('after' is all zeros): there is no head to score")
    if not _ZERO_SHA.match(before):
        _ensure_history(repo, [before, after], lambda: _has_commit(repo, before) and _has_commit(repo, after))
        _require_commits(repo, {"before": before, "after": after})
        return CommitPair(before, after)
    # A new branch: compare with the head's first parent, which a shallow clone may lack.
    _ensure_history(repo, [after], lambda: _has_commit(repo, after) and after not in _shallow_commits(repo))
    _require_commits(repo, {"after": after})
    if after in _shallow_commits(repo):
        raise CceError(f"the parents of {after} are not in the repository: {_FETCH_DEPTH_HINT}")
    parents = git(repo, "rev-list", "--parents", "-n", "1", "--end-of-options", after).split()[1:]
    return CommitPair(parents[0] if parents else None, after)


def _object(value: object) -> Mapping[str, Any]:
    """A payload field read as an object; anything else (a string, a list, null) as an empty one,
    so the SHA check below names the missing field instead of crashing on the wrong type."""
    return value if isinstance(value, Mapping) else {}


def _payload_sha(event_name: str, name: str, value: object) -> str:
    if value is None:
        raise CceError(f"the {event_name} event payload has no {name}: expected a commit SHA")
    if not isinstance(value, str) or not _SHA.fullmatch(value):
        shown = json.dumps(value)[:60] if isinstance(value, str) else f"a JSON {describe_type(value)}"
        raise CceError(f"the {event_name} event payload's {name} is {shown}: expected a commit SHA")
    return value


def _has_commit(repo: Path, rev: str) -> bool:
    return (
        _run(repo, ("cat-file", "-e", "--end-of-options", f"{rev}^{{commit}}"), check=False).returncode == 0
    )


def _merge_base(repo: Path, a: str, b: str) -> str | None:
    result = _run(repo, ("merge-base", "--end-of-options", a, b), check=False)
    if result.returncode != 0:  # 1: no common ancestor in the history we have
        return None
    return result.stdout.strip()


def _shallow_commits(repo: Path) -> frozenset[str]:
    """The commits whose parents a shallow clone does not have (empty for a full clone)."""
    shallow = repo / git(repo, "rev-parse", "--git-path", "shallow").strip()
    return frozenset(shallow.read_text().split()) if shallow.is_file() else frozenset()


def _is_shallow(repo: Path) -> bool:
    return git(repo, "rev-parse", "--is-shallow-repository").strip() == "true"


def _ensure_history(repo: Path, wanted: list[str], ready: Callable[[], bool]) -> None:
    """Fetch from `origin` until `ready()` holds or nothing more can be fetched.

    First the wanted commits or refs by name (cheap, and the only way to reach a base that no
    fetched branch contains), then, for a shallow clone only, ever deeper `--deepen` steps ending
    in `--unshallow`. Fetch failures are not fatal here: the caller reports what is still missing.
    """
    if ready() or "origin" not in git(repo, "remote").split():
        return
    fetch = ("fetch", "--no-tags", "--no-recurse-submodules")
    deadline = time.monotonic() + FETCH_TIMEOUT
    _fetch(repo, (*fetch, "--end-of-options", "origin", *wanted), deadline)
    for step in _DEEPEN_STEPS:
        if ready() or not _is_shallow(repo):
            return
        _fetch(repo, (*fetch, step, "origin"), deadline)


def _fetch(repo: Path, args: tuple[str, ...], deadline: float) -> None:
    """One `git fetch`, given what is left of the fetches' common deadline (`time.monotonic()`)."""
    try:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise subprocess.TimeoutExpired(["git", *args], 0)
        _run(repo, args, check=False, timeout=remaining)
    except subprocess.TimeoutExpired:
        raise CceError(
            f"fetching history from origin did not finish within {FETCH_TIMEOUT:g} seconds in all "
            f"(stopped during `git {' '.join(args)}`: origin answers too slowly or not at all)",
            hint="check that the runner can reach the repository's origin, or check it out with "
            "`fetch-depth: 0` so that nothing needs fetching",
        ) from None


def _require_commits(repo: Path, commits: dict[str, str]) -> None:
    for name, sha in commits.items():
        if not _has_commit(repo, sha):
            raise CceError(f"commit {sha} ({name}) is not in the repository: {_FETCH_DEPTH_HINT}")


def _resolve_ref(repo: Path, name: str, ref: str) -> str:
    """A revision from an input, also tried as `origin/<ref>` (actions/checkout creates no local
    branches besides the one it checks out), fetched from origin when missing."""
    candidates = [ref] if _SHA.fullmatch(ref) else [ref, f"origin/{ref}"]

    def lookup() -> str | None:
        for candidate in candidates:
            result = _run(
                repo,
                ("rev-parse", "--verify", "--quiet", "--end-of-options", f"{candidate}^{{commit}}"),
                check=False,
            )
            if result.returncode == 0:
                return result.stdout.strip()
        return None

    _ensure_history(repo, [ref], lambda: lookup() is not None)
    sha = lookup()
    if sha is None and not _run(repo, ("rev-list", "-n", "1", "--all"), check=False).stdout.strip():
        raise CceError(
            f"input '{name}': {ref!r} names no commit: the repository at {repo} has no commits yet",
            hint="commit the fixtures and the corpus first; the Action compares commits",
        )
    if sha is None:
        if _is_shallow(repo):
            raise CceError(f"input '{name}': {ref!r} is not a commit in the repository: {_FETCH_DEPTH_HINT}")
        names = " or ".join(repr(c) for c in candidates)
        raise CceError(
            f"input '{name}': {ref!r} names no commit: the repository has its full history and no "
            f"branch, tag or commit {names}, here or on origin",
            hint=f"check the spelling of '{name}' (a branch, tag or commit SHA)",
        )
    return sha
