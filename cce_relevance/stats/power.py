"""Power analysis for the paired t-test: how small an effect a fixture set can see.

A paired t-test over n = 6 queries detects (at alpha 0.05, with 80% power) only a mean delta of
about 1.42 times the per-query delta standard deviation (1.27 at n = 7, 0.89 at n = 12);
smaller real effects read "not significant". These two functions turn that caution into numbers
(seed docs, "Minimum detectable effect"; the standard topic-set-size method of Sakai, *Topic Set
Size Design*, Inf. Retr. J. 2016):

    MDE = (t_{α/2,ν} + t_{β,ν}) · s / √n,   ν = n − 1,   β = 1 − power,

where t_{a,ν} is the *upper* a-point of Student's t (P(T > t_{a,ν}) = a) and s is the
standard deviation of the per-query deltas (a pilot run's). Solving MDE ≤ δ for n gives the
number of labeled queries needed to detect a mean delta δ. This is the usual approximation
that plugs the central t quantile in for the noncentral t; it is what the seed documents.

The reference has no power analysis, so nothing here touches the default report bytes.
The quantiles come from `tdist`, so t_{α/2,ν} at α = 0.05 is bit-identical to the critical
value the 95% CI uses.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cce_relevance.stats.paired import no_spread, sample_sd
from cce_relevance.stats.tdist import t_crit, t_quantile

# Ten million labeled queries is beyond any fixture set, and up to there the t kernels agree
# with scipy to ~1e-8, so the answer is exact; beyond it their accuracy decays with df.
MAX_QUERIES = 10_000_000


def check_plan(delta: float, alpha: float, power: float) -> None:
    """A ValueError naming the first of `delta`, `alpha` and `power` a plan cannot use."""
    _check_delta(delta)
    _check_levels(alpha, power)


def _check_levels(alpha: float, power: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    if not 0.5 <= power < 1.0:
        # The search in `queries_needed` relies on both quantiles falling as n grows, which
        # holds for upper points (power ≥ 0.5); nobody plans to miss an effect half the time.
        raise ValueError(f"power must lie in [0.5, 1), got {power!r}")


def _check_sd(sd: float) -> None:
    if not (math.isfinite(sd) and sd >= 0.0):
        raise ValueError(f"the delta standard deviation must be finite and ≥ 0, got {sd!r}")


def _check_delta(delta: float) -> None:
    if not (math.isfinite(delta) and delta > 0.0):
        raise ValueError(f"the effect size delta must be finite and > 0, got {delta!r}")


def _multiplier(df: float, alpha: float, power: float) -> float:
    """t_{α/2,ν} + t_{β,ν}: the two-sided critical value plus the power quantile."""
    return t_crit(alpha, df) + t_quantile(power, df)


def min_detectable_effect(sd: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """Smallest mean delta a two-sided paired t-test over n queries detects with this power.

    Returns None for n < 2, where no t-test exists (as `paired_t` reports no t there).
    sd = 0 gives 0.0: without noise every non-zero effect is detectable. Raises ValueError
    for a negative or non-finite sd, alpha outside (0, 1), or power outside [0.5, 1).
    """
    _check_sd(sd)
    _check_levels(alpha, power)
    if n < 2:
        return None
    return _multiplier(float(n - 1), alpha, power) * sd / math.sqrt(n)


def observed_mde(deltas: Sequence[float], alpha: float = 0.05, power: float = 0.8) -> float | None:
    """The MDE of a pilot: its own n and the sample sd of its deltas.

    None for n < 2 and when the deltas have no spread (`no_spread`, the rule the t-test uses:
    equal up to rounding noise): such a pilot gives no estimate of the noise, and an MDE of 0
    (or 1e-16) would read as "detects anything".
    """
    if no_spread(deltas):
        return None
    return min_detectable_effect(sample_sd(deltas), len(deltas), alpha, power)


def queries_needed(sd: float, delta: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Smallest n ≥ 2 with n ≥ ((t_{α/2,n−1} + t_{β,n−1}) · s / δ)².

    The right-hand side shrinks as n grows (t quantiles fall towards the normal ones) while
    the left grows, so the condition holds from some n on; we find that n by doubling and
    then bisecting over n, which returns the same answer as trying n = 2, 3, … in turn.

    sd = 0 needs the minimum, 2 queries. Raises ValueError when delta is not a finite
    positive number (pass |δ|), for sd, alpha or power outside the ranges of
    `min_detectable_effect`, and when more than MAX_QUERIES queries would be needed.
    """
    _check_sd(sd)
    _check_levels(alpha, power)
    _check_delta(delta)

    def enough(n: int) -> bool:
        # A product rather than `** 2`, which raises on overflow where this gives inf.
        root = _multiplier(float(n - 1), alpha, power) * sd / delta
        return n >= root * root

    return smallest_passing(
        enough, f"detecting delta={delta!r} at sd={sd!r} needs more than {MAX_QUERIES} queries"
    )


def smallest_passing(enough: Callable[[int], bool], too_many: str) -> int:
    """The smallest n ≥ 2 for which `enough(n)` holds, when it holds from some n on (a condition
    that only turns true as n grows): by doubling, then bisecting, which finds the n that trying
    2, 3, … in turn would. ValueError(`too_many`) when not even MAX_QUERIES is enough."""
    failing, passing = 1, 2
    while not enough(passing):
        if passing == MAX_QUERIES:
            raise ValueError(too_many)
        failing, passing = passing, min(2 * passing, MAX_QUERIES)
    while passing - failing > 1:
        middle = (failing + passing) // 2
        if enough(middle):
            passing = middle
        else:
            failing = middle
    return passing


@dataclass(frozen=True)
class PowerPlan:
    """What a pilot's deltas say: its spread, its MDE now, and the queries needed for `delta`.

    `note` says why a number is missing: too few queries, no spread, or beyond MAX_QUERIES.
    """

    n: int
    sd: float | None
    mde: float | None
    needed: int | None
    note: str | None


def plan_from_pilot(
    deltas: Sequence[float], delta: float, alpha: float = 0.05, power: float = 0.8
) -> PowerPlan:
    """The seed's topic-set-size recipe on a pilot: s from its deltas, then MDE and queries needed.

    A pilot with n < 2 or no spread (`no_spread`: sd = 0 or rounding noise) estimates no noise,
    so neither number exists: "2 queries" from a zero spread would be a promise the data cannot
    back. Raises ValueError for delta, alpha or power out of range (as `queries_needed` does),
    whatever the pilot.
    """
    _check_levels(alpha, power)
    _check_delta(delta)
    n = len(deltas)
    if n < 2:
        return PowerPlan(n, None, None, None, "fewer than 2 paired queries")
    sd = sample_sd(deltas)
    if no_spread(deltas):
        return PowerPlan(n, sd, None, None, "no spread: every delta is the same")
    mde = min_detectable_effect(sd, n, alpha, power)
    try:
        needed: int | None = queries_needed(sd, delta, alpha, power)
    except ValueError:  # the arguments are valid, so this is the MAX_QUERIES limit
        return PowerPlan(n, sd, mde, None, f"more than {MAX_QUERIES} queries")
    return PowerPlan(n, sd, mde, needed, None)


@dataclass(frozen=True)
class PowerRow:
    """One comparison and metric of a `power` run."""

    comparison: str
    metric: str  # metric key
    plan: PowerPlan


@dataclass(frozen=True)
class PowerAnalysis:
    """The rows of one `power` run, the file they came from and the levels they were computed at."""

    source: str
    delta: float
    alpha: float
    power: float
    rows: tuple[PowerRow, ...]
