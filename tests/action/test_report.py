"""The Action's verdict, gates and Markdown, from hand-made run reports (no git, no indexing)."""

from __future__ import annotations

import json
import re

import pytest

from cce_relevance.action.comment import COMMENT_LIMIT, comment_marker, fit_body
from cce_relevance.action.git import CommitPair
from cce_relevance.action.report import Outcome, render
from cce_relevance.action.scoring import GoldenCheck, SetResult, update_golden_command
from cce_relevance.reporting.markdown_safe import code_span
from cce_relevance.reporting.numbers import format6

BASE, HEAD = "a" * 40, "b" * 40
SIGNIFICANTLY_WORSE = [0.5, 0.4, 0.55, 0.45, 0.5, 0.6]  # from 1.0 each: p far below 0.05


def report(mrr: list[float], backend: str = "hybrid", ids: list[str] | None = None) -> str:
    """A `cce.relevance.report/v2` with one backend whose queries score `mrr` (other metrics fixed)."""
    ids = ids or [f"q{i}" for i in range(len(mrr))]
    fixed = {"precision_at_k": "0.200000", "recall": "1.000000", "f1": "0.333333"}
    per_query = [{"id": qid, "mrr": format6(value), **fixed} for qid, value in zip(ids, mrr, strict=True)]
    entry = {"backend": backend, "mrr": format6(sum(mrr) / len(mrr)), "per_query": per_query, **fixed}
    return json.dumps({"schema": "cce.relevance.report/v2", "backends": [entry]})


def paired(
    head_mrr: list[float], *, golden: GoldenCheck | None = None, fixture: str = "eval/a.jsonl"
) -> SetResult:
    return SetResult(fixture, report([1.0] * len(head_mrr)), report(head_mrr), golden)


def verdict(*sets: SetResult, metric: str = "mrr") -> str:
    return Outcome(sets, metric, 0.05).verdict()


DRIFT = GoldenCheck("eval/a.golden.json", "--- a\n+++ b\n@@ -1 +1 @@\n-1\n+2\n", "cce-relevance run ...")
MATCH = GoldenCheck("eval/a.golden.json", "", "cce-relevance run ...")


def test_a_significant_regression_is_named_and_gates_only_when_asked() -> None:
    outcome = Outcome((paired(SIGNIFICANTLY_WORSE, golden=MATCH),), "mrr", 0.05)

    assert re.fullmatch(
        r"⚠️ Significant regression of MRR at alpha 0\.05 \(hybrid -0\.500000, p=[0-9.e-]+\); no golden drift",
        outcome.verdict(),
    )
    assert [outcome.gate_failed(f) for f in ("drift", "regression", "none")] == [False, True, False]


def test_drift_comes_first_and_gates_unless_none() -> None:
    outcome = Outcome((paired(SIGNIFICANTLY_WORSE, golden=DRIFT),), "mrr", 0.05)

    assert outcome.verdict().startswith("❌ Golden drift in 1 report; significant regression of MRR")
    assert [outcome.gate_failed(f) for f in ("drift", "regression", "none")] == [True, True, False]


def test_an_insignificant_change_is_reported_with_its_p_value() -> None:
    assert verdict(paired([1.0, 1.0, 0.5, 1.0], golden=MATCH)) == (
        "✅ No golden drift; MRR -0.125000 on hybrid (p=0.391, not significant)"
    )


def test_a_significant_improvement_is_not_a_regression() -> None:
    base_low = SetResult(
        "eval/a.jsonl", report([0.2] * 6), report([1.0 - x for x in SIGNIFICANTLY_WORSE]), None
    )
    outcome = Outcome((base_low,), "mrr", 0.05)

    assert outcome.regressions == ()
    assert outcome.verdict().endswith(", significant)") and outcome.verdict().startswith("✅ MRR +")


def test_unchanged_and_head_only_verdicts() -> None:
    assert verdict(paired([1.0, 1.0])) == "✅ MRR unchanged"
    assert verdict(paired([1.0, 1.0]), metric="recall") == "✅ Recall unchanged"
    head_only = SetResult("eval/a.jsonl", None, report([1.0]), None)
    assert verdict(head_only) == "✅ No set scored at both base and head, nothing to compare"


