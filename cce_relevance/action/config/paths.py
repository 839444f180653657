"""Paths the repository supplies (fixtures, corpora, goldens, a config file) must stay in it,
paths the inputs name must stay out of the Action's own output directory, and a path the Action
writes below the workspace must not pass through what the checkout could have put there."""

from __future__ import annotations

import os
from pathlib import Path

from cce_relevance.errors import CceError

# The Action's output directory at the workspace root, replaced on every run (workspace/output_dir.py)
OUTPUT_DIR = ".cce-relevance"


def is_within(root: Path, path: Path) -> bool:
    """True when `path` (relative paths are taken from `root`), with symlinks and '..' resolved,
    is `root` itself or below it. Used to refuse a fixture or corpus that escapes the repository."""
    root = Path(root).resolve()
    return (root / path).resolve().is_relative_to(root)


def in_output_dir(workspace: Path, path: Path) -> bool:
    """True when `path` (absolute, in `workspace`), as written or with symlinks resolved, is the
    output directory or below it: whatever an input names there is gone when the run writes."""
    output = workspace / OUTPUT_DIR
    written = Path(os.path.normpath(path))
    return written.is_relative_to(output) or path.resolve().is_relative_to(output.resolve())


def refuse_blocked_steps(
    workspace: Path, path: Path, name: str, *, directory: bool, plain: str, blocked: str | None = None
) -> None:
    """Refuse input `name`'s `path` (absolute, in `workspace`) when a directory on the way to it
    is a symlink (which the checkout may point anywhere) or exists and is not a directory (no
    write below it could succeed). With `directory`, `path` itself is one of those directories;
    otherwise it is a file and may be a regular one.

    `plain` is the symlink error's hint (a plain path of the right kind); `blocked` is the hint
    for a step that is not a directory (default: remove it from the repository)."""
    relative = path.relative_to(workspace)
    shown, parts = relative.as_posix(), relative.parts
    for depth in range(1, len(parts) + 1):
        step = workspace / Path(*parts[:depth])
        if step.is_symlink():
            raise CceError(f"input '{name}': {shown} passes through a symlink in the workspace", hint=plain)
        if (directory or depth < len(parts)) and step.exists() and not step.is_dir():
            where = step.relative_to(workspace).as_posix()
            raise CceError(
                f"input '{name}': {shown}: {where} in the workspace exists and is not a directory"
                + (": the Action writes its reports there" if where == OUTPUT_DIR else ""),
                hint=blocked or f"remove {where} from the repository",
            )
