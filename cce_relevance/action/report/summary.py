"""The job summary's Markdown: marker, verdict and overview; a section per fixture set (means,
stale anchors, moved range anchors, each backend's queries) and per drifted golden; footer.

It renders what `outcome.Outcome` decided and never decides anything itself, so the summary and
the exit code cannot disagree. The report comes in three parts (`TrimmableBody`: head, detail
sections, tail), the shape `runner/pr_comment.py` trims to a size budget: the verdict always
survives. Every name that came from a tree (fixture paths, golden paths, report ids, anchors)
is untrusted and goes through `markdown_safe`.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cce_relevance import __version__
from cce_relevance.action.report.outcome import Outcome, counted, left_out_reason
from cce_relevance.action.report.query_changes import stale_notes
from cce_relevance.action.scoring.model import ComparedSet
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.api import Validation
from cce_relevance.reporting.full_report import label
from cce_relevance.reporting.markdown import FULL_LEGEND_MD, backend_section, means_table, report_means_table
from cce_relevance.reporting.markdown_safe import code_block, code_span, escape_md
from cce_relevance.reporting.numbers import SIX, Digits

TITLE = "## Retrieval relevance"


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


@dataclass(frozen=True)
class TrimmableBody:
    """The report in the three parts `fit.fit_body` budgets: head, detail sections, tail."""

    head: str
    sections: tuple[str, ...]
    tail: str

    def whole(self) -> str:
        return "\n\n".join(part for part in (self.head, *self.sections, self.tail) if part)


def render(
    outcome: Outcome, verdict: str, commits: CommitPair, marker: str, run_link: str | None
) -> TrimmableBody:
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
    return TrimmableBody(head, tuple(sections), footer(commits, run_link))


def _scored(s: ComparedSet, commits: CommitPair) -> str:
    if s.status == "paired":
        return "base → head"
    if s.status == "base-only":
        return "base only: removed in this change"
    if commits.base is None:
        return "head only: no base commit to compare with"
    return "head only: new in this change"


def _overview(sets: Sequence[ComparedSet], commits: CommitPair) -> str:
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


def _set_section(s: ComparedSet, commits: CommitPair) -> str:
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


def moves_section(s: ComparedSet) -> str:
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


def stale_section(s: ComparedSet, digits: Digits = SIX) -> str:
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


def _gated_line(s: ComparedSet, digits: Digits) -> str:
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


def _drift_section(s: ComparedSet) -> str:
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
