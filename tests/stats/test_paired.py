"""`paired_t` (§paired-t–§undefined): worked examples, scipy agreement, degenerate rules.

The scipy cross-check mirrors §scipy-check: on non-degenerate vectors our numbers and scipy's
`ttest_1samp` / `t.ppf` must render identically at six decimals. Degenerate inputs are
where the two deliberately differ, so those are pinned to the reference's rules instead.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cce_relevance.reporting.numbers import format6, signed6
from cce_relevance.stats.paired import PairedTest, paired_t

EPS = sys.float_info.epsilon
MRR_EXAMPLE = [0.5 - 1.0 / 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def rendered(result: PairedTest) -> tuple[str, str, str, str, str]:
    """The five numbers of a compare row as the report prints them (§number-format)."""
    assert result.t is not None and result.p is not None and result.ci95 is not None
    low, high = result.ci95
    return (signed6(result.mean_delta), signed6(result.t), format6(result.p), signed6(low), signed6(high))


def scipy_rendered(deltas: list[float]) -> tuple[str, str, str, str, str]:
    """§scipy-check's independent reference: ttest_1samp for t and p, t.ppf for the CI half-width."""
    n = len(deltas)
    mean = float(np.mean(deltas))
    test = stats.ttest_1samp(deltas, 0.0)
    half = stats.t.ppf(0.975, n - 1) * float(np.std(deltas, ddof=1)) / math.sqrt(n)
    return (
        signed6(mean),
        signed6(test.statistic),
        format6(test.pvalue),
        signed6(mean - half),
        signed6(mean + half),
    )


@pytest.mark.parametrize(
    ("deltas", "expected"),
    [
        (MRR_EXAMPLE, ("+0.023810", "+1.000000", "0.355918", "-0.034450", "+0.082069")),
        ([0.2, 0.1, 0.0, 0.3, -0.1, 0.1], ("+0.100000", "+1.732051", "0.143811", "-0.048413", "+0.248413")),
    ],
    ids=["docs-mrr", "hand"],
)
def test_worked_examples_of_section_4_6(deltas: list[float], expected: tuple[str, ...]) -> None:
    result = paired_t(deltas)
    assert result.n == len(deltas)
    assert rendered(result) == expected
    assert scipy_rendered(deltas) == expected


def test_docs_example_raw_p_pins_the_operation_order() -> None:
    # Raw bits, beyond what the report prints: this is the value the reference's kernel
    # order gives (Lentz update h·(d·c)). §scipy-check quotes …6093, from reading "h·d·c" as
    # (h·d)·c; scipy gives …5822. All three print 0.355918.
    assert paired_t(MRR_EXAMPLE).p == 0.3559176837496092


def _uniform(rng: np.random.Generator) -> list[float]:
    return [float(x) for x in rng.uniform(-1.0, 1.0, int(rng.integers(2, 41)))]


def _short(rng: np.random.Generator) -> list[float]:
    return [float(x) for x in rng.uniform(-1.0, 1.0, int(rng.integers(2, 4)))]


def _precision_at_k(rng: np.random.Generator) -> list[float]:
    k = int(rng.choice([3, 5, 10]))
    n = int(rng.integers(2, 41))
    # Unrounded per-query metrics of both backends, subtracted as the harness does (§deltas).
    return [
        int(b) / k - int(a) / k
        for a, b in zip(rng.integers(0, k + 1, n), rng.integers(0, k + 1, n), strict=True)
    ]


def _mrr(rng: np.random.Generator) -> list[float]:
    def reciprocal_rank(rank: int) -> float:
        return 1.0 / rank if rank else 0.0

    n = int(rng.integers(2, 41))
    ranks = rng.integers(0, 11, (n, 2))
    return [reciprocal_rank(int(b)) - reciprocal_rank(int(a)) for a, b in ranks]


def _sparse(rng: np.random.Generator) -> list[float]:
    n = int(rng.integers(3, 41))
    deltas = [0.0] * n
    for i in rng.choice(n, int(rng.integers(1, 3)), replace=False):
        deltas[int(i)] = float(rng.uniform(-1.0, 1.0))
    return deltas


def _long(rng: np.random.Generator) -> list[float]:
    return [float(x) for x in rng.normal(0.01, 0.2, int(rng.integers(50, 3001)))]


