"""git for the Action: which two commits to compare, and each one checked out on its own.

Everything goes through the `git` executable with list arguments (never a shell) and
`GIT_TERMINAL_PROMPT=0`, so a fetch that would need credentials fails at once instead of hanging
the job. Repository hooks are switched off (`core.hooksPath=/dev/null`): `git worktree add` runs
`post-checkout`, and the Action must never execute anything the checked-out tree provides.

What the runner imposes (docs/reference-behaviour.md, "The GitHub runner"): the container runs as
root on a workspace owned by another uid, so git refuses the repository until it is a
`safe.directory` (§runner-safe-directory); the head of a pull request is `pull_request.head.sha`,
not `GITHUB_SHA`, which is an ephemeral merge commit (§runner-head-sha); a shallow checkout is
deepened step by step, never re-fetched with `--depth`, which would truncate a full clone
(§runner-shallow); worktrees live in a temporary directory and are removed in `finally`
(§runner-worktrees).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from cce_relevance.errors import CceError

if TYPE_CHECKING:
    from cce_relevance.action.inputs import ActionInputs

PULL_REQUEST_EVENTS = frozenset({"pull_request", "pull_request_target"})
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_ZERO_SHA = re.compile(r"^0+$")
# Each step fetches more history than the last; `--unshallow` ends the loop with everything.
_DEEPEN_STEPS = ("--deepen=50", "--deepen=1000", "--unshallow")
_FETCH_DEPTH_HINT = "check the repository out with full history: actions/checkout with `fetch-depth: 0`"


class CommitPair(NamedTuple):
    """The commits to compare. `base` is None when there is nothing to compare against."""

    base: str | None
    head: str


def git(repo: Path | None, *args: str) -> str:
    """Run `git ARGS` in `repo` and return its stdout; a failure is a CceError quoting git's stderr."""
    try:
        return _run(repo, args, check=True).stdout
    except subprocess.CalledProcessError as exc:
        where = f" in {repo}" if repo is not None else ""
        raise CceError(
            f"git {' '.join(args)} failed{where} (exit {exc.returncode}): {exc.stderr.strip()}"
        ) from exc


def mark_safe_directory(path: Path) -> None:
    """Trust the repository at `path` in the global git config, once.

    GitHub mounts the workspace owned by the runner's uid while a container action runs as root,
    and git then refuses the repository as of "dubious ownership". Checking before adding keeps
    `$HOME/.gitconfig` (which outlives the step) from growing a line per run.
    """
    target = str(Path(path).resolve())
    configured = _run(None, ("config", "--global", "--get-all", "safe.directory"), check=False)
    if target in configured.stdout.splitlines() or "*" in configured.stdout.splitlines():
        return
    git(None, "config", "--global", "--add", "safe.directory", target)


def find_repository(path: Path) -> Path:
    """The top-level directory of the git repository containing `path`.

    Found by looking for `.git` (a directory, or a file in a worktree or submodule) rather than by
    asking git, because git refuses to answer before `mark_safe_directory`, which needs this path:
    `safe.directory` is matched against the top level, not a subdirectory.
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
    event_name: str, event_payload: Mapping[str, Any], inputs: ActionInputs, repo: Path
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
    head = _resolve_ref(repo, "head-ref", inputs.head_ref)
    base = _resolve_ref(repo, "base-ref", inputs.base_ref) if inputs.base_ref else None
    return CommitPair(base, head)


@contextmanager
def worktree(repo: Path, sha: str) -> Iterator[Path]:
    """Check `sha` out, detached, into a fresh temporary worktree; always removed on exit.

    The worktree lives outside the workspace (nothing root-owned is left in the user's checkout)
    and is removed even when the body raises: `git worktree remove --force`, then the directory,
    then `git worktree prune` so `.git/worktrees` keeps no stale entry.
    """
    if sha.startswith("-"):
        raise CceError(f"{sha!r} is not a commit")
    parent = Path(tempfile.mkdtemp(prefix=f"cce-{sha[:12]}-"))
    path = parent / "tree"
    try:
        git(repo, "worktree", "add", "--detach", str(path), sha)
        yield path
    finally:
        _run(repo, ("worktree", "remove", "--force", str(path)), check=False)
        shutil.rmtree(parent, ignore_errors=True)
        _run(repo, ("worktree", "prune"), check=False)


def changed_files(repo: Path, base: str, head: str) -> tuple[str, ...]:
    """Repository paths that differ between `base` and `head`, sorted (for the report's footer)."""
    out = git(repo, "diff", "--name-only", "--no-renames", "-z", base, head, "--")
    return tuple(sorted(name for name in out.split("\0") if name))


def _run(repo: Path | None, args: tuple[str, ...], *, check: bool) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    try:
        return subprocess.run(
            ["git", "-c", "core.hooksPath=/dev/null", *args],
            cwd=repo,
            env=env,
            check=check,
            capture_output=True,
            text=True,
        )
    except FileNotFoundError as exc:
        raise CceError("git is not installed or not on PATH: the Action needs it") from exc


def _pull_request_commits(repo: Path, event_name: str, payload: Mapping[str, Any]) -> CommitPair:
    pull = payload.get("pull_request") or {}
    base_sha = _payload_sha(event_name, "pull_request.base.sha", (pull.get("base") or {}).get("sha"))
    head_sha = _payload_sha(event_name, "pull_request.head.sha", (pull.get("head") or {}).get("sha"))
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
    parents = git(repo, "rev-list", "--parents", "-n", "1", after).split()[1:]
    return CommitPair(parents[0] if parents else None, after)


def _payload_sha(event_name: str, name: str, value: object) -> str:
    if not isinstance(value, str) or not _SHA.match(value):
        raise CceError(
            f"the {event_name} event payload has no valid {name} (got {value!r}): expected a commit SHA"
        )
    return value


def _has_commit(repo: Path, rev: str) -> bool:
    return _run(repo, ("cat-file", "-e", f"{rev}^{{commit}}"), check=False).returncode == 0


def _merge_base(repo: Path, a: str, b: str) -> str | None:
    result = _run(repo, ("merge-base", a, b), check=False)
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
    fetch = ("fetch", "--no-tags", "--no-recurse-submodules", "origin")
    _run(repo, (*fetch, *wanted), check=False)
    for step in _DEEPEN_STEPS:
        if ready() or not _is_shallow(repo):
            return
        _run(repo, (*fetch, step), check=False)


def _require_commits(repo: Path, commits: dict[str, str]) -> None:
    for name, sha in commits.items():
        if not _has_commit(repo, sha):
            raise CceError(f"commit {sha} ({name}) is not in the repository: {_FETCH_DEPTH_HINT}")


def _resolve_ref(repo: Path, name: str, ref: str) -> str:
    """A revision from an input, also tried as `origin/<ref>` (actions/checkout creates no local
    branches besides the one it checks out), fetched from origin when missing."""
    candidates = [ref] if _SHA.match(ref) else [ref, f"origin/{ref}"]

    def lookup() -> str | None:
        for candidate in candidates:
            result = _run(repo, ("rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"), check=False)
            if result.returncode == 0:
                return result.stdout.strip()
        return None

    _ensure_history(repo, [ref], lambda: lookup() is not None)
    sha = lookup()
    if sha is None:
        raise CceError(f"input '{name}': {ref!r} is not a commit in the repository: {_FETCH_DEPTH_HINT}")
    return sha
