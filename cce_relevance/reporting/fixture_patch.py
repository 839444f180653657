"""A fixture file's proposed fixes as a unified diff that `git apply` and `patch -p1` accept."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

_NO_NEWLINE = "\\ No newline at end of file\n"


def unified_patch(path: str, before: Sequence[str], after: Sequence[str]) -> str:
    """The diff from `before` to `after` (lines with their ends) of the file at `path`, a
    `/`-separated path relative to where the patch is applied; '' when they are equal."""
    out = []
    for line in difflib.unified_diff(before, after, fromfile=f"a/{path}", tofile=f"b/{path}"):
        out.append(line if line.endswith("\n") else line + "\n" + _NO_NEWLINE)
    return "".join(out)
