"""The log's account of a run's findings: one annotation per drifted golden, significant
regression, inconclusive set, stale anchor and moved line range, each on the file (and line) it
is about, so the pull request's diff view shows it there.

The runner shows at most `ANNOTATION_CAP` annotations of a kind per step
(§runner-annotation-caps): past it, one notice points to the job summary, which lists them all.
"""

from __future__ import annotations

from pathlib import Path

from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.runner.workflow_commands import (
    AnnotationKind,
    WorkflowCommand,
    annotation,
    neutralize_untrusted,
)
from cce_relevance.reporting.numbers import signed6
from cce_relevance.strings import quoted

ANNOTATION_CAP = 10


def finding_lines(outcome: Outcome, subdir: Path) -> list[WorkflowCommand]:
    """What the log shows of the findings: annotations on the drifted goldens, the regressed
    fixture files and the fixture lines whose anchors are stale or moved at head (in that order,
    within the runner's cap), then each drift's diff (neutralised: it quotes the trees)."""
    gates = ("regression", "inconclusive")
    regression_kind: AnnotationKind = "error" if outcome.fail_on in gates else "warning"
    inconclusive_kind: AnnotationKind = "error" if outcome.fail_on == "inconclusive" else "warning"
    drift_kind: AnnotationKind = "warning" if outcome.fail_on == "none" else "error"
    lines = [
        annotation(
            drift_kind,
            f"The head report of {s.fixture} no longer matches the golden report {s.golden.path}; "
            "the diff is in the log and the job summary.",
            file=(subdir / s.golden.path).as_posix(),
            title="cce-relevance: golden drift",
        )
        for s in outcome.drifted
        if s.golden is not None
    ]
    lines += [
        annotation(
            regression_kind,
            f"{f.label} got significantly worse on {f.backend}: mean delta "
            f"{signed6(f.test.mean_delta)}, p={f.test.p:.3g} < alpha {outcome.alpha:g}"
            + (f" (queries left out for a stale anchor: {f.left_out})." if f.left_out else "."),
            file=(subdir / f.fixture).as_posix(),
            title="cce-relevance: significant regression",
        )
        for f in outcome.regressions
    ]
    lines += [
        annotation(
            inconclusive_kind,
            f"{f.label} on {f.backend}: no significant change (n={f.test.n}), but this set detects only "
            + (
                f"changes of at least {f.detectable:.3f} at {outcome.power:.0%} power"
                if f.detectable is not None
                else "nothing (fewer than 2 queries)"
            )
            + f", above min-detectable-effect {f.min_effect:g}: label more queries to tell.",
            file=(subdir / f.fixture).as_posix(),
            title="cce-relevance: inconclusive",
        )
        for f in outcome.inconclusive
    ]
    lines += [
        annotation(
            "warning",
            f"Query {quoted(a.case_id)}: anchor {quoted(a.anchor or '')} is stale at head "
            f"({a.code}: {a.message}). A miss on it is not a ranking loss; the query is left out of "
            "the regression test.",
            file=(subdir / s.fixture).as_posix(),
            line=a.line,
            title="cce-relevance: stale anchor",
        )
        for s in outcome.sets
        for a in s.stale_findings("head")
    ]
    lines += [
        annotation(
            "warning",
            f"Query {quoted(m.case_id)}: the lines {m.path} {m.base_lines[0]}-{m.base_lines[1]} that anchor "
            f"{quoted(m.anchor)} labels at base "
            + (
                f"are lines {m.head_lines[0]}-{m.head_lines[1]} at head; the fixture line naming them: "
                f"{m.fixture_line}"
                if m.head_lines is not None
                else "were changed at head"
            )
            + ". The query is left out of the regression test.",
            file=(subdir / s.fixture).as_posix(),
            line=m.line,
            title="cce-relevance: line-range anchor " + m.status,
        )
        for s in outcome.sets
        for m in s.moves
    ]
    shown = lines[:ANNOTATION_CAP]
    if len(lines) > ANNOTATION_CAP:
        more = len(lines) - ANNOTATION_CAP
        shown.append(annotation("notice", f"{more} more findings are in the job summary."))
    diffs = [s.golden.diff for s in outcome.drifted if s.golden is not None]
    return shown + [neutralize_untrusted(diff.rstrip("\n")) for diff in diffs]
