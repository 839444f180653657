"""What the Action concludes from the scored sets: the gates, the one-line verdict, the Markdown.

The verdict and the gates are computed from the same facts (golden drift, significant
regressions of the gated metric, stale anchors) so the comment can never say one thing while the
exit code does another. The Markdown is split into a head (marker, verdict, overview), detail
sections and a footer, the shape `comment.fit_body` trims to a size budget: the verdict always
survives. Every name that came from a tree (fixture paths, golden paths, report ids, anchors) is
untrusted and goes through `markdown_safe`; the verdict itself is built from our own words and
numbers.

Stale anchors (anchors that resolve to nothing in a side's corpus: a renamed file, a deleted
function) make a query lose at head whatever the ranking does. The regression test therefore
runs over the queries whose anchors resolve at both base and head; the tables keep every query
(they are the ones `cce-relevance compare` prints) and mark the stale ones.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cce_relevance import __version__, api, schemas
from cce_relevance.action.git import CommitPair
from cce_relevance.action.inputs import FailOn
from cce_relevance.action.scoring import SetResult
from cce_relevance.api import METRICS, BackendComparison, PairedTest, Validation
from cce_relevance.errors import CceError
from cce_relevance.reporting.chart import delta_chart_markdown
from cce_relevance.reporting.compare_report import comparison_document
from cce_relevance.reporting.markdown import backend_section, means_table, report_means_table
from cce_relevance.reporting.markdown_safe import code_block, code_span, details, escape_md
from cce_relevance.reporting.numbers import format6, signed6
from cce_relevance.reporting.validation_report import validation_document

TITLE = "## Retrieval relevance"
CHART_FOLD = 40  # a chart of more queries than this is folded into <details>
STALE_MARK = "⚠️ stale anchor"


@dataclass(frozen=True)
class GatedChange:
    """One backend's change in the gated metric, in one fixture set: the paired t-test over the
    queries whose anchors resolve at both base and head (`left_out` queries had a stale one)."""

    fixture: str
    backend: str
    label: str
    test: PairedTest
    alpha: float
    left_out: int = 0

    @property
    def significant_regression(self) -> bool:
        return api.is_significant_regression(self.test, self.alpha)


def scored_at_both(s: SetResult) -> list[BackendComparison]:
    """The set's comparisons of the backends scored at both base and head (none unless paired)."""
    return [c for c in s.comparisons or () if c.pair.base_means is not None and c.pair.head_means is not None]


@dataclass(frozen=True)
class Outcome:
    """The facts both the verdict and the gates are made of."""

    sets: tuple[SetResult, ...]
    metric: str
    alpha: float

    @property
    def drifted(self) -> tuple[SetResult, ...]:
        return tuple(s for s in self.sets if s.golden is not None and s.golden.drifted)

    @property
    def findings(self) -> tuple[GatedChange, ...]:
        """The gated metric on every backend scored at both base and head."""
        return tuple(self._finding(s, c) for s in self.sets for c in scored_at_both(s))

    def _finding(self, s: SetResult, c: BackendComparison) -> GatedChange:
        test, left_out = api.gated_test(c, self.metric, s.stale_queries)
        return GatedChange(s.fixture, c.pair.backend, c.metric(self.metric).label, test, self.alpha, left_out)

    @property
    def stale_at_head(self) -> int:
        """Stale anchors at head, over every set: labels the change (or an earlier one) left dangling."""
        return sum(len(anchors) for s in self.sets for anchors in s.stale("head").values())

    @property
    def left_out(self) -> int:
        """Queries left out of the regression test for a stale anchor, each set's counted once."""
        per_set: dict[str, int] = {}
        for f in self.findings:
            per_set[f.fixture] = max(per_set.get(f.fixture, 0), f.left_out)
        return sum(per_set.values())

    @property
    def regressions(self) -> tuple[GatedChange, ...]:
        """Significant regressions: p < alpha with a negative mean delta (paired t-test)."""
        return tuple(f for f in self.findings if f.significant_regression)

    def gate_failed(self, fail_on: FailOn) -> bool:
        """`drift`: any golden drifted; `regression`: that or a significant regression; `none`: never."""
        if fail_on == "none":
            return False
        return bool(self.drifted) or (fail_on == "regression" and bool(self.regressions))

    def verdict(self) -> str:
        """One line: problems first (drift, significant regression, stale anchors), then the largest
        change among the queries the regression test kept."""
        parts = []
        if self.drifted:
            parts.append(f"golden drift in {_count(len(self.drifted), 'report')}")
        if self.regressions:
            parts.append(self._regression_clause())
        if self.stale_at_head or self.left_out:
            parts.append(self._stale_clause())
        if any(s.golden is not None for s in self.sets) and not self.drifted:
            parts.append("no golden drift")
        if not self.regressions:
            parts.append(self._largest_change())
        emoji = "❌" if self.drifted else "⚠️" if self.regressions or self.stale_at_head else "✅"
        text = "; ".join(parts)
        return f"{emoji} {text[0].upper()}{text[1:]}"

    def _label(self) -> str:
        return metric_label(self.metric)

    def _stale_clause(self) -> str:
        left_out = _count(self.left_out, "query", "queries")
        if not self.stale_at_head:  # stale at base only: the change fixed them
            return f"{left_out} with a stale anchor at base left out of the regression test"
        clause = f"{_count(self.stale_at_head, 'stale anchor')} at head"
        return clause + (f", {left_out} left out of the regression test" if self.left_out else "")

    def _regression_clause(self) -> str:
        worst = min(self.regressions, key=lambda f: f.test.mean_delta)
        more = len(self.regressions) - 1
        where = f"{worst.backend} {signed6(worst.test.mean_delta)}, p={worst.test.p:.3g}"
        if more:
            where += f"; {_count(more, 'more backend')}"
        return f"significant regression of {self._label()} at alpha {self.alpha:g} ({where})"

    def _largest_change(self) -> str:
        findings = self.findings
        if not findings:
            return "no set scored at both base and head, nothing to compare"
        largest = max(findings, key=lambda f: abs(f.test.mean_delta))
        delta = largest.test.mean_delta
        if format6(abs(delta)) == "0.000000":
            return f"{self._label()} unchanged"
        p = largest.test.p
        test = (
            "no test: fewer than 2 queries"
            if p is None
            else (f"p={p:.3g}, {'significant' if p < self.alpha else 'not significant'}")
        )
        paired_sets = len({f.fixture for f in findings})
        scope = f", the largest change of {paired_sets} sets" if paired_sets > 1 else ""
        return f"{self._label()} {signed6(delta)} on {largest.backend} ({test}{scope})"


