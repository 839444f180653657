"""The Action keeps its index cache in the runner's temporary directory, and a warm cache changes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from cce_relevance.retrieval.cache.index_cache import DB_FILE
from tests.action.scenario import RANKING_CHANGE, PullRequest
from tests.action.test_main_e2e import Act, act, pr  # noqa: F401 - the end-to-end fixtures


def test_base_and_head_share_the_cache_in_runner_temp(pr: PullRequest, act: Act, tmp_path: Path) -> None:  # noqa: F811
    pr.push(RANKING_CHANGE, "h1")
    runner_temp = tmp_path / "runner-temp"
    inputs = {"INPUT_FAIL-ON": "none", "INPUT_COMMENT": "false", "RUNNER_TEMP": str(runner_temp)}

    cold = act(**inputs)
    db_path = runner_temp / "cce-relevance-cache" / DB_FILE
    with sqlite3.connect(db_path) as db:
        rows = db.execute("SELECT count(*) FROM entries").fetchone()[0]
    warm = act(**inputs)

    assert cold.code == warm.code == 0
    assert cold.outputs == warm.outputs and cold.summary == warm.summary
    corpus_files = len([p for p in (pr.workspace / "corpus").rglob("*") if p.is_file()])
    # The head adds corpus/reports.py; its other files are the base's, whose records it reused:
    # one record per distinct file, not one per file and side.
    assert "corpus/reports.py" in RANKING_CHANGE and rows == corpus_files
    with sqlite3.connect(db_path) as db:
        assert db.execute("SELECT count(*) FROM entries").fetchone()[0] == rows
