"""Delta charts: exact Mermaid text, SVG geometry, and escaping of untrusted ids for both."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.errors import CceError
from cce_relevance.reporting.chart import (
    LABEL_LIMIT,
    axis_limit,
    chart_renderer,
    delta_chart,
    mermaid_block,
    mermaid_chart,
    mermaid_string,
    svg_chart,
)
from cce_relevance.reporting.markdown_safe import one_line
from cce_relevance.reporting.numbers import signed6

SVG = "{http://www.w3.org/2000/svg}"


def test_mermaid_chart_is_exactly_this() -> None:
    chart = delta_chart("MRR per query, bm25 to hybrid", "MRR", [("q-1", 0.5), ("q 2", -0.25), ("q3", 0.0)])
    assert mermaid_block(chart) == (
        "```mermaid\n"
        "xychart-beta\n"
        '    title "MRR per query, bm25 to hybrid"\n'
        '    x-axis "query" ["q-1", "q 2", "q3"]\n'
        '    y-axis "delta MRR" -0.500000 --> 0.500000\n'
        "    bar [0.500000, -0.250000, 0.000000]\n"
        "    line [0, 0, 0]\n"
        "```\n"
    )


@pytest.mark.parametrize(
    ("values", "limit"),
    [
        ([0.0], 0.1),
        ([0.1, -0.05], 0.1),
        ([0.15], 0.2),
        ([-0.25], 0.25),
        ([0.3], 0.5),
        ([-1.0], 1.0),
        ([1.5], 2.0),
        ([float("nan"), 0.2], 0.2),
    ],
)
def test_axis_is_symmetric_on_a_fixed_ladder(values: list[float], limit: float) -> None:
    assert axis_limit(values) == limit


def test_no_bars_is_an_error_not_an_invalid_diagram() -> None:
    with pytest.raises(CceError, match="no deltas to chart"):
        delta_chart("t", "MRR", [])


@pytest.mark.parametrize(
    ("path", "start"), [("c.md", "```mermaid\n"), ("c.MMD", "xychart-beta\n"), ("dir.x/c.svg", "<svg ")]
)
def test_the_suffix_picks_the_format(path: str, start: str) -> None:
    assert chart_renderer(path)(delta_chart("t", "MRR", [("q", 0.1)])).startswith(start)


@pytest.mark.parametrize("path", ["chart.png", "chart", "md", "chart.md.txt"])
def test_unknown_suffixes_are_input_errors(path: str) -> None:
    with pytest.raises(CceError, match=r"expected a file ending in \.md, \.mmd or \.svg"):
        chart_renderer(path)


def test_hostile_label_cannot_leave_its_string_or_start_a_directive() -> None:
    text = 'a"] %%{init: {"theme":"dark"}}%%\nbar [9]; #quot; `x` <b>'
    assert mermaid_string(text, 80) == (
        '"a#34;#93; #37;#37;#123;init: #123;#34;theme#34;:#34;dark#34;#125;#125;#37;#37; bar #91;9#93;#59; '
        '#35;quot#59; #96;x#96; #60;b#62;"'
    )
    assert mermaid_string("") == '" "'  # the grammar has no empty string
    assert mermaid_string("x" * 40) == '"' + "x" * (LABEL_LIMIT - 1) + '#8230;"'


_ENTITY = re.compile(r"#(\d+);")


@settings(max_examples=500)
@given(st.text(max_size=60))
def test_any_label_round_trips_through_mermaid_entities(text: str) -> None:
    quoted = mermaid_string(text)
    inner = quoted[1:-1]
    assert quoted[0] == quoted[-1] == '"'
    assert re.fullmatch(r"[A-Za-z0-9 \-_.,:/+=@()#;]+", inner), inner
    assert "%" not in inner and '"' not in inner and "\n" not in inner
    shown = _ENTITY.sub(lambda m: chr(int(m.group(1))), inner)
    assert _ENTITY.sub("", inner).count("#") == 0  # every '#' starts an entity code
    flat = one_line(text)  # line breaks to spaces, controls and bidi overrides to U+FFFD
    expected = flat if len(flat) <= LABEL_LIMIT else flat[: LABEL_LIMIT - 1] + "…"
    assert shown == (expected or " ")


def bars_of(svg: str) -> list[ET.Element]:
    return [r for r in ET.fromstring(svg).iter(f"{SVG}rect") if r.find(f"{SVG}title") is not None]


def test_svg_bars_grow_from_zero_in_the_delta_colour() -> None:
    svg = svg_chart(delta_chart("t", "MRR", [("up", 0.5), ("down", -0.25), ("same", 0.0)]))
    up, down, same = bars_of(svg)
    zero = 40 + 200 / 2
    assert float(up.get("y")) + float(up.get("height")) == zero and float(up.get("height")) == 100
    assert float(down.get("y")) == zero and float(down.get("height")) == 50
    assert (up.get("fill"), down.get("fill"), same.get("fill")) == ("#1a7f37", "#cf222e", "#8c959f")
    assert [b.find(f"{SVG}title").text for b in (up, down, same)] == [
        "up: +0.500000",
        "down: -0.250000",
        "same: +0.000000",
    ]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.text(max_size=40), st.floats(-1, 1)), min_size=1, max_size=8), st.text(max_size=30)
)
def test_any_ids_give_well_formed_svg_that_shows_them(bars: list[tuple[str, float]], backend: str) -> None:
    svg = svg_chart(delta_chart(f"MRR per query, {backend}", "MRR", bars))
    svg.encode("utf-8")  # no lone surrogate survives
    root = ET.fromstring(svg)  # well-formed whatever the ids contain
    assert root.tag == f"{SVG}svg"
    titles = [b.find(f"{SVG}title").text or "" for b in bars_of(svg)]
    assert len(titles) == len(bars)
    for (query, delta), title in zip(bars, titles, strict=True):
        assert title.endswith(": " + signed6(delta))
        if not re.search(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]", query):
            assert title == f"{query}: {signed6(delta)}"


def test_mermaid_chart_has_one_value_per_label() -> None:
    chart = delta_chart("t", "F1", [(f"q{i}", i / 10 - 0.5) for i in range(11)])
    text = mermaid_chart(chart)
    labels = re.search(r"x-axis \"query\" \[(.*)\]", text).group(1).split(", ")
    values = re.search(r"bar \[(.*)\]", text).group(1).split(", ")
    assert len(labels) == len(values) == 11 and values[0] == "-0.500000" and values[-1] == "0.500000"