def metric_label(key: str) -> str:
    return next(spec.label for spec in METRICS if spec.key == key)


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


@dataclass(frozen=True)
class Markdown:
    """The report in the three parts `comment.fit_body` budgets: head, detail sections, tail."""

    head: str
    sections: tuple[str, ...]
    tail: str

    def whole(self) -> str:
        return "\n\n".join(part for part in (self.head, *self.sections, self.tail) if part)


def render(outcome: Outcome, verdict: str, commits: CommitPair, marker: str, run_url: str | None) -> Markdown:
    """The Markdown report: marker, verdict and overview; a section per set and per drift; footer."""
    head = "\n\n".join([f"{marker}\n{TITLE}", f"**{escape_md(verdict)}**", _overview(outcome.sets, commits)])
    sections = [_set_section(s, commits) for s in outcome.sets]
    sections += [_drift_section(s) for s in outcome.drifted]
    return Markdown(head, tuple(sections), _footer(commits, run_url))


def _scored(s: SetResult, commits: CommitPair) -> str:
    if s.status == "paired":
        return "base → head"
    if s.status == "base-only":
        return "base only: removed in this change"
    if commits.base is None:
        return "head only: no base commit to compare with"
    return "head only: new in this change"


def _overview(sets: Sequence[SetResult], commits: CommitPair) -> str:
    rows = ["| fixture set | scored | golden |", "| --- | --- | --- |"]
    for s in sets:
        if s.golden is None:
            golden = "none configured"
        else:
            golden = ("❌ drifted from " if s.golden.drifted else "✅ matches ") + code_span(
                s.golden.path, in_table=True
            )
        rows.append(f"| {code_span(s.fixture, in_table=True)} | {_scored(s, commits)} | {golden} |")
    return "\n".join(rows)


def _set_section(s: SetResult, commits: CommitPair) -> str:
    """Means, the chart of the gated metric, the stale anchors, then each backend's queries."""
    title = f"### {code_span(s.fixture)}"
    if s.comparisons is None:
        side: Literal["base", "head"] = "head" if s.status == "head-only" else "base"
        lead = f"Scored at {_scored(s, commits)}. Mean metrics per backend at {side}:"
        parts = [title, lead, report_means_table(s.document(side)).rstrip("\n"), stale_section(s)]
        return "\n\n".join(part for part in parts if part)
    parts = [
        title,
        "Mean metrics per backend, base → head (change):",
        means_table(s.comparisons).rstrip("\n"),
        delta_chart(s),
        stale_section(s),
    ]
    notes = stale_notes(s)
    parts += [backend_section(c, heading_level=4, notes=notes).rstrip("\n") for c in s.comparisons]
    return "\n\n".join(part for part in parts if part)


