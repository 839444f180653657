"""Rank metrics: hand-computed examples, and every formula against pytrec_eval (trec_eval) on
generated rankings and judgments."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.evaluation.rank_metrics import (
    RANK_METRICS,
    average_precision,
    dcg,
    hit_at_k,
    ndcg_at_k,
    r_precision,
    rank_metric,
    rank_metric_for_key,
)


def score_ranking(run_gains: list[int], judged: list[int], k: int) -> SimpleNamespace:
    """The four plain metrics of one case, by measure name (ndcg, ap, hit, rprec)."""
    return SimpleNamespace(**{s.attr: s.value(run_gains, judged, k) for s in RANK_METRICS})


def test_graded_ndcg_by_hand() -> None:
    """Run gains [0, 3, 1] at k = 3 against judged chunks graded 3, 2, 1 (one of grade 2 unretrieved).

    DCG  = 0/log2(2) + 3/log2(3) + 1/log2(4) = 1.892789 + 0.5         = 2.392789
    IDCG = 3/log2(2) + 2/log2(3) + 1/log2(4) = 3 + 1.261860 + 0.5     = 4.761860
    nDCG = 2.392789 / 4.761860                                         = 0.502491
    """
    assert dcg([0, 3, 1], 3) == pytest.approx(3 / math.log2(3) + 0.5)
    assert ndcg_at_k([0, 3, 1], [3, 2, 1], 3) == pytest.approx(0.502491, abs=5e-7)
    # the cut applies to the ideal ranking too: at k = 1 only the best judged grade counts
    assert ndcg_at_k([0, 3, 1], [3, 2, 1], 1) == 0.0
    assert ndcg_at_k([3, 0, 1], [1, 2, 3], 1) == 1.0


def test_binary_ap_rprec_hit_by_hand() -> None:
    """Relevant at ranks 1 and 3 of 4 retrieved, R = 4 relevant in the corpus.

    AP = (1/1 + 2/3) / 4 = 0.416667; R-prec = 2 relevant in the first 4 / 4 = 0.5; hit@4 = 1.
    """
    run = [1, 0, 1, 0]
    assert average_precision(run, 4) == pytest.approx((1 + 2 / 3) / 4)
    assert r_precision(run, 4) == 0.5
    assert r_precision(run, 2) == 0.5  # only the first R = 2 results count
    assert hit_at_k(run, 4) == 1.0 and hit_at_k(run, 1) == 1.0 and hit_at_k([0, 1], 1) == 0.0


def test_nothing_relevant_scores_zero_not_nan() -> None:
    assert score_ranking([0, 0], [], 5) == score_ranking([], [], 5)
    m = score_ranking([0, 0], [], 5)
    assert (m.ndcg, m.ap, m.hit, m.rprec) == (0.0, 0.0, 0.0, 0.0)


# --- against trec_eval -----------------------------------------------------------------------

# A corpus of up to 12 documents with grades 0..3 (0 = not relevant), a ranked run of distinct
# documents, and a cut-off k. The run is cut to k as the harness does before scoring.
corpus_grades = st.lists(st.integers(0, 3), min_size=1, max_size=12)


@st.composite
def judged_runs(draw: st.DrawFn) -> tuple[list[int], list[int], int]:
    grades = draw(corpus_grades)
    order = draw(st.permutations(range(len(grades))))
    retrieved = draw(st.integers(0, len(grades)))
    k = draw(st.integers(1, 14))
    return grades, list(order[:retrieved]), k


@settings(max_examples=400, deadline=None)
@given(judged_runs())
def test_every_rank_metric_equals_trec_eval(case: tuple[list[int], list[int], int]) -> None:
    grades, run, k = case
    run = run[:k]
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades) if g > 0}}
    if not qrels["q"]:
        qrels["q"] = {"unjudged-filler": 0}  # trec_eval needs the query in the qrels to score it
    ranked = {"q": {f"d{doc}": float(len(run) - rank) for rank, doc in enumerate(run)}}
    measures = {f"ndcg_cut.{k}", "map", "Rprec", f"success.{k}"}
    trec = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(ranked).get("q")
    run_gains = [grades[d] for d in run]
    judged = [g for g in grades if g > 0]
    ours = score_ranking(run_gains, judged, k)
    if trec is None:  # an empty run: trec_eval has nothing to score, every metric of ours is 0
        assert not run and (ours.ndcg, ours.ap, ours.hit, ours.rprec) == (0.0, 0.0, 0.0, 0.0)
        return
    assert ours.ndcg == pytest.approx(trec[f"ndcg_cut_{k}"], rel=1e-12, abs=1e-15)
    assert ours.ap == pytest.approx(trec["map"], rel=1e-12, abs=1e-15)
    assert ours.rprec == trec["Rprec"]
    assert ours.hit == trec[f"success_{k}"]


def test_docs_name_every_metric_and_carry_the_worked_example(repo_root: Path) -> None:
    text = (repo_root / "docs/metrics.md").read_text(encoding="utf-8")
    for spec in RANK_METRICS:
        assert f"| `{spec.name}` | `{spec.key}` |" in text
    assert f"nDCG@3 = 2.392789 / 4.761860 = {ndcg_at_k([0, 3, 1], [3, 2, 1], 3):.6f}" in text


@settings(max_examples=300, deadline=None)
@given(judged_runs(), st.integers(1, 14))
def test_cutoffs_equal_trec_eval_on_one_deep_ranking(case: tuple[list[int], list[int], int], n: int) -> None:
    """`--metrics ndcg@n,ap@n,hit@n,p@n,recall@n` on a ranking retrieved deeper than n."""
    grades, run, _ = case
    qrels = {"q": {f"d{i}": g for i, g in enumerate(grades) if g > 0} or {"unjudged-filler": 0}}
    ranked = {"q": {f"d{doc}": float(len(run) - rank) for rank, doc in enumerate(run)}}
    measures = {f"ndcg_cut.{n}", f"map_cut.{n}", f"success.{n}", f"P.{n}", f"recall.{n}"}
    trec = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(ranked).get("q")
    if trec is None:
        return
    run_gains = [grades[d] for d in run]
    judged = [g for g in grades if g > 0]
    pairs = {
        "ndcg": f"ndcg_cut_{n}",
        "ap": f"map_cut_{n}",
        "hit": f"success_{n}",
        "p": f"P_{n}",
        "recall": f"recall_{n}",
    }
    for measure, trec_name in pairs.items():
        spec = rank_metric(f"{measure}@{n}")
        assert spec.value(run_gains, judged, 99) == pytest.approx(trec[trec_name], rel=1e-12, abs=1e-15), (
            measure
        )


@pytest.mark.parametrize(
    ("name", "key", "label"),
    [
        ("ndcg@5", "ndcg_at_5", "nDCG@5"),
        ("ap@10", "average_precision_at_10", "AP@10"),
        ("hit@1", "hit_at_1", "hit@1"),
        ("p@1", "precision_at_1", "P@1"),
        ("recall@20", "recall_at_20", "recall@20"),
        ("ndcg", "ndcg_at_k", "nDCG@k"),
        ("rprec", "r_precision", "R-prec"),
    ],
)
def test_cutoff_names_keys_and_labels_round_trip(name: str, key: str, label: str) -> None:
    spec = rank_metric(name)
    assert (spec.key, spec.label, spec.name) == (key, label, name)
    assert rank_metric_for_key(key) == spec


@pytest.mark.parametrize(
    "key",
    [
        "precision_at_k",
        "recall",
        "mrr",
        "ndcg_at_05",
        "ndcg_at_0",
        "r_precision_at_5",
        "hit_at_",
        "ndcg_at_٣",
    ],
)
def test_keys_that_are_no_rank_metric(key: str) -> None:
    assert rank_metric_for_key(key) is None


@given(
    st.lists(st.sampled_from(["ndcg_at_", "average_precision", "hit_at_", "mrr", "x_at_", ""]), max_size=3),
    st.text("0123456789 +-a", max_size=4),
)
def test_rank_metric_for_key_answers_as_when_first_asked(stems: list[str], tail: str) -> None:
    """Kept answers (an lru_cache: a saved report asks about each key thousands of times) are the
    ones the lookup gives afresh."""
    for key in ["".join(stems) + tail, "ndcg_at_10", "ndcg_at_010", "recall"]:
        assert rank_metric_for_key(key) == rank_metric_for_key.__wrapped__(key) == rank_metric_for_key(key)
