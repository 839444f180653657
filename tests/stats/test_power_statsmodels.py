"""The paired t-test's power and detectable effect against statsmodels' `TTestPower`.

statsmodels computes the one-sample (paired) t-test's power from scipy's noncentral t; we compute
it from first principles (stats/noncentral.py). Its `power` is exact, so ours must equal it; its
`solve_power` is a numerical root finder that stops at about 1e-6 and sometimes fails, so our
detectable effect is checked two ways: statsmodels' own power at our effect is the power asked
for, and where its solver converged, its answer is ours. The seed's central-t MDE (the MDE@80%
column of the reports) is checked to be within the bounds docs/statistics.md states.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.power import TTestPower

from cce_relevance.evaluation.gate import detectable_effect, is_inconclusive
from cce_relevance.stats.noncentral import detectable_effect_size, noncentral_t_cdf, paired_power
from cce_relevance.stats.paired import paired_t
from cce_relevance.stats.power import min_detectable_effect

POWER = TTestPower()
SIZES = [3, 4, 5, 8, 10, 15, 20, 30, 50, 100, 400, 1000]
LEVELS = [(0.05, 0.8), (0.05, 0.9), (0.01, 0.8), (0.1, 0.95), (0.05, 0.5)]


def statsmodels_power(effect: float, n: int, alpha: float) -> float:
    return float(POWER.power(effect, n, alpha, alternative="two-sided"))


@settings(max_examples=300, deadline=None)
@given(st.floats(-40, 40), st.integers(1, 2000), st.floats(-8, 8))
def test_the_noncentral_t_cdf_is_scipys(t: float, df: int, nc: float) -> None:
    expected = stats.nct.cdf(t, df, nc)
    assume(math.isfinite(expected))  # scipy gives nan far in some tails
    assert noncentral_t_cdf(t, df, nc) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("alpha", "power"), LEVELS)
def test_power_is_statsmodels_power(n: int, alpha: float, power: float) -> None:
    for effect in (0.0, 0.05, 0.2, 0.5, 1.0, 1.5, 3.0):
        theirs = statsmodels_power(effect, n, alpha)
        if not math.isfinite(theirs):  # scipy's noncentral t gives nan for some large λ, where power ≈ 1
            assert 0.999 < paired_power(effect, n, alpha) <= 1.0
            continue
        assert paired_power(effect, n, alpha) == pytest.approx(theirs, abs=1e-9)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(("alpha", "power"), LEVELS)
def test_the_detectable_effect_is_where_statsmodels_power_reaches_the_power_asked(
    n: int, alpha: float, power: float
) -> None:
    ours = detectable_effect_size(n, alpha, power)
    assert statsmodels_power(ours, n, alpha) == pytest.approx(power, abs=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels warns when its root finder struggles
        theirs = float(np.asarray(POWER.solve_power(None, n, alpha, power, alternative="two-sided")).item())
    if abs(statsmodels_power(theirs, n, alpha) - power) < 1e-7:  # its solver converged (either sign)
        assert ours == pytest.approx(abs(theirs), rel=1e-5)


@pytest.mark.parametrize(
    ("n", "bound"), [(5, 0.012), (8, 0.003), (10, 0.0014), (20, 0.0002), (50, 0.0003), (200, 0.0001)]
)
def test_the_central_t_mde_is_within_its_documented_distance_of_the_exact_one(n: int, bound: float) -> None:
    """At 80% power and alpha 0.05 (the reports' MDE@80%): docs/statistics.md's table."""
    approximate = min_detectable_effect(1.0, n)
    assert approximate is not None
    assert abs(approximate / detectable_effect_size(n) - 1) <= bound


def test_an_underpowered_set_is_inconclusive_and_a_big_enough_one_is_not() -> None:
    """20 queries whose MRR moved a little in both directions: not significant; the smallest
    change this set detects at 80% power is statsmodels' effect size times the deltas' sd."""
    deltas = [0.0] * 14 + [-0.5, 0.5, -0.5, -0.25, 0.25, -0.1]
    test = paired_t(deltas)
    assert test.p is not None and test.p > 0.05
    mde = detectable_effect(deltas, 0.05, 0.8)
    sd = float(np.std(deltas, ddof=1))
    effect = float(np.asarray(POWER.solve_power(None, 20, 0.05, 0.8, alternative="two-sided")).item())
    assert mde == pytest.approx(effect * sd, rel=1e-5)
    assert is_inconclusive(test, mde, 0.05, threshold=0.05)
    assert not is_inconclusive(test, mde, 0.05, threshold=mde + 1e-9)
    assert is_inconclusive(test, mde, 0.05, threshold=mde - 1e-9)


def test_a_significant_change_or_no_spread_is_never_inconclusive() -> None:
    worse = [-0.2, -0.25, -0.3, -0.2, -0.1, -0.35, -0.2, -0.3]
    assert not is_inconclusive(paired_t(worse), detectable_effect(worse, 0.05, 0.8), 0.05, threshold=0.0)
    flat = [0.0] * 10
    assert detectable_effect(flat, 0.05, 0.8) is None
    assert not is_inconclusive(paired_t(flat), None, 0.05, threshold=0.01)
    assert is_inconclusive(paired_t([-0.3]), None, 0.05, threshold=0.5)  # one query: no test at all


def test_more_power_needs_a_larger_effect_and_more_queries_a_smaller_one() -> None:
    assert detectable_effect_size(20, 0.05, 0.9) > detectable_effect_size(20, 0.05, 0.8)
    assert detectable_effect_size(40) < detectable_effect_size(20)
    assert math.isclose(paired_power(detectable_effect_size(20), 20), 0.8, abs_tol=1e-9)
