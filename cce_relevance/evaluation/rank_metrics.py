"""Rank-sensitive metrics beyond the reference: nDCG@k, average precision, hit@k, R-precision.

They are computed from relevance judgments over the whole corpus (`judgments.py`): a retrieved
chunk has gain g ≥ 1 when it matches an anchor of grade g and 0 otherwise, and R is the number of
relevant chunks in the corpus. Defined that way they equal trec_eval's `ndcg_cut_k`, `map`,
`success_k` and `Rprec` per query on the run and qrels that `--trec-run`/`--trec-qrels` export
(a run of k results, so `map` there is AP truncated at k), which the tests check against
pytrec_eval. The reference metrics (metrics.py) count anchors instead; see
docs/metrics.md for how the two views differ.

Only the top k results are ever retrieved, so when a case has more relevant chunks than k
(a file anchor over a file of many functions), AP and R-precision cannot reach 1: they measure
the ranking against everything relevant, not against the cut.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from cce_relevance.evaluation.metrics import MetricSpec
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.numeric import seq_sum


def dcg(gains: Sequence[int], k: int) -> float:
    """Discounted cumulative gain of the first k gains: Σ_{i ≤ k} g_i / log2(i + 1).

    Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques", ACM TOIS 20(4),
    2002, with the log2(i + 1) discount that trec_eval's `ndcg_cut` uses (J&K's original leaves
    ranks below the log base undiscounted). Gains are linear, the grade itself: Burges et al.'s
    2^g − 1 (ranx `ndcg_burges`) is not what we compute.
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


def precision_at(run_gains: Sequence[int], cutoff: int) -> float:
    """P@n = (relevant results among the first n) / n, dividing by n even when fewer came back
    (trec_eval's `P_n`)."""
    return sum(1 for g in run_gains[:cutoff] if g > 0) / cutoff


def recall_at(run_gains: Sequence[int], relevant: int, cutoff: int) -> float:
    """recall@n = (relevant chunks among the first n) / R; 0 when R = 0 (trec_eval's `recall_n`).

    Judged chunks, not anchors: the reference's `recall` (always reported, at the fixture's k)
    counts matched anchors out of |E| instead; docs/metrics.md says when the two agree.
    """
    return sum(1 for g in run_gains[:cutoff] if g > 0) / relevant if relevant else 0.0


@dataclass(frozen=True)
class RankMetricSpec(MetricSpec):
    """A rank metric as `--metrics` names it: a measure, at the fixture's k, at a cut-off or
    within a token budget.

    `name` is what the user typed in canonical form (`ndcg`, `ndcg@5`, `recall@budget=2000`); `key`
    the JSON key (`ndcg_at_k`, `ndcg_at_5`, `recall_at_budget_2000`); `label` the table label
    (`nDCG@k`, `nDCG@5`, `recall@2000t`); `attr` the measure. `cutoff` None means the case's own
    k, on the ranking the reference metrics score; `budget` (tokens) makes it a budget metric,
    scored on the results that fit (evaluation/budget.py).
    """

    name: str = ""
    cutoff: int | None = None
    budget: int | None = None

    def value(self, run_gains: Sequence[int], judged_gains: Sequence[int], k: int) -> float:
        """This metric of one case from gains alone (every measure but `judged` and the budget
        ones): `run_gains` of its ranking (at least `depth` deep when it was retrieved that
        deep), `judged_gains` every relevant chunk's grade, `k` the case's k."""
        n = k if self.cutoff is None else self.cutoff
        relevant = len(judged_gains)
        if self.attr == "ndcg":
            return ndcg_at_k(run_gains, judged_gains, n)
        if self.attr == "ap":
            return average_precision(run_gains[:n], relevant)
        if self.attr == "hit":
            return hit_at_k(run_gains, n)
        if self.attr == "rprec":
            return r_precision(run_gains[:n], relevant)
        if self.attr == "p":
            return precision_at(run_gains, n)
        return recall_at(run_gains, relevant, n)


