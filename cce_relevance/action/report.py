"""What the Action concludes from the scored sets: the gates, the one-line verdict, the Markdown.

The verdict and the gates are computed from the same facts (golden drift, significant
regressions of the gated metric) so the comment can never say one thing while the exit code
does another. The Markdown is split into a head (marker, verdict, overview), detail sections
and a footer, the shape `comment.fit_body` trims to a size budget: the verdict always survives.
Every name that came from a tree (fixture paths, golden paths, report ids) is untrusted and goes
through `markdown_safe`; the verdict itself is built from our own words and numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cce_relevance import __version__
from cce_relevance.action.git import CommitPair
from cce_relevance.action.inputs import FailOn
from cce_relevance.action.scoring import SetResult
from cce_relevance.evaluation.metrics import METRICS
from cce_relevance.reporting.compare_report import comparison_document
from cce_relevance.reporting.markdown import backend_section, means_table, report_means_table
from cce_relevance.reporting.markdown_safe import code_block, code_span, escape_md
from cce_relevance.reporting.numbers import format6, signed6
from cce_relevance.stats.comparison import MetricStats

ACTION_SCHEMA = "cce.relevance.action/v1"
TITLE = "## Retrieval relevance"


@dataclass(frozen=True)
class Finding:
    """One backend's change in the gated metric, in one fixture set."""

    fixture: str
    backend: str
    stats: MetricStats
    alpha: float

    @property
    def significant_regression(self) -> bool:
        test = self.stats.test
        return test.mean_delta < 0 and test.p is not None and test.p < self.alpha


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
    def findings(self) -> tuple[Finding, ...]:
        """The gated metric on every backend scored at both base and head."""
        return tuple(
            Finding(s.fixture, c.pair.backend, c.metric(self.metric), self.alpha)
            for s in self.sets
            for c in s.comparisons or ()
            if c.pair.base_means is not None and c.pair.head_means is not None
        )

    @property
    def regressions(self) -> tuple[Finding, ...]:
        """Significant regressions: p < alpha with a negative mean delta (paired t-test)."""
        return tuple(f for f in self.findings if f.significant_regression)

    def gate_failed(self, fail_on: FailOn) -> bool:
        """`drift`: any golden drifted; `regression`: that or a significant regression; `none`: never."""
        if fail_on == "none":
            return False
        return bool(self.drifted) or (fail_on == "regression" and bool(self.regressions))

    def verdict(self) -> str:
        """One line: problems first (drift, significant regression), then the largest change."""
        parts = []
        if self.drifted:
            parts.append(f"golden drift in {_count(len(self.drifted), 'report')}")
        if self.regressions:
            parts.append(self._regression_clause())
        if any(s.golden is not None for s in self.sets) and not self.drifted:
            parts.append("no golden drift")
        if not self.regressions:
            parts.append(self._largest_change())
        emoji = "❌" if self.drifted else "⚠️" if self.regressions else "✅"
        text = "; ".join(parts)
        return f"{emoji} {text[0].upper()}{text[1:]}"

    def _label(self) -> str:
        return next(spec.label for spec in METRICS if spec.key == self.metric)

    def _regression_clause(self) -> str:
        worst = min(self.regressions, key=lambda f: f.stats.test.mean_delta)
        more = len(self.regressions) - 1
        where = f"{worst.backend} {signed6(worst.stats.test.mean_delta)}, p={worst.stats.test.p:.3g}"
        if more:
            where += f"; {_count(more, 'more backend')}"
        return f"significant regression of {self._label()} at alpha {self.alpha:g} ({where})"

    def _largest_change(self) -> str:
        findings = self.findings
        if not findings:
            return "no set scored at both base and head, nothing to compare"
        largest = max(findings, key=lambda f: abs(f.stats.test.mean_delta))
        delta = largest.stats.test.mean_delta
        if format6(abs(delta)) == "0.000000":
            return f"{self._label()} unchanged"
        p = largest.stats.test.p
        test = (
            "no test: fewer than 2 queries"
            if p is None
            else (f"p={p:.3g}, {'significant' if p < self.alpha else 'not significant'}")
        )
        paired_sets = len({f.fixture for f in findings})
        scope = f", the largest change of {paired_sets} sets" if paired_sets > 1 else ""
        return f"{self._label()} {signed6(delta)} on {largest.backend} ({test}{scope})"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


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
    title = f"### {code_span(s.fixture)}"
    if s.comparisons is None:
        side = "head" if s.status == "head-only" else "base"
        lead = f"Scored at {_scored(s, commits)}. Mean metrics per backend at {side}:"
        return "\n\n".join([title, lead, report_means_table(s.document(side)).rstrip("\n")])
    parts = [
        title,
        "Mean metrics per backend, base → head (change):",
        means_table(s.comparisons).rstrip("\n"),
    ]
    parts += [backend_section(c, heading_level=4).rstrip("\n") for c in s.comparisons]
    return "\n\n".join(parts)


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
        "schema": ACTION_SCHEMA,
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
                "compare": None
                if s.comparisons is None
                else comparison_document("base", "head", s.comparisons),
            }
            for s in outcome.sets
        ],
    }
