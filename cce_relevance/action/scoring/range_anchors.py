"""Line-range anchors followed through the pull request's diff: which labelled lines moved or changed.

A range anchor (`path@a-b`) names lines, and an edit above them makes the same text name other
lines: `validate` at head still finds a chunk there, so the anchor silently labels something
else and its query's delta reads as a ranking change. The diff from base to head tells: for each
range anchor written identically in the fixture set at both sides, on a file present at both,
the lines `a-b` at base are

* unchanged: no hunk touches or shifts them (nothing to report);
* **moved**: no hunk touches them, but lines were added or removed above, so they are now
  `a+d`–`b+d` at head (reported with that range and the fixture line rewritten to it);
* **changed**: a hunk replaces, deletes or inserts lines within them (reported; which lines
  the label should name now is for a person to decide).

Either way the query is left out of the regression test, as a query with a stale anchor is. The
diff is git's (`diff -U0`, no renames, no external diff or text conversion: nothing the
repository configures runs), read from its hunk headers only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cce_relevance.action.workspace.git import changed_files, git
from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.fixtures import FixtureSet

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")

Status = Literal["moved", "changed"]


@dataclass(frozen=True)
class Hunk:
    """One `-U0` hunk: base lines `old_start`.. (`old_count` of them; for an insertion, the line
    after which it goes) replaced by `new_count` lines at head."""

    old_start: int
    old_count: int
    new_start: int
    new_count: int


@dataclass(frozen=True)
class AnchorMove:
    """A range anchor whose lines moved or changed between base and head."""

    case_id: str
    line: int  # the case's line in the fixture file at head
    anchor: str  # canonical form, the same at base and head
    status: Status
    path: str  # the file, relative to the repository root
    base_lines: tuple[int, int]
    head_lines: tuple[int, int] | None  # where the lines are at head (moved only)
    fixture_line: str | None  # the case's line at head, the anchor rewritten to `head_lines` (moved only)

    def document(self) -> dict[str, object]:
        """The JSON form, in the Action's `compare.json`."""
        return {
            "id": self.case_id,
            "line": self.line,
            "anchor": self.anchor,
            "status": self.status,
            "path": self.path,
            "base_lines": list(self.base_lines),
            "head_lines": None if self.head_lines is None else list(self.head_lines),
            "fixture_line": self.fixture_line,
        }


@dataclass(frozen=True)
class SideFixtures:
    """A fixture set as read at one side: parsed, its text, and its corpus relative to the
    repository root (POSIX, `.` for the root)."""

    fixtures: FixtureSet
    text: str
    corpus: str


def map_range(
    hunks: Sequence[Hunk], start: int, end: int
) -> tuple[Literal["same", "moved", "changed"], tuple[int, int]]:
    """Where base lines `start`-`end` are at head, given the file's hunks in order.

    `changed` when a hunk replaces or deletes one of them, or inserts between two of them;
    otherwise they are shifted by what the hunks before them added and removed.
    """
    shift = 0
    for h in hunks:
        if h.old_count == 0:  # an insertion after base line old_start
            if start <= h.old_start < end:
                return "changed", (start, end)
            if h.old_start < start:
                shift += h.new_count
            continue
        last = h.old_start + h.old_count - 1
        if h.old_start <= end and last >= start:
            return "changed", (start, end)
        if last < start:
            shift += h.new_count - h.old_count
    return ("moved" if shift else "same"), (start + shift, end + shift)


def parse_hunks(diff: str) -> list[Hunk]:
    """The hunks of one file's `git diff -U0` output, in order."""
    hunks = []
    for line in diff.splitlines():
        match = _HUNK.match(line)
        if match:
            old_start, old_count, new_start, new_count = match.groups()
            hunks.append(
                Hunk(
                    int(old_start),
                    1 if old_count is None else int(old_count),
                    int(new_start),
                    1 if new_count is None else int(new_count),
                )
            )
    return hunks


