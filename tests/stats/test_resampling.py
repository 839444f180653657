"""Sign-flip permutation test, bootstrap CI, Holm adjustment and d_z, against independent references.

The permutation p is checked exactly against enumeration of all 2^n sign patterns in exact
rational arithmetic (and against scipy's `permutation_test`); the sampled p and the bootstrap
against plain Python loops over the same raw PCG64 words; Holm against a hand example and the
step-down procedure read literally.
"""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cce_relevance.stats import resampling
from cce_relevance.stats.full_stats import full_stats, full_stats_of
from cce_relevance.stats.multiplicity import holm_adjust
from cce_relevance.stats.paired import effect_size_dz, paired_t
from cce_relevance.stats.resampling import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    PERMUTATION_SEED,
    bootstrap_ci95,
    bootstrap_ci95_of,
    sign_flip_test,
)


def enumerated_p(deltas: list[Fraction]) -> Fraction:
    """The definition read literally: every one of the 2^n sign patterns, exact arithmetic."""
    observed = abs(sum(deltas))
    extreme = sum(
        1
        for signs in itertools.product((1, -1), repeat=len(deltas))
        if abs(sum(s * d for s, d in zip(signs, deltas, strict=True))) >= observed
    )
    return Fraction(extreme, 2 ** len(deltas))