def delta_chart(s: SetResult) -> str:
    """The per-query deltas of the gated metric as a Mermaid bar chart, for the last backend scored
    at both sides (the last of the `backends` input: `hybrid` by default, the one a user ships);
    folded into `<details>` above `CHART_FOLD` queries; '' when no query was scored at both."""
    paired = scored_at_both(s)
    if not paired:
        return ""
    chosen = paired[-1]
    try:
        block = delta_chart_markdown(chosen, s.primary).rstrip("\n")
    except CceError:  # no query on both sides: nothing to draw
        return ""
    what = f"Δ{metric_label(s.primary)} per query on"
    n = len(chosen.pair.paired)
    if n > CHART_FOLD:
        return details(f"Chart: {what} {chosen.pair.backend}, head − base ({n} queries)", block)
    lead = f"{what} {code_span(chosen.pair.backend)}, head − base (a bar ending above the zero line improved):"
    return f"{lead}\n\n{block}"


def stale_notes(s: SetResult) -> dict[str, str]:
    """The mark after a query id in the delta tables: stale at head, or stale at base only."""
    notes = {qid: f"{STALE_MARK} at base" for qid in s.stale("base")}
    notes.update({qid: STALE_MARK for qid in s.stale("head")})
    return notes


def stale_section(s: SetResult) -> str:
    """Each stale anchor with its reason at base and at head ('' when there is none)."""
    reasons: dict[tuple[str, str], dict[str, str]] = {}
    for side in ("head", "base"):
        for f in s.stale_findings(side):
            reasons.setdefault((f.case_id, f.anchor or ""), {})[side] = f.code
    if not reasons:
        return ""
    command = code_span(shlex.join(["cce-relevance", "validate", s.fixture]))
    gated = _gated_line(s)
    lead = (
        "These anchors resolve to nothing in the corpus, so no backend can retrieve them: a miss on "
        "them is a label to fix, not a ranking loss"
        + (", and their queries are left out of the regression test" if gated else "")
        + f". {command} lists them. `—`: not stale there."
    )
    rows = ["| query | anchor | base | head |", "| --- | --- | --- | --- |"]
    for (qid, anchor), by_side in reasons.items():
        cells = [code_span(qid, in_table=True), code_span(anchor, in_table=True),
                 _reason(s.base_anchors, by_side.get("base")), _reason(s.head_anchors, by_side.get("head"))]
        rows.append(f"| {' | '.join(cells)} |")
    parts = ["#### ⚠️ Stale anchors", lead, "\n".join(rows)]
    hopeless = s.head_anchors.unsatisfiable() if s.head_anchors is not None else ()
    if hopeless:
        who = _count(len(hopeless), "query has", "queries have")
        parts.append(f"At head, {who} no anchor that resolves, so every backend scores "
                     f"{'it' if len(hopeless) == 1 else 'them'} 0.")
    return "\n\n".join([*parts, gated] if gated else parts)


def _gated_line(s: SetResult) -> str:
    """What the regression test saw without the stale queries, per backend (the tables below
    test every query); '' when the set has no backend scored on both sides."""
    tests = []
    for c in scored_at_both(s):
        test, _ = api.gated_test(c, s.primary, s.stale_queries)
        p = "no test" if test.p is None else f"p={test.p:.3g}"
        tests.append(f"{code_span(c.pair.backend)} {signed6(test.mean_delta)} (n={test.n}, {p})")
    return f"The regression test of {metric_label(s.primary)} without them: {', '.join(tests)}." if tests else ""


def _reason(anchors: Validation | None, code: str | None) -> str:
    if anchors is None:
        return "not scored"
    return "—" if code is None else code


def _drift_section(s: SetResult) -> str:
    assert s.golden is not None
    return "\n\n".join(
        [
            f"### ❌ Golden drift: {code_span(s.golden.path)}",
            f"The head report of {code_span(s.fixture)} no longer matches the committed golden report. "
            "If the change is intended, update the golden from the working directory and commit it:",
            code_block(s.golden.update, "sh"),
            code_block(s.golden.diff, "diff"),
        ]
    )


def _footer(commits: CommitPair, run_url: str | None) -> str:
    base = f"`{commits.base[:7]}`" if commits.base else "none"
    run = f" · [workflow run]({run_url})" if run_url else ""
    return f"<sub>base {base} → head `{commits.head[:7]}` · cce-relevance {__version__}{run}</sub>"


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
                "validate": {side: None if v is None else validation_document(v)
                             for side, v in (("base", s.base_anchors), ("head", s.head_anchors))},
                "stale_queries": sorted(s.stale_queries),
                "compare": None
                if s.comparisons is None
                else comparison_document("base", "head", s.comparisons),
            }
            for s in outcome.sets
        ],
    }