KINDS: dict[str, tuple[Callable[[np.random.Generator], list[float]], int]] = {
    "uniform": (_uniform, 120),
    "short": (_short, 60),
    "precision_at_k": (_precision_at_k, 120),
    "mrr": (_mrr, 120),
    "sparse": (_sparse, 80),
    "long": (_long, 6),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_agrees_with_scipy_at_six_decimals(kind: str) -> None:
    make, count = KINDS[kind]
    rng = np.random.default_rng(84 + list(KINDS).index(kind))
    for _ in range(count):
        deltas = make(rng)
        # These seeds draw no constant vectors, where scipy and the reference differ by design.
        assert rendered(paired_t(deltas)) == scipy_rendered(deltas), deltas


def test_all_zero_deltas_have_p_one() -> None:
    assert paired_t([0.0, 0.0, 0.0, 0.0]) == PairedTest(n=4, mean_delta=0.0, t=None, p=1.0, ci95=(0.0, 0.0))


def test_negative_zero_deltas_count_as_zero_effect() -> None:
    result = paired_t([-0.0, 0.0, -0.0])
    assert result.p == 1.0
    assert signed6(result.mean_delta) == "+0.000000"


def test_constant_non_zero_deltas_report_the_first_delta_and_p_zero() -> None:
    result = paired_t([0.1, 0.1, 0.1])
    # The sequential mean is 0.30000000000000004 / 3, one ulp above 0.1: the rule reports d₁.
    assert (0.1 + 0.1 + 0.1) / 3 != 0.1
    assert result == PairedTest(n=3, mean_delta=0.1, t=None, p=0.0, ci95=(0.1, 0.1))


@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
def test_equal_in_value_but_bit_distinct_deltas_are_constant() -> None:
    deltas = [0.6 - 0.4, 0.3 - 0.1, 0.5 - 0.3, 0.7 - 0.5]
    assert len(set(deltas)) > 1, "precondition: the deltas must differ in their last bits"
    assert abs(stats.ttest_1samp(deltas, 0.0).statistic) > 1e15  # what the guard prevents
    result = paired_t(deltas)
    assert result == PairedTest(n=4, mean_delta=deltas[0], t=None, p=0.0, ci95=(deltas[0], deltas[0]))


def test_constancy_threshold_is_sixteen_epsilon_of_the_scale() -> None:
    at_threshold = paired_t([1.0, 1.0 + 16 * EPS])
    assert at_threshold.t is None and at_threshold.p == 0.0
    beyond = paired_t([1.0, 1.0 + 32 * EPS])
    assert beyond.t is not None


@pytest.mark.parametrize(
    ("deltas", "mean"),
    [([], 0.0), ([0.3], 0.3), ((-0.25,), -0.25)],
    ids=["n=0", "n=1", "n=1-tuple"],
)
def test_fewer_than_two_deltas_report_only_n_and_mean(deltas: list[float], mean: float) -> None:
    assert paired_t(deltas) == PairedTest(n=len(deltas), mean_delta=mean, t=None, p=None, ci95=None)


def test_mean_is_a_plain_left_to_right_sum() -> None:
    # 1e16 + 1 rounds back to 1e16, so the sequential sum is 1 where an exact sum gives 2.
    deltas = [1e16, 1.0, -1e16, 1.0]
    assert math.fsum(deltas) == 2.0
    assert paired_t(deltas).mean_delta == 0.25


def test_underflowing_variance_divides_like_ieee() -> None:
    # Distinct enough to pass the guard, too small for their squares: var = 0.0, so the
    # reference computes mean / 0.0 = +inf (p = 0) — or 0.0 / 0.0 = NaN — instead of raising.
    spike = paired_t([0.0, 1e-300])
    assert spike.t == math.inf and spike.p == 0.0
    assert spike.ci95 == (spike.mean_delta, spike.mean_delta)
    assert signed6(spike.t) == "+9223372036854.775807"
    balanced = paired_t([1e-300, -1e-300])
    assert balanced.t is not None and math.isnan(balanced.t)
    assert balanced.p is not None and math.isnan(balanced.p)


TIE_VECTOR = [  # MRR-style deltas whose exact mean, −3/640 = −0.0046875, is a 6-decimal tie
    0.3888888888888889,
    -0.15,
    -0.1,
    -0.08333333333333334,
    -0.25,
    -0.15,
    0.3888888888888889,
    0.1,
    0.07500000000000001,
    -0.3333333333333333,
    -0.3888888888888889,
    -0.16666666666666669,
    0.5,
    -0.04166666666666666,
    0.0111111111111111,
    0.125,
]


def test_summation_order_decides_a_rendering_tie() -> None:
    # The sequential mean is a hair larger in magnitude than 3/640 and prints −0.004688;
    # numpy's pairwise mean is a hair smaller and prints −0.004687. The reference sums
    # sequentially, so exact scipy agreement at six decimals cannot hold at such ties.
    assert signed6(paired_t(TIE_VECTOR).mean_delta) == "-0.004688"
    assert signed6(float(np.mean(TIE_VECTOR))) == "-0.004687"


# Metric deltas are differences of scores in [0, 1]; magnitudes below 1e-100 (other than
# zero) only exercise the underflow path pinned above.
magnitudes = st.floats(min_value=1e-100, max_value=1.0)
delta_values = st.just(0.0) | magnitudes | magnitudes.map(lambda x: -x)
delta_lists = st.lists(delta_values, min_size=2, max_size=30)


@settings(deadline=None, max_examples=60)
@given(delta_lists)
def test_p_is_a_probability_and_the_ci_holds_the_mean(deltas: list[float]) -> None:
    result = paired_t(deltas)
    assert result.p is not None and 0.0 <= result.p <= 1.0
    assert result.ci95 is not None
    low, high = result.ci95
    assert low <= result.mean_delta <= high


@settings(deadline=None, max_examples=60)
@given(delta_lists)
def test_negating_the_deltas_mirrors_the_result_exactly(deltas: list[float]) -> None:
    result = paired_t(deltas)
    mirrored = paired_t([-d for d in deltas])
    assert mirrored.mean_delta == -result.mean_delta
    assert mirrored.p == result.p
    if result.t is not None:
        assert mirrored.t == -result.t
    assert result.ci95 is not None and mirrored.ci95 is not None
    assert mirrored.ci95 == (-result.ci95[1], -result.ci95[0])
