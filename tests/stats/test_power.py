"""Minimum detectable effect and queries needed (seed docs, "Minimum detectable effect")."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cce_relevance.stats.paired import effect_size_dz, no_spread, paired_t
from cce_relevance.stats.power import min_detectable_effect, observed_mde, plan_from_pilot, queries_needed
from cce_relevance.stats.tdist import t_crit, t_quantile


def scipy_mde(sd: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    df = n - 1
    return (stats.t.ppf(1 - alpha / 2, df) + stats.t.ppf(power, df)) * sd / math.sqrt(n)


def test_seed_quotes_2_571_plus_0_920_at_n_6() -> None:
    assert f"{t_crit(0.05, 5.0):.3f}" == "2.571"
    assert f"{t_quantile(0.8, 5.0):.3f}" == "0.920"
    # "only detects a mean delta of roughly 1.4× the per-query delta standard deviation"
    assert min_detectable_effect(1.0, 6) == pytest.approx((2.570582 + 0.919544) / math.sqrt(6), abs=1e-6)
    assert f"{min_detectable_effect(1.0, 6):.1f}" == "1.4"


def test_the_alpha_term_is_the_ci_critical_value() -> None:
    assert min_detectable_effect(1.0, 10) == (t_crit(0.05, 9.0) + t_quantile(0.8, 9.0)) * 1.0 / math.sqrt(10)


@pytest.mark.parametrize("n", [2, 3, 7, 25, 100, 1000])
@pytest.mark.parametrize(("alpha", "power"), [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5)])
def test_mde_matches_scipy_quantiles(n: int, alpha: float, power: float) -> None:
    assert min_detectable_effect(0.3, n, alpha, power) == pytest.approx(
        scipy_mde(0.3, n, alpha, power), rel=1e-10
    )


def test_mde_edge_cases() -> None:
    assert min_detectable_effect(0.0, 6) == 0.0
    assert min_detectable_effect(0.3, 1) is None
    assert min_detectable_effect(0.3, 0) is None


def brute_force_queries(sd: float, delta: float) -> int:
    """The definition, read literally with scipy quantiles: try n = 2, 3, … in turn."""
    n = 2
    while n < ((stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1)) * sd / delta) ** 2:
        n += 1
    return n


@pytest.mark.parametrize(
    ("sd", "delta"), [(0.3, 0.05), (0.2, 0.05), (0.1, 0.05), (1.0, 1.0), (0.25, 0.4), (0.05, 0.5)]
)
def test_queries_needed_matches_trying_every_n(sd: float, delta: float) -> None:
    assert queries_needed(sd, delta) == brute_force_queries(sd, delta)


def test_queries_needed_edge_cases() -> None:
    assert queries_needed(0.0, 0.05) == 2
    with pytest.raises(ValueError, match="more than"):
        queries_needed(1.0, 1e-6)
    with pytest.raises(ValueError, match="more than"):
        queries_needed(1.0, 1e-300)  # the squared root overflows to inf; still a clean error


@pytest.mark.parametrize("delta", [0.0, -0.05, math.nan, math.inf])
def test_queries_needed_rejects_a_non_positive_or_non_finite_delta(delta: float) -> None:
    with pytest.raises(ValueError, match="delta"):
        queries_needed(0.3, delta)


@pytest.mark.parametrize(
    ("sd", "alpha", "power"),
    [
        (-0.1, 0.05, 0.8),
        (math.nan, 0.05, 0.8),
        (math.inf, 0.05, 0.8),
        (0.3, 0.0, 0.8),
        (0.3, 1.0, 0.8),
        (0.3, 0.05, 0.4),
        (0.3, 0.05, 1.0),
    ],
)
def test_invalid_levels_and_sd_raise(sd: float, alpha: float, power: float) -> None:
    with pytest.raises(ValueError):
        min_detectable_effect(sd, 6, alpha, power)
    with pytest.raises(ValueError):
        queries_needed(sd, 0.05, alpha, power)


@settings(deadline=None, max_examples=25)
@given(st.floats(min_value=0.01, max_value=1.0), st.floats(min_value=0.1, max_value=8.0))
def test_queries_needed_is_the_first_n_whose_mde_reaches_delta(sd: float, ratio: float) -> None:
    delta = sd / ratio
    n = queries_needed(sd, delta)
    slack = 1e-12  # √ and ² round differently from the defining inequality at exact ties
    assert min_detectable_effect(sd, n) <= delta * (1 + slack)
    if n > 2:
        assert min_detectable_effect(sd, n - 1) > delta * (1 - slack)


@settings(deadline=None, max_examples=30)
@given(st.floats(min_value=0.0, max_value=2.0), st.integers(min_value=2, max_value=500))
def test_mde_shrinks_with_more_queries(sd: float, n: int) -> None:
    assert min_detectable_effect(sd, n + 1) <= min_detectable_effect(sd, n)


# One "no spread" rule: equal-valued deltas from different bases differ in their last bits.
# Before the rule was shared, the t-test said n/a while the MDE printed 0.000000 and a power
# plan promised 2 queries for P@k 0.4/0.1/0.0 → 0.6/0.3/0.2.
EQUAL_VALUED = [0.6 - 0.4, 0.3 - 0.1, 0.2 - 0.0]


def test_equal_valued_deltas_have_no_mde_and_no_plan() -> None:
    assert len(set(EQUAL_VALUED)) == 3  # distinct doubles, one value to a reader
    assert paired_t(EQUAL_VALUED).t is None and no_spread(EQUAL_VALUED)
    assert observed_mde(EQUAL_VALUED) is None
    plan = plan_from_pilot(EQUAL_VALUED, 0.05)
    assert (plan.mde, plan.needed, plan.note) == (None, None, "no spread: every delta is the same")
    assert observed_mde([3 / 5 - 2 / 5, 1 / 5 - 0.0]) is None  # what `run --compare` can produce


finite_deltas = st.lists(
    st.sampled_from([0.0, 0.1, 0.2, 0.3, 1 / 3, 0.5, 0.6 - 0.4, 0.3 - 0.1, -0.2, 1.0]), min_size=0, max_size=8
)


@given(finite_deltas)
def test_t_dz_mde_and_power_agree_on_what_has_no_spread(deltas: list[float]) -> None:
    test = paired_t(deltas)
    undefined = no_spread(deltas)
    assert (test.t is None) == undefined
    assert (effect_size_dz(deltas, test) is None) == undefined
    assert (observed_mde(deltas) is None) == undefined
    assert (plan_from_pilot(deltas, 0.05).mde is None) == undefined
