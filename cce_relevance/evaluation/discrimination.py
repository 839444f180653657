"""Whether a fixture set tells backends apart: per-group scores, disagreements, paired tests.

A set on which every backend finds every case (or none) cannot show that one ranking is better
than another. For a proposed set this reports, per backend, the mean MRR and hit rate (the
share of cases whose anchor is in the top k) over all cases and over each group of cases (the
proposal forms, easy and hard); how many cases the backends disagree on (some find the case in
their top k, some do not); and, for each pair of backends, the paired t-test of their MRR.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from cce_relevance.evaluation.harness import BackendReport
from cce_relevance.numeric import seq_sum
from cce_relevance.stats.paired import PairedTest, paired_t


@dataclass(frozen=True)
class GroupScores:
    """One group of cases at one backend: how many, mean MRR, share found in the top k."""

    cases: int
    mrr: float
    hit: float


@dataclass(frozen=True)
class Discrimination:
    groups: tuple[str, ...]  # "all" first, then the groups in the order given
    scores: Mapping[str, Mapping[str, GroupScores]]  # backend → group → scores
    found_by_all: int
    found_by_none: int
    disputed: int  # found in the top k by some backends, not by all
    pairs: tuple[tuple[str, str, PairedTest], ...]  # (a, b, paired t-test of MRR b − a)


def discrimination(reports: Sequence[BackendReport], groups: Mapping[str, Sequence[str]]) -> Discrimination:
    """`groups` maps a group name to the ids of its cases (a case may be in several groups)."""
    order = ("all", *groups)
    members = {"all": None, **{g: set(ids) for g, ids in groups.items()}}
    scores: dict[str, dict[str, GroupScores]] = {}
    for r in reports:
        scores[r.backend] = {}
        for g in order:
            wanted = members[g]
            chosen = [c.metrics for c in r.cases if wanted is None or c.case.id in wanted]
            n = len(chosen)
            scores[r.backend][g] = GroupScores(
                n,
                seq_sum(m.mrr for m in chosen) / n if n else 0.0,
                sum(m.first_relevant_rank is not None for m in chosen) / n if n else 0.0,
            )
    found = [[c.metrics.first_relevant_rank is not None for c in r.cases] for r in reports]
    per_case = list(zip(*found, strict=True)) if found else []
    pairs = tuple(
        (
            a.backend,
            b.backend,
            paired_t([y - x for x, y in zip(a.metric("mrr"), b.metric("mrr"), strict=True)]),
        )
        for a, b in combinations(reports, 2)
    )
    return Discrimination(
        order,
        scores,
        sum(all(f) for f in per_case),
        sum(not any(f) for f in per_case),
        sum(any(f) and not all(f) for f in per_case),
        pairs,
    )
