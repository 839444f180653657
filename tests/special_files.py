"""Special files for the writer tests, made in a temporary directory (never the system's /dev)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

NULL, FULL = 3, 7  # minor numbers of /dev/null and /dev/full (major 1)


def device_node(path: Path, minor: int) -> Path:
    """A character device like /dev/null (`NULL`) or /dev/full (`FULL`) at `path`; skips the test
    when device nodes cannot be made (they need root, as in the Action's container and our CI)."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path