def follow_ranges(
    repo: Path, base: str, head: str, at_base: SideFixtures, at_head: SideFixtures
) -> tuple[AnchorMove, ...]:
    """The moved and changed range anchors of one fixture set, in fixture order at head.

    Only anchors written identically in a case of the same id at both sides are followed (an
    anchor the change edits is a new label), on a file of the same repository path at both sides.
    """
    base_cases = {c.id: c for c in at_base.fixtures.cases}
    lines = at_head.text.split("\n")
    diffs: dict[str, list[Hunk] | None] = {}
    changed: set[str] | None = None  # asked once: most anchored files are the same at both sides
    moves = []
    for case in at_head.fixtures.cases:
        before = base_cases.get(case.id)
        if before is None:
            continue
        for anchor in case.anchors:
            if anchor.range is None or anchor.path is None or anchor not in before.anchors:
                continue
            path = _repository_path(at_head.corpus, anchor.path)
            if path is None or path != _repository_path(at_base.corpus, anchor.path):
                continue
            if changed is None:
                changed = set(changed_files(repo, base, head))
            if path not in changed:
                continue  # the same blob (or none) at both sides: nothing moved
            if path not in diffs:
                diffs[path] = _file_hunks(repo, base, head, path)
            hunks = diffs[path]
            if not hunks:
                continue
            status, lines_now = map_range(hunks, *anchor.range)
            if status == "same":
                continue
            moved = status == "moved"
            line_text = lines[case.line - 1] if case.line <= len(lines) else ""
            moves.append(
                AnchorMove(
                    case.id,
                    case.line,
                    anchor.display(),
                    status,
                    path,
                    anchor.range,
                    lines_now if moved else None,
                    _rewritten(line_text, anchor, lines_now) if moved else None,
                )
            )
    return tuple(moves)


def _repository_path(corpus: str, path: str) -> str | None:
    """The corpus-relative `path` relative to the repository root; None if it leaves the repository."""
    joined = os.path.normpath(os.path.join(corpus, path)).replace(os.sep, "/")
    return None if joined == ".." or joined.startswith(("../", "/")) else joined


def _file_hunks(repo: Path, base: str, head: str, path: str) -> list[Hunk] | None:
    """The file's hunks from base to head; None unless it is a text file at both sides."""
    if not (_blob_exists(repo, base, path) and _blob_exists(repo, head, path)):
        return None
    diff = git(
        repo,
        "diff",
        "-U0",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--end-of-options",
        base,
        head,
        "--",
        f":(literal){path}",
    )
    hunks = parse_hunks(diff)
    return None if diff and not hunks else hunks  # output without hunks: a binary file


def _blob_exists(repo: Path, commit: str, path: str) -> bool:
    # No `--` after `--end-of-options`: ls-tree would take it for a path (a file named `--`).
    listing = git(repo, "ls-tree", "-z", "--name-only", "--end-of-options", commit, f":(literal){path}")
    return listing.rstrip("\0") == path


def _rewritten(line: str, anchor: Anchor, lines_now: tuple[int, int]) -> str:
    """The fixture line with `anchor` (and its `grades` key) naming `lines_now`, ready to paste.

    The anchor's JSON string is replaced where it appears as written; a line that writes it
    otherwise (escaped characters, say) is re-serialised with the anchor replaced."""
    updated = Anchor(anchor.path, anchor.kind, lines_now).display()
    try:
        case = json.loads(line)
    except json.JSONDecodeError:
        return line
    written = [a for a in case.get("expected", []) if isinstance(a, str) and _names(a, anchor)]
    replaced = line
    for text in written:
        replaced = replaced.replace(
            json.dumps(text, ensure_ascii=False), json.dumps(updated, ensure_ascii=False)
        )
    if replaced != line:
        return replaced
    case["expected"] = [updated if isinstance(a, str) and _names(a, anchor) else a for a in case["expected"]]
    if isinstance(case.get("grades"), dict):
        case["grades"] = {updated if _names(k, anchor) else k: v for k, v in case["grades"].items()}
    return json.dumps(case, ensure_ascii=False, separators=(",", ":"))


def _names(text: str, anchor: Anchor) -> bool:
    return anchor.written_as(text)
