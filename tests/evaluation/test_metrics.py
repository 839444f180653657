"""Per-query metrics (§query-metrics) on hand-built result lists."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.evaluation.metrics import macro_mean, score_query
from cce_relevance.retrieval.hit import Hit


def hit(rank: int, path: str, kind: str = "function_definition", start: int = 1, end: int = 2) -> Hit:
    return Hit(f"{rank:016x}", path, start, end, "function", kind, rank, 0.5)


def test_precision_divides_by_k_even_with_fewer_results() -> None:
    m = score_query([parse_anchor("a.py")], [hit(1, "b.py"), hit(2, "a.py")], k=5)
    assert m.precision == pytest.approx(1 / 5)
    assert m.recall == 1.0
    assert m.mrr == 0.5
    assert m.first_relevant_rank == 2
    assert m.f1 == pytest.approx((2 * 0.2 * 1.0) / 1.2)


def test_result_matching_two_anchors_counts_once_and_anchor_matched_once() -> None:
    anchors = [parse_anchor("a.py"), parse_anchor("#function_definition")]
    hits = [hit(1, "a.py"), hit(2, "a.py"), hit(3, "c.py", kind="class_definition")]
    m = score_query(anchors, hits, k=3)
    assert m.precision == pytest.approx(2 / 3)
    assert m.recall == 1.0


def test_only_top_k_considered() -> None:
    m = score_query([parse_anchor("a.py")], [hit(1, "b.py"), hit(2, "a.py")], k=1)
    assert (m.precision, m.recall, m.mrr, m.f1, m.first_relevant_rank) == (0.0, 0.0, 0.0, 0.0, None)


def test_ranged_anchor_overlap_is_inclusive() -> None:
    anchors = [parse_anchor("a.py@3-4")]
    assert score_query(anchors, [hit(1, "a.py", start=4, end=9)], k=1).mrr == 1.0
    assert score_query(anchors, [hit(1, "a.py", start=5, end=9)], k=1).mrr == 0.0
    assert score_query(anchors, [hit(1, "a.py", start=1, end=3)], k=1).mrr == 1.0


def test_macro_mean_is_left_to_right() -> None:
    values = [0.1] * 10
    total = 0.0
    for v in values:
        total += v
    assert macro_mean(values) == total / 10
    assert macro_mean([]) == 0.0


@given(st.lists(st.sampled_from(["a.py", "b.py", "c.py"]), max_size=12), st.integers(1, 12))
def test_bounds(paths: list[str], k: int) -> None:
    hits = [hit(i + 1, p) for i, p in enumerate(paths)]
    m = score_query([parse_anchor("a.py"), parse_anchor("c.py")], hits, k)
    assert 0.0 <= m.precision <= 1.0 and 0.0 <= m.recall <= 1.0 and 0.0 <= m.mrr <= 1.0
    assert 0.0 <= m.f1 <= max(m.precision, m.recall)
    assert (m.first_relevant_rank is None) == (m.mrr == 0.0)


_ANCHORS = st.sampled_from(["a.py", "a.py#class_definition", "#function_definition", "a.py@3-4", "b.py@1-9"])
_HITS = st.lists(
    st.tuples(
        st.sampled_from(["a.py", "b.py"]),
        st.sampled_from(["function_definition", "class_definition"]),
        st.integers(1, 6),
        st.integers(0, 3),
    ),
    max_size=8,
)


@given(st.lists(_ANCHORS, min_size=1, max_size=3), _HITS, st.integers(1, 8))
def test_metrics_are_the_per_anchor_formulas(anchor_texts, hit_specs, k) -> None:
    """One anchor takes a shorter path (one test per hit): the same values as every anchor
    tested against every hit, as §query-metrics writes it."""
    anchors = [parse_anchor(a) for a in anchor_texts]
    hits = [hit(i + 1, p, kind, start, start + n) for i, (p, kind, start, n) in enumerate(hit_specs)]
    considered = hits[:k]

    def matches(a, h):
        return a.matches(h.file_path, h.kind, h.start_line, h.end_line)

    relevant = [any(matches(a, h) for a in anchors) for h in considered]
    precision = sum(relevant) / k
    recall = sum(1 for a in anchors if any(matches(a, h) for h in considered)) / len(anchors)
    first = next((i + 1 for i, r in enumerate(relevant) if r), None)
    m = score_query(anchors, hits, k)
    assert (m.precision, m.recall, m.first_relevant_rank) == (precision, recall, first)
    assert m.mrr == (1.0 / first if first else 0.0)
