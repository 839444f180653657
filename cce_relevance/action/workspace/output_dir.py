"""The Action's output directory, `.cce-relevance/` at the workspace root.

The `report` and `compare` outputs are paths, not contents (outputs share a 1 MB budget per job,
§runner-outputs), so the files they name must be readable by the steps that follow, which run on the host:
hence inside `GITHUB_WORKSPACE`, the only mount the host shares with the container for this
purpose. The directory belongs to the Action and is replaced on every run; a `.gitignore` inside
keeps it out of `git status` and out of any commit a later step makes. The container runs as
root on a workspace owned by the runner's user, so everything written here is handed back to the
workspace's owner (§runner-file-owner), or later steps could not delete or overwrite it.

Layout:
  cache/                   the index cache (input `cache-dir`, its default place): kept across runs,
                           with the saved head sides in cache/sides/ (saved/base_reuse.py)
  report.md                the full Markdown report (the summary may be trimmed)
  compare.json             `cce.relevance.action/v1`: per set its status, golden, comparison
  comment.md               the pull request comment as posted (fitted to GitHub's limit)
  pull-request.json        on pull request events: the number, head, comment key (`mode: publish`)
  sets/NN-NAME/base.json   the run report at base (`cce.relevance.report/v2`), when scored there
  sets/NN-NAME/head.json   the same at head; `cce-relevance compare` accepts the pair
  shard/shard-I-of-N.json  a `shard: I/N` run's state, instead of everything above (saved/shards.py)
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from cce_relevance.action.config.paths import OUTPUT_DIR as OUTPUT_DIR  # its home, for its readers
from cce_relevance.action.config.paths import refuse_blocked_steps
from cce_relevance.action.workspace.git import git
from cce_relevance.atomic_files import write_output
from cce_relevance.errors import CceError
from cce_relevance.reporting.canonical_json import dumps_report


class SetReports(Protocol):
    """A scored fixture set as `save_reports` sees it (scoring's `ComparedSet`): its report texts."""

    @property
    def fixture(self) -> str: ...

    @property
    def base(self) -> str | None: ...

    @property
    def head(self) -> str | None: ...


@dataclass(frozen=True)
class OutputFiles:
    """Workspace-relative POSIX paths of the files the outputs name."""

    report: str
    compare: str


def fresh_output_dir(workspace: Path, keep: Path | None = None) -> Path:
    """An empty `.cce-relevance/` in the workspace, replacing what a previous run left there,
    except `keep` (the index cache, when it lives there).

    The checkout is pull-request content: a `.cce-relevance` that is a file or a symlink (which
    could point anywhere) is refused rather than followed or deleted.
    """
    path = workspace / OUTPUT_DIR
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise CceError(
            f"{OUTPUT_DIR} in the workspace is not a directory: the Action writes its reports there",
            hint=f"remove {OUTPUT_DIR} from the repository",
        )
    if path.exists():
        _clear(path, keep)
    else:
        path.mkdir()
    _write(path / ".gitignore", "# written by the cce-relevance Action on every run\n*\n")
    return path


def _clear(directory: Path, keep: Path | None) -> None:
    """Delete everything in `directory` but `keep` and the directories leading to it."""
    for entry in directory.iterdir():
        real_dir = entry.is_dir() and not entry.is_symlink()
        if keep is not None and real_dir and keep.is_relative_to(entry):
            if entry != keep:
                _clear(entry, keep)
        elif real_dir:
            shutil.rmtree(entry)
        else:
            entry.unlink()


def prepare_cache_dir(repo: Path, workspace: Path, cache_dir: Path) -> Path:
    """Create the index cache's directory (with a `.gitignore`); returns the topmost directory
    this made, or `cache_dir` itself, for `give_to_workspace_owner` after the run.

    The cache decides what a file's chunks are, so it must come from earlier runs (actions/cache),
    never from the checkout: a directory holding files the repository tracks (a pull request can
    commit one) or reached through a symlink is refused.
    """
    shown = cache_dir.relative_to(workspace).as_posix()
    output = workspace / OUTPUT_DIR
    if cache_dir.is_relative_to(output) and not cache_dir.is_relative_to(output / "cache"):
        raise CceError(
            f"input 'cache-dir': {shown} would be replaced with the reports on every run",
            hint=f"inside {OUTPUT_DIR}/ only {OUTPUT_DIR}/cache (the default) is kept",
        )
    plain = "use a plain directory, such as the default .cce-relevance/cache"
    refuse_blocked_steps(workspace, cache_dir, "cache-dir", directory=True, plain=plain)
    if cache_dir.is_relative_to(repo):
        tracked = git(repo, "ls-files", "-z", "--", str(cache_dir)).split("\0")[0]
        if tracked:
            raise CceError(
                f"input 'cache-dir': {shown} holds files committed to the repository ({tracked}); the Action "
                "never reads an index cache the repository supplies",
                hint=f"remove {shown} from the repository, or point 'cache-dir' elsewhere",
            )
    created = next(
        (p for p in reversed(cache_dir.parents) if p.is_relative_to(workspace) and not p.exists()), cache_dir
    )
    cache_dir.mkdir(parents=True, exist_ok=True)
    ignore = cache_dir / ".gitignore"
    if not ignore.exists():
        _write(ignore, "# the cce-relevance Action's index cache\n*\n")
    return created


def save_reports(directory: Path, workspace: Path, sets: tuple[SetReports, ...]) -> dict[str, dict[str, str]]:
    """Each set's run reports under `sets/`; returns fixture → side → workspace-relative path."""
    saved: dict[str, dict[str, str]] = {}
    for number, result in enumerate(sets, start=1):
        folder = directory / "sets" / f"{number:02d}-{PurePosixPath(result.fixture).stem}"
        folder.mkdir(parents=True)
        for side, text in (("base", result.base), ("head", result.head)):
            if text is not None:
                _write(folder / f"{side}.json", text)
                saved.setdefault(result.fixture, {})[side] = _relative(folder / f"{side}.json", workspace)
    return saved


def save_summary(directory: Path, workspace: Path, markdown: str, document: dict[str, Any]) -> OutputFiles:
    """The full Markdown report and the `compare` document."""
    _write(directory / "report.md", markdown if markdown.endswith("\n") else markdown + "\n")
    _write(directory / "compare.json", dumps_report(document))
    return OutputFiles(
        _relative(directory / "report.md", workspace), _relative(directory / "compare.json", workspace)
    )


def save_comment(directory: Path, body: str, meta: dict[str, Any] | None) -> None:
    """The comment as posted, and (on a pull request) what a publishing run needs to post it."""
    _write(directory / "comment.md", body if body.endswith("\n") else body + "\n")
    if meta is not None:
        _write(directory / "pull-request.json", dumps_report(meta))


def give_to_workspace_owner(path: Path, workspace: Path) -> None:
    """chown `path` and everything below it to the owner of `workspace`, when we are root and
    they differ (GitHub runs container actions as root on a workspace owned by the runner)."""
    owner = workspace.stat()
    if os.geteuid() != 0 or (owner.st_uid, owner.st_gid) == (0, 0):
        return
    os.chown(path, owner.st_uid, owner.st_gid, follow_symlinks=False)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), owner.st_uid, owner.st_gid, follow_symlinks=False)


def _write(path: Path, text: str) -> None:
    write_output(str(path), text)


def _relative(path: Path, workspace: Path) -> str:
    return path.relative_to(workspace).as_posix()
