"""The pull request comment: the verdict, then at most a screen that says what changed and why.

The full report (`report.md`, the step summary) keeps every table; the comment is for a reviewer
deciding whether to merge, so it holds, in this order:

1. the marker (first line, so it is found only there) and the verdict: the gate's single source
   of truth, naming the gated metric, the backend it is about, the test and its n;
2. one line of counts, and a note when the pull request edits the fixture sets or goldens;
3. golden drift in words: which queries and values moved, a small table, and the exact
   `--update-golden` command (this part is never trimmed);
4. per fixture set: the means (three decimals), then **the changed queries in one table across
   backends**, worst first: rank base → head per backend, the gated delta with a diverging bar, and
   why (what ranks above the expected chunk at head, linked); ten rows, the rest folded;
5. the statistics once, for the headline backend and the gated metric, over the queries the
   gate tested; every backend and metric folded; the legend once;
6. folded: the golden's diff, keyed by query id.

A pull request that changes nothing measurable gets only the verdict, the counts and the footer.
No Mermaid: `xychart-beta` grows every bar from the axis' bottom, so a diverging text bar in the
table is the honest chart GitHub can draw (`--chart x.svg` is unchanged).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cce_relevance.action.report.outcome import Outcome, counted, left_out_reason, scored_at_both
from cce_relevance.action.report.query_changes import (
    ID_LIMIT,
    Links,
    QueryChange,
    changed_queries,
    changes_table,
    stale_notes,
)
from cce_relevance.action.report.summary import (
    TITLE,
    TrimmableBody,
    footer,
    inconclusive_note,
    moves_section,
    stale_section,
)
from cce_relevance.action.scoring.model import ComparedSet
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.api import BackendComparison
from cce_relevance.evaluation.golden import ValueChange
from cce_relevance.reporting.full_report import full_cells, interval6, label, optional6, rank_test_p_cells
from cce_relevance.reporting.markdown import (
    FULL_LEGEND_MD,
    means_table,
    report_means_table,
    significance_table,
)
from cce_relevance.reporting.markdown_safe import code_block, code_span, details, escape_md, shorten
from cce_relevance.reporting.numbers import THREE

VISIBLE_ROWS = 10  # changed queries shown before the fold
FOLDED_ROWS = 200  # changed queries in the fold; the rest are in report.md
DRIFT_ROWS = 6  # (query, value) rows of a drifted golden's table


@dataclass(frozen=True)
class SetView:
    """One paired set as the comment shows it: its changed queries, worst first, and the rest."""

    result: ComparedSet
    featured: str  # the backend the delta, bar and why columns are about
    changes: list[QueryChange]
    unchanged: int


def set_views(outcome: Outcome) -> list[SetView]:
    headline = outcome.headline
    views = []
    for s in outcome.sets:
        paired = scored_at_both(s)
        if not paired:
            continue
        featured = (
            headline.backend
            if headline is not None
            and headline.fixture == s.fixture
            and any(c.pair.backend == headline.backend for c in paired)
            else paired[-1].pair.backend
        )
        rows, unchanged = changed_queries(s, paired, outcome.metric, featured)
        views.append(SetView(s, featured, rows, unchanged))
    return views


def render_comment(
    outcome: Outcome,
    verdict: str,
    commits: CommitPair,
    marker: str,
    *,
    links: Links | None,
    run_link: str | None,
    edited: Sequence[str] = (),
) -> TrimmableBody:
    """The comment in the parts `fit.fit_body` budgets (the head is never trimmed)."""
    views = set_views(outcome)
    head = [f"{marker}\n{TITLE}", f"**{escape_md(verdict)}**", _counts(outcome, views)]
    note = inconclusive_note(outcome)
    if note:
        head.append(note)
    if edited:
        head.append(
            "✏️ This pull request edits "
            + ", ".join(code_span(p) for p in edited)
            + ": the labels or goldens changed too, not only the ranking."
        )
    head += [_drift_line(s) for s in outcome.drifted]
    if not measurable_change(outcome):
        return TrimmableBody("\n\n".join(head), (), footer(commits, run_link))
    sections = [_set_section(v, outcome, links, len(outcome.sets) > 1) for v in views]
    sections += [_one_side(s) for s in outcome.sets if s.status != "paired"]
    sections += [_drift_details(s) for s in outcome.drifted]
    sections.append(_statistics(outcome))
    return TrimmableBody("\n\n".join(head), tuple(p for p in sections if p), footer(commits, run_link))


def _counts(outcome: Outcome, views: list[SetView]) -> str:
    """`1 fixture set · 5 queries × 3 backends · 1 changed, 4 unchanged · fail-on: drift`."""
    queries = sum(v.unchanged + len(v.changes) for v in views)
    backends = max((len(scored_at_both(v.result)) for v in views), default=0)
    changed = sum(len(v.changes) for v in views)
    parts = [counted(len(outcome.sets), "fixture set")]
    if views:
        parts.append(f"{counted(queries, 'query', 'queries')} × {counted(backends, 'backend')}")
        parts.append(f"{changed} changed, {queries - changed} unchanged")
    parts.append(f"`fail-on: {outcome.fail_on}`")
    return " · ".join(parts)


def _set_section(view: SetView, outcome: Outcome, links: Links | None, named: bool) -> str:
    s = view.result
    paired = scored_at_both(s)
    metric = label(outcome.metric)
    parts = [f"### {code_span(s.fixture)}"] if named else []
    ids = {q.id for q in paired[0].pair.paired} if paired else set()
    left_out = len(s.left_out_queries & ids)
    scope = f"all {counted(view.unchanged + len(view.changes), 'query', 'queries')}"
    means = f"Means over {scope}, base → head (change)" + (
        f"; the regression test leaves out the {left_out} with {left_out_reason(s, ids)}:"
        if left_out
        else ":"
    )
    parts += [means, means_table(paired, THREE, arrow="→", latency=s.latency).rstrip("\n")]
    if view.changes:
        notes = {qid: "⚠️" for qid in stale_notes(s)}  # the why cell says what is stale
        backends = [c.pair.backend for c in paired]
        lead = (
            f"**{counted(len(view.changes), 'changed query', 'changed queries')}**, worst first by Δ{metric} "
            f"on {code_span(view.featured)}: first relevant rank base → head per backend (— not in the top k)"
        )
        parts += [
            lead,
            changes_table(
                s, view.changes[:VISIBLE_ROWS], backends, metric, view.featured, notes, links, THREE
            ),
        ]
        rest = view.changes[VISIBLE_ROWS:]
        if rest:
            shown = rest[:FOLDED_ROWS]
            more = (
                f"\n\n{len(rest) - len(shown)} more are in `report.md` (the job summary)."
                if len(rest) > len(shown)
                else ""
            )
            parts.append(
                details(
                    f"{counted(len(rest), 'more changed query', 'more changed queries')}",
                    changes_table(s, shown, backends, metric, view.featured, notes, links, THREE) + more,
                )
            )
    if view.unchanged:
        parts.append(
            f"{counted(view.unchanged, 'query', 'queries')} unchanged on every backend "
            f"{'is' if view.unchanged == 1 else 'are'} not listed."
        )
    parts += [part for part in (stale_section(s, digits=THREE), moves_section(s)) if part]
    return "\n\n".join(parts)


def _one_side(s: ComparedSet) -> str:
    side: Literal["base", "head"] = "head" if s.status == "head-only" else "base"
    what = "new in this change" if side == "head" else "removed in this change"
    return "\n\n".join(
        p
        for p in [
            f"### {code_span(s.fixture)}: scored at {side} only ({what})",
            report_means_table(s.document(side), THREE).rstrip("\n"),
            stale_section(s, digits=THREE),
        ]
        if p
    )


def _statistics(outcome: Outcome) -> str:
    """The full statistics of the gated metric for the headline backend, then every backend's
    blocks folded, all over the queries the regression test kept; the legend once."""
    headline = outcome.headline
    if headline is None:
        return ""
    featured = next(s for s in outcome.sets if s.fixture == headline.fixture)
    gated = next(g for g in featured.gated_comparisons if g.pair.backend == headline.backend)
    n = len(gated.pair.paired)
    stale = (
        f", leaving out {counted(headline.left_out, 'query', 'queries')} with a stale anchor"
        if (headline.left_out)
        else ""
    )
    lead = (
        f"**Statistics** of {headline.label} on {code_span(headline.backend)}, the verdict's test "
        f"({counted(n, 'query', 'queries')}{stale}):"
    )
    parts = [lead, _headline_table(gated, outcome.metric)]
    blocks = []
    for s in outcome.sets:
        for g in s.gated_comparisons:
            name = code_span(g.pair.backend) + (
                f" in {code_span(s.fixture)}" if len(outcome.sets) > 1 else ""
            )
            blocks.append(f"#### {name}\n\n" + significance_table(g, THREE, legend=False).rstrip("\n"))
    blocks.append(FULL_LEGEND_MD.rstrip("\n"))
    parts.append(
        details("Every backend and metric (the same queries), and how to read them", "\n\n".join(blocks))
    )
    return "\n\n".join(parts)


def _headline_table(g: BackendComparison, metric: str) -> str:
    """One row: the verdict's test and the full statistics of the same deltas."""
    m = g.metric(metric)
    t = m.test
    full = g.full
    extra = next((f for f in full.metrics if f.key == metric), None) if full is not None else None
    cells = [
        str(t.n),
        optional6(t.mean_delta, True, THREE),
        interval6(t.ci95, THREE),
        optional6(t.p, digits=THREE),
        f"{m.wins}/{m.losses}/{m.ties}",
    ]
    if full is not None and extra is not None:
        _wlt, d_z, perm, boot, holm, *_ = full_cells(full, extra, THREE)
        cells += [d_z, perm, boot, holm, *rank_test_p_cells(extra, THREE)]
    else:
        cells += ["n/a"] * 6
    cells.append(optional6(m.mde, digits=THREE))
    header = [
        "n",
        "mean Δ",
        "95% CI",
        "t-test p",
        "W/L/T",
        "d_z",
        "perm p",
        "bootstrap 95% CI",
        "Holm p",
        "Wilcoxon p",
        "sign p",
        "MDE@80%",
    ]
    return "\n".join(
        ["| " + " | ".join(header) + " |", "|" + "---:|" * len(header), "| " + " | ".join(cells) + " |"]
    )


