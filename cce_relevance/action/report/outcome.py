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
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from cce_relevance import __version__, schemas
from cce_relevance.action.config.inputs import DEFAULT_POWER, FailOn
from cce_relevance.action.report.query_changes import stale_notes
from cce_relevance.action.scoring.sides import SetResult
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.api import BackendComparison, Validation
from cce_relevance.evaluation.gate import BackendGate
from cce_relevance.reporting.compare_report import comparison_document
from cce_relevance.reporting.full_report import label
from cce_relevance.reporting.markdown import FULL_LEGEND_MD, backend_section, means_table, report_means_table
from cce_relevance.reporting.markdown_safe import code_block, code_span, escape_md
from cce_relevance.reporting.numbers import SIX, Digits, format6, signed3
from cce_relevance.reporting.validation_report import validation_document

TITLE = "## Retrieval relevance"


@dataclass(frozen=True)
class GatedChange(BackendGate):
    """One backend's change in the gated metric, in one fixture set: the gate's paired t-test over
    the queries whose anchors resolve at both base and head (`left_out` queries had a stale one),
    judged at `alpha`."""

    fixture: str
    alpha: float
    # `min-detectable-effect`, the smallest change worth detecting (None: no inconclusive
    # verdict), and `power`, the chance the test must have of detecting it.
    min_effect: float | None = None
    power: float = DEFAULT_POWER

    @property
    def significant_regression(self) -> bool:
        return self.regressed(self.alpha)

    @cached_property
    def detectable(self) -> float | None:
        """The smallest mean delta this test detects at `power` (None: off, or no spread)."""
        return None if self.min_effect is None else self.smallest_detectable(self.alpha, self.power)

    @cached_property
    def needed(self) -> int | None:
        """Queries of this spread that would detect `min_effect` (None: off, or not to be sized)."""
        if self.min_effect is None:
            return None
        return self.queries_needed(self.min_effect, self.alpha, self.power)

    @property
    def inconclusive(self) -> bool:
        """No significant change, though the test could only have detected one larger than
        `min-detectable-effect` (`BackendGate.underpowered`); never without the threshold."""
        if self.min_effect is None:
            return False
        return self.underpowered(self.alpha, self.power, self.min_effect)


def scored_at_both(s: SetResult) -> tuple[BackendComparison, ...]:
    """The set's comparisons of the backends scored at both base and head (none unless paired)."""
    return () if s.comparison is None else s.comparison.at_both


