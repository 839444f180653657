"""Paths the repository supplies (fixtures, corpora, goldens, a config file) must stay in it."""

from __future__ import annotations

from pathlib import Path


def inside(root: Path, path: Path) -> bool:
    """True when `path` (relative paths are taken from `root`), with symlinks and '..' resolved,
    is `root` itself or below it. Used to refuse a fixture or corpus that escapes the repository."""
    root = Path(root).resolve()
    return (root / path).resolve().is_relative_to(root)