def random_floats(rng: np.random.Generator) -> list[Fraction]:
    n = int(rng.integers(2, 11))
    values = [Fraction(float(x)) for x in rng.uniform(-1.0, 1.0, n)]
    for i in rng.choice(n, int(rng.integers(0, n // 2 + 1)), replace=False):
        values[i] = Fraction(0)
    return values


def metric_like(rng: np.random.Generator) -> list[Fraction]:
    """Deltas of reciprocal ranks and P@k: few distinct values, many exact ties and zeros."""
    n = int(rng.integers(2, 13))
    ranks = [Fraction(1, int(r)) if r <= 10 else Fraction(0) for r in rng.integers(1, 13, size=2 * n)]
    return [ranks[2 * i + 1] - ranks[2 * i] for i in range(n)]


@pytest.mark.parametrize("make", [random_floats, metric_like])
@pytest.mark.parametrize("seed", range(120))
def test_exact_p_equals_enumeration_of_every_sign_pattern(make, seed: int) -> None:
    deltas = make(np.random.default_rng(seed))
    result = sign_flip_test([float(d) for d in deltas])
    assert result is not None and result.method == "exact"
    assert result.changed == sum(1 for d in deltas if d != 0)
    assert Fraction(result.p) == enumerated_p(deltas)


@pytest.mark.parametrize("seed", range(20))
def test_exact_p_agrees_with_scipy_permutation_test(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    deltas = rng.uniform(-0.6, 1.0, int(rng.integers(2, 15)))
    ours = sign_flip_test(deltas.tolist())
    theirs = stats.permutation_test((deltas,), np.mean, permutation_type="samples", n_resamples=np.inf)
    assert ours is not None and ours.p == pytest.approx(theirs.pvalue, abs=1e-12)


def test_float_noise_in_equal_deltas_counts_as_a_tie() -> None:
    # 0.6 − 0.4 and 0.3 − 0.1 are both 0.2 to a reader, not to the last bit: the pattern
    # (+, −) must tie with the observed (+, +) sum's mirror exactly as 1/5 − 1/5 = 0 would.
    deltas = [0.6 - 0.4, -(0.3 - 0.1), 0.5]
    assert deltas[0] != -deltas[1]
    expected = enumerated_p([Fraction(1, 5), Fraction(-1, 5), Fraction(1, 2)])
    assert Fraction(sign_flip_test(deltas).p) == expected  # type: ignore[union-attr]


def reference_sampled_p(deltas: list[float], draws: int, seed: int) -> float:
    """A plain loop over the same raw words: draw r reads ⌈m/64⌉ words, bit j set negates delta j."""
    values = [d for d in deltas if d != 0.0]
    m = len(values)
    observed = 0.0
    for v in values:
        observed += v
    words = np.random.PCG64(seed)
    hits = 0
    for _ in range(draws):
        raw = [int(w) for w in words.random_raw(-(-m // 64))]
        total = 0.0
        for j, v in enumerate(values):
            total += -v if (raw[j // 64] >> (j % 64)) & 1 else v
        hits += abs(total) >= abs(observed)
    return (hits + 1) / (draws + 1)


@pytest.mark.parametrize("chunk_words", [7, 1 << 20])
def test_sampled_p_equals_a_reference_loop_over_the_same_draws(monkeypatch, chunk_words: int) -> None:
    monkeypatch.setattr(resampling, "_CHUNK_WORDS", chunk_words)  # chunk edges must not matter
    rng = np.random.default_rng(7)
    deltas = rng.normal(0.05, 0.3, 150).tolist()  # 150 deltas: three words per draw
    deltas[3] = deltas[77] = 0.0
    result = sign_flip_test(deltas, draws=1500, seed=99)
    assert result is not None and result.method == "sampled" and result.changed == 148
    assert result.p == reference_sampled_p(deltas, 1500, 99)


@pytest.mark.parametrize("seed", range(6))
def test_sampled_p_is_close_to_the_exact_p(seed: int) -> None:
    rng = np.random.default_rng(500 + seed)
    deltas = rng.normal(0.1, 0.4, int(rng.integers(12, 21))).tolist()
    exact = sign_flip_test(deltas)
    sampled = sign_flip_test(deltas, exact_limit=0)
    assert exact is not None and sampled is not None
    assert (exact.method, sampled.method, sampled.patterns) == ("exact", "sampled", 100_000)
    # four standard errors of a 100,000-draw estimate, plus the +1 correction's bias
    assert abs(sampled.p - exact.p) <= 4 * math.sqrt(exact.p * (1 - exact.p) / 100_000) + 2e-5


def test_sampled_p_is_never_zero() -> None:
    result = sign_flip_test([1.0] * 30)
    assert result is not None and result.method == "sampled"
    assert result.p == 1 / 100_001  # only the observed pattern and its mirror are that extreme


_SUBPROCESS = """
import json, numpy as np
from cce_relevance.stats.resampling import bootstrap_ci95, sign_flip_test
d = np.random.default_rng(11).normal(0.02, 0.2, 40).tolist()
print(json.dumps([sign_flip_test(d).p.hex(), [x.hex() for x in bootstrap_ci95(d)]]))
"""


def test_sampled_p_and_bootstrap_are_identical_across_processes() -> None:
    runs = [
        subprocess.run(
            [sys.executable, "-c", _SUBPROCESS],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (1, 2)
    ]
    deltas = np.random.default_rng(11).normal(0.02, 0.2, 40).tolist()
    here = json.dumps([sign_flip_test(deltas).p.hex(), [x.hex() for x in bootstrap_ci95(deltas)]])  # type: ignore[union-attr]
    assert runs[0] == runs[1] == here + "\n"
    assert sign_flip_test(deltas).method == "sampled"  # type: ignore[union-attr]


def reference_means(deltas: list[float], resamples: int, seed: int) -> list[float]:
    """Every resample's mean, in draw order: n raw words a resample, delta w mod n, summed left to
    right from 0.0, every pick added (zeros too), divided by n."""
    n = len(deltas)
    words = np.random.PCG64(seed)
    means = []
    for _ in range(resamples):
        total = 0.0
        for w in words.random_raw(n):
            total += deltas[int(w) % n]
        means.append(total / n)
    return means


def reference_bootstrap(deltas: list[float], resamples: int, seed: int) -> tuple[float, float]:
    """Resample r reads n raw words; word w picks delta w mod n; means sorted; order statistics ⌈qB⌉."""
    means = sorted(reference_means(deltas, resamples, seed))
    low = means[math.ceil(Fraction(25, 1000) * resamples) - 1]
    high = means[math.ceil(Fraction(975, 1000) * resamples) - 1]
    expected = np.quantile(np.array(means), [0.025, 0.975], method="inverted_cdf")
    assert (low, high) == (float(expected[0]), float(expected[1]))
    return low, high


def test_bootstrap_equals_a_reference_loop_at_the_default_settings() -> None:
    deltas = [0.5 - 1.0 / 3.0, 0.0, 0.25, -0.1, 0.0, 0.3, 1.0 / 7.0]
    assert bootstrap_ci95(deltas) == reference_bootstrap(deltas, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED)


@pytest.mark.parametrize(("n", "resamples", "chunk_words"), [(2, 40, 3), (13, 999, 50), (64, 1001, 1 << 20)])
def test_bootstrap_equals_a_reference_loop_across_chunkings(
    monkeypatch, n: int, resamples: int, chunk_words: int
) -> None:
    monkeypatch.setattr(resampling, "_CHUNK_WORDS", chunk_words)
    deltas = np.random.default_rng(n).uniform(-1, 1, n).tolist()
    assert bootstrap_ci95(deltas, resamples=resamples, seed=5) == reference_bootstrap(deltas, resamples, 5)


@settings(deadline=None)
@given(st.lists(st.lists(st.floats(-1, 1), max_size=9), max_size=5), st.sampled_from([7, 64, 1 << 20]))
def test_samples_resampled_together_equal_each_resampled_alone(
    samples: list[list[float]], chunk_words: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(resampling, "_CHUNK_WORDS", chunk_words)
        together = bootstrap_ci95_of(samples, resamples=101, seed=3)
    assert together == [reference_bootstrap(s, 101, 3) if len(s) >= 2 else None for s in samples]


# Deltas as a change gives them: mostly zeros (of either sign: -0.0 is what 0.25 - 0.25 is not,
# but a hand-made report may hold one), a few values that do not add exactly.
_DELTA = st.one_of(
    st.just(0.0),
    st.just(-0.0),
    st.sampled_from([1.0 / 3.0, -1.0 / 3.0, 0.1, -0.7, 1.0 / 7.0, 1.0, -1.0, 5e-324]),
    st.floats(-1, 1),
)


@settings(deadline=None, max_examples=60)
@given(
    st.integers(2, 40).flatmap(
        lambda n: st.lists(
            st.lists(_DELTA, min_size=n, max_size=n).map(
                lambda d: [x if i % 9 == 0 else 0.0 for i, x in enumerate(d)]  # sparse: every 9th
            )
            | st.lists(_DELTA, min_size=n, max_size=n),
            min_size=1,
            max_size=4,
        )
    ),
    st.sampled_from([7, 64, 1 << 20]),
)
def test_every_resample_mean_is_the_plain_loops_to_the_bit(
    samples: list[list[float]], chunk_words: int
) -> None:
    """Both ways of summing (every pick, or only the picks of deltas some sample moves) give each
    resample's mean to the bit, whatever the zeros' signs and however many deltas are non-zero."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(resampling, "_CHUNK_WORDS", chunk_words)
        got = resampling.bootstrap_means_of(samples, resamples=37, seed=11)
    for sample, means in zip(samples, got, strict=True):
        expected = reference_means(sample, 37, 11)
        assert [m.hex() for m in means.tolist()] == [m.hex() for m in expected]


@pytest.mark.parametrize("moving", [0, 1, 12, 13, 60, 100])
def test_both_summations_at_the_default_settings(moving: int) -> None:
    """100 deltas of which `moving` are non-zero: below and above the share where only the moving
    picks are added (1 in `_SPARSE_SHARE`), at 10,000 resamples, against the plain loop."""
    rng = np.random.default_rng(moving)
    deltas = [0.0] * 100
    for i in rng.choice(100, moving, replace=False):
        deltas[int(i)] = float(rng.integers(-6, 7)) / 6.0 or -0.0
    [means] = resampling.bootstrap_means_of([deltas])
    assert np.array_equal(means, reference_means(deltas, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED))


def test_full_stats_of_several_comparisons_are_each_ones_alone() -> None:
    """Comparisons whose bootstraps share their draws (the backends of one set, some of another
    size) get the statistics `full_stats` gives each alone."""
    rng = np.random.default_rng(4)
    comparisons = [
        [(key, (rng.integers(-3, 4, n) / 3.0 * (rng.random(n) < share)).tolist()) for key in ("mrr", "f1")]
        for n, share in ((50, 0.05), (50, 0.9), (49, 0.1), (1, 1.0), (50, 0.0))
    ]
    assert full_stats_of(comparisons, "mrr") == [full_stats(c, "mrr") for c in comparisons]
    with pytest.raises(ValueError, match="primary metric"):
        full_stats_of([*comparisons, [("f1", [0.1, 0.2])]], "mrr")


def test_bootstrap_ci_is_close_to_scipys_percentile_bootstrap() -> None:
    deltas = np.random.default_rng(21).normal(0.05, 0.25, 30)
    ours = bootstrap_ci95(deltas.tolist())
    theirs = stats.bootstrap(
        (deltas,), np.mean, n_resamples=10_000, method="percentile", rng=np.random.default_rng(0)
    ).confidence_interval
    se = float(np.std(deltas, ddof=1)) / math.sqrt(30)
    assert ours is not None
    assert ours[0] == pytest.approx(theirs.low, abs=0.1 * se)
    assert ours[1] == pytest.approx(theirs.high, abs=0.1 * se)


def test_holm_hand_example() -> None:
    # sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → running max 0.06
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    assert holm_adjust([0.5, 0.9]) == [1.0, 1.0]
    assert holm_adjust([]) == []
    assert holm_adjust([0.2]) == [0.2]


def step_down_rejections(p: list[float], alpha: float) -> set[int]:
    """Holm (1979) as published: walk up the sorted p's, reject while p_(i) ≤ α/(m − i + 1)."""
    m = len(p)
    rejected: set[int] = set()
    for rank, i in enumerate(sorted(range(m), key=lambda i: p[i])):
        if p[i] * (m - rank) > alpha:
            break
        rejected.add(i)
    return rejected


@settings(deadline=None, max_examples=200)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=8))
def test_holm_adjusted_p_reproduces_the_step_down_procedure(p: list[float]) -> None:
    adjusted = holm_adjust(p)
    for alpha in sorted({*p, *adjusted, 0.05, 0.01}):
        if 0.0 < alpha < 1.0:
            assert {i for i, a in enumerate(adjusted) if a <= alpha} == step_down_rejections(p, alpha)


@settings(deadline=None, max_examples=200)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=10))
def test_holm_is_monotone_bounded_and_not_below_raw(p: list[float]) -> None:
    adjusted = holm_adjust(p)
    for i, j in itertools.product(range(len(p)), repeat=2):
        if p[i] <= p[j]:
            assert adjusted[i] <= adjusted[j]
    assert all(raw <= a <= 1.0 for raw, a in zip(p, adjusted, strict=True))


@pytest.mark.parametrize("bad", [-0.1, 1.5, math.nan])
def test_holm_rejects_values_that_are_not_p_values(bad: float) -> None:
    with pytest.raises(ValueError, match="p-values"):
        holm_adjust([0.1, bad])


@pytest.mark.parametrize("seed", range(10))
def test_d_z_is_mean_over_sd_and_t_over_root_n(seed: int) -> None:
    deltas = np.random.default_rng(seed).normal(0.1, 0.3, 3 + seed).tolist()
    test = paired_t(deltas)
    d_z = effect_size_dz(deltas, test)
    assert d_z == pytest.approx(np.mean(deltas) / np.std(deltas, ddof=1), rel=1e-12)
    assert d_z == pytest.approx(test.t / math.sqrt(len(deltas)), rel=1e-12)  # type: ignore[operator]


@pytest.mark.parametrize("deltas", [[], [0.3], [0.0, 0.0], [0.2, 0.2, 0.2], [0.6 - 0.4, 0.3 - 0.1]])
def test_d_z_is_undefined_without_a_spread(deltas: list[float]) -> None:
    assert effect_size_dz(deltas, paired_t(deltas)) is None


@pytest.mark.parametrize("n", [2, 5, 25])
def test_every_delta_zero_means_p_1_and_no_change(n: int) -> None:
    deltas = [0.0] * n
    result = sign_flip_test(deltas)
    assert result is not None and (result.p, result.method, result.changed) == (1.0, "exact", 0)
    assert bootstrap_ci95(deltas) == (0.0, 0.0)
    full = full_stats([("mrr", deltas)], "mrr").metric("mrr")
    assert full.no_change and full.holm_p == 1.0 and full.d_z is None and full.mde80 is None
    assert (full.wins, full.losses, full.ties) == (0, 0, n)


@pytest.mark.parametrize("deltas", [[], [0.25], [0.0]])
def test_fewer_than_two_queries_leave_only_n_and_the_mean(deltas: list[float]) -> None:
    assert sign_flip_test(deltas) is None and bootstrap_ci95(deltas) is None
    full = full_stats([("mrr", deltas), ("f1", deltas)], "f1").metric("mrr")
    assert (full.test.n, full.test.mean_delta) == (len(deltas), deltas[0] if deltas else 0.0)
    assert (full.d_z, full.permutation, full.bootstrap_ci95, full.holm_p, full.mde80) == (None,) * 5
    assert not full.no_change


def test_full_stats_holm_adjusts_the_permutation_p_values() -> None:
    rng = np.random.default_rng(4)
    series = [
        ("precision_at_k", rng.normal(0.2, 0.2, 12).tolist()),
        ("recall", [0.0] * 12),
        ("mrr", rng.normal(0.05, 0.2, 12).tolist()),
        ("f1", [0.1] * 12),
    ]
    full = full_stats(series, "mrr")
    raw = [m.permutation.p for m in full.metrics]  # type: ignore[union-attr]
    assert [m.holm_p for m in full.metrics] == holm_adjust(raw)
    assert full.metric("f1").permutation.p == 2 / 2**12  # type: ignore[union-attr]
    assert full.metric("f1").test.p == 0.0  # the t-test's limit; the permutation p is never 0
    assert full.primary == "mrr" and [m.key for m in full.metrics] == [k for k, _ in series]
    with pytest.raises(ValueError, match="primary"):
        full_stats(series, "ndcg")


finite_deltas = st.lists(
    st.floats(min_value=-1.0, max_value=1.0, allow_subnormal=False), min_size=2, max_size=24
)


@settings(deadline=None, max_examples=80)
@given(finite_deltas)
def test_permutation_p_is_a_probability_and_symmetric_under_negation(deltas: list[float]) -> None:
    result = sign_flip_test(deltas, draws=500)
    mirrored = sign_flip_test([-d for d in deltas], draws=500)
    assert result is not None and mirrored is not None
    assert 0.0 < result.p <= 1.0
    assert mirrored == result


@settings(deadline=None, max_examples=60)
@given(finite_deltas)
def test_bootstrap_interval_is_ordered_and_within_the_deltas(deltas: list[float]) -> None:
    low, high = bootstrap_ci95(deltas, resamples=200)  # type: ignore[misc]
    assert min(deltas) - 1e-15 <= low <= high <= max(deltas) + 1e-15


def test_seeds_are_the_documented_ones() -> None:
    assert (PERMUTATION_SEED, BOOTSTRAP_SEED) == (2010, 1979)
