"""The words of a proposed query, made from a definition's name, its doc line or its callers.

Easy forms reuse the definition's own words: its name split into words (`read_config` → "read
config") and the first sentence of its docstring or leading comment. Hard forms avoid them, as
a user who does not know the code would: the doc sentence with the definition's own
identifiers taken out (its name, its enclosing names, its parameters), and the names of the
definitions that call it. Every function here is pure text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from cce_relevance.retrieval.tokens import tokenize

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A comment or docstring line: the opener, then its text (closers are stripped separately).
_DOC_OPENER = re.compile(
    r"""^\s*(?:[rRuUbBfF]{0,2}(?:\"\"\"|''')|///?!?|/\*\*?!?|\*(?!/)|#(?![\[!])|--)\s?(.*)$"""
)
_DOC_CLOSER = re.compile(r"""\s*(?:\"\"\"|'''|\*/)\s*$""")
_DOCSTRING_OPEN = re.compile(r"""^\s*[rRuUbBfF]{0,2}(?:\"\"\"|''')""")
_SKIPPED_ABOVE = re.compile(
    r"^\s*(?:@|#\[)"
)  # decorators and attributes between a doc comment and its definition
_NOT_PROSE = re.compile(
    r"[=;{}<>|\\]|^\s*(?:>>>|\.\.\.)|\b(?:TODO|FIXME|XXX|noqa|pragma|type:|Copyright|"
    r"License|SPDX|coding[:=]|-\*-)|\$Id\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[A-Za-z0-9)\]'\"`])[.!?](?:\s|$)")
_PARAMETERS = re.compile(r"\(([^()]*)")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE_WORD = re.compile(r"[_()\[\].`'\"]|[a-z][A-Z]")  # a word that is written as code, not prose
MIN_TOKENS = 3
MIN_CONTENT_WORDS = 2  # words that are not among the commonest English ones
_ARTICLES = frozenset({"a", "an", "the"})
_SENTENCE_LINES = 6  # a first sentence is read over at most this many doc lines
COMMON_WORDS = frozenset(
    "a an the this that these those is are was were be been it its of in on at to for from by with as and or "
    "not no if then else when which who what how all any some each one used use uses".split()
)
MAX_WORDS = 24
_DOC_LINES_IN = 5  # a docstring starts within this many lines after the definition's first line


def name_words(name: str) -> list[str]:
    """`HTTPClient.send_request` → ['http', 'client', 'send', 'request'] (lowercase)."""
    return [w.lower() for w in _WORD.findall(name)]


def name_query(symbol: str) -> str | None:
    """The definition's own name as words, with its enclosing name when it alone is one word
    (`Client.send` → "client send"); None for dunder names, one-word names and names that only
    repeat a word of their enclosing name."""
    *outer, own = symbol.split(".")
    if own.startswith("__"):
        return None
    words = name_words(own)
    if len(words) < 2 and outer:
        enclosing = name_words(outer[-1])
        if set(words) <= set(enclosing):  # `read_buffer.Buffer` would only repeat its enclosing name
            return None
        words = enclosing + words
    return " ".join(words) if len(words) >= 2 else None


def doc_sentence(lines: Sequence[str], start_line: int, end_line: int, *, module: bool = False) -> str | None:
    """The first sentence of the definition's docstring, or of the comment right above it.

    `lines` are the file's (redacted) lines; `start_line`/`end_line` the definition's, 1-based.
    A `module` (a whole file) has its doc in its first lines. None when there is none, or it is
    not prose (code in a comment, a licence, a pragma).
    """
    if module:
        text = _docstring(lines, start_line - 1, end_line)
    else:
        text = _comment_above(lines, start_line) or _docstring(lines, start_line, end_line)
    if text is None:
        return None
    return _first_sentence(text)


def _comment_above(lines: Sequence[str], start_line: int) -> str | None:
    i = start_line - 2
    while i >= 0 and _SKIPPED_ABOVE.match(lines[i]):
        i -= 1
    block: list[str] = []
    while i >= 0 and (m := _DOC_OPENER.match(lines[i])) is not None and not _DOCSTRING_OPEN.match(lines[i]):
        block.insert(0, _DOC_CLOSER.sub("", m.group(1)).strip())
        i -= 1
    block = [line for line in block if line]
    return " ".join(block[:3]) if block else None


def _docstring(lines: Sequence[str], first: int, end_line: int) -> str | None:
    """The doc text opening within `_DOC_LINES_IN` lines from 0-based line `first`."""
    last = min(end_line, first + _DOC_LINES_IN, len(lines))
    for i in range(first, last):
        m = _DOC_OPENER.match(lines[i])
        if m is None:
            continue
        text: list[str] = []
        opening = _DOC_CLOSER.sub("", m.group(1)).strip()
        if opening:
            text.append(opening)
        closed = _DOC_CLOSER.search(lines[i]) is not None and (
            bool(opening) or not _DOCSTRING_OPEN.match(lines[i])
        )
        j = i + 1
        while not closed and j < min(end_line, len(lines)) and len(text) < _SENTENCE_LINES:
            if text and _SENTENCE_END.search(text[-1]):
                break
            line = lines[j]
            closed = _DOC_CLOSER.search(line) is not None
            stripped = _DOC_CLOSER.sub("", line).strip().lstrip("*#/").strip()
            if not stripped:
                if text:
                    break
            else:
                text.append(stripped)
                if stripped.endswith(":"):  # a heading such as "Class attributes:" ends the sentence
                    break
            j += 1
        return " ".join(text) if text else None
    return None


def _first_sentence(text: str) -> str | None:
    end = _SENTENCE_END.search(text)
    words = (text[: end.start()] if end else text).strip().rstrip(":,;").split()
    sentence = " ".join(words[:MAX_WORDS])
    if "[REDACTED" in sentence or _NOT_PROSE.search(sentence) or len(tokenize(sentence)) < MIN_TOKENS:
        return None
    if sum(any(ch.isalpha() for ch in w) for w in sentence.split()) < MIN_TOKENS or not _says_something(
        sentence
    ):
        return None
    return sentence


def _says_something(text: str) -> bool:
    """At least `MIN_CONTENT_WORDS` words of two letters or more that are not the commonest ones."""
    return (
        sum(len(t) > 1 and t not in COMMON_WORDS and not t.isdigit() for t in tokenize(text))
        >= MIN_CONTENT_WORDS
    )


def own_identifiers(symbol: str, header: str) -> set[str]:
    """The identifiers a definition itself spells: its dotted name's parts and its parameters
    (from the first parenthesis of its first line), lowercased."""
    names = {part.lower() for part in symbol.split(".")}
    params = _PARAMETERS.search(header)
    if params:
        names.update(ident.lower() for ident in _IDENTIFIER.findall(params.group(1)))
    return names


def without_identifiers(sentence: str, symbol: str, identifiers: set[str]) -> str | None:
    """`sentence` with the definition's identifiers, its name's words and words written as code
    taken out; None when nothing was taken out, or fewer than three tokens or two words that are
    not among the commonest remain."""
    own_words = name_words(symbol.split(".")[-1])
    kept: list[str] = []
    removed = False
    words = sentence.split()
    i = 0
    while i < len(words):
        window = [w.strip(".,:;!?()'\"`").lower() for w in words[i : i + len(own_words)]]
        if len(own_words) > 1 and window == own_words:  # the name written as words: "read config"
            removed, i = True, i + len(own_words)
            _drop_article(kept)
            continue
        word = words[i]
        bare = word.strip(".,:;!?")
        if bare.lower().strip("()'\"`") in identifiers or _CODE_WORD.search(bare.strip("()")):
            removed = True
            _drop_article(kept)
        else:
            kept.append(word)
        i += 1
    text = " ".join(kept).strip(" ,;:")
    if not removed or len(tokenize(text)) < MIN_TOKENS or not _says_something(text):
        return None
    return text


def _drop_article(kept: list[str]) -> None:
    """An article left before a word taken out goes too ("Register a handler" → "Register")."""
    if kept and kept[-1].lower() in _ARTICLES:
        kept.pop()


def callers_query(callers: Iterable[str], symbol: str) -> str | None:
    """Words of the callers' names that are not the definition's own (at most eight words)."""
    own = set(name_words(symbol))
    words: list[str] = []
    for caller in callers:
        *outer, last = caller.split(".")
        named = outer[-1] if last.startswith("__") and outer else last  # `Handler.__init__` → handler
        for w in name_words(named):
            if w not in own and w not in words:
                words.append(w)
    words = words[:8]
    return " ".join(words) if len(words) >= 2 else None
