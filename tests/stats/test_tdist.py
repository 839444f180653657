"""The Numerical-Recipes t kernels (§kernels) against closed forms, tables and scipy.

The kernels are only ~1e-10 accurate by design, so comparisons with exact values use
tolerances, and the byte-level claim that matters — agreement at six decimals — is checked
through the same rendering the reports use.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cce_relevance.reporting.numbers import format6, signed6
from cce_relevance.stats.tdist import beta_cf, incomplete_beta, ln_gamma, t_crit, t_quantile, t_tail2

KERNEL_TOLERANCE = 1e-10

finite_t = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
degrees = st.integers(min_value=1, max_value=400).map(float)
shape = st.floats(min_value=0.05, max_value=500.0)
unit = st.floats(min_value=0.0, max_value=1.0)


def test_format6_helper_follows_section_5_1() -> None:
    assert format6(0.1234565) == "0.123457"
    assert format6(-0.0000001) == "0.000000"
    assert signed6(-0.0) == "+0.000000"
    assert signed6(-0.0483) == "-0.048300"
    assert format6(math.inf) == "9223372036854.775807"


@pytest.mark.parametrize(
    ("x", "exact"),
    [
        (1.0, 0.0),
        (2.0, 0.0),
        (5.0, math.log(24.0)),
        (0.5, math.log(math.sqrt(math.pi))),
        (2.5, math.log(0.75 * math.sqrt(math.pi))),
        (100.5, math.lgamma(100.5)),
    ],
)
def test_ln_gamma_matches_exact_values(x: float, exact: float) -> None:
    assert ln_gamma(x) == pytest.approx(exact, rel=KERNEL_TOLERANCE, abs=KERNEL_TOLERANCE)


def test_ln_gamma_is_the_lanczos_formula_not_a_library_lgamma() -> None:
    # §kernels wants the reference's ~1e-10 approximation, whose error is visible at x = 10.
    assert abs(ln_gamma(10.0) - math.lgamma(10.0)) > 1e-13


@pytest.mark.parametrize(("a", "b", "x"), [(2.0, 3.0, 0.0), (2.0, 3.0, -0.5)])
def test_incomplete_beta_is_zero_at_and_below_zero(a: float, b: float, x: float) -> None:
    assert incomplete_beta(a, b, x) == 0.0


@pytest.mark.parametrize(("a", "b", "x"), [(2.0, 3.0, 1.0), (2.0, 3.0, 1.5)])
def test_incomplete_beta_is_one_at_and_above_one(a: float, b: float, x: float) -> None:
    assert incomplete_beta(a, b, x) == 1.0


@pytest.mark.parametrize("x", [0.01, 0.3, 0.5, 0.77, 0.99])
def test_incomplete_beta_closed_forms(x: float) -> None:
    # I_x(1, 1) = x;  I_x(1, b) = 1 − (1 − x)^b;  I_x(a, 1) = x^a.
    assert incomplete_beta(1.0, 1.0, x) == pytest.approx(x, abs=1e-12)
    assert incomplete_beta(1.0, 3.0, x) == pytest.approx(1.0 - (1.0 - x) ** 3, abs=1e-12)
    assert incomplete_beta(2.5, 1.0, x) == pytest.approx(x**2.5, abs=1e-12)


def test_incomplete_beta_reflection_and_scipy() -> None:
    for a, b, x in [
        (2.5, 0.5, 0.4),
        (0.5, 2.5, 0.6),
        (15.0, 0.5, 0.93),
        (0.5, 0.5, 0.2),
        (300.0, 0.5, 0.995),
    ]:
        value = incomplete_beta(a, b, x)
        assert value + incomplete_beta(b, a, 1.0 - x) == pytest.approx(1.0, abs=1e-12)
        assert value == pytest.approx(stats.beta.cdf(x, a, b), abs=1e-11)


def test_beta_cf_is_the_continued_fraction_of_the_incomplete_beta() -> None:
    # Below the switch point, I_x(a, b) = x^a (1−x)^b / (a B(a, b)) · cf(a, b, x).
    a, b, x = 3.0, 0.5, 0.4
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    )
    assert front * beta_cf(a, b, x) / a == pytest.approx(stats.beta.cdf(x, a, b), rel=1e-11)


def test_beta_cf_returns_quietly_when_the_iteration_cap_is_reached() -> None:
    # With a = b = 1e6 just below the switch point the fraction needs more than 300 steps;
    # the reference returns what it has then (slightly off, but finite) rather than failing.
    value = incomplete_beta(1e6, 1e6, 0.5 - 1e-9)
    assert value == pytest.approx(0.5, abs=1e-5)
    assert value != pytest.approx(stats.beta.cdf(0.5 - 1e-9, 1e6, 1e6), abs=1e-8)


def test_tail_is_exactly_one_at_zero() -> None:
    for df in [1.0, 2.0, 5.0, 30.0, 1000.0]:
        assert t_tail2(0.0, df) == 1.0


def test_tail_cauchy_and_df2_closed_forms() -> None:
    # df = 1 is Cauchy: P(|T| ≥ t) = 1 − (2/π)·atan t;  df = 2: 1 − t/√(2 + t²).
    for t in [0.3, 1.0, math.sqrt(3.0), 12.0]:
        assert t_tail2(t, 1.0) == pytest.approx(1.0 - 2.0 / math.pi * math.atan(t), abs=KERNEL_TOLERANCE)
        assert t_tail2(t, 2.0) == pytest.approx(1.0 - t / math.sqrt(2.0 + t * t), abs=KERNEL_TOLERANCE)


def test_tail_matches_scipy_over_a_grid() -> None:
    for df in [1, 2, 3, 5, 9, 20, 50, 200, 1000, 5000]:
        for t in [0.01, 0.5, 1.0, 1.96, 2.5, 4.0, 10.0, 60.0]:
            assert t_tail2(t, float(df)) == pytest.approx(2.0 * stats.t.sf(t, df), rel=1e-9, abs=1e-13)


@pytest.mark.parametrize(
    ("df", "text"),
    [(1, "12.706205"), (2, "4.302653"), (5, "2.570582"), (10, "2.228139"), (30, "2.042272")],
)
def test_t_crit_table_from_section_4_6(df: int, text: str) -> None:
    assert format6(t_crit(0.05, float(df))) == text


def test_t_crit_agrees_with_scipy_ppf_at_six_decimals() -> None:
    for df in [*range(1, 201), 500, 1000, 5000]:
        ours = t_crit(0.05, float(df))
        reference = stats.t.ppf(0.975, df)
        assert abs(ours - reference) < 5e-12, df
        assert format6(ours) == format6(reference), df


def test_t_crit_other_levels_and_huge_brackets() -> None:
    assert t_crit(0.01, 4.0) == pytest.approx(stats.t.ppf(0.995, 4), abs=1e-11)
    # df = 1 at α = 1e-6 needs t ≈ 6.4e5: the doubling grows the bracket past 2^19.
    assert t_crit(1e-6, 1.0) == pytest.approx(stats.t.ppf(1 - 5e-7, 1), rel=1e-9)


@pytest.mark.parametrize(("alpha", "df"), [(0.0, 5.0), (1.0, 5.0), (0.05, 0.0), (0.05, -1.0)])
def test_t_crit_rejects_values_outside_its_domain(alpha: float, df: float) -> None:
    with pytest.raises(ValueError):
        t_crit(alpha, df)


@pytest.mark.parametrize("p", [0.001, 0.2, 0.5, 0.8, 0.9, 0.975, 0.999])
@pytest.mark.parametrize("df", [1.0, 5.0, 29.0, 400.0])
def test_t_quantile_matches_scipy_ppf(p: float, df: float) -> None:
    assert t_quantile(p, df) == pytest.approx(stats.t.ppf(p, df), rel=1e-10, abs=1e-12)


def test_t_quantile_upper_point_is_the_two_sided_critical_value() -> None:
    # 1 − 0.8 is exact, so the folding loses nothing: t_0.8 = t_crit(2 · (1 − 0.8)).
    assert t_quantile(0.8, 5.0) == t_crit(2.0 * (1.0 - 0.8), 5.0)
    assert t_quantile(0.5, 7.0) == 0.0
    assert t_quantile(0.25, 7.0) == -t_quantile(0.75, 7.0)


@pytest.mark.parametrize("p", [0.0, 1.0, -0.1, math.nan])
def test_t_quantile_rejects_probabilities_outside_the_open_interval(p: float) -> None:
    with pytest.raises(ValueError):
        t_quantile(p, 5.0)


@settings(deadline=None)
@given(finite_t, degrees)
def test_tail_is_a_probability_and_symmetric(t: float, df: float) -> None:
    p = t_tail2(t, df)
    assert 0.0 <= p <= 1.0
    assert t_tail2(-t, df) == p


@settings(deadline=None)
@given(finite_t, finite_t, degrees)
def test_tail_falls_as_abs_t_grows(t1: float, t2: float, df: float) -> None:
    small, large = sorted((abs(t1), abs(t2)))
    # Monotone up to the kernel's accuracy: the continued fraction switches branch at
    # x = (a+1)/(a+b+2), where neighbouring values may disagree in the last ~1e-10.
    assert t_tail2(large, df) <= t_tail2(small, df) + KERNEL_TOLERANCE


@settings(deadline=None, max_examples=40)
@given(st.integers(min_value=1, max_value=2000))
def test_t_crit_falls_as_df_grows(df: int) -> None:
    assert t_crit(0.05, float(df + 1)) < t_crit(0.05, float(df))


@settings(deadline=None)
@given(shape, shape, unit)
def test_incomplete_beta_is_a_probability(a: float, b: float, x: float) -> None:
    assert 0.0 <= incomplete_beta(a, b, x) <= 1.0


@settings(deadline=None)
@given(shape, shape, unit, unit)
def test_incomplete_beta_rises_with_x(a: float, b: float, x1: float, x2: float) -> None:
    low, high = sorted((x1, x2))
    assert incomplete_beta(a, b, low) <= incomplete_beta(a, b, high) + KERNEL_TOLERANCE