@dataclass(frozen=True)
class Outcome:
    """The facts both the verdict and the gates are made of."""

    sets: tuple[SetResult, ...]
    metric: str
    alpha: float
    fail_on: FailOn = "drift"
    min_effect: float | None = None  # `min-detectable-effect`; None: no inconclusive verdict
    power: float = DEFAULT_POWER

    @property
    def drifted(self) -> tuple[SetResult, ...]:
        return tuple(s for s in self.sets if s.golden is not None and s.golden.drifted)

    @cached_property
    def findings(self) -> tuple[GatedChange, ...]:
        """The gated metric on every backend scored at both base and head: each set's gate, tested
        once with its comparison (`SetResult.comparison`)."""
        return tuple(
            GatedChange(
                **vars(gate),
                fixture=s.fixture,
                alpha=self.alpha,
                min_effect=self.min_effect,
                power=self.power,
            )
            for s in self.sets
            if s.comparison is not None
            for gate in s.comparison.gates
        )

    @property
    def headline(self) -> GatedChange | None:
        """The (set, backend) the verdict is about, and that the comment features: the worst
        significant regression, else the largest change of the gated metric (the first of equals)."""
        if self.regressions:
            return min(self.regressions, key=lambda f: f.test.mean_delta)
        findings = self.findings
        return max(findings, key=lambda f: abs(f.test.mean_delta)) if findings else None

    @property
    def stale_at_head(self) -> int:
        """Stale anchors at head, over every set: labels the change (or an earlier one) left dangling."""
        return sum(len(anchors) for s in self.sets for anchors in s.stale("head").values())

    @property
    def moved_at_head(self) -> int:
        """Range anchors whose lines moved or changed between base and head, over every set."""
        return sum(len(s.moves) for s in self.sets)

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

    @property
    def inconclusive(self) -> tuple[GatedChange, ...]:
        """The backends whose test found no significant change though it could only have seen one
        larger than `min-detectable-effect` (none when that input is off)."""
        return tuple(f for f in self.findings if f.inconclusive)

    def gate_failed(self, fail_on: FailOn | None = None) -> bool:
        """`drift`: any golden drifted; `regression`: that or a significant regression;
        `inconclusive`: any of those or an inconclusive test; `none`: never. Without an argument,
        the outcome's own `fail_on`."""
        fail_on = self.fail_on if fail_on is None else fail_on
        if fail_on == "none":
            return False
        if self.drifted:
            return True
        if fail_on == "inconclusive":
            return bool(self.regressions) or bool(self.inconclusive)
        return fail_on == "regression" and bool(self.regressions)

    def verdict(self) -> str:
        """One line, the single source of truth for the gate: problems first (drift, stale anchors),
        then the gated metric on the headline backend with the test that decided and its n (the
        queries without a stale anchor). ❌ only when the check fails, ⚠️ for a problem that does
        not fail it, ✅ otherwise."""
        parts = []
        if self.drifted:
            parts.append(f"golden drift in {counted(len(self.drifted), 'report')}")
        parts.append(self._test_clause())
        parts += self._inconclusive_clauses()
        others = sorted({(f.backend, f.fixture) for f in self.regressions} - self._headline_key())
        if others:
            parts.append("also significantly worse on " + ", ".join(self._where(b, fx) for b, fx in others))
        if self.stale_at_head:
            parts.append(f"{counted(self.stale_at_head, 'stale anchor')} at head")
        if self.moved_at_head:
            parts.append(f"{counted(self.moved_at_head, 'line-range anchor')} whose lines moved or changed")
        if any(s.golden is not None for s in self.sets) and not self.drifted:
            parts.append("goldens match")
        failed = self.gate_failed()
        warned = (
            self.drifted or self.regressions or self.stale_at_head or self.moved_at_head or self.inconclusive
        )
        emoji = "❌" if failed else "⚠️" if warned else "✅"
        text = "; ".join(parts)
        return f"{emoji} {text[0].upper()}{text[1:]}"

    def _inconclusive_clauses(self) -> list[str]:
        """`inconclusive: with n = 20 this set detects ΔMRR ≥ 0.110 at 80% power` for the headline
        (or the first inconclusive backend), and the others named."""
        found = self.inconclusive
        if not found:
            return []
        h = self.headline
        lead = h if h is not None and h.inconclusive else found[0]
        if lead.detectable is None:  # fewer than 2 queries: no test at all
            clause = f"inconclusive: n = {lead.test.n} is too few queries for a test"
        else:
            clause = (
                f"inconclusive: with n = {lead.test.n} this set detects only Δ{lead.label} ≥ "
                f"{lead.detectable:.3f} at {self.power:.0%} power (min-detectable-effect {lead.min_effect:g})"
            )
        if lead is not h:
            clause += f" on {self._where(lead.backend, lead.fixture)}"
        others = sorted({(f.backend, f.fixture) for f in found} - {(lead.backend, lead.fixture)})
        if others:
            clause += "; also inconclusive on " + ", ".join(self._where(b, fx) for b, fx in others)
        return [clause]

    def _headline_key(self) -> set[tuple[str, str]]:
        h = self.headline
        return set() if h is None else {(h.backend, h.fixture)}

    def _where(self, backend: str, fixture: str) -> str:
        return backend if len({s.fixture for s in self.sets}) == 1 else f"{backend} in {fixture}"

    def _test_clause(self) -> str:
        h = self.headline
        if h is None:
            return "no set scored at both base and head, nothing to compare"
        test = h.test
        the_set = next(s for s in self.sets if s.fixture == h.fixture)
        stale = (
            f", {counted(h.left_out, 'query', 'queries')} with {left_out_reason(the_set)} left out"
            if h.left_out
            else ""
        )
        n = f"n = {test.n}{stale}"
        if all(format6(f.test.mean_delta) in ("0.000000", "-0.000000") for f in self.findings):
            scope = "every backend" if len(self.findings) > 1 else self._where(h.backend, h.fixture)
            return f"{h.label} unchanged on {scope} ({n})"
        where = self._where(h.backend, h.fixture)
        if test.p is None:
            return f"{h.label} on {where} {signed3(test.mean_delta)} (no test: fewer than 2 queries, {n})"
        if h.significant_regression:
            judged = f"significantly worse, p = {test.p:.3g} < {self.alpha:g}"
        else:
            judged = f"p = {test.p:.3g}, {'significant' if test.p < self.alpha else 'not significant'}"
        return f"{h.label} on {where} {signed3(test.mean_delta)} (paired t-test, {n}: {judged})"


