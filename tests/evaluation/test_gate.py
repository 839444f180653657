"""The gate's test: the comparison's own t-test over the paired queries, stale ones left out."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from cce_relevance import api
from cce_relevance.stats.paired import PairedTest, paired_t
from tests.cli.saved_reports import report, rows

MRR = 2  # position of MRR in a saved report's per-query values


def _comparison(base: list[float], head: list[float]) -> api.BackendComparison:
    def values(mrrs: list[float]) -> list[tuple[str, list[float]]]:
        return rows([[0.0, 0.0, m, 0.0] for m in mrrs])

    (comparison,) = api.compare_saved(report({"bm25": values(base)}), report({"bm25": values(head)}))
    return comparison


scores = st.lists(st.sampled_from([0.0, 0.2, 0.25, 0.5, 1.0]), max_size=12)  # exact at six decimals


@given(st.data())
def test_without_stale_queries_it_is_the_comparisons_own_test(data):
    base = data.draw(scores)
    head = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(base), max_size=len(base)))
    comparison = _comparison(base, head)
    test, left_out = api.gated_test(comparison, "mrr", frozenset())
    assert left_out == 0
    assert test == comparison.metric("mrr").test


@given(st.data())
def test_stale_queries_are_left_out_and_counted(data):
    base = data.draw(scores)
    head = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(base), max_size=len(base)))
    ids = [f"q{i + 1}" for i in range(len(base))]
    stale = frozenset(data.draw(st.lists(st.sampled_from(ids), unique=True)) if ids else [])
    test, left_out = api.gated_test(_comparison(base, head), "mrr", stale | {"not-a-query"})
    kept = [h - b for i, b, h in zip(ids, base, head, strict=True) if i not in stale]
    assert left_out == len(stale)
    assert test == paired_t(kept)


def test_only_a_negative_mean_below_alpha_is_a_significant_regression():
    def test(mean: float, p: float | None) -> PairedTest:
        return PairedTest(5, mean, None, p, None)

    assert api.is_significant_regression(test(-0.1, 0.01), 0.05)
    assert not api.is_significant_regression(test(-0.1, 0.05), 0.05)  # p must be below alpha
    assert not api.is_significant_regression(test(0.1, 0.01), 0.05)  # an improvement
    assert not api.is_significant_regression(test(-0.1, None), 0.05)  # n < 2: no p
    assert not api.is_significant_regression(test(-math.inf, math.nan), 0.05)
