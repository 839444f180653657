"""Rendered pull request comments for six scenarios, kept as files and checked as GitHub renders them.

Each scenario is built from run reports, top hits and anchor checks made by hand (no git, no
indexing), rendered and fitted exactly as the Action posts it, and compared byte for byte with
`tests/action/comments/NAME.md`. The files change only with `pytest --update-goldens`, so a change
of the comment shows up in review as a diff of what a reader sees. Every golden is also rendered
with cmarkgfm (GitHub's cmark-gfm): each table row has its header's cells, every `<details>` is
closed, no summary shows a Markdown escape, and nothing from fixture text becomes HTML.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from cce_relevance.action.report.comment_body import render_comment
from cce_relevance.action.report.fit import fit_body
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.report.query_changes import Links
from cce_relevance.action.runner.pr_comment import COMMENT_LIMIT, comment_marker
from cce_relevance.action.scoring.model import ComparedSet
from cce_relevance.action.trend.history import Entry, History, commit_date
from cce_relevance.action.trend.record import render_trend, with_trend
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.evaluation.anchors import parse_anchor
from cce_relevance.evaluation.golden import GoldenCheck
from cce_relevance.evaluation.set_scoring import TopHit
from cce_relevance.evaluation.validation import AnchorFinding, Validation
from cce_relevance.reporting.canonical_json import dumps_report
from cce_relevance.reporting.numbers import format6

GOLDENS = Path(__file__).with_name("comments")
BASE, HEAD = "1" * 40, "2" * 40
LINKS = Links("https://github.example", "octo/demo", BASE, HEAD)
BACKENDS = ("bm25", "vector", "hybrid")
HOSTILE_IDS = ["<!-- cce-relevance:v1 -->", "@admin <img src=x> #12", "a|b `c` **d**", "x" * 300]


def _query(qid: str, rank: int | None) -> dict[str, object]:
    mrr = 0.0 if rank is None else 1.0 / rank
    hit = 0.0 if rank is None else 1.0
    return {
        "f1": format6(hit / 2),
        "first_relevant_rank": rank,
        "id": qid,
        "k": 3,
        "mrr": format6(mrr),
        "precision_at_k": format6(hit / 3),
        "recall": format6(hit),
    }


def _report(ranks: dict[str, dict[str, int | None]]) -> str:
    """A `cce.relevance.report/v2` text: backend → query id → first relevant rank."""
    backends = []
    for name, by_query in ranks.items():
        queries = [_query(qid, rank) for qid, rank in by_query.items()]
        means = {
            key: format6(sum(float(q[key]) for q in queries) / len(queries))  # type: ignore[arg-type]
            for key in ("f1", "mrr", "precision_at_k", "recall")
        }
        backends.append({"backend": name, **means, "per_query": queries})
    return dumps_report(
        {
            "backends": backends,
            "corpus": "../corpus",
            "embedder": "hash-v1",
            "queries": len(next(iter(ranks.values()))),
            "schema": "cce.relevance.report/v2",
        }
    )


def _hits(rank: int | None, expected: str, intruder: str, unlabeled: bool = False) -> tuple[TopHit, ...]:
    """Three hits: the expected file at `rank` (or nowhere), `intruder` chunks above it (which no
    anchor of the case names when `unlabeled`; else a reviewer judged them not relevant)."""
    hits, position = [], 1
    for slot in range(1, 4):
        if slot == rank:
            hits.append(TopHit(slot, expected, 1, 4, "function_definition", True))
        else:
            hits.append(
                TopHit(
                    slot,
                    intruder,
                    10 * position,
                    10 * position + 5,
                    "function_definition",
                    False,
                    f"InvoiceReport.total_{position}",
                    unlabeled=unlabeled,
                )
            )
            position += 1
    return tuple(hits)


def _set(
    base: dict[str, int | None],
    head: dict[str, int | None],
    *,
    fixture: str = "eval/search.jsonl",
    golden: GoldenCheck | None = None,
    stale: tuple[str, ...] = (),
    worse_on: tuple[str, ...] = BACKENDS,
    unlabeled: bool = False,
) -> ComparedSet:
    """One set: every backend ranks as `base` at base; at head the backends in `worse_on` rank as `head`."""
    base_ranks = {b: dict(base) for b in BACKENDS}
    head_ranks = {b: dict(head) if b in worse_on else dict(base) for b in BACKENDS}
    anchors = {qid: (parse_anchor("billing.py#function_definition@1-4"),) for qid in base}
    findings = tuple(
        AnchorFinding(
            "missing-file",
            2 + i,
            qid,
            "billing.py#function_definition@1-4",
            "billing.py: no such file in the corpus",
        )
        for i, qid in enumerate(stale)
    )

    def rankings(ranks: dict[str, dict[str, int | None]]) -> dict[str, dict[str, tuple[TopHit, ...]]]:
        return {
            b: {q: _hits(r, "billing.py", "reports.py", unlabeled) for q, r in by.items()}
            for b, by in ranks.items()
        }

    return ComparedSet(
        fixture,
        _report(base_ranks),
        _report(head_ranks),
        golden,
        base_anchors=Validation(fixture, "corpus", len(base), len(base), ()),
        head_anchors=Validation(fixture, "corpus", len(base), len(base), findings),
        base_rankings=rankings(base_ranks),
        head_rankings=rankings(head_ranks),
        corpus="corpus",
        anchors=anchors,
    )


def _drifted(s: ComparedSet) -> ComparedSet:
    assert s.base is not None and s.head is not None
    golden = GoldenCheck(
        "eval/search.golden.json",
        "--- golden\n+++ head\n(see the keyed diff)\n",
        "cce-relevance run eval/search.jsonl --golden eval/search.golden.json --update-golden",
        s.base,
        s.head,
    )
    return ComparedSet(
        s.fixture,
        s.base,
        s.head,
        golden,
        base_anchors=s.base_anchors,
        head_anchors=s.head_anchors,
        base_rankings=s.base_rankings,
        head_rankings=s.head_rankings,
        corpus=s.corpus,
        anchors=s.anchors,
    )


FIVE = {"invoice-total": 1, "record-shipment": 1, "password-check": 1, "lru-evict": 2, "format-price": 1}
# 20 queries of which three moved, two a little worse and one better: no significant change, and
# a set this size and this noisy detects only much larger ones (the inconclusive scenario).
TWENTY = {f"query-{i:02d}": 1 for i in range(20)}
UNDERPOWERED = (
    {**TWENTY, "query-17": 2},
    {**TWENTY, "query-03": 2, "query-11": 3},
)


def scenario(name: str) -> tuple[Outcome, int]:
    if name == "small-drift":
        s = _drifted(_set(FIVE, {**FIVE, "invoice-total": 3, "lru-evict": 1}))
        return Outcome((s,), "mrr", 0.05, "drift"), COMMENT_LIMIT
    if name == "no-change":
        return Outcome((_set(FIVE, FIVE),), "mrr", 0.05, "drift"), COMMENT_LIMIT
    if name == "stale-anchors":
        six = {**FIVE, "price-format": 1}
        gone = ("invoice-total", "format-price", "price-format")
        s = _set(six, {**six, **dict.fromkeys(gone, None)}, stale=gone)
        return Outcome((s,), "mrr", 0.05, "regression"), COMMENT_LIMIT
    if name == "large-trimmed":
        many = {f"query-{i:03d}-{'y' * 30}": 1 for i in range(400)}
        worse = {q: (3 if i % 2 else None) for i, q in enumerate(many)}
        return Outcome((_drifted(_set(many, worse)),), "mrr", 0.05, "drift"), 12_000
    if name == "trend":
        return Outcome(
            (_set(FIVE, {**FIVE, "invoice-total": 2}, worse_on=("bm25",)),), "mrr", 0.05, "drift"
        ), COMMENT_LIMIT
    if name == "unlabeled-hit":
        s = _set(FIVE, {**FIVE, "invoice-total": 3, "password-check": None}, unlabeled=True)
        return Outcome((s,), "mrr", 0.05, "regression"), COMMENT_LIMIT
    if name == "inconclusive":
        return Outcome((_set(*UNDERPOWERED),), "mrr", 0.05, "inconclusive", 0.05, 0.8), COMMENT_LIMIT
    if name == "hostile":
        ids = dict.fromkeys(HOSTILE_IDS, 1)
        s = _set(ids, {**ids, HOSTILE_IDS[0]: 3, HOSTILE_IDS[3]: None}, fixture="eval/@team <b>x</b>.jsonl")
        return Outcome((s,), "mrr", 0.05, "none"), COMMENT_LIMIT
    raise AssertionError(name)


SCENARIOS = [
    "small-drift",
    "no-change",
    "stale-anchors",
    "large-trimmed",
    "hostile",
    "trend",
    "unlabeled-hit",
    "inconclusive",
]


def trend_history() -> History:
    """25 pushes to main, a day apart: bm25's MRR climbs with some noise from 0.82 to 0.900, the
    pull request's base, the last push (the line shows the last 20, and the head's 0.800 below them)."""
    entries = []
    for day in range(25):
        mrr = 0.82 + 0.08 * day / 24 - 0.006 * ((day * 5) % 3) * (day < 24)
        means = {"eval/search.jsonl": {"bm25": {"mrr": round(mrr, 6), "f1": 0.5}, "vector": {"mrr": 0.7}}}
        entries.append(Entry(f"{day:040x}", commit_date(1_706_781_600 + 86_400 * day), "0.1.0", means))
    return History("main", tuple(entries))


def rendered_comment(name: str, history: History | None = None) -> str:
    """The comment of scenario `name` as posted; with the trend line of `history` (the trend
    scenario's own by default)."""
    outcome, limit = scenario(name)
    markdown = render_comment(
        outcome,
        outcome.verdict(),
        CommitPair(BASE, HEAD),
        comment_marker("auto-0123456789ab"),
        links=LINKS,
        run_link="[job `relevance` of run 42](https://github.example/run/42)",
        edited=("eval/search.golden.json",) if name == "small-drift" else (),
    )
    history = trend_history() if history is None and name == "trend" else history
    if history is not None:
        markdown = with_trend(markdown, render_trend(history, outcome))
    return (
        fit_body(
            markdown.head,
            list(markdown.sections),
            markdown.tail,
            limit,
            full_report="[the job summary](https://github.example/run/42)",
        )
        + "\n"
    )


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_rendered_comment_matches_its_golden(name: str, update_goldens: bool) -> None:
    body = rendered_comment(name)
    path = GOLDENS / f"{name}.md"
    if update_goldens:
        GOLDENS.mkdir(exist_ok=True)
        path.write_text(body, encoding="utf-8", newline="")
    assert path.read_text(encoding="utf-8") == body, (
        f"{path} differs; rerun with --update-goldens if intended"
    )


def gfm(body: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)


@pytest.mark.parametrize("name", SCENARIOS)
def test_each_golden_renders_as_github_would(name: str) -> None:
    body = (GOLDENS / f"{name}.md").read_text(encoding="utf-8")
    html = gfm(body)
    assert (
        html.count("<details>") == html.count("</details>") and "</details>" not in html.split("<details>")[0]
    )
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        head, rows = table.split("</thead>")
        width = len(re.findall(r"<th\b", head))
        assert all(
            len(re.findall(r"<td\b", row)) == width for row in re.findall(r"<tr>.*?</tr>", rows, flags=re.S)
        )
    for summary in re.findall(r"<summary>(.*?)</summary>", html, flags=re.S):
        assert "\\" not in summary
    # The only raw HTML is ours: the marker, folds, <sub>; fixture text never becomes a tag.
    assert set(re.findall(r"<(/?[a-z0-9]+)", html)) <= {
        "h2",
        "/h2",
        "p",
        "/p",
        "strong",
        "/strong",
        "code",
        "/code",
        "pre",
        "/pre",
        "table",
        "/table",
        "thead",
        "/thead",
        "tbody",
        "/tbody",
        "tr",
        "/tr",
        "th",
        "/th",
        "td",
        "/td",
        "details",
        "/details",
        "summary",
        "/summary",
        "sub",
        "/sub",
        "a",
        "/a",
        "em",
        "/em",
        "h3",
        "/h3",
        "h4",
        "/h4",
        "blockquote",
        "/blockquote",
    }
    assert body.startswith(comment_marker("auto-0123456789ab") + "\n")
    assert html.count("<!--") == 1  # the marker, and no other HTML comment (a forged marker is text)
    assert len(body) <= COMMENT_LIMIT


def test_the_small_drift_comment_answers_which_how_much_and_why() -> None:
    body = (GOLDENS / "small-drift.md").read_text(encoding="utf-8")
    first_screen = body.split("**Statistics**")[0]
    row = next(line for line in first_screen.splitlines() if line.startswith("| `invoice-total` |"))
    assert row.startswith("| `invoice-total` | 1 → 3 | 1 → 3 | 1 → 3 | **-0.667** 🔴 | `···█████│········` |")
    assert (
        f"[`reports.py:10-15`](https://github.example/octo/demo/blob/{HEAD}/corpus/reports.py#L10-L15) "
        "`function_definition` `InvoiceReport.total_1` (+1 more) above it" in row
    )
    lines = first_screen.splitlines()
    assert lines.index(row) < lines.index(
        next(x for x in lines if x.startswith("| `lru-evict` |"))
    )  # worst first
    assert "--update-golden" in first_screen and "✏️ This pull request edits `eval/search.golden.json`" in body


def test_nothing_changed_is_three_lines_and_a_footer() -> None:
    body = (GOLDENS / "no-change.md").read_text(encoding="utf-8")
    assert (
        body.count("\n") <= 8
        and "<table" not in gfm(body)
        and "MRR unchanged on every backend (n = 5)" in gfm(body)
    )


def test_the_verdict_agrees_with_the_statistics_and_the_json() -> None:
    outcome, _ = scenario("stale-anchors")
    body = (GOLDENS / "stale-anchors.md").read_text(encoding="utf-8")
    headline = outcome.headline
    assert headline is not None and headline.test.n == 3 and headline.left_out == 3
    assert "n = 3, 3 queries with a stale anchor left out" in body  # the verdict
    assert (
        "the verdict's test (3 queries, leaving out 3 queries with a stale anchor)" in body
    )  # the statistics
    assert re.search(r"\n\| 3 \| \+0\.000 \|", body)  # its n and mean delta
    s = outcome.sets[0]
    compare = json.loads(s.head or "{}")
    assert len(compare["backends"][0]["per_query"]) == 6  # the JSON keeps every query; the comment says so
    assert "Means over all 6 queries" in body and "leaves out the 3 with a stale anchor" in body


def test_the_unlabeled_hit_and_inconclusive_comments_say_so_on_the_first_screen() -> None:
    unlabeled = (GOLDENS / "unlabeled-hit.md").read_text(encoding="utf-8").split("**Statistics**")[0]
    assert "above it (all unlabeled: no anchor names them, they may be right answers)" in unlabeled
    assert "`InvoiceReport.total_1` (unlabeled: no anchor names it); expected not in the top k" in unlabeled
    inconclusive = (GOLDENS / "inconclusive.md").read_text(encoding="utf-8").split("**Statistics**")[0]
    assert inconclusive.startswith(
        comment_marker("auto-0123456789ab") + "\n## Retrieval relevance\n\n**❌ MRR on bm25 \\-0\\.033"
    )
    assert "inconclusive\\: with n = 20 this set detects only ΔMRR ≥ 0\\.146 at 80% power" in inconclusive
    assert "⚖️ **Inconclusive**: no significant change of MRR on `bm25`" in inconclusive


def test_the_why_cell_counts_the_unlabeled_hits_above_the_answer() -> None:
    from cce_relevance.action.report.query_changes import _unlabeled

    def hit(rank: int, unlabeled: bool) -> TopHit:
        return TopHit(rank, "a.py", rank, rank, "function_definition", False, unlabeled=unlabeled)

    assert _unlabeled([hit(1, False), hit(2, False)]) == ""  # judged not relevant, both
    assert _unlabeled([hit(1, True), hit(2, False), hit(3, True)]) == " (2 of 3 unlabeled)"
    assert _unlabeled([hit(1, True)]) == " (unlabeled: no anchor names it, it may be a right answer)"
