"""The Action's verdict, gates and Markdown, from hand-made run reports (no git, no indexing)."""

from __future__ import annotations

import json
import re

import pytest

from cce_relevance.action.report.document import action_document
from cce_relevance.action.report.fit import fit_body
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.report.summary import render
from cce_relevance.action.runner.pr_comment import COMMENT_LIMIT, comment_marker
from cce_relevance.action.scoring.model import ComparedSet
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.errors import EXIT_GATE_FAILED, EXIT_OK
from cce_relevance.evaluation.golden import GoldenCheck, update_command
from cce_relevance.evaluation.validation import AnchorFinding, Validation
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
    head_mrr: list[float],
    *,
    golden: GoldenCheck | None = None,
    fixture: str = "eval/a.jsonl",
    primary: str = "mrr",
) -> ComparedSet:
    return ComparedSet(fixture, report([1.0] * len(head_mrr)), report(head_mrr), golden, primary)


def verdict(*sets: ComparedSet, metric: str = "mrr") -> str:
    return Outcome(sets, metric, 0.05).verdict()


DRIFT = GoldenCheck("eval/a.golden.json", "--- a\n+++ b\n@@ -1 +1 @@\n-1\n+2\n", "cce-relevance run ...")
MATCH = GoldenCheck("eval/a.golden.json", "", "cce-relevance run ...")


def test_a_significant_regression_is_named_and_gates_only_when_asked() -> None:
    outcome = Outcome((paired(SIGNIFICANTLY_WORSE, golden=MATCH),), "mrr", 0.05)

    assert re.fullmatch(
        r"⚠️ MRR on hybrid -0\.500 \(paired t-test, n = 6: significantly worse, "
        r"p = [0-9.e-]+ < 0\.05\); goldens match",
        outcome.verdict(),
    )
    assert [outcome.gate_failed(f) for f in ("drift", "regression", "none")] == [False, True, False]
    codes = [Outcome(outcome.sets, "mrr", 0.05, f).exit_code for f in ("drift", "regression", "none")]
    assert codes == [EXIT_OK, EXIT_GATE_FAILED, EXIT_OK]


def test_drift_comes_first_and_gates_unless_none() -> None:
    outcome = Outcome((paired(SIGNIFICANTLY_WORSE, golden=DRIFT),), "mrr", 0.05)

    assert outcome.verdict().startswith(
        "❌ Golden drift in 1 report; MRR on hybrid -0.500 (paired t-test, n = 6: significantly worse"
    )
    assert Outcome(outcome.sets, "mrr", 0.05, "none").verdict().startswith("⚠️ Golden drift")  # no ❌: passes
    assert [outcome.gate_failed(f) for f in ("drift", "regression", "none")] == [True, True, False]


def test_an_insignificant_change_is_reported_with_its_p_value() -> None:
    assert verdict(paired([1.0, 1.0, 0.5, 1.0], golden=MATCH)) == (
        "✅ MRR on hybrid -0.125 (paired t-test, n = 4: p = 0.391, not significant); goldens match"
    )


def test_a_significant_improvement_is_not_a_regression() -> None:
    base_low = ComparedSet(
        "eval/a.jsonl", report([0.2] * 6), report([1.0 - x for x in SIGNIFICANTLY_WORSE]), None
    )
    outcome = Outcome((base_low,), "mrr", 0.05)

    assert outcome.regressions == ()
    assert outcome.verdict().endswith(", significant)") and outcome.verdict().startswith("✅ MRR on hybrid +")


def test_unchanged_and_head_only_verdicts() -> None:
    assert verdict(paired([1.0, 1.0])) == "✅ MRR unchanged on hybrid (n = 2)"
    assert (
        verdict(paired([1.0, 1.0], primary="recall"), metric="recall")
        == "✅ Recall unchanged on hybrid (n = 2)"
    )
    head_only = ComparedSet("eval/a.jsonl", None, report([1.0]), None)
    assert verdict(head_only) == "✅ No set scored at both base and head, nothing to compare"


