"""The trend line and the inputs behind it, without git: which push is recorded, what the line
says for a history (one push, a flat series, several sets, a history lacking the backend), and
that text from the history (the branch name) cannot become Markdown or HTML in the comment."""

from __future__ import annotations

import re
from pathlib import Path
from types import MappingProxyType

import pytest

from cce_relevance.action.config.inputs import DEFAULT_HISTORY_SIZE, GitHubContext
from cce_relevance.action.report.outcome import Outcome
from cce_relevance.action.trend.history import Entry, History
from cce_relevance.action.trend.record import TREND_POINTS, default_branch_push, render_trend
from cce_relevance.errors import CceError
from cce_relevance.reporting.markdown_safe import escape_md
from tests.action.test_comment_goldens import BACKENDS, FIVE, _set, gfm, rendered_comment
from tests.action.test_inputs import read


def outcome(*fixtures: str) -> Outcome:
    sets = tuple(_set(FIVE, {**FIVE, "invoice-total": 2}, fixture=f, worse_on=("bm25",)) for f in fixtures)
    return Outcome(sets or (_set(FIVE, {**FIVE, "invoice-total": 2}, worse_on=("bm25",)),), "mrr", 0.05)


def history(values: list[float], branch: str = "main", fixture: str = "eval/search.jsonl") -> History:
    return History(
        branch,
        tuple(
            Entry(f"{i:040x}", "2024-01-01T00:00:00Z", "0.1.0", {fixture: {"bm25": {"mrr": v}}})
            for i, v in enumerate(values)
        ),
    )


def test_one_push() -> None:
    line = render_trend(history([0.9]), outcome())
    assert line == "📈 Trend of MRR on `bm25` at `main` (the last push): ▄ latest 0.900 · this PR 0.800"


def test_a_flat_series_is_drawn_flat_without_a_range() -> None:
    line = render_trend(history([0.9] * 5), outcome())
    assert line == "📈 Trend of MRR on `bm25` at `main` (last 5 pushes): ▄▄▄▄▄ latest 0.900 · this PR 0.800"


def test_a_range_too_small_for_three_decimals_is_printed_with_six() -> None:
    line = render_trend(history([0.8001, 0.8004, 0.8002]), outcome())
    assert line == (
        "📈 Trend of MRR on `bm25` at `main` (last 3 pushes, 0.800100–0.800400): "
        "▁█▃ latest 0.800200 · this PR 0.800000"
    )


def test_only_the_last_pushes_are_drawn_and_scaled() -> None:
    values = [0.0] * 5 + [0.5 + i / 100 for i in range(TREND_POINTS)]
    line = render_trend(history(values), outcome())
    assert f"(last {TREND_POINTS} pushes, 0.500–0.690): ▁" in line and line.endswith(
        "█ latest 0.690 · this PR 0.800"
    )


def test_with_several_sets_the_line_names_the_set() -> None:
    two = outcome("eval/search.jsonl", "eval/other.jsonl")
    assert render_trend(history([0.9, 0.8]), two).startswith(
        "📈 Trend of MRR on `bm25` in `eval/search.jsonl` at `main` (last 2 pushes, 0.800–0.900): "
        "█▁ latest 0.800"
    )


def test_no_line_when_the_history_lacks_the_set_or_the_backend_or_is_empty() -> None:
    assert render_trend(history([]), outcome()) == ""
    assert render_trend(history([0.5], fixture="eval/renamed.jsonl"), outcome()) == ""
    assert render_trend(History("main", (Entry("a" * 40, "2024-01-01T00:00:00Z", "1", {}),)), outcome()) == ""


@pytest.mark.parametrize(
    "branch", ["<img src=x onerror=alert(1)>", "@admin #12 **x**", "a`b``c", "<!-- x -->"]
)
def test_the_branch_name_stays_text(branch: str) -> None:
    line = render_trend(history([0.9, 0.8], branch=branch), outcome())
    html = gfm(line)
    assert "<img" not in html and "<!--" not in html and "<strong>" not in html
    assert branch not in line and f" at {escape_md(branch)} (" in line  # raw in no byte, a span neither
    assert html.count("<code>") == 1  # the backend


@pytest.mark.parametrize("branch", ["main", "release/1.2", "feature_x-y.z+1"])
def test_a_plain_branch_name_is_in_a_code_span(branch: str) -> None:
    line = render_trend(history([0.9, 0.8], branch=branch), outcome())
    assert f" at `{branch}` (" in line


def test_the_line_is_on_the_first_screen_even_of_a_trimmed_comment() -> None:
    """The line sits in the comment's head, which trimming never cuts: after the verdict, the
    counts and the drift's note, before the first table, one paragraph of its own."""
    full = History(
        "main",
        tuple(
            Entry(
                f"{i:040x}",
                "2024-01-01T00:00:00Z",
                "0.1.0",
                {"eval/search.jsonl": {b: {"mrr": v} for b in BACKENDS}},
            )
            for i, v in enumerate([0.95, 0.97, 0.96, 1.0])
        ),
    )
    body = rendered_comment("large-trimmed", full)
    assert "**Detail truncated** to fit GitHub's size limit" in body and len(body) <= 12_000
    [line] = [x for x in body.splitlines() if x.startswith("📈 Trend of MRR on ")]
    assert "(last 4 pushes, 0.950–1.000): ▁▄▂█ latest 1.000 · this PR 0.167"
    html = gfm(body)
    paragraphs = re.findall(r"<p>(.*?)</p>", html.split("<table>")[0], flags=re.S)
    # the verdict, the counts, the drift's note, the trend, then the means' caption and table
    assert [p.startswith("📈 Trend of MRR") for p in paragraphs] == [False, False, False, True, False]
    assert paragraphs[-1].startswith("Means over all")


def _github(event_name: str, event: dict[str, object]) -> GitHubContext:
    return GitHubContext(
        event_name, None, MappingProxyType(event), Path("/w"), "", "", "", "", None, None, ""
    )


def test_only_a_push_to_the_repositorys_default_branch_is_recorded() -> None:
    repository = {"default_branch": "trunk"}
    assert (
        default_branch_push(_github("push", {"ref": "refs/heads/trunk", "repository": repository})) == "trunk"
    )
    for event_name, event in [
        ("push", {"ref": "refs/heads/main", "repository": repository}),
        ("push", {"ref": "refs/tags/trunk", "repository": repository}),
        ("push", {"ref": "refs/heads/trunk"}),
        ("push", {"ref": "refs/heads/trunk", "repository": {"default_branch": ["trunk"]}}),
        ("push", {"ref": "refs/heads/", "repository": {"default_branch": ""}}),
        ("workflow_dispatch", {"ref": "refs/heads/trunk", "repository": repository}),
    ]:
        assert default_branch_push(_github(event_name, event)) is None


def test_the_history_inputs(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    (workspace / "eval/relevance").mkdir(parents=True)
    (workspace / "eval/relevance/code.jsonl").write_text("{}\n")
    assert read(workspace).history is None and read(workspace).history_size == DEFAULT_HISTORY_SIZE
    inputs = read(workspace, history="keep/../h/history.json", **{"history-size": "7"})
    assert inputs.history == workspace.resolve() / "h/history.json" and inputs.history_size == 7
    for size in ("0", "1001", "ten", "²", "-1", "1e2"):
        with pytest.raises(CceError, match=f"input 'history-size': {size!r} is not a number of entries"):
            read(workspace, **{"history-size": size})
    with pytest.raises(CceError, match="input 'history': '../h.json' resolves outside the workspace"):
        read(workspace, history="../h.json")
