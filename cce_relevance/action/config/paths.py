"""Paths the repository supplies (fixtures, corpora, goldens, a config file) must stay in it, and
paths the inputs name must stay out of the Action's own output directory."""

from __future__ import annotations

import os
from pathlib import Path

# The Action's output directory at the workspace root, replaced on every run (workspace/output_dir.py)
OUTPUT_DIR = ".cce-relevance"


def inside(root: Path, path: Path) -> bool:
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