def inconclusive_note(outcome: Outcome) -> str:
    """What an inconclusive verdict means and what would settle it, in one paragraph ('' when the
    verdict is not inconclusive): the headline's (or first inconclusive backend's) test."""
    found = outcome.inconclusive
    if not found:
        return ""
    h = outcome.headline
    f = h if h is not None and h.inconclusive else found[0]
    where = code_span(f.backend) + (f" in {code_span(f.fixture)}" if len(outcome.sets) > 1 else "")
    if f.detectable is None:
        sees = f"with {counted(f.test.n, 'query', 'queries')} it cannot test at all"
    else:
        sees = (
            f"with these {f.test.n} queries and their spread it detects only changes of at least "
            f"{f.detectable:.3f} at {outcome.power:.0%} power"
        )
    more = (
        f" About {f.needed} queries of this spread would detect {f.min_effect:g}."
        if f.needed is not None and f.needed > f.test.n
        else ""
    )
    return (
        f"⚖️ **Inconclusive**: no significant change of {f.label} on {where}, but {sees}; "
        f"`min-detectable-effect` is {f.min_effect:g}, so a real change of that size could pass "
        f"unseen.{more}"
    )


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 query`, `2 queries`: a count with its noun in the right number."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


@dataclass(frozen=True)
class Markdown:
    """The report in the three parts `comment.fit_body` budgets: head, detail sections, tail."""

    head: str
    sections: tuple[str, ...]
    tail: str

    def whole(self) -> str:
        return "\n\n".join(part for part in (self.head, *self.sections, self.tail) if part)


def render(
    outcome: Outcome, verdict: str, commits: CommitPair, marker: str, run_link: str | None
) -> Markdown:
    """The Markdown report: marker, verdict and overview; a section per set and per drift; the
    statistics' legend once; footer."""
    note = inconclusive_note(outcome)
    head = "\n\n".join(
        [
            f"{marker}\n{TITLE}",
            f"**{escape_md(verdict)}**",
            *([note] if note else []),
            _overview(outcome.sets, commits),
        ]
    )
    sections = [_set_section(s, commits) for s in outcome.sets]
    sections += [_drift_section(s) for s in outcome.drifted]
    if any(c.full is not None for s in outcome.sets for c in s.comparisons or ()):
        sections.append(FULL_LEGEND_MD.rstrip("\n"))  # once, not after every backend's statistics
    return Markdown(head, tuple(sections), footer(commits, run_link))


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
    left_out = len(s.left_out_queries)
    scope = (
        f" The tables and statistics below keep every query; the regression test (the verdict) leaves out "
        f"the {counted(left_out, 'query', 'queries')} with {left_out_reason(s)}."
        if left_out
        else ""
    )
    parts = [
        title,
        "Mean metrics per backend, base → head (change):" + scope,
        means_table(s.comparisons, latency=s.latency).rstrip("\n"),
        stale_section(s),
        moves_section(s),
    ]
    notes = stale_notes(s)
    parts += [
        backend_section(c, heading_level=4, notes=notes, legend=False).rstrip("\n") for c in s.comparisons
    ]
    return "\n\n".join(part for part in parts if part)


def left_out_reason(s: SetResult, among: Collection[str] | None = None) -> str:
    """Why the regression test leaves out queries of `s` (of those `among`, default all): a stale
    anchor, lines that moved or changed under a range anchor, or both."""
    left_out = s.left_out_queries if among is None else s.left_out_queries & set(among)
    stale = bool(left_out & s.stale_queries)
    moved = bool(left_out - s.stale_queries)
    if stale and moved:
        return "a stale anchor or a range anchor whose lines moved or changed"
    return "a range anchor whose lines moved or changed" if moved else "a stale anchor"


def moves_section(s: SetResult) -> str:
    """Each range anchor whose lines moved or changed from base to head, and for the moved ones
    the fixture lines to paste ('' when there is none)."""
    if not s.moves:
        return ""
    lead = (
        "The pull request moved or edited the lines these range anchors label, so at head they "
        "would label other text; their queries are left out of the regression test. Moved: the "
        "same lines are now at the range shown (the fixture lines below name it). Changed: the "
        "labelled lines were edited; check what the anchor should name."
    )
    rows = ["| query | anchor | lines | at head |", "| --- | --- | --- | --- |"]
    for m in s.moves:
        now = f"moved to {m.head_lines[0]}-{m.head_lines[1]}" if m.head_lines is not None else "changed"
        rows.append(
            f"| {code_span(m.case_id, in_table=True)} | {code_span(m.anchor, in_table=True)} | "
            f"{code_span(m.path, in_table=True)} {m.base_lines[0]}-{m.base_lines[1]} | {now} |"
        )
    parts = ["#### ↕️ Line-range anchors that moved or changed", lead, "\n".join(rows)]
    pasted = [f"{s.fixture}:{m.line}: {m.fixture_line}" for m in s.moves if m.fixture_line is not None]
    if pasted:
        parts.append(code_block("\n".join(pasted)))
    return "\n\n".join(parts)


def stale_section(s: SetResult, digits: Digits = SIX) -> str:
    """Each stale anchor with its reason at base and at head ('' when there is none)."""
    reasons: dict[tuple[str, str], dict[str, str]] = {}
    for side in ("head", "base"):
        for f in s.stale_findings(side):
            reasons.setdefault((f.case_id, f.anchor or ""), {})[side] = f.code
    if not reasons:
        return ""
    command = code_span(shlex.join(["cce-relevance", "validate", s.fixture]))
    gated = _gated_line(s, digits)
    lead = (
        "These anchors resolve to nothing in the corpus, so no backend can retrieve them: a miss on "
        "them is a label to fix, not a ranking loss"
        + (", and their queries are left out of the regression test" if gated else "")
        + f". {command} lists them. `—`: not stale there."
    )
    rows = ["| query | anchor | base | head |", "| --- | --- | --- | --- |"]
    for (qid, anchor), by_side in reasons.items():
        cells = [
            code_span(qid, in_table=True),
            code_span(anchor, in_table=True),
            _reason(s.base_anchors, by_side.get("base")),
            _reason(s.head_anchors, by_side.get("head")),
        ]
        rows.append(f"| {' | '.join(cells)} |")
    parts = ["#### ⚠️ Stale anchors", lead, "\n".join(rows)]
    hopeless = s.head_anchors.unsatisfiable() if s.head_anchors is not None else ()
    if hopeless:
        who = counted(len(hopeless), "query has", "queries have")
        parts.append(
            f"At head, {who} no anchor that resolves, so every backend scores "
            f"{'it' if len(hopeless) == 1 else 'them'} 0."
        )
    return "\n\n".join([*parts, gated] if gated else parts)


def _gated_line(s: SetResult, digits: Digits) -> str:
    """What the regression test saw without the stale queries, per backend (the tables below
    test every query); '' when the set has no backend scored on both sides."""
    tests = []
    for gate in s.comparison.gates if s.comparison is not None else ():
        test = gate.test
        p = "no test" if test.p is None else f"p={test.p:.3g}"
        tests.append(f"{code_span(gate.backend)} {digits.signed(test.mean_delta)} (n={test.n}, {p})")
    return f"The regression test of {label(s.primary)} without them: {', '.join(tests)}." if tests else ""


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


def footer(commits: CommitPair, run_link: str | None) -> str:
    """The last line: both commits, our version, and `run_link` (Markdown: a link to the job)."""
    base = f"`{commits.base[:7]}`" if commits.base else "none"
    run = f" · {run_link}" if run_link else ""
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
