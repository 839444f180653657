"""Each side indexes a corpus once for all its fixture sets and their anchor checks, with the
results `run` and `validate` give on their own; the log says how long each stage took."""

from __future__ import annotations

import contextlib
import os
import subprocess

import pytest

from cce_relevance import api
from cce_relevance.action.config.inputs import read_inputs
from cce_relevance.action.scoring.sides import score_commits
from cce_relevance.action.scoring.timings import TIMINGS_PREFIX, Stopwatch, parse_line
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.evaluation import set_scoring
from cce_relevance.reporting.run_report import run_report_json
from cce_relevance.retrieval.index.model import Index
from tests.action.scenario import BILLING_FIXTURE, BILLING_FIXTURES, FIXTURE, RANKING_CHANGE, Act, PullRequest

STAGES = ("materialise", "index", "score", "validate", "hits")


# Two more sets on the same corpus that leave shipping.py out (a header's `exclude`): their index
# is not the other sets', and the two share one, as their exclusions are equal.
EXCLUDING = BILLING_FIXTURES.replace(
    '"corpus":"../corpus"}', '"corpus":"../corpus","exclude":["shipping.py"]}'
)
EXCLUDING_SETS = {"eval/narrow.jsonl": EXCLUDING, "eval/narrower.jsonl": EXCLUDING}


@pytest.mark.parametrize(
    ("pr", "indexes_a_side"),
    [({BILLING_FIXTURE: BILLING_FIXTURES}, 1), ({BILLING_FIXTURE: BILLING_FIXTURES, **EXCLUDING_SETS}, 2)],
    indirect=["pr"],
)
def test_sets_sharing_a_corpus_and_exclusion_are_indexed_once_a_side_with_the_plain_results(
    pr: PullRequest, indexes_a_side: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    pr.push(RANKING_CHANGE, "h1: a new module")
    head = pr.rename("corpus/billing.py", "corpus/invoices.py", "h2: billing.py renamed")
    base = pr.merge_base()
    opened: list[str] = []
    real_open = set_scoring.open_corpus

    def counting_open(path: str, **options: object) -> Index:
        opened.append(path)
        return real_open(path, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(set_scoring, "open_corpus", counting_open)
    env = {
        "GITHUB_WORKSPACE": str(pr.workspace),
        "GITHUB_EVENT_NAME": "workflow_dispatch",
        "INPUT_FIXTURES": "eval/*.jsonl",
        "INPUT_BASE-REF": base,
        "INPUT_HEAD-REF": head,
    }
    clock = Stopwatch()
    results = score_commits(pr.workspace, CommitPair(base, head), read_inputs(env), clock)
    monkeypatch.setattr(set_scoring, "open_corpus", real_open)

    assert {r.fixture for r in results} >= {BILLING_FIXTURE, FIXTURE}
    assert opened == ["eval/../corpus"] * (2 * indexes_a_side)  # head, then base
    assert list(clock.seconds) == [f"{side} {stage}" for side in ("head", "base") for stage in STAGES]
    assert all(wall >= 0 and cpu >= 0 for wall, cpu in clock.seconds.values())
    billing = next(r for r in results if r.fixture == BILLING_FIXTURE)
    assert billing.stale("head") and not billing.stale("base")  # the rename is seen
    for side, sha in (("base", base), ("head", head)):
        subprocess.run(["git", "checkout", "-q", "--detach", sha], cwd=pr.workspace, check=True)
        with contextlib.chdir(pr.workspace):
            for result in results:
                plain_report = run_report_json(api.run(result.fixture))
                plain_anchors = api.validate(result.fixture, grades=False)
                assert (result.base if side == "base" else result.head) == plain_report
                assert (result.base_anchors if side == "base" else result.head_anchors) == plain_anchors


def test_the_log_has_one_timings_line(pr: PullRequest, act: Act) -> None:
    pr.push(RANKING_CHANGE, "h1")
    run = act(**{"INPUT_FAIL-ON": "none", "INPUT_COMMENT": "false"})
    assert run.code == 0, run.stdout + run.stderr
    [line] = [line for line in run.stdout.splitlines() if line.startswith(TIMINGS_PREFIX)]
    seconds = parse_line(line)
    assert list(seconds) == [
        "commits",
        *(f"{side} {stage}" for side in ("head", "base") for stage in STAGES),
        "report",
    ]
    assert all(wall >= 0 and cpu >= 0 for wall, cpu in seconds.values())
    assert os.fspath(pr.workspace) not in line
