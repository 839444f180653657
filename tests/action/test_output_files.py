"""The Action's output directory: replaced each run, ignored by git, never followed through a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cce_relevance.action.scoring.model import ComparedSet
from cce_relevance.action.workspace.output_dir import (
    OUTPUT_DIR,
    fresh_output_dir,
    give_to_workspace_owner,
    save_reports,
)
from cce_relevance.errors import CceError


def test_a_fresh_directory_replaces_the_last_runs_and_ignores_itself(tmp_path: Path) -> None:
    stale = tmp_path / OUTPUT_DIR / "sets" / "09-old" / "head.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")

    directory = fresh_output_dir(tmp_path)

    assert sorted(p.name for p in directory.iterdir()) == [".gitignore"]
    assert (directory / ".gitignore").read_text().splitlines()[-1] == "*"


@pytest.mark.parametrize("kind", ["symlink", "file"])
def test_a_checked_in_file_or_link_in_its_place_is_refused_not_followed(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("precious")
    if kind == "symlink":
        os.symlink(target, tmp_path / OUTPUT_DIR)
    else:
        (tmp_path / OUTPUT_DIR).write_text("tracked")

    with pytest.raises(CceError, match="is not a directory"):
        fresh_output_dir(tmp_path)
    assert (target / "keep").read_text() == "precious"


def test_reports_are_saved_per_set_and_side(tmp_path: Path) -> None:
    sets = (
        ComparedSet("eval/a.jsonl", "BASE\n", "HEAD\n", None),
        ComparedSet("b/added.jsonl", None, "NEW\n", None),
    )

    saved = save_reports(fresh_output_dir(tmp_path), tmp_path, sets)

    assert saved == {
        "eval/a.jsonl": {
            "base": ".cce-relevance/sets/01-a/base.json",
            "head": ".cce-relevance/sets/01-a/head.json",
        },
        "b/added.jsonl": {"head": ".cce-relevance/sets/02-added/head.json"},
    }
    assert (tmp_path / saved["b/added.jsonl"]["head"]).read_text() == "NEW\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")
def test_root_hands_the_files_to_the_workspace_owner(tmp_path: Path) -> None:
    os.chown(tmp_path, 1001, 1002)
    directory = fresh_output_dir(tmp_path)
    (directory / "report.md").write_text("x")

    give_to_workspace_owner(directory, tmp_path)

    for path in (directory, directory / ".gitignore", directory / "report.md"):
        assert (path.stat().st_uid, path.stat().st_gid) == (1001, 1002)
