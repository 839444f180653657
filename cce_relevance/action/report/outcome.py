"""What the Action concludes from the scored sets: the gates, the one-line verdict, the exit code.

The verdict and the exit code are computed from the same facts (golden drift, significant
regressions of the gated metric, stale anchors), here and nowhere else, so the summary, the
comment and `compare.json` (summary.py, comment_body.py, document.py, which only render an
`Outcome`) can never say one thing while the exit code does another. The verdict is built from
our own words and numbers; names from a tree are escaped where it is rendered.

Stale anchors (anchors that resolve to nothing in a side's corpus: a renamed file, a deleted
function) make a query lose at head whatever the ranking does. The regression test therefore
runs over the queries whose anchors resolve at both base and head; the tables keep every query
(they are the ones `cce-relevance compare` prints) and mark the stale ones.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property

from cce_relevance.action.config.inputs import DEFAULT_POWER, FailOn
from cce_relevance.action.scoring.model import ComparedSet
from cce_relevance.api import BackendComparison
from cce_relevance.errors import EXIT_GATE_FAILED, EXIT_OK
from cce_relevance.evaluation.gate import BackendGate
from cce_relevance.reporting.numbers import format6, signed3


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


def scored_at_both(s: ComparedSet) -> tuple[BackendComparison, ...]:
    """The set's comparisons of the backends scored at both base and head (none unless paired)."""
    return () if s.comparison is None else s.comparison.at_both


@dataclass(frozen=True)
class Outcome:
    """The facts both the verdict and the gates are made of."""

    sets: tuple[ComparedSet, ...]
    metric: str
    alpha: float
    fail_on: FailOn = "drift"
    min_effect: float | None = None  # `min-detectable-effect`; None: no inconclusive verdict
    power: float = DEFAULT_POWER

    @property
    def drifted(self) -> tuple[ComparedSet, ...]:
        return tuple(s for s in self.sets if s.golden is not None and s.golden.drifted)

    @cached_property
    def findings(self) -> tuple[GatedChange, ...]:
        """The gated metric on every backend scored at both base and head: each set's gate, tested
        once with its comparison (`ComparedSet.comparison`)."""
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

    @property
    def exit_code(self) -> int:
        """The Action's exit code: `EXIT_GATE_FAILED` when the gate fails (`gate_failed`), else
        `EXIT_OK`."""
        return EXIT_GATE_FAILED if self.gate_failed() else EXIT_OK

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


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 query`, `2 queries`: a count with its noun in the right number."""
    return f"{n} {noun}" if n == 1 else f"{n} {plural or noun + 's'}"


def left_out_reason(s: ComparedSet, among: Collection[str] | None = None) -> str:
    """Why the regression test leaves out queries of `s` (of those `among`, default all): a stale
    anchor, lines that moved or changed under a range anchor, or both."""
    left_out = s.left_out_queries if among is None else s.left_out_queries & set(among)
    stale = bool(left_out & s.stale_queries)
    moved = bool(left_out - s.stale_queries)
    if stale and moved:
        return "a stale anchor or a range anchor whose lines moved or changed"
    return "a range anchor whose lines moved or changed" if moved else "a stale anchor"