def test_the_largest_change_of_several_sets_says_so() -> None:
    text = verdict(paired([1.0, 0.9]), paired([1.0, 0.5], fixture="eval/b.jsonl"))
    assert text == "✅ MRR -0.250000 on hybrid (p=0.5, not significant, the largest change of 2 sets)"


def test_untrusted_names_cannot_ping_inject_html_or_break_the_fences() -> None:
    fixture = "eval/@team <img src=x> `x`.jsonl"
    path = "g/$(touch pwned).json"
    golden = GoldenCheck(
        path, "--- g\n+++ h\n-````\n+ok @someone\n", update_golden_command(fixture, path, ("bm25",))
    )
    set_result = SetResult(
        fixture, report([1.0], ids=["@admin <b>x</b>"]), report([0.5], ids=["@admin <b>x</b>"]), golden
    )
    outcome = Outcome((set_result,), "mrr", 0.05)
    markdown = render(outcome, outcome.verdict(), CommitPair(BASE, HEAD), comment_marker(), None).whole()

    # Code spans and blocks show their content literally; everywhere else nothing may be live.
    literal = [
        code_span(fixture),
        code_span(fixture, in_table=True),
        code_span("@admin <b>x</b>", in_table=True),
        code_span(golden.path),
        code_span(golden.path, in_table=True),
    ]
    outside_code = re.sub(r"\n(`{3,})\w*\n.*?\n\1\n", "\n", markdown + "\n", flags=re.S)
    for span in literal:
        outside_code = outside_code.replace(span, "")
    assert "<img" not in outside_code and "<b>" not in outside_code
    assert re.findall(r"@(?:team|admin|someone)", outside_code) == []
    assert (  # quoted for pasting into a shell, with the Action's backends
        "cce-relevance run 'eval/@team <img src=x> `x`.jsonl' --backend bm25 --golden 'g/$(touch pwned).json' "
        "--update-golden" in markdown
    )
    assert "`````diff\n--- g\n+++ h\n-````\n+ok @someone\n`````" in markdown  # a fence the diff cannot close


def test_a_huge_diff_is_trimmed_but_the_verdict_and_footer_survive() -> None:
    diff = "".join(f"-line {i}\n+line {i}!\n" for i in range(20_000))
    outcome = Outcome(
        (paired([1.0, 0.5], golden=GoldenCheck("g.json", diff, "cce-relevance run ...")),), "mrr", 0.05
    )
    markdown = render(outcome, outcome.verdict(), CommitPair(BASE, HEAD), comment_marker(), "https://x/run")

    body = fit_body(markdown.head, list(markdown.sections), markdown.tail)

    assert len(markdown.whole()) > COMMENT_LIMIT >= len(body)
    assert outcome.verdict().split(";")[0] in body and "Detail truncated" in body
    assert body.endswith(f"head `{HEAD[:7]}` · cce-relevance 0.1.0 · [workflow run](https://x/run)</sub>")
    assert body.count("```") % 2 == 0  # every fence opened is closed


@pytest.mark.parametrize("base", [None, BASE])
def test_the_footer_names_both_commits(base: str | None) -> None:
    outcome = Outcome((SetResult("e.jsonl", None, report([1.0]), None),), "mrr", 0.05)
    tail = render(outcome, outcome.verdict(), CommitPair(base, HEAD), comment_marker(), None).tail
    assert tail == f"<sub>base {'`aaaaaaa`' if base else 'none'} → head `bbbbbbb` · cce-relevance 0.1.0</sub>"


def test_the_update_command_names_the_backends_only_when_they_are_not_the_default() -> None:
    default = update_golden_command("eval/a.jsonl", "a.golden.json", ("bm25", "vector", "hybrid"))
    assert default == "cce-relevance run eval/a.jsonl --golden a.golden.json --update-golden"
    narrowed = update_golden_command("eval/a b.jsonl", "a.golden.json", ("hybrid", "bm25"))
    assert (
        narrowed
        == "cce-relevance run 'eval/a b.jsonl' --backend hybrid,bm25 --golden a.golden.json --update-golden"
    )
