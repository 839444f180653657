"""The Action's index cache: in `cache-dir` inside the workspace (default `.cce-relevance/cache`),
shared by base and head, kept when the output directory is replaced, never taken from the checkout,
and a warm cache changes nothing."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from cce_relevance.retrieval.cache.index_cache import DB_FILE
from tests.action.scenario import RANKING_CHANGE, PullRequest
from tests.action.test_main_e2e import Act, act, annotations, pr  # noqa: F401 - the end-to-end fixtures

QUIET = {"INPUT_FAIL-ON": "none", "INPUT_COMMENT": "false"}


def entries(db_path: Path) -> int:
    with sqlite3.connect(db_path) as db:
        return db.execute("SELECT count(*) FROM entries").fetchone()[0]


def test_base_and_head_share_the_default_cache_which_outlives_the_run(
    pr: PullRequest, act: Act  # noqa: F811
) -> None:
    pr.push(RANKING_CHANGE, "h1")

    cold = act(**QUIET)
    cache = pr.workspace / ".cce-relevance" / "cache"
    rows = entries(cache / DB_FILE)
    warm = act(**QUIET)  # replaces .cce-relevance/ but its cache/

    assert cold.code == warm.code == 0
    assert cold.outputs == warm.outputs and cold.summary == warm.summary
    corpus_files = len([p for p in (pr.workspace / "corpus").rglob("*") if p.is_file()])
    # The head adds corpus/reports.py; its other files are the base's, whose records it reused:
    # one record per distinct file, not one per file and side.
    assert "corpus/reports.py" in RANKING_CHANGE and rows == corpus_files
    assert entries(cache / DB_FILE) == rows  # the second run found every record
    assert (cache / ".gitignore").read_text().endswith("*\n")
    names = {p.name for p in (pr.workspace / ".cce-relevance").iterdir()}
    assert {"cache", "report.md", "compare.json", "sets"} <= names


def test_cache_dir_elsewhere_in_the_workspace(pr: PullRequest, act: Act) -> None:  # noqa: F811
    pr.push(RANKING_CHANGE, "h1")
    run = act(**QUIET, **{"INPUT_CACHE-DIR": ".cache/cce"})
    assert run.code == 0, run.stdout
    assert entries(pr.workspace / ".cache" / "cce" / DB_FILE) > 0
    assert not (pr.workspace / ".cce-relevance" / "cache").exists()
    status = subprocess.run(["git", "-C", str(pr.workspace), "status", "--porcelain"], capture_output=True,
                            text=True, check=True).stdout
    assert status == ""  # both directories ignore themselves


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("../outside", "input 'cache-dir': '../outside' resolves outside the workspace"),
        ("/tmp/cce-cache", "input 'cache-dir': '/tmp/cce-cache' resolves outside the workspace"),
        (".cce-relevance", "input 'cache-dir': .cce-relevance would be replaced with the reports"),
        (".cce-relevance/sets", "input 'cache-dir': .cce-relevance/sets would be replaced with the reports"),
    ],
)
def test_a_cache_dir_outside_the_workspace_or_among_the_reports_is_a_configuration_error(
    pr: PullRequest, act: Act, value: str, message: str  # noqa: F811
) -> None:
    run = act(**QUIET, **{"INPUT_CACHE-DIR": value})
    assert run.code == 2
    [(_, text)] = annotations(run, "error")
    assert text.startswith(message)


def test_a_cache_the_repository_supplies_is_never_read(pr: PullRequest, act: Act) -> None:  # noqa: F811
    """A pull request could commit a crafted cache where the default one lives."""
    planted = {".cce-relevance/cache/index.sqlite3": "not a cache, and certainly not ours\n"}
    pr.push({**RANKING_CHANGE, **planted}, "h1: plants a cache")
    run = act(**QUIET)
    assert run.code == 2
    [(_, text)] = annotations(run, "error")
    assert "input 'cache-dir': .cce-relevance/cache holds files committed to the repository" in text
    assert ".cce-relevance/cache/index.sqlite3" in text


def test_a_symlinked_cache_dir_is_refused(pr: PullRequest, act: Act) -> None:  # noqa: F811
    pr.push(RANKING_CHANGE, "h1")
    (pr.workspace / "elsewhere").mkdir()
    os.symlink("elsewhere", pr.workspace / "linked")
    run = act(**QUIET, **{"INPUT_CACHE-DIR": "linked/cache"})
    assert run.code == 2
    [(_, text)] = annotations(run, "error")
    assert "input 'cache-dir': linked/cache passes through a symlink" in text
    assert list((pr.workspace / "elsewhere").iterdir()) == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root, as in the container")
def test_the_cache_belongs_to_the_runner_user(pr: PullRequest, act: Act) -> None:  # noqa: F811
    """actions/cache saves it as the runner's user after the container (root) is gone."""
    pr.push(RANKING_CHANGE, "h1")
    run = act(owner="1001:1001", **QUIET, **{"INPUT_CACHE-DIR": ".cache/cce"})
    assert run.code == 0, run.stdout + run.stderr
    for path in [pr.workspace / ".cache", *(pr.workspace / ".cache").rglob("*")]:
        assert path.stat().st_uid == 1001, path
