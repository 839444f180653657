"""The comment as GitHub renders it (cmarkgfm, GitHub's cmark-gfm): hostile fixture text stays
text, every table row has its header's cells, every <details> is closed, no summary shows a
Markdown escape."""

from __future__ import annotations

import json
import re

import cmarkgfm
from cmarkgfm.cmark import Options

from cce_relevance.action.report.comment_body import render_comment
from cce_relevance.action.report.fit import fit_body
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.report.query_changes import Links
from cce_relevance.action.runner.pr_comment import comment_marker
from cce_relevance.action.scoring.model import ComparedSet
from cce_relevance.action.workspace.git import CommitPair
from cce_relevance.reporting.numbers import format6

HOSTILE = ["<!-- cce-relevance:v1 -->", "@admin <img src=x> #12", "a|b `c` **d**", "x" * 300]


def report(mrr: list[float], ids: list[str]) -> str:
    fixed = {"precision_at_k": "0.200000", "recall": "1.000000", "f1": "0.333333"}
    per_query = [
        {"id": q, "mrr": format6(v), "first_relevant_rank": 1 if v else None, **fixed}
        for q, v in zip(ids, mrr, strict=True)
    ]
    entry = {"backend": "hybrid", "mrr": format6(sum(mrr) / len(mrr)), "per_query": per_query, **fixed}
    return json.dumps({"schema": "cce.relevance.report/v2", "backends": [entry]})


def rendered(body: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(body, options=Options.CMARK_OPT_UNSAFE)


Latency = dict[str, tuple[float, float]]


def comment(ids: list[str], head: list[float], limit: int = 65_536, latency: Latency | None = None) -> str:
    base = report([1.0] * len(ids), ids)
    s = ComparedSet("eval/a.jsonl", base, report(head, ids), None, latency=latency or {})
    outcome = Outcome((s,), "mrr", 0.05)
    md = render_comment(
        outcome,
        outcome.verdict(),
        CommitPair("a" * 40, "b" * 40),
        comment_marker("k"),
        links=Links("https://github.example", "octo/demo", "a" * 40, "b" * 40),
        run_link=None,
    )
    return fit_body(md.head, list(md.sections), md.tail, limit)


def check(html: str) -> None:
    assert html.count("<details>") == html.count("</details>")
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):
        header = len(re.findall(r"<th\b", table.split("</thead>")[0]))
        for row in re.findall(r"<tr>.*?</tr>", table.split("</thead>")[1], flags=re.S):
            assert len(re.findall(r"<td\b", row)) == header
    for summary in re.findall(r"<summary>(.*?)</summary>", html):
        assert "\\" not in summary


def test_hostile_ids_render_as_text_and_cannot_forge_the_marker() -> None:
    body = comment(HOSTILE, [0.0, 1.0, 0.5, 0.0])
    html = rendered(body)
    check(html)
    assert (
        "<img" not in html and "<!-- cce-relevance:v1 -->" not in html.replace("&lt;", "<").split("\n", 1)[0]
    )
    assert body.startswith(comment_marker("k") + "\n") and body.count(comment_marker("k")) == 1
    assert "x" * 39 + "…" in body and "x" * 41 not in body  # a long id is cut with an ellipsis
    assert not re.search(r"@admin(?!&#8203;|\u200b)", re.sub(r"<code>.*?</code>", "", html))


def test_a_trimmed_comment_keeps_its_tables_whole() -> None:
    ids = [f"query-{i:03d}" for i in range(400)]
    head = [0.5 if i % 3 else 1.0 for i in range(400)]
    whole = comment(ids, head)
    for limit in (3000, 4000, 6000, 9000):
        body = comment(ids, head, limit)
        assert len(body) <= limit < len(whole)
        check(rendered(body))
        lines = body.split("\n")
        for i, line in enumerate(lines):  # a table header is never cut from its delimiter row
            if line.startswith("| query |"):
                assert i + 1 < len(lines) and lines[i + 1].startswith("| --- |")


def test_plurals_and_bars() -> None:
    body = comment(["q0", "q1"], [1.0, 0.0])
    assert "1 query unchanged on every backend is not listed." in body
    assert "**1 changed query**" in body and "`████████│········`" in body


def test_the_cost_column_renders_as_one_more_cell_of_the_means_table() -> None:
    ids = ["q1", "q2", "q3"]
    body = comment(ids, [0.0, 1.0, 0.5], latency={"hybrid": (0.41, 12.5)})
    html = rendered(body)
    check(html)
    means = next(t for t in re.findall(r"<table>.*?</table>", html, flags=re.S) if "p50 ms" in t)
    assert re.findall(r"<th\b[^>]*>([^<]*)</th>", means)[-1] == "p50 ms"
    assert '<td align="right">0.41→12.50</td>' in means
    assert "p50 ms" not in comment(ids, [0.0, 1.0, 0.5])  # without the input, no column
