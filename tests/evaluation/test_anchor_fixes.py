"""Applying an anchor fix to a fixture line: only the anchor's string changes, whatever the line's
spelling, and the patch keeps a missing final newline."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cce_relevance.evaluation.anchor_fixes import AnchorFix, fixed_lines
from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.reporting.fixture_patch import unified_patch


def _fix(line: int, old: str, new: str) -> AnchorFix:
    return AnchorFix(line, "q", parse_anchor(old), new, "moved")


def test_only_the_anchor_string_changes_and_spacing_and_other_keys_stay() -> None:
    text = '{"schema":"cce.relevance/v1"}\n{ "query" : "a b", "expected" : [ "x.py", "a.py@1-2" ], "k": 3 }\n'
    assert fixed_lines(text, [_fix(2, "a.py@1-2", "a.py@5-9")]) == [
        '{"schema":"cce.relevance/v1"}\n',
        '{ "query" : "a b", "expected" : [ "x.py", "a.py@5-9" ], "k": 3 }\n',
    ]


def test_an_anchor_written_with_escapes_gets_its_line_written_again_as_compact_json() -> None:
    line = '{"query": "a", "expected": ["a\\u002epy@1-2", "caf\\u00e9.py"], "note": "caf\\u00e9"}'
    fixed = fixed_lines(line + "\r\n", [_fix(1, "a.py@1-2", "a.py@3-4")])
    assert fixed == ['{"query":"a","expected":["a.py@3-4","café.py"],"note":"café"}\r\n']
    assert json.loads(fixed[0]) == {"query": "a", "expected": ["a.py@3-4", "café.py"], "note": "café"}


def test_the_patch_applies_with_git_and_keeps_a_missing_final_newline(tmp_path: Path) -> None:
    text = '{"query":"a","expected":["a.py@1-2"]}\n{"query":"b","expected":["b.py@1-2"]}'
    (tmp_path / "set.jsonl").write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    after = fixed_lines(text, [_fix(2, "b.py@1-2", "b.py@7-8")])
    patch = unified_patch("set.jsonl", text.splitlines(keepends=True), after)
    assert patch.endswith("\\ No newline at end of file\n")
    (tmp_path / "fix.patch").write_text(patch)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True)
    assert (tmp_path / "set.jsonl").read_text() == text.replace("b.py@1-2", "b.py@7-8")
    assert unified_patch("set.jsonl", after, after) == ""
