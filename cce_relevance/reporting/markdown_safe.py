"""Put untrusted text (fixture queries, file paths, ids) into GitHub-flavoured Markdown safely.

Fixture text comes from the pull request under review, so whoever opens it controls it. Rendered
into our comment it must not be able to:

* inject HTML or Markdown structure (links, images, headings, table columns, emphasis, math);
* notify anyone: the comment is posted by our token and re-posted on every run, so an
  ``@user`` or ``@org/team`` in a query would ping on the bot's behalf again and again;
* touch other issues: ``#123``, ``owner/repo#123`` and ``GH-123`` create "referenced this"
  events on the issue they name. We neutralise them too (decided: a query about "bug #12"
  should read as text, not as a cross-reference the bot makes). Bare URLs are left alone:
  they are visible as what they are and cannot ping anyone;
* start a workflow command when the same Markdown is echoed to the Actions log: output never
  contains a line break, ``::`` or ``##[``.

The technique is to make every character mean itself: HTML-significant ``& < >`` become entities,
ASCII punctuation that Markdown interprets is backslash-escaped (CommonMark renders ``\\x`` as
``x`` for any ASCII punctuation, and GFM tables treat ``\\|`` as a literal pipe), and a zero-width
space (``&#8203;``, as Renovate does) is placed after ``@``, after ``#`` before a digit, and after
``GH-`` before a digit, so the text reads the same but matches no autolink pattern. Line breaks
become spaces; other control characters and bidirectional overrides (which can make text display
in a different order than it reads) become U+FFFD.

All functions are pure.
"""

from __future__ import annotations

import re

ZERO_WIDTH_SPACE = "&#8203;"

# Characters that Markdown (CommonMark, GFM tables, strikethrough, GitHub math) or workflow
# commands (``::``, ``##[``) give meaning to. Backslash-escaping is safe for all of them.
_BACKSLASHED = "\\`*_{}[]()#+-.!|~$:"
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}

_REFERENCE = r"#(?=[0-9])|(?<=[Gg][Hh])-(?=[0-9])"  # `#12`, `GH-12`: break them after the sign
_SPECIAL = re.compile(
    rf"(?P<ref>{_REFERENCE})"
    r"|(?P<mention>@)"
    r"|(?P<char>[" + re.escape(_BACKSLASHED) + "&<>])"
)
_TO_SPACE = re.compile(r"\r\n|[\r\n\t\x0b\x0c\x85\u2028\u2029]")  # line breaks and tabs
# C0/C1 controls and DEL, and the bidi embeddings, overrides and isolates ("Trojan Source").
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_BACKTICK_RUN = re.compile(r"`+")


def one_line(text: str) -> str:
    """Collapse line breaks and tabs to spaces and replace other control characters.

    A line break inside a table cell ends the row; in the log it would start a new line that
    could be read as a workflow command.
    """
    return _UNSAFE.sub("\ufffd", _TO_SPACE.sub(" ", text))


def _escape_match(match: re.Match[str]) -> str:
    if match.group("ref") is not None:
        return "\\" + match.group("ref") + ZERO_WIDTH_SPACE
    if match.group("mention") is not None:
        return "@" + ZERO_WIDTH_SPACE
    char = match.group("char")
    return _ENTITIES.get(char) or "\\" + char


def escape_md(text: str) -> str:
    """Render `text` literally, on one line, in inline Markdown or a GFM table cell.

    What the reader sees is `text` with line breaks turned into spaces (and control characters
    into U+FFFD); see the module docstring for what is neutralised and why.
    """
    return _SPECIAL.sub(_escape_match, one_line(text))


def code_span(text: str, *, in_table: bool = False) -> str:
    """`text` as an inline code span, for identifiers and paths that read better monospaced.

    The fence is one backtick longer than the longest run inside, so no content can close it.
    CommonMark strips one space from each end of a span that starts and ends with a space, so
    such content (or content touching a backtick) is padded with a space on both sides.
    Inside a GFM table a pipe splits the cell even within a code span; with ``in_table=True``
    pipes are written ``\\|``, which the table parser turns back into ``|``. Mentions and
    issue references are not linked inside code, so nothing else needs neutralising.
    """
    content = one_line(text)
    if in_table:
        content = content.replace("|", "\\|")
    if not content:
        return "` `"
    fence = "`" * (max((len(run) for run in _BACKTICK_RUN.findall(content)), default=0) + 1)
    touches_backtick = content[0] == "`" or content[-1] == "`"
    space_padded = content[0] == " " and content[-1] == " " and content.strip(" ") != ""
    if touches_backtick or space_padded:
        content = f" {content} "
    return f"{fence}{content}{fence}"


_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/+-]*")


def name_span(text: str) -> str:
    """A name read from data (a branch, say) in a code span when it is made of letters, digits and
    `._/+-` only, else as escaped text: a code span shows anything as text, but keeps `<`, `&` or
    `@` raw in the Markdown bytes, and whoever reads the raw summary file, or a tool scanning it,
    would meet the markup there."""
    return code_span(text) if _PLAIN_NAME.fullmatch(text) else escape_md(text)


def code_block(text: str, info: str = "") -> str:
    """`text` verbatim in a fenced code block that no line of it can close.

    For multi-line untrusted text such as a golden report's diff: inside a code block nothing is
    Markdown, HTML, a mention or a reference, so only the fence needs care. It is backticks, one
    more than the longest backtick run in `text` and at least three, so no line can end the block
    early (a closing fence must be at least as long). Lines keep their text; control characters
    and bidirectional overrides become U+FFFD as in `one_line`. `info` (e.g. ``diff``) is ours.
    """
    lines = [_UNSAFE.sub("\ufffd", line) for line in text.splitlines()]
    longest = max((len(run) for line in lines for run in _BACKTICK_RUN.findall(line)), default=0)
    fence = "`" * max(3, longest + 1)
    return "\n".join([fence + info, *lines, fence])


_HTML_SPECIAL = re.compile(rf"[&<>\"']|@|{_REFERENCE}")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}


def html_text(text: str) -> str:
    """`text` as literal HTML text, on one line: for the inside of an HTML block such as
    ``<summary>``, where Markdown is not processed (a backslash escape would show as a backslash).
    Mentions and issue references get the same zero-width space as in `escape_md`."""

    def escape(match: re.Match[str]) -> str:
        char = match.group(0)
        return _HTML_ENTITIES.get(char) or char + ZERO_WIDTH_SPACE

    return _HTML_SPECIAL.sub(escape, one_line(text))


_PING = re.compile(rf"@(?=[A-Za-z0-9_])|{_REFERENCE}")


def break_pings(markdown: str) -> str:
    """Markdown someone else wrote, with every `@mention` and issue reference broken by a
    zero-width space (U+200B, which reads the same in text, code spans and code blocks alike):
    for a whole document that is posted as Markdown (`mode: publish`), where escaping it all
    would show its tables as text."""
    return _PING.sub(lambda match: match.group(0) + "\u200b", markdown)


def shorten(text: str, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with a trailing "…" when longer (a 300-character
    query id must not push a table's numbers off the screen)."""
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def details(summary: str, body: str) -> str:
    """A collapsed ``<details>`` block.

    `summary` is plain text and is escaped here as HTML text (it is often built from fixture
    names; Markdown is not processed inside the HTML block, so Markdown escapes would show);
    `body` is Markdown the caller already made safe. The blank lines around the body are what
    makes GitHub render Markdown (tables, lists) inside the HTML block.
    """
    return f"<details><summary>{html_text(summary)}</summary>\n\n{body}\n\n</details>"
