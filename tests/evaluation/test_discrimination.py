"""How a set tells backends apart: group means, disagreements and paired tests from real reports."""

from __future__ import annotations

from pathlib import Path

from cce_relevance import api
from cce_relevance.evaluation.comparison import compare_reports
from cce_relevance.evaluation.discrimination import discrimination
from tests.cli.proposal_project import write_project


def test_groups_disagreements_and_pairs_follow_the_per_case_results(tmp_path: Path) -> None:
    write_project(tmp_path / "corpus")
    options = api.RunOptions(indexing=api.BuildOptions.with_cache(use_cache=False))
    made = api.bootstrap(str(tmp_path / "corpus"), options, queries=10, out=str(tmp_path / "p.jsonl"))
    reports = made.reports
    ids = [p.id for p in made.proposal.cases]
    found = {
        r.backend: {c.case.id for c in r.cases if c.metrics.first_relevant_rank is not None} for r in reports
    }
    d = discrimination(reports, {"first half": ids[:5], "rest": ids[5:]})
    assert d.groups == ("all", "first half", "rest")
    for r in reports:
        mrr = {c.case.id: c.metrics.mrr for c in r.cases}
        assert d.scores[r.backend]["all"].mrr == r.mrr
        assert d.scores[r.backend]["first half"].cases == 5
        assert abs(d.scores[r.backend]["rest"].mrr - sum(mrr[i] for i in ids[5:]) / len(ids[5:])) < 1e-12
        assert d.scores[r.backend]["all"].hit == len(found[r.backend]) / len(ids)
    everywhere = set.intersection(*found.values())
    anywhere = set.union(*found.values())
    assert (d.found_by_all, d.found_by_none, d.disputed) == (
        len(everywhere),
        len(ids) - len(anywhere),
        len(anywhere - everywhere),
    )
    assert [(a, b) for a, b, _ in d.pairs] == [("bm25", "vector"), ("bm25", "hybrid"), ("vector", "hybrid")]
    assert d.pairs[1][2] == compare_reports(reports[0], reports[2])["mrr"]
    assert made.discrimination() is not None and made.form_counts()
