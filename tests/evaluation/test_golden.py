"""A golden is a file of the pull request: whatever it holds, describing its drift never crashes.
Text that is not a report within untrusted_json's limits gets the plain diff and no value table."""

from __future__ import annotations

import json

import pytest

from cce_relevance.evaluation.golden import compare_with_golden

REPORT = json.dumps({"backends": [{"backend": "bm25", "per_query": [{"id": "q1", "mrr": 1.0}]}]}, indent=2)
HOSTILE = {
    "nested 100,000 levels": "[" * 100_000 + "]" * 100_000,  # a RecursionError for json.loads
    "a byte order mark": "\ufeff" + REPORT,
    "NaN": REPORT.replace("1.0", "NaN"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_golden_that_is_not_a_plain_report_gets_the_plain_diff(case: str) -> None:
    golden = HOSTILE[case]

    check = compare_with_golden("eval/golden.json", golden, REPORT)

    assert check.drifted and check.changes is None
    assert check.keyed_diff.startswith("--- eval/golden.json (golden, by query id)")
    [removed] = [line for line in golden.splitlines() if line not in REPORT.splitlines()]
    assert f"\n-{removed}" in check.keyed_diff  # the texts as they are, line by line


def test_a_report_golden_gets_the_values_that_moved() -> None:
    moved = REPORT.replace("1.0", "0.5")

    check = compare_with_golden("eval/golden.json", REPORT, moved)

    [change] = check.changes or []
    assert (change.backend, change.query, change.field, change.golden, change.head) == (
        "bm25",
        "q1",
        "mrr",
        "1.0",
        "0.5",
    )
    assert check.diff.startswith("--- eval/golden.json (golden)\n+++ current run\n")
    assert '-      "id": "q1"' not in check.keyed_diff and '"q1": {' in check.keyed_diff  # keyed by id


def test_a_golden_that_matches_has_no_diff_and_no_changes() -> None:
    check = compare_with_golden("eval/golden.json", REPORT, REPORT)

    assert (check.drifted, check.diff, check.changes, check.keyed_diff) == (False, "", None, "")