def test_the_largest_change_of_several_sets_says_so() -> None:
    text = verdict(paired([1.0, 0.9]), paired([1.0, 0.5], fixture="eval/b.jsonl"))
    assert text == "✅ MRR on hybrid in eval/b.jsonl -0.250 (paired t-test, n = 2: p = 0.5, not significant)"


def test_untrusted_names_cannot_ping_inject_html_or_break_the_fences() -> None:
    fixture = "eval/@team <img src=x> `x`.jsonl"
    path = "g/$(touch pwned).json"
    golden = GoldenCheck(
        path, "--- g\n+++ h\n-````\n+ok @someone\n", update_command(fixture, path, ("bm25",))
    )
    set_result = ComparedSet(
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
        "cce-relevance run 'eval/@team <img src=x> `x`.jsonl' --backend bm25 "
        "--golden 'g/$(touch pwned).json' "
        "--update-golden" in markdown
    )
    assert "`````diff\n--- g\n+++ h\n-````\n+ok @someone\n`````" in markdown  # a fence the diff cannot close


def test_a_huge_diff_is_trimmed_but_the_verdict_and_footer_survive() -> None:
    diff = "".join(f"-line {i}\n+line {i}!\n" for i in range(20_000))
    outcome = Outcome(
        (paired([1.0, 0.5], golden=GoldenCheck("g.json", diff, "cce-relevance run ...")),), "mrr", 0.05
    )
    markdown = render(
        outcome, outcome.verdict(), CommitPair(BASE, HEAD), comment_marker(), "[run](https://x/run)"
    )

    body = fit_body(markdown.head, list(markdown.sections), markdown.tail)

    assert len(markdown.whole()) > COMMENT_LIMIT >= len(body)
    assert outcome.verdict().split(";")[0] in body and "Detail truncated" in body
    assert body.endswith(f"head `{HEAD[:7]}` · cce-relevance 0.1.0 · [run](https://x/run)</sub>")
    assert body.count("```") % 2 == 0  # every fence opened is closed


@pytest.mark.parametrize("base", [None, BASE])
def test_the_footer_names_both_commits(base: str | None) -> None:
    outcome = Outcome((ComparedSet("e.jsonl", None, report([1.0]), None),), "mrr", 0.05)
    tail = render(outcome, outcome.verdict(), CommitPair(base, HEAD), comment_marker(), None).tail
    assert tail == f"<sub>base {'`aaaaaaa`' if base else 'none'} → head `bbbbbbb` · cce-relevance 0.1.0</sub>"


def test_the_update_command_names_the_backends_only_when_they_are_not_the_default() -> None:
    default = update_command("eval/a.jsonl", "a.golden.json", ("bm25", "vector", "hybrid"))
    assert default == "cce-relevance run eval/a.jsonl --golden a.golden.json --update-golden"
    narrowed = update_command("eval/a b.jsonl", "a.golden.json", ("hybrid", "bm25"))
    assert (
        narrowed
        == "cce-relevance run 'eval/a b.jsonl' --backend hybrid,bm25 --golden a.golden.json --update-golden"
    )


# --- stale anchors and the chart ---------------------------------------------------------------

HOSTILE_ID = "@admin <b>x</b> #12 | ```"


def anchors(*stale: tuple[str, str, str, int], unsatisfiable: tuple[str, ...] = ()) -> Validation:
    """A hand-made `validate` result: (query id, anchor, reason, fixture line) per stale anchor."""
    findings = [
        AnchorFinding(code, line, qid, anchor, f"{anchor} resolves to nothing")
        for qid, anchor, code, line in stale
    ]
    findings += [AnchorFinding("unsatisfiable", 0, qid, None, "no anchor resolves") for qid in unsatisfiable]
    return Validation("eval/a.jsonl", "corpus", 6, 6, tuple(findings))