def _drift_line(s: ComparedSet) -> str:
    """A drifted golden in words, with the command that updates it (never trimmed)."""
    golden = s.golden
    assert golden is not None
    changes = golden.changes
    queries = list(dict.fromkeys(c.query for c in changes or () if c.query))
    named = ", ".join(code_span(shorten(q, ID_LIMIT)) for q in queries[:5]) + (
        f" and {len(queries) - 5} more" if len(queries) > 5 else ""
    )
    what = f": {counted(len(queries), 'query', 'queries')} moved ({named})" if queries else ""
    return (
        f"**Golden drift**: the head report of {code_span(s.fixture)} no longer matches "
        f"{code_span(golden.path)}{what}. If that is intended, update it from the working directory "
        f"and commit it:\n\n{code_block(golden.update, 'sh')}"
    )


def _drift_details(s: ComparedSet) -> str:
    """Which values of a drifted golden moved (a small table), and its diff by query id, folded."""
    golden = s.golden
    assert golden is not None
    changes, diff = golden.changes, golden.keyed_diff
    fold = details(
        f"Diff of {golden.path} by query id ({counted(diff.count(chr(10)), 'line')})",
        code_block(diff, "diff"),
    )
    if not changes:
        return fold
    per_query = [c for c in changes if c.query]
    means = len(changes) - len(per_query)
    lead = (
        f"{code_span(golden.path)}: {counted(len(per_query), 'per-query value')} differ"
        + (f", and {counted(means, 'other value')} (backend means, report fields)" if means else "")
        + ":"
    )
    return "\n\n".join([lead, _drift_table(per_query or changes), fold])


