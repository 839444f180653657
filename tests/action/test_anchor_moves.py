"""Line-range anchors followed through a diff (action/scoring/range_anchors.py): the range mapping against a
line-by-line model (Hypothesis), git's real hunks, and the fixture line rewritten for pasting."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.action.scoring import range_anchors as anchor_moves
from cce_relevance.action.scoring.range_anchors import (
    AnchorMove,
    Hunk,
    SideFixtures,
    follow_ranges,
    map_range,
    parse_hunks,
)
from cce_relevance.evaluation.fixtures import load_fixtures


@st.composite
def _hunks(draw: st.DrawFn) -> tuple[int, list[Hunk]]:
    """A base file length and a diff of it: sorted, non-overlapping hunks (as git -U0 writes them)."""
    length = draw(st.integers(1, 40))
    hunks: list[Hunk] = []
    line = 1  # the first base line no hunk has consumed yet
    offset = 0  # new line number - old line number so far
    while line <= length + 1 and draw(st.booleans()):
        start = draw(st.integers(line, length + 1))
        old_count = draw(st.integers(0, length + 1 - start))
        new_count = draw(st.integers(0 if old_count else 1, 4))
        if old_count == 0:  # an insertion after base line start - 1
            hunks.append(Hunk(start - 1, 0, start - 1 + offset + 1, new_count))
        else:
            hunks.append(
                Hunk(start, old_count, start + offset if new_count else start + offset - 1, new_count)
            )
        offset += new_count - old_count
        line = start + old_count + (0 if old_count else 1)
    return length, hunks


def _model(length: int, hunks: list[Hunk]) -> tuple[dict[int, int], set[int], set[int]]:
    """Line by line: where each untouched base line is at head, the base lines a hunk replaced,
    and the base lines after which a hunk inserted lines."""
    replaced: set[int] = set()
    inserted_after: set[int] = set()
    for h in hunks:
        if h.old_count:
            replaced.update(range(h.old_start, h.old_start + h.old_count))
        else:
            inserted_after.add(h.old_start)
    where, head_line = {}, 0
    for base_line in range(0, length + 1):
        if base_line and base_line not in replaced:
            head_line += 1
            where[base_line] = head_line
        for h in hunks:
            if (h.old_count == 0 and h.old_start == base_line) or (
                h.old_count and h.old_start + h.old_count - 1 == base_line
            ):
                head_line += h.new_count
    return where, replaced, inserted_after


@given(_hunks(), st.data())
def test_map_range_agrees_with_a_line_by_line_model(
    diff: tuple[int, list[Hunk]], data: st.DataObject
) -> None:
    length, hunks = diff
    start = data.draw(st.integers(1, length))
    end = data.draw(st.integers(start, length))
    where, replaced, inserted_after = _model(length, hunks)
    status, (a, b) = map_range(hunks, start, end)
    touched = any(line in replaced for line in range(start, end + 1)) or any(
        start <= line < end for line in inserted_after
    )
    if touched:
        assert (status, a, b) == ("changed", start, end)
        return
    assert (a, b) == (where[start], where[end])
    assert b - a == end - start  # the same lines, one after the other
    assert status == ("same" if a == start else "moved")


def test_map_range_cases() -> None:
    above = [Hunk(0, 0, 1, 3)]  # three lines inserted at the top
    assert map_range(above, 10, 12) == ("moved", (13, 15))
    assert map_range([Hunk(2, 1, 2, 0)], 10, 12) == ("moved", (9, 11))  # one line deleted above
    assert map_range([Hunk(11, 1, 11, 1)], 10, 12) == ("changed", (10, 12))  # a line of it edited
    assert map_range([Hunk(10, 0, 11, 2)], 10, 12) == ("changed", (10, 12))  # lines inserted inside
    assert map_range([Hunk(12, 0, 13, 2)], 10, 12) == ("same", (10, 12))  # appended right after it
    assert map_range([Hunk(9, 0, 10, 2)], 10, 12) == ("moved", (12, 14))  # inserted right before it
    assert map_range([Hunk(20, 5, 20, 0)], 10, 12) == ("same", (10, 12))  # edits below do not matter


def test_parse_hunks_reads_git_headers() -> None:
    diff = (
        "diff --git a/f.py b/f.py\n--- a/f.py\n+++ b/f.py\n@@ -0,0 +1,3 @@\n+a\n+b\n+c\n"
        "@@ -7 +10 @@ def f():\n-x\n+y\n@@ -20,2 +22,0 @@\n-p\n-q\n"
    )
    assert parse_hunks(diff) == [Hunk(0, 0, 1, 3), Hunk(7, 1, 10, 1), Hunk(20, 2, 22, 0)]


# --- against a real repository -----------------------------------------------------------------

QUOTE = '''def quote(text):
    """Wrap text in quotes."""
    return '"' + text + '"'


def unquote(text):
    """Strip the quotes around text."""
    return text.strip('"')


def is_quoted(text):
    return text.startswith('"') and text.endswith('"')
'''
HEADER = "import re\nimport string\n\n\n"  # four lines added above everything at head

SET = (
    '{"schema":"cce.relevance/v1","corpus":"../src"}\n'
    '{"id":"unquote","query":"strip quotes","expected":["text/quote.py#function_definition@6-8"],"k":3,'
    '"grades":{"text/quote.py#function_definition@6-8":2}}\n'
    '{"id":"quote","query":"wrap in quotes","expected":["text/quote.py@1-3", "text/other.py"],"k":3}\n'
    '{"id":"is-quoted","query":"is it quoted","expected":["text/quote.py@11-12"],"k":3}\n'
    '{"id":"whole","query":"quoting","expected":["text/quote.py"],"k":3}\n'
)


def _git(repo: Path, *args: str) -> str:
    env_args = ["-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    return subprocess.run(
        ["git", *env_args, *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _side(repo: Path, fixture_text: str) -> SideFixtures:
    path = repo / "eval" / "set.jsonl"
    path.write_text(fixture_text, encoding="utf-8")
    return SideFixtures(load_fixtures(str(path)), fixture_text, "src")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    return root


def test_anchors_rebound_by_lines_added_above_are_reported_as_moved(repo: Path) -> None:
    """The trial's reproduction: after edits above them, range anchors point at other functions
    (`@6-8` would cover `quote`'s neighbour); the diff says where their lines went."""
    base = _commit(repo, {"src/text/quote.py": QUOTE, "eval/set.jsonl": SET}, "base")
    edited = HEADER + QUOTE.replace(
        "    return text.startswith('\"')", "    text = text.strip()\n    return text.startswith('\"')"
    )
    head = _commit(repo, {"src/text/quote.py": edited}, "head: imports above, is_quoted edited")

    moves = follow_ranges(repo, base, head, _side(repo, SET), _side(repo, SET))

    assert moves == (
        AnchorMove(
            "unquote",
            2,
            "text/quote.py#function_definition@6-8",
            "moved",
            "src/text/quote.py",
            (6, 8),
            (10, 12),
            SET.splitlines()[1].replace("@6-8", "@10-12"),
        ),
        AnchorMove(
            "quote",
            3,
            "text/quote.py@1-3",
            "moved",
            "src/text/quote.py",
            (1, 3),
            (5, 7),
            SET.splitlines()[2].replace("@1-3", "@5-7"),
        ),
        AnchorMove(
            "is-quoted", 4, "text/quote.py@11-12", "changed", "src/text/quote.py", (11, 12), None, None
        ),
    )
    pasted = json.loads(moves[0].fixture_line or "")
    assert pasted["grades"] == {"text/quote.py#function_definition@10-12": 2}  # the grade follows it
    head_text = (repo / "src/text/quote.py").read_text().splitlines()
    assert head_text[9].startswith("def unquote")  # line 10 at head: the same function


def test_only_anchors_written_the_same_at_both_sides_on_a_file_at_both_are_followed(repo: Path) -> None:
    base_set = SET.replace('"text/quote.py@11-12"', '"text/gone.py@1-2"')
    base = _commit(
        repo,
        {"src/text/quote.py": QUOTE, "src/text/gone.py": "a = 1\nb = 2\n", "eval/set.jsonl": base_set},
        "base",
    )
    (repo / "src/text/gone.py").unlink()
    head_set = SET.replace("@6-8", "@10-12").replace('"text/quote.py@11-12"', '"text/gone.py@1-2"')
    head = _commit(repo, {"src/text/quote.py": HEADER + QUOTE, "eval/set.jsonl": head_set}, "head")

    moves = follow_ranges(repo, base, head, _side(repo, base_set), _side(repo, head_set))

    # `unquote` was fixed in the same change; gone.py is a stale anchor (validate's), not a move.
    assert [(m.case_id, m.status, m.head_lines) for m in moves] == [("quote", "moved", (5, 7))]


def test_a_line_that_writes_the_anchor_with_escapes_is_reserialised(repo: Path) -> None:
    escaped = SET.replace(
        '"expected":["text/quote.py@1-3", "text/other.py"]',
        '"expected":["text\\/quote.py@1-3", "text/other.py"]',
    )
    base = _commit(repo, {"src/text/quote.py": QUOTE, "eval/set.jsonl": escaped}, "base")
    head = _commit(repo, {"src/text/quote.py": HEADER + QUOTE}, "head")
    [_, quote, _] = follow_ranges(repo, base, head, _side(repo, escaped), _side(repo, escaped))
    assert quote.fixture_line == (
        '{"id":"quote","query":"wrap in quotes","expected":["text/quote.py@5-7","text/other.py"],"k":3}'
    )


def test_anchors_on_files_the_change_leaves_alone_ask_git_nothing_per_file(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One listing of the changed files, then diffs only of anchored files in it: a set anchored in
    hundreds of files costs a few git processes, not three per file. The result is unchanged."""
    other = "def other():\n    return 1\n"
    base = _commit(
        repo, {"src/text/quote.py": QUOTE, "src/text/other.py": other, "eval/set.jsonl": SET}, "base"
    )
    head = _commit(repo, {"src/text/quote.py": HEADER + QUOTE}, "head: imports above")
    calls: list[tuple[str, ...]] = []
    real_git = anchor_moves.git

    def counting_git(repo_path: Path, *args: str, **options: object) -> str:
        calls.append(args)
        return real_git(repo_path, *args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(anchor_moves, "git", counting_git)
    ranged = SET + '{"id":"other","query":"other","expected":["text/other.py@1-2"],"k":3}\n'
    moves = follow_ranges(repo, base, head, _side(repo, ranged), _side(repo, ranged))

    assert {m.path for m in moves} == {"src/text/quote.py"}  # other.py's range did not move
    assert not any("src/text/other.py" in " ".join(args) for args in calls)
    assert len(calls) == 3  # ls-tree at base and head, then the diff, for quote.py alone