def judged_at(judged: Sequence[bool], cutoff: int) -> float:
    """judged@n = (results among the first n that are judged) / n, dividing by n even when fewer
    came back, as trec_eval's `P_n` and ir_measures' `Judged@n` do.

    A result is judged when it matches an anchor of the case: one of `expected` (relevant) or
    of `irrelevant` (a reviewer's "not relevant"). Everything else in the top n is a result
    nobody labeled, which every other metric counts as not relevant. Without `irrelevant`
    anchors judged@k equals the reference's P@k; its complement is the share of the k slots
    holding results nobody looked at (docs/metrics.md).
    """
    return sum(1 for j in judged[:cutoff] if j) / cutoff


@dataclass(frozen=True)
class RankedCase:
    """What the rank metrics of one case are computed from: the gains of its top-k ranking and of
    the one ranking retrieved for its cut-offs and budgets (`deep_gains`), every relevant chunk's
    grade, its k, which results of both rankings are judged, and the budget metrics' values,
    worked out by the harness from the results that fit (evaluation/budget.py), by key."""

    gains_at_k: Sequence[int]
    deep_gains: Sequence[int]
    judged_gains: Sequence[int]
    k: int
    judged_at_k: Sequence[bool] = ()
    deep_judged: Sequence[bool] = ()
    budgeted: Mapping[str, float] = field(default_factory=dict)


# measure → (key stem, label stem, takes the case's k without a cut-off)
_MEASURES = {
    "ndcg": ("ndcg", "nDCG", True),
    "ap": ("average_precision", "AP", True),
    "hit": ("hit", "hit", True),
    "rprec": ("r_precision", "R-prec", True),
    "judged": ("judged", "judged", True),
    "p": ("precision", "P", False),
    "recall": ("recall", "recall", False),
}
# measure → (key stem, label stem) of the measures a token budget takes (`recall@budget=2000`)
_BUDGET_MEASURES = {"recall": ("recall", "recall"), "tok-recall": ("tok_recall", "tok-R")}
_BUDGET = "budget="

RANK_METRICS: tuple[RankMetricSpec, ...] = (
    RankMetricSpec("ndcg_at_k", "ndcg", "nDCG@k", "ndcg"),
    RankMetricSpec("average_precision", "ap", "AP", "ap"),
    RankMetricSpec("hit_at_k", "hit", "hit@k", "hit"),
    RankMetricSpec("r_precision", "rprec", "R-prec", "rprec"),
)
JUDGED = RankMetricSpec("judged_at_k", "judged", "judged@k", "judged")
_PLAIN = (*RANK_METRICS, JUDGED)  # the measures `--metrics` takes without a cut-off
FIRST_TOKENS = "ttfr"  # `--metrics ttfr`: tokens to the first relevant hit (evaluation/budget.py)
MAX_CUTOFF = 10_000  # deeper than any code search is asked to rank
MAX_BUDGET = 10_000_000  # tokens: beyond any context window


