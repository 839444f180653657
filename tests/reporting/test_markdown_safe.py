"""Untrusted text in Markdown: shows literally, pings nobody, links nothing, breaks no table.

"Rendering" is emulated with the two CommonMark rules the escaper relies on (a backslash before
ASCII punctuation yields the character; entities decode) and, for table cells, the GFM table
rule that ``\\|`` is a literal pipe.
"""

from __future__ import annotations

import html
import re

from hypothesis import example, given
from hypothesis import strategies as st

from cce_relevance.reporting.markdown_safe import (
    break_pings,
    code_block,
    code_span,
    details,
    escape_md,
    one_line,
)

ZWSP = "\u200b"


def rendered(markdown: str) -> str:
    return html.unescape(re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown))


def rendered_cell(markdown: str) -> str:
    return rendered(markdown.replace("\\|", "|"))


def parse_code_span(markdown: str) -> str:
    """The content CommonMark would show for a string that must be exactly one code span."""
    fence = re.match(r"`+", markdown)
    assert fence is not None
    run = fence.group()
    assert markdown.endswith(run) and len(markdown) >= 2 * len(run) + 1
    inner = markdown[len(run) : -len(run)]
    assert not inner.startswith("`") and not inner.endswith("`")  # else the fence runs are longer
    assert all(len(r) != len(run) for r in re.findall(r"`+", inner))  # nothing closes it early
    if inner.startswith(" ") and inner.endswith(" ") and inner.strip(" "):
        inner = inner[1:-1]
    return inner


# Text that looks like everything the escaper must defuse, mixed with arbitrary text.
TRICKY = st.sampled_from(
    [
        "@octocat",
        "@org/team",
        "#12",
        "owner/repo#3",
        "GH-7",
        "gh-8",
        "<script>alert(1)</script>",
        "<!-- x -->",
        "&lt;",
        "&amp;",
        "&#64;me",
        "| a | b |",
        "\\|",
        "**bold**",
        "_it_",
        "`code`",
        "[link](https://evil.example)",
        "![img](x.png)",
        "# heading",
        "> quote",
        "- item",
        "1. item",
        "::error::x",
        "##[error]x",
        "$x^2$",
        "~~strike~~",
        "line\nbreak",
        "cr\rlf\r\n",
        "\t",
        "\x00",
        "\u202eevil",
        ":smile:",
        "\\",
        "\\@x",
    ]
)
UNTRUSTED = st.one_of(st.text(), st.lists(st.one_of(TRICKY, st.text(max_size=5)), max_size=8).map("".join))


@given(UNTRUSTED)
@example("a@b #1 GH-2 <x> | :: ##[")
def test_escape_md_shows_the_text_literally(text: str) -> None:
    out = escape_md(text)
    expected = one_line(text).replace(ZWSP, "")
    assert rendered(out).replace(ZWSP, "") == expected
    assert rendered_cell(out).replace(ZWSP, "") == expected


@given(UNTRUSTED)
def test_escape_md_output_is_inert(text: str) -> None:
    out = escape_md(text)
    shown = rendered(out)
    assert "<" not in out and ">" not in out  # no raw HTML
    assert re.search(r"(?<!\\)\|", out) is None  # every pipe escaped: one table cell stays one
    assert "\n" not in out and "\r" not in out  # one line, in a cell and in the log
    assert not out.lstrip().startswith("::") and "::" not in out and "##[" not in out
    assert re.search(r"@[A-Za-z0-9]", shown) is None  # no @mention survives
    assert re.search(r"#[0-9]", shown) is None and re.search(r"(?i)gh-[0-9]", shown) is None


@given(UNTRUSTED)
@example("@octocat, @org/team, #12, GH-3, `@inside` and ```\n@block #4\n```")
def test_break_pings_leaves_no_mention_or_reference_and_changes_nothing_else(text: str) -> None:
    out = break_pings(text)
    assert out.replace("\u200b", "") == text.replace("\u200b", "")
    assert re.search(r"@[A-Za-z0-9_]|#[0-9]|(?i:gh)-[0-9]", out) is None  # broken in code too


def test_escape_md_examples() -> None:
    assert escape_md("@octocat: see #12") == "@&#8203;octocat\\: see \\#&#8203;12"
    assert escape_md("<b>a|b</b>") == "&lt;b&gt;a\\|b&lt;/b&gt;"
    assert escape_md("two\r\nlines\tand\x00") == "two lines and\ufffd"
    assert escape_md("plain words") == "plain words"


def test_one_line_replaces_bidi_overrides() -> None:
    assert one_line("a\u202eb\u2066c") == "a\ufffdb\ufffdc"


@given(UNTRUSTED)
def test_code_span_shows_the_text(text: str) -> None:
    out = code_span(text)
    expected = one_line(text)
    assert "\n" not in out and "\r" not in out
    if expected:
        assert parse_code_span(out) == expected
    else:
        assert out == "` `"


@given(UNTRUSTED)
def test_code_span_in_a_table_keeps_one_cell(text: str) -> None:
    out = code_span(text, in_table=True)
    assert re.search(r"(?<!\\)\|", out) is None
    if one_line(text):
        assert parse_code_span(out.replace("\\|", "|")) == one_line(text)


def test_code_span_examples() -> None:
    assert code_span("src/app.py") == "`src/app.py`"
    assert code_span("a ``b`` c") == "```a ``b`` c```"
    assert code_span("`tick") == "`` `tick ``"
    assert code_span(" padded ") == "`  padded  `"
    assert code_span("a|b", in_table=True) == "`a\\|b`"


def test_details_escapes_the_summary_and_keeps_the_body() -> None:
    body = "| q | Δ |\n|---|---|\n| x | 0 |"
    block = details("12 unchanged <queries> @here", body)
    assert block == (
        "<details><summary>12 unchanged &lt;queries&gt; @&#8203;here</summary>\n\n" + body + "\n\n</details>"
    )


@given(st.lists(st.text(alphabet="`~ ax\u202e\x07", max_size=12), max_size=6))
def test_code_block_cannot_be_closed_by_its_content(lines: list[str]) -> None:
    block = code_block("\n".join(lines), "diff").split("\n")
    fence = block[0].removesuffix("diff")
    assert set(fence) == {"`"} and len(fence) >= 3 and block[-1] == fence
    # CommonMark: a closing fence is a line of at least as many backticks, up to 3 spaces before it
    assert not any(re.fullmatch(r" {0,3}" + fence + r"`*\s*", line) for line in block[1:-1])
    assert not any(re.search("[\u202e\x07]", line) for line in block)


def test_code_block_examples() -> None:
    assert code_block("-a\n+b\n", "diff") == "```diff\n-a\n+b\n```"
    assert code_block("````\n") == "`````\n````\n`````"