def stale_set(
    head_mrr: list[float], ids: list[str], *, base: Validation | None = None, head: Validation | None = None
) -> ComparedSet:
    return ComparedSet(
        "eval/a.jsonl",
        report([1.0] * len(ids), ids=ids),
        report(head_mrr, ids=ids),
        None,
        base_anchors=base or anchors(),
        head_anchors=head or anchors(),
    )


def whole(outcome: Outcome) -> str:
    return render(outcome, outcome.verdict(), CommitPair(BASE, HEAD), comment_marker(), None).whole()


def test_queries_with_a_stale_anchor_are_left_out_of_the_regression_test() -> None:
    ids = [f"q{i}" for i in range(6)]
    # every drop is a renamed file: stale at head; without them nothing changed
    stale = anchors(*((qid, "billing.py", "missing-file", 2 + i) for i, qid in enumerate(ids[:4])))
    outcome = Outcome((stale_set([0.0] * 4 + [1.0, 1.0], ids, head=stale),), "mrr", 0.05)
    unexcused = Outcome((stale_set([0.0] * 4 + [1.0, 1.0], ids),), "mrr", 0.05)

    assert [f.significant_regression for f in unexcused.findings] == [True]  # the same drop, not stale
    assert outcome.regressions == () and not outcome.gate_failed("regression")
    [finding] = outcome.findings
    assert (finding.test.n, finding.left_out) == (2, 4)
    assert outcome.verdict() == (
        "⚠️ MRR unchanged on hybrid (n = 2, 4 queries with a stale anchor left out); 4 stale anchors at head"
    )


def test_a_regression_among_the_other_queries_still_fails_and_says_what_was_left_out() -> None:
    ids = [f"q{i}" for i in range(8)]
    outcome = Outcome(
        (stale_set([0.0, 0.0, *SIGNIFICANTLY_WORSE], ids, head=anchors(("q0", "a.py", "missing-file", 2))),),
        "mrr",
        0.05,
    )

    [finding] = outcome.regressions
    assert (finding.test.n, finding.left_out) == (7, 1) and outcome.gate_failed("regression")
    assert outcome.verdict().startswith(
        "⚠️ MRR on hybrid -0.571 (paired t-test, n = 7, 1 query with a stale anchor "
        "left out: significantly worse, p = "
    )
    assert outcome.verdict().endswith("; 1 stale anchor at head")


def test_a_query_stale_only_at_base_is_left_out_but_is_no_warning() -> None:
    ids = ["q0", "q1"]
    outcome = Outcome(
        (stale_set([1.0, 1.0], ids, base=anchors(("q1", "a.py@9-12", "range-past-end", 3))),), "mrr", 0.05
    )

    assert outcome.verdict() == ("✅ MRR unchanged on hybrid (n = 1, 1 query with a stale anchor left out)")
    assert "| `q1` ⚠️ stale anchor at base |" in whole(outcome)


def test_stale_anchors_are_listed_per_side_and_marked_in_the_delta_tables() -> None:
    ids = [HOSTILE_ID, "q1", "q2"]
    head = anchors(
        (HOSTILE_ID, "@team/x.py#fn@1-2", "missing-file", 2),
        ("q1", "b.py#class", "missing-kind", 3),
        unsatisfiable=(HOSTILE_ID,),
    )
    base = anchors(("q1", "b.py#class", "missing-kind", 3), ("q2", "c.py@40-50", "no-chunk-in-range", 4))
    markdown = whole(Outcome((stale_set([0.0, 1.0, 1.0], ids, base=base, head=head),), "mrr", 0.05))

    assert "#### ⚠️ Stale anchors" in markdown
    rows = [
        f"| {code_span(HOSTILE_ID, in_table=True)} | `@team/x.py#fn@1-2` | — | missing-file |",
        "| `q1` | `b.py#class` | missing-kind | missing-kind |",
        "| `q2` | `c.py@40-50` | no-chunk-in-range | — |",
    ]
    assert "\n".join(rows) in markdown  # head's findings first, then those only at base
    assert "At head, 1 query has no anchor that resolves, so every backend scores it 0." in markdown
    assert (
        f"| {code_span(HOSTILE_ID, in_table=True)} ⚠️ stale anchor "
        "| +0.000000 | +0.000000 | **-1.000000** 🔴 |" in markdown
    )
    assert "| `q2` ⚠️ stale anchor at base | +0.000000 |" in markdown
    assert_nothing_live(markdown, [HOSTILE_ID, "@team/x.py#fn@1-2"])


