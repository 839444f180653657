"""Wilcoxon signed-rank and sign tests, checked against scipy (a test-only dependency)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cce_relevance.stats.rank_tests import midranks, sign_test, wilcoxon_signed_rank

# Metric-like deltas: multiples of 1/5 and reciprocal-rank differences, with many zeros and ties.
STEPS = [0.0, 0.0, 0.2, -0.2, 0.4, -0.6, 1.0, -1.0, 0.5, -0.5, 1 / 3, -0.25, 0.75, 0.123456, -0.654321]


def _scipy_wilcoxon_p(deltas: list[float], method: object) -> float:
    return float(stats.wilcoxon(deltas, zero_method="wilcox", correction=True, method=method).pvalue)


def _rounded(deltas: list[float]) -> list[float]:
    """scipy ties exact doubles only; round so that it sees the ties we see."""
    return [round(d, 9) for d in deltas]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(-1, 1, allow_nan=False).map(lambda x: round(x, 3)), min_size=2, max_size=12))
def test_exact_signed_rank_matches_scipy_enumeration(deltas: list[float]) -> None:
    deltas = _rounded(deltas)
    ours = wilcoxon_signed_rank(deltas)
    assert ours is not None
    changed = [d for d in deltas if d != 0]
    if not changed:
        assert ours.p == 1.0
        return
    _, groups = midranks([abs(d) for d in changed])
    if max(groups) == 1:
        expected = _scipy_wilcoxon_p(changed, "exact")
    else:  # scipy's exact method ignores ties; its permutation method enumerates all 2^m patterns
        expected = float(stats.wilcoxon(changed, method=stats.PermutationMethod(n_resamples=10**6)).pvalue)
    assert ours.method == "exact" and ours.p == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert ours.statistic == pytest.approx(float(stats.wilcoxon(changed, method="asymptotic").statistic))


@pytest.mark.parametrize("seed", range(12))
def test_normal_approximation_matches_scipy_asymptotic(seed: int) -> None:
    rng = np.random.default_rng(seed)
    deltas = _rounded([float(x) for x in rng.choice(STEPS, size=int(rng.integers(51, 300)))])
    ours = wilcoxon_signed_rank(deltas)
    assert ours is not None and ours.method == "normal"
    assert ours.p == pytest.approx(_scipy_wilcoxon_p(deltas, "asymptotic"), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("seed", range(8))
def test_exact_up_to_fifty_changed_queries_without_ties(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    deltas = [float(x) for x in rng.permutation(np.arange(1, 51)) * rng.choice([-1, 1], size=50) / 64]
    ours = wilcoxon_signed_rank(deltas)
    assert ours is not None and ours.method == "exact"
    assert ours.p == pytest.approx(_scipy_wilcoxon_p(deltas, "exact"), rel=1e-9)


def test_equal_valued_deltas_are_ties() -> None:
    ranks, groups = midranks([0.6 - 0.4, 0.3 - 0.1, 0.2, 0.5])
    assert ranks == [2.0, 2.0, 2.0, 4.0] and groups == [3, 1]


def test_worked_example_in_the_docs() -> None:
    # docs/statistics.md: deltas +0.5, +0.25, −0.1, +1.0, 0, +0.2
    test = wilcoxon_signed_rank([0.5, 0.25, -0.1, 1.0, 0.0, 0.2])
    assert test is not None and (test.statistic, test.p, test.changed) == (1.0, 0.125, 5)
    sign = sign_test([0.5, 0.25, -0.1, 1.0, 0.0, 0.2])
    assert sign is not None and (sign.statistic, sign.p) == (4.0, 0.375)


@given(st.integers(0, 50), st.integers(0, 50))
def test_exact_sign_test_matches_scipy_binomtest(wins: int, losses: int) -> None:
    losses = min(losses, 50 - wins)  # up to the exact limit
    deltas = [0.1] * wins + [-0.3] * losses + [0.0, 0.0]
    ours = sign_test(deltas)
    assert ours is not None
    if wins + losses == 0:
        assert ours.p == 1.0
        return
    assert ours.p == pytest.approx(stats.binomtest(wins, wins + losses, 0.5).pvalue, rel=1e-12)


@pytest.mark.parametrize(("wins", "losses"), [(40, 20), (100, 80), (30, 30), (500, 430)])
def test_sign_test_normal_approximation(wins: int, losses: int) -> None:
    ours = sign_test([1.0] * wins + [-1.0] * losses)
    m = wins + losses
    z = max(abs(wins - m / 2) - 0.5, 0) / (math.sqrt(m) / 2)
    assert ours is not None and ours.method == "normal"
    assert ours.p == pytest.approx(2 * stats.norm.sf(z), rel=1e-12)
    assert ours.p == pytest.approx(stats.binomtest(wins, m).pvalue, abs=0.01)  # close to exact


def test_degenerate_inputs() -> None:
    assert wilcoxon_signed_rank([0.3]) is None and sign_test([]) is None
    zero = wilcoxon_signed_rank([0.0, -0.0, 0.0])
    assert zero is not None and (zero.p, zero.changed) == (1.0, 0)
    big_tie = wilcoxon_signed_rank([0.5] * 60 + [-0.5] * 60)
    assert big_tie is not None and big_tie.p == pytest.approx(
        _scipy_wilcoxon_p([0.5] * 60 + [-0.5] * 60, "asymptotic")
    )


@given(st.lists(st.sampled_from(STEPS), min_size=2, max_size=70))
def test_negating_the_deltas_leaves_p_unchanged(deltas: list[float]) -> None:
    for test in (wilcoxon_signed_rank, sign_test):
        a, b = test(deltas), test([-d for d in deltas])
        assert a is not None and b is not None and a.p == b.p and 0.0 <= a.p <= 1.0


def test_docs_worked_example_figures() -> None:
    from pathlib import Path

    from cce_relevance.stats.paired import paired_t
    from cce_relevance.stats.resampling import sign_flip_test

    deltas = [0.5, 0.25, -0.1, 1.0, 0.0, 0.2]
    text = " ".join((Path(__file__).resolve().parents[2] / "docs/statistics.md").read_text().split())
    assert f"gives p = {paired_t(deltas).p:.4f} and the permutation test {sign_flip_test(deltas).p:g}" in text
