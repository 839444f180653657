"""The Action's `compare.json`: per fixture set its status, golden, anchor checks, the queries
the gate left out, and the `cce.relevance.compare/v1` comparison, beside the verdict.

A machine-readable twin of the summary, built from the same `Outcome`, for tools that read the
Action's result instead of its Markdown.
"""

from __future__ import annotations

from typing import Any

from cce_relevance import __version__, schemas
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.reporting.compare_report import comparison_document
from cce_relevance.reporting.validation_report import validation_document


def action_document(
    outcome: Outcome, verdict: str, commits: CommitPair, report_paths: dict[str, dict[str, str]]
) -> dict[str, Any]:
    """The `compare` output: per set its status, golden and `cce.relevance.compare/v1` comparison.

    `report_paths` maps a fixture to the workspace-relative paths of its saved run reports by
    side, so `cce-relevance compare BASE HEAD` can be rerun on them.
    """
    return {
        "schema": schemas.ACTION,
        "version": __version__,
        "base": commits.base,
        "head": commits.head,
        "verdict": verdict,
        "drift": bool(outcome.drifted),
        "sets": [
            {
                "fixtures": s.fixture,
                "status": s.status,
                "reports": report_paths.get(s.fixture, {}),
                "golden": None if s.golden is None else {"path": s.golden.path, "drift": s.golden.drifted},
                "validate": {
                    side: None if v is None else validation_document(v)
                    for side, v in (("base", s.base_anchors), ("head", s.head_anchors))
                },
                "stale_queries": sorted(s.stale_queries),
                "anchor_moves": [m.document() for m in s.moves],
                "left_out_queries": sorted(s.left_out_queries),
                "compare": None
                if s.comparisons is None
                else comparison_document("base", "head", s.comparisons),
            }
            for s in outcome.sets
        ],
    }