def assert_nothing_live(markdown: str, untrusted: list[str]) -> None:
    """Outside code spans and blocks, no HTML, mention or issue reference from `untrusted` is live;
    a table row has exactly the cells it was built with."""
    outside_code = re.sub(r"\n(`{3,})\w*\n.*?\n\1\n", "\n", markdown + "\n", flags=re.S)
    for text in untrusted:
        outside_code = outside_code.replace(code_span(text, in_table=True), "").replace(code_span(text), "")
    assert "<b>" not in outside_code and re.findall(r"@(?:admin|team)|#12", outside_code) == []
    for line in markdown.splitlines():
        if line.startswith("| query | anchor |"):
            assert line.count(" | ") == 3


def test_a_set_scored_on_one_side_lists_its_stale_anchors_there() -> None:
    head_only = ComparedSet(
        "eval/a.jsonl",
        None,
        report([0.0], ids=["q0"]),
        None,
        head_anchors=anchors(("q0", "gone.py", "missing-file", 2)),
    )
    markdown = whole(Outcome((head_only,), "mrr", 0.05))

    assert "| `q0` | `gone.py` | not scored | missing-file |" in markdown
    assert "regression test" not in markdown  # there is none without a base


def test_no_stale_anchor_no_section_and_the_same_verdict() -> None:
    ids = ["q0", "q1", "q2", "q3"]
    outcome = Outcome((stale_set([1.0, 1.0, 0.5, 1.0], ids),), "mrr", 0.05)
    assert "Stale anchors" not in whole(outcome) and "⚠️" not in whole(outcome)
    assert outcome.verdict() == "✅ MRR on hybrid -0.125 (paired t-test, n = 4: p = 0.391, not significant)"


def two_backends(head_mrr: list[float], ids: list[str]) -> ComparedSet:
    """bm25 unchanged, hybrid at `head_mrr` (both from 1.0): the chart must show hybrid, the last."""

    def doc(hybrid: list[float]) -> str:
        a, b = json.loads(report([1.0] * len(ids), "bm25", ids)), json.loads(report(hybrid, "hybrid", ids))
        return json.dumps({**a, "backends": a["backends"] + b["backends"]})

    return ComparedSet("eval/a.jsonl", doc([1.0] * len(ids)), doc(head_mrr), None)


def test_the_action_document_carries_the_anchor_checks() -> None:
    ids = ["q0", "q1"]
    head = anchors(("q1", "a.py", "missing-file", 3))
    outcome = Outcome((stale_set([1.0, 0.0], ids, head=head),), "mrr", 0.05)

    [entry] = action_document(outcome, outcome.verdict(), CommitPair(BASE, HEAD), {})["sets"]

    assert entry["stale_queries"] == ["q1"]
    assert entry["validate"]["base"]["ok"] is True
    assert [(p["code"], p["id"], p["line"]) for p in entry["validate"]["head"]["problems"]] == [
        ("missing-file", "q1", 3)
    ]


def test_a_query_renamed_between_the_sides_is_listed_as_removed_and_new() -> None:
    renamed = ComparedSet("eval/a.jsonl", report([1.0], ids=["old-id"]), report([1.0], ids=["new-id"]), None)
    markdown = whole(Outcome((renamed,), "mrr", 0.05))
    assert "| `old-id` | removed in head |" in markdown and "```mermaid" not in markdown