def _drift_table(changes: list[ValueChange]) -> str:
    """One row per query and value, one column per backend: `golden → head`."""
    backends = list(dict.fromkeys(c.backend for c in changes))
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for c in changes:
        cell = f"{escape_md(shorten(_plain(c.golden), 20))} → {escape_md(shorten(_plain(c.head), 20))}"
        rows.setdefault((c.query, c.field), {})[c.backend] = cell
    lines = [
        "| query | value | "
        + " | ".join(code_span(b, in_table=True) if b else "report" for b in backends)
        + " |",
        "| --- | --- |" + " ---: |" * len(backends),
    ]
    for (query, field), cells in list(rows.items())[:DRIFT_ROWS]:
        shown = code_span(shorten(query, ID_LIMIT), in_table=True) if query else ""
        lines.append(
            f"| {shown} | {code_span(field, in_table=True)} | "
            + " | ".join(cells.get(b, "") for b in backends)
            + " |"
        )
    table = "\n".join(lines)
    if len(rows) > DRIFT_ROWS:
        table += f"\n\n{len(rows) - DRIFT_ROWS} more in the diff below."
    return table


def _plain(json_text: str) -> str:
    """A JSON scalar as a reader writes it: strings without quotes, null as —."""
    if json_text == "null":
        return "—"
    return json_text[1:-1] if json_text.startswith('"') and json_text.endswith('"') else json_text


def measurable_change(outcome: Outcome) -> bool:
    """Whether the pull request changed anything the comment reports: a drifted golden, a stale
    anchor at head, a set on one side only, or a query that moved on some backend."""
    if outcome.drifted or outcome.stale_at_head or any(s.status != "paired" for s in outcome.sets):
        return True
    return any(v.changes for v in set_views(outcome))