def rank_metric(name: str) -> RankMetricSpec:
    """The spec of one `--metrics` entry: `ndcg`, `ap`, `hit`, `rprec`, `judged`; any of `ndcg`,
    `ap`, `hit`, `judged`, `p`, `recall` with a cut-off `@n` (1 ≤ n ≤ MAX_CUTOFF); `recall` or
    `tok-recall` with a token budget `@budget=n` (1 ≤ n ≤ MAX_BUDGET). ValueError says what is
    wrong."""
    measure, at, depth = name.partition("@")
    if at and depth.startswith(_BUDGET):
        return _budget_metric(name, measure, depth[len(_BUDGET) :])
    if measure not in _MEASURES:
        hint = " (it takes a token budget: tok-recall@budget=2000)" if measure in _BUDGET_MEASURES else ""
        raise ValueError(
            f"unknown metric {rust_debug_str(name)} (expected ndcg, ap, hit, rprec, judged, ttfr, a cut-off "
            "such as ndcg@10, ap@10, hit@1, p@5, recall@20, or a token budget such as "
            f"recall@budget=2000){hint}"
        )
    stem, label, plain = _MEASURES[measure]
    if not at:
        if not plain:
            raise ValueError(
                f"{measure} needs a cut-off, e.g. {measure}@10 (the fixture's k "
                f"{'P@k' if measure == 'p' else 'recall'} is always reported)"
            )
        return next(s for s in _PLAIN if s.name == measure)
    if measure == "rprec":
        raise ValueError("rprec takes no cut-off: R-precision cuts at R, the number of relevant chunks")
    if not (depth.isascii() and depth.isdigit()) or not 1 <= int(depth) <= MAX_CUTOFF:
        raise ValueError(
            f"metric {rust_debug_str(name)}: the cut-off must be a whole number from 1 to {MAX_CUTOFF}"
        )
    n = int(depth)
    return RankMetricSpec(f"{stem}_at_{n}", measure, f"{label}@{n}", f"{measure}@{n}", n)


def _budget_metric(name: str, measure: str, tokens: str) -> RankMetricSpec:
    if measure not in _BUDGET_MEASURES:
        raise ValueError(
            f"metric {rust_debug_str(name)}: a token budget is taken by recall and tok-recall "
            "(recall@budget=2000, tok-recall@budget=2000)"
        )
    if not (tokens.isascii() and tokens.isdigit()) or not 1 <= int(tokens) <= MAX_BUDGET:
        raise ValueError(
            f"metric {rust_debug_str(name)}: the budget must be a whole number of tokens from 1 "
            f"to {MAX_BUDGET:,}"
        )
    stem, label = _BUDGET_MEASURES[measure]
    n = int(tokens)
    return RankMetricSpec(
        f"{stem}_at_budget_{n}", measure, f"{label}@{n}t", f"{measure}@{_BUDGET}{n}", budget=n
    )


@functools.lru_cache(maxsize=256)
def rank_metric_for_key(key: str) -> RankMetricSpec | None:
    """The spec whose JSON key is `key` (`ndcg_at_5`, `average_precision`, `recall_at_budget_2000`),
    or None. Kept for the keys last asked about: reading a saved report asks about every key of
    every query (48,000 times for 1,000 queries, three backends and two sides)."""
    for spec in _PLAIN:
        if spec.key == key:
            return spec
    named = [(f"{stem}_at_budget_", f"{m}@{_BUDGET}") for m, (stem, _) in _BUDGET_MEASURES.items()]
    named += [(f"{stem}_at_", f"{m}@") for m, (stem, _, _) in _MEASURES.items()]
    for prefix, name in named:
        rest = key[len(prefix) :]
        if key.startswith(prefix) and rest.isascii() and rest.isdigit() and rest == str(int(rest)):
            try:
                return rank_metric(name + rest)
            except ValueError:
                return None
    return None


def score_specs(specs: Sequence[RankMetricSpec], case: RankedCase) -> dict[str, float]:
    """Every requested metric of one case, by key: the plain ones on the fixture's top-k ranking,
    the cut-offs on the one ranking retrieved to the largest depth asked, the budget ones as the
    harness worked them out."""
    out = {}
    for s in specs:
        if s.budget is not None:
            out[s.key] = case.budgeted[s.key]
        elif s.attr == "judged":
            out[s.key] = (
                judged_at(case.judged_at_k, case.k)
                if s.cutoff is None
                else judged_at(case.deep_judged, s.cutoff)
            )
        else:
            gains = case.gains_at_k if s.cutoff is None else case.deep_gains
            out[s.key] = s.value(gains, case.judged_gains, case.k)
    return out


def rank_metric_name(key: str) -> str | None:
    """The rank metric name a rank metric key is scored with (`ndcg_at_5` → `ndcg@5`); None for
    any other key (a reference metric, which every run reports, or no metric at all)."""
    spec = rank_metric_for_key(key)
    return spec.name if spec is not None else None
