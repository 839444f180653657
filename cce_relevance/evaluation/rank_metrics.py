"""Rank-sensitive metrics beyond the reference: nDCG@k, average precision, hit@k, R-precision.

They are computed from relevance judgments over the whole corpus (`judgments.py`): a retrieved
chunk has gain g ≥ 1 when it matches an anchor of grade g and 0 otherwise, and R is the number of
relevant chunks in the corpus. Defined that way they equal trec_eval's `ndcg_cut_k`, `map`,
`success_k` and `Rprec` on the run and qrels that `--trec-run`/`--trec-qrels` export, which the
tests check against pytrec_eval. The reference metrics (metrics.py) count anchors instead; see
docs/metrics.md for how the two views differ.

Only the top k results are ever retrieved, so when a case has more relevant chunks than k
(a file anchor over a file of many functions), AP and R-precision cannot reach 1: they measure
the ranking against everything relevant, not against the cut.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cce_relevance.evaluation.metrics import MetricSpec
from cce_relevance.numeric import seq_sum


def dcg(gains: Sequence[int], k: int) -> float:
    """Discounted cumulative gain of the first k gains: Σ_{i ≤ k} g_i / log2(i + 1).

    Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4),
    2002, with the log2(i + 1) discount of Burges et al. (ICML 2005) that trec_eval's `ndcg_cut`
    also uses (J&K's original leaves ranks below the log base undiscounted). Gains are linear.
    """
    return seq_sum(g / math.log2(i + 1) for i, g in enumerate(gains[:k], start=1))


def ndcg_at_k(run_gains: Sequence[int], judged_gains: Sequence[int], k: int) -> float:
    """nDCG@k = DCG@k of the run / DCG@k of the ideal ranking (J&K 2002, sec. 2.2).

    The ideal ranking lists every relevant chunk of the corpus by decreasing grade. With no
    relevant chunk the ideal DCG is 0 and nDCG is defined as 0, as in trec_eval.
    """
    ideal = dcg(sorted(judged_gains, reverse=True), k)
    return dcg(run_gains, k) / ideal if ideal > 0 else 0.0


def average_precision(run_gains: Sequence[int], relevant: int) -> float:
    """AP = (1/R) Σ over relevant retrieved results at rank i of P@i; 0 when R = 0.

    Buckley & Voorhees, "Evaluating evaluation measure stability", SIGIR 2000 (non-interpolated
    average precision, trec_eval's `map` per query); Manning, Raghavan & Schütze, IIR sec. 8.4.
    Relevant chunks that were not retrieved contribute precision 0, so R is the corpus count.
    """
    if relevant == 0:
        return 0.0
    found = 0
    total = 0.0
    for i, g in enumerate(run_gains, start=1):
        if g > 0:
            found += 1
            total += found / i
    return total / relevant


def r_precision(run_gains: Sequence[int], relevant: int) -> float:
    """R-precision = (relevant results among the first R) / R; 0 when R = 0.

    Buckley & Voorhees 2000; IIR sec. 8.4. Precision at the cut-off where a perfect ranking would
    have retrieved everything relevant (trec_eval's `Rprec`).
    """
    if relevant == 0:
        return 0.0
    return sum(1 for g in run_gains[:relevant] if g > 0) / relevant


def hit_at_k(run_gains: Sequence[int], k: int) -> float:
    """hit@k (success@k) = 1 when any of the first k results is relevant, else 0.

    The "success at n" of the TREC Web track (Hawking & Craswell, TREC 2001–2004 overviews);
    trec_eval's `success_k`. Its mean over queries is the share of queries answered at all.
    """
    return 1.0 if any(g > 0 for g in run_gains[:k]) else 0.0


@dataclass(frozen=True)
class RankMetrics:
    ndcg: float
    ap: float
    hit: float
    rprec: float


def score_ranking(run_gains: Sequence[int], judged_gains: Sequence[int], k: int) -> RankMetrics:
    """All four metrics of one case's top-k gains against its corpus judgments."""
    relevant = len(judged_gains)
    return RankMetrics(ndcg_at_k(run_gains, judged_gains, k), average_precision(run_gains[:k], relevant),
                       hit_at_k(run_gains, k), r_precision(run_gains[:k], relevant))


@dataclass(frozen=True)
class RankMetricSpec(MetricSpec):
    """A rank metric's `--metrics` name besides its JSON key, attribute and table label."""

    name: str = ""


RANK_METRICS: tuple[RankMetricSpec, ...] = (
    RankMetricSpec("ndcg_at_k", "ndcg", "nDCG@k", "ndcg"),
    RankMetricSpec("average_precision", "ap", "AP", "ap"),
    RankMetricSpec("hit_at_k", "hit", "hit@k", "hit"),
    RankMetricSpec("r_precision", "rprec", "R-prec", "rprec"),
)