def test_the_full_report_gives_the_statistics_legend_once() -> None:
    sets = tuple(paired([1.0, 0.5, 1.0], fixture=f"eval/{n}.jsonl") for n in "abc")
    text = whole(Outcome(sets, "mrr", 0.05))
    assert text.count("d_z = mean Δ / sd of Δ") == 1 and text.count("Beyond the t-test") == 3


UNDERPOWERED = [1.0] * 14 + [0.5, 1.0, 0.5, 0.75, 1.0, 0.9]  # from 1.0 each: a few queries moved


def test_an_underpowered_set_is_inconclusive_by_statsmodels_number() -> None:
    """No significant change over 20 queries; the smallest mean delta the test detects at 80%
    power is statsmodels' `TTestPower` effect size times the deltas' sd, and the verdict says it."""
    import numpy as np
    from statsmodels.stats.power import TTestPower

    s = paired(UNDERPOWERED, golden=MATCH)
    outcome = Outcome((s,), "mrr", 0.05, "regression", min_effect=0.05, power=0.8)
    deltas = [h - 1.0 for h in UNDERPOWERED]
    effect = float(np.asarray(TTestPower().solve_power(None, 20, 0.05, 0.8, alternative="two-sided")).item())
    expected = effect * float(np.std(deltas, ddof=1))
    [finding] = outcome.inconclusive
    assert finding.detectable == pytest.approx(expected, rel=1e-5)
    assert outcome.verdict() == (
        "⚠️ MRR on hybrid -0.068 (paired t-test, n = 20: p = 0.0732, not significant); inconclusive: "
        f"with n = 20 this set detects only ΔMRR ≥ {expected:.3f} at 80% power (min-detectable-effect "
        "0.05); goldens match"
    )
    assert [outcome.gate_failed(f) for f in ("drift", "regression", "inconclusive", "none")] == [
        False,
        False,
        True,
        False,
    ]
    needed = finding.needed
    assert needed is not None and needed > 20
    sd = float(np.std(deltas, ddof=1))
    power = TTestPower()
    assert power.power(0.05 / sd, needed, 0.05, alternative="two-sided") >= 0.8
    assert power.power(0.05 / sd, needed - 1, 0.05, alternative="two-sided") < 0.8  # the fewest


def test_inconclusive_needs_the_threshold_and_a_big_enough_set_is_not() -> None:
    s = paired(UNDERPOWERED, golden=MATCH)
    assert Outcome((s,), "mrr", 0.05).inconclusive == ()  # off by default
    [finding] = Outcome((s,), "mrr", 0.05, min_effect=0.05).findings
    assert finding.detectable is not None
    assert Outcome((s,), "mrr", 0.05, min_effect=finding.detectable + 1e-6).inconclusive == ()
    worse = Outcome((paired(SIGNIFICANTLY_WORSE),), "mrr", 0.05, "inconclusive", min_effect=0.01)
    assert worse.inconclusive == () and worse.gate_failed()  # a significant regression fails as such
    higher = Outcome((s,), "mrr", 0.05, min_effect=0.05, power=0.95).findings[0]
    assert higher.detectable is not None and higher.detectable > finding.detectable


def test_the_inconclusive_note_says_what_would_settle_it() -> None:
    s = paired(UNDERPOWERED, golden=MATCH)
    outcome = Outcome((s,), "mrr", 0.05, "inconclusive", min_effect=0.05)
    markdown = render(outcome, outcome.verdict(), CommitPair(BASE, HEAD), comment_marker(None), None)
    [finding] = outcome.inconclusive
    assert (
        f"⚖️ **Inconclusive**: no significant change of MRR on `hybrid`, but with these 20 queries and "
        f"their spread it detects only changes of at least {finding.detectable:.3f} at 80% power; "
        f"`min-detectable-effect` is 0.05, so a real change of that size could pass unseen. About "
        f"{finding.needed} queries of this spread would detect 0.05."
    ) in markdown.head
    assert outcome.verdict().startswith("❌")
