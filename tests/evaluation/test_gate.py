"""The gate's test: the comparison's own t-test over the paired queries, stale ones left out."""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.evaluation.comparison import BackendComparison, compare_documents
from cce_relevance.evaluation.gate import (
    compare_sides,
    gated_comparison,
    gated_comparisons,
    gated_test,
    is_significant_regression,
)
from cce_relevance.stats.paired import PairedTest, paired_t
from tests.cli.saved_reports import report, rows

MRR = 2  # position of MRR in a saved report's per-query values


def _comparison(base: list[float], head: list[float]) -> BackendComparison:
    def values(mrrs: list[float]) -> list[tuple[str, list[float]]]:
        return rows([[0.0, 0.0, m, 0.0] for m in mrrs])

    (comparison,) = compare_documents(report({"bm25": values(base)}), report({"bm25": values(head)}))
    return comparison


scores = st.lists(st.sampled_from([0.0, 0.2, 0.25, 0.5, 1.0]), max_size=12)  # exact at six decimals


@given(st.data())
def test_without_stale_queries_it_is_the_comparisons_own_test(data):
    base = data.draw(scores)
    head = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(base), max_size=len(base)))
    comparison = _comparison(base, head)
    test, left_out = gated_test(comparison, "mrr", frozenset())
    assert left_out == 0
    assert test == comparison.metric("mrr").test


@given(st.data())
def test_stale_queries_are_left_out_and_counted(data):
    base = data.draw(scores)
    head = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(base), max_size=len(base)))
    ids = [f"q{i + 1}" for i in range(len(base))]
    stale = frozenset(data.draw(st.lists(st.sampled_from(ids), unique=True)) if ids else [])
    test, left_out = gated_test(_comparison(base, head), "mrr", stale | {"not-a-query"})
    kept = [h - b for i, b, h in zip(ids, base, head, strict=True) if i not in stale]
    assert left_out == len(stale)
    assert test == paired_t(kept)


def test_only_a_negative_mean_below_alpha_is_a_significant_regression():
    def test(mean: float, p: float | None) -> PairedTest:
        return PairedTest(5, mean, None, p, None)

    assert is_significant_regression(test(-0.1, 0.01), 0.05)
    assert not is_significant_regression(test(-0.1, 0.05), 0.05)  # p must be below alpha
    assert not is_significant_regression(test(0.1, 0.01), 0.05)  # an improvement
    assert not is_significant_regression(test(-0.1, None), 0.05)  # n < 2: no p
    assert not is_significant_regression(test(-math.inf, math.nan), 0.05)


values = st.lists(st.sampled_from([0.0, 0.2, 0.25, 0.5, 1.0]), min_size=4, max_size=4)


@settings(deadline=None, max_examples=40)
@given(st.data())
def test_gated_comparisons_are_the_comparisons_of_the_reports_without_the_left_out_queries(data):
    """The backends' gated comparisons, their bootstraps drawn together, against the plain way: the
    left-out queries deleted from both reports and the reports compared with full statistics.
    Only the backend means differ (the gate keeps those of the whole reports)."""
    n = data.draw(st.integers(0, 30))
    backends = ("bm25", "vector", "hybrid")
    sides = [{b: rows(data.draw(st.lists(values, min_size=n, max_size=n))) for b in backends} for _ in "ab"]
    left_out = frozenset(data.draw(st.lists(st.sampled_from([f"q{i + 1}" for i in range(n)] or ["q1"]))))
    primary = data.draw(st.sampled_from(["mrr", "f1"]))
    comparisons = compare_documents(report(sides[0]), report(sides[1]), "base", "head", "full", primary)
    gated = gated_comparisons(comparisons, left_out, primary)
    plain = compare_documents(
        *(report({b: [r for r in rs if r[0] not in left_out] for b, rs in side.items()}) for side in sides),
        "base",
        "head",
        "full",
        primary,
    )
    assert [
        (g.pair.queries, g.full, [replace(m, base_mean=0.0, head_mean=0.0) for m in g.metrics]) for g in gated
    ] == [
        (p.pair.queries, p.full, [replace(m, base_mean=0.0, head_mean=0.0) for m in p.metrics]) for p in plain
    ]
    assert [(g.pair.base_means, g.pair.head_means) for g in gated] == [
        (c.pair.base_means, c.pair.head_means) for c in comparisons
    ]
    assert gated == [gated_comparison(c, left_out, primary) for c in comparisons]
    if not left_out & {f"q{i + 1}" for i in range(n)}:
        assert all(g is c for g, c in zip(gated, comparisons, strict=True))  # nothing to redo


@settings(deadline=None, max_examples=20)
@given(st.data())
def test_a_sets_comparison_holds_the_comparisons_the_gated_ones_and_the_gate_computed_once(data):
    n = data.draw(st.integers(0, 12))
    sides = [
        {b: rows(data.draw(st.lists(values, min_size=n, max_size=n))) for b in ("bm25", "hybrid")}
        for _ in "ab"
    ]
    left_out = frozenset(data.draw(st.lists(st.sampled_from([f"q{i + 1}" for i in range(n)] or ["q1"]))))
    compared = compare_sides(report(sides[0]), report(sides[1]), "mrr", left_out)
    full = compare_documents(report(sides[0]), report(sides[1]), "base", "head", "full", "mrr")
    assert list(compared.comparisons) == full == list(compared.at_both)
    assert list(compared.gated) == gated_comparisons(full, left_out, "mrr")
    assert [(g.backend, g.label, g.test, g.left_out) for g in compared.gates] == [
        (c.pair.backend, c.metric("mrr").label, *gated_test(c, "mrr", left_out)) for c in full
    ]
