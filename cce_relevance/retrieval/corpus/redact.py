"""Layer-2 secret redaction (§redaction).

A file whose name looks harmless can still hold a hard-coded credential, so every file's text
is scrubbed before chunking: chunk ids, token counts, embeddings, BM25 and the store all see the
redacted text, and a single differing byte would change them. This module therefore follows the
reference redactor exactly, including the places where Python's `re` would otherwise disagree
with Rust's `regex` crate:

* Rust's `\\s` is the Unicode White_Space property; Python's `\\s` also takes U+001C–U+001F.
  The operator's whitespace is an explicit class.
* Rust's `(?i)` uses simple case folding, under which only `k` (Kelvin sign U+212A) and `s`
  (long s U+017F) gain non-ASCII partners among the ASCII letters; Python's IGNORECASE also
  lets `i` match U+0130 and U+0131. The key names are spelt with explicit classes.
* Rust's `\\b` uses its own Unicode word set; Python's `\\w` differs (see `_is_word_char`),
  so the boundary in front of a key is tested by hand.

The value scanner of the reference walks UTF-8 bytes. Every byte it treats specially (quotes,
backslash, ASCII whitespace, ASCII glue characters) is ASCII, and every byte of a non-ASCII
character is >= 0x80 and plain, so walking code points makes the same decisions and stops at
the same characters; only the "shorter than 8" rule needs the UTF-8 byte length.

Most files hold no secret, and scanning every file's text with every pattern is a good part of
indexing, so each step is preceded by a cheaper scan that cannot miss anything it would find:
screens for runs of specific patterns, and for the generic pass the places where an operator
follows a key name (below, with why each is a superset). `tests/retrieval/corpus/test_redact.py`
compares the result with the patterns applied plainly.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

from cce_relevance.retrieval.tokens import ascii_lower

_SECRET_REPLACEMENT = "[REDACTED:SECRET]"
_MIN_SECRET_BYTES = 8

# (pattern, replacement), in the order §redaction applies them. Each pattern opens with a literal, which
# `re` scans for quickly (a character class is tested character by character, far slower).
_SPECIFIC: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), f"[REDACTED:{label}]")
    for pattern, label in (
        (
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
            "PRIVATE_KEY",
        ),
        (r"sk-ant-[A-Za-z0-9_-]{20,}", "ANTHROPIC_KEY"),
        (r"sk-[A-Za-z0-9]{32,}", "OPENAI_KEY"),
        (r"sk_live_[A-Za-z0-9]{16,}", "STRIPE_KEY"),
        (r"gh[pousr]_[A-Za-z0-9]{36,}", "GITHUB_TOKEN"),
        (r"xox[baprs]-[A-Za-z0-9-]{10,}", "SLACK_TOKEN"),
        (r"AKIA[0-9A-Z]{16}", "AWS_ACCESS_KEY"),
        (r"AIza[0-9A-Za-z_-]{35}", "GOOGLE_API_KEY"),
        (r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}", "JWT"),
    )
)

_PRIVATE_KEY = _SPECIFIC[0][0]

# `_SPECIFIC` cut into runs of consecutive patterns, each with a screen that one scan can rule the
# whole run out with: every match of the run's patterns contains a match of its screen (the three
# `sk` keys open with `sk-` or `sk_`, the AWS and Google keys with `AK` or `AI`, a JWT with
# `eyJ`), so a text the screen does not match passes the run unchanged. A screen opens with a
# rarer character than its patterns do (`re` stops at each occurrence of a literal's first
# character), or stands for several patterns. Other runs are one pattern and need no screen.
_SPECIFIC_RUNS: tuple[tuple[re.Pattern[str] | None, tuple[tuple[re.Pattern[str], str], ...]], ...] = (
    (None, _SPECIFIC[0:1]),
    (re.compile("sk[-_]"), _SPECIFIC[1:4]),
    (None, _SPECIFIC[4:5]),
    (None, _SPECIFIC[5:6]),
    (re.compile("A[KI]"), _SPECIFIC[6:8]),
    (re.compile("yJ"), _SPECIFIC[8:9]),
)

_PRIVATE_KEY_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY-----")

_KEY_NAMES = (
    r"password|passwd|secret[_-]?key|secret|api[_-]?key|access[_-]?key|auth[_-]?token"
    r"|private[_-]?key|token"
)
# Rust's simple case folding partners of the ASCII letters used by the key names.
_FOLD_PARTNERS = {"k": "\u212a", "s": "\u017f"}
# Unicode White_Space, which is Rust's `\s` (no U+001C–U+001F, unlike Python's).
_WHITESPACE = "[\t\n\x0b\x0c\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def _case_insensitive(pattern: str) -> str:
    """Spell each ASCII letter as the class Rust's `(?i)` would match for it."""
    return re.sub(
        "[a-z]",
        lambda m: f"[{m[0]}{m[0].upper()}{_FOLD_PARTNERS.get(m[0], '')}]",
        pattern,
    )


# Group 1 is the key, group 2 the operator with its surrounding whitespace. The reference also
# demands a word boundary after the key, but the operator that must follow (whitespace, `:` or
# `=`) is never a word character, so that boundary always holds and is left out. The boundary
# before the key is checked by `_next_assignment`.
_ASSIGNMENT_RE = re.compile(f"({_case_insensitive(_KEY_NAMES)})({_WHITESPACE}*[:=]{_WHITESPACE}*)")


def _alternatives(alternation: str) -> list[list[str]]:
    """Each alternative of `alternation` (ASCII letters and `[_-]?`) as its list of characters
    and `[_-]?`s."""
    return [re.findall(r"\[_-\]\?|[a-z]", alternative) for alternative in alternation.split("|")]


def _reversed_alternatives(alternation: str) -> str:
    """`alternation` (alternatives of ASCII letters and `[_-]?`) with each alternative spelt backwards."""
    return "|".join("".join(reversed(pieces)) for pieces in _alternatives(alternation))


# Where `_ASSIGNMENT_RE` can match: at an operator that, read backwards, is preceded by `\s*` and
# a key name. That is searched for in the reversed text, case-insensitively: `re`'s IGNORECASE
# matches every character the key's classes allow (U+017F for `s` and U+212A for `k` included),
# and Python's `\s` covers Rust's, so every operator of an assignment is found (a few more may
# be). Backwards the search opens with the operator, which source holds far more rarely than the
# key initials, and one pattern per operator opens with a literal, which `re` scans for fast.
# Group 1 is the whitespace before the operator: all of it, as no key name ends in whitespace.
_OPERATOR_GATES = tuple(
    re.compile(f"{operator}(\\s*)(?:{_reversed_alternatives(_KEY_NAMES)})", re.IGNORECASE)
    for operator in ":="
)
_LONGEST_KEY = max(len(pieces) for pieces in _alternatives(_KEY_NAMES))  # in characters
_SPACES = re.compile(r"\s*")

# `u8::is_ascii_whitespace`: no vertical tab.
_ASCII_WHITESPACE = " \t\n\x0c\r"
_UNQUOTED_END_RE = re.compile(f"[{_ASCII_WHITESPACE}]")
_QUOTES = "\"'`"
# Inside a quoted value only a newline, a backslash or the opening quote can change the state.
_QUOTED_STOP_RE = {q: re.compile(f"[\n\\\\{q}]") for q in _QUOTES}
# After a quote followed by punctuation: what comes first, whitespace or the same quote?
_LOOKAHEAD_STOP_RE = {q: re.compile(f"[{_ASCII_WHITESPACE}{q}]") for q in _QUOTES}

# Alphabetic code points that are neither letters, letter numbers nor marks (Other_Alphabetic
# symbols: circled, squared and negative circled/squared Latin letters).
_ALPHABETIC_SYMBOL_RANGES = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))
_JOIN_CONTROLS = "\u200c\u200d"

_PLACEHOLDER_PREFIXES = (
    "your",
    "my-",
    "the-",
    "example",
    "changeme",
    "placeholder",
    "dummy",
    "test",
    "sample",
    "xxx",
)
_PLACEHOLDER_LITERALS = frozenset({"null", "nil", "none", "true", "false"})
_REDACTION_TOKEN_START = "[REDACTED:"


class _Value(NamedTuple):
    """Where an assignment's value lies in the text (all offsets are code-point indices)."""

    end: int
    inner_start: int
    inner_end: int
    quote: str | None
    closed: bool


def redact(text: str) -> str:
    """Replace high-confidence secrets in `text` by `[REDACTED:<LABEL>]` markers (§redaction).

    Specific patterns run first, in table order; the generic `key = value` pass then sees their
    output, which is what keeps an already-labelled value from being relabelled SECRET.
    """
    for screen, patterns in _SPECIFIC_RUNS:
        if screen is None or screen.search(text) is not None:
            for pattern, replacement in patterns:
                text = _substitute(pattern, replacement, text)
    operators = _gated_operators(text)
    return _redact_assignments(text, _GatedSearch(text, operators).search) if operators else text


def _gated_operators(text: str) -> list[tuple[int, int]]:
    """(offset, whitespace before it) of every operator where `_OPERATOR_GATES` match, ascending:
    the only places where an assignment's operator can be."""
    backwards = text[::-1]
    last = len(text) - 1
    return sorted(
        (last - match.start(), len(match[1]))
        for gate in _OPERATOR_GATES
        for match in gate.finditer(backwards)
    )


def _substitute(pattern: re.Pattern[str], replacement: str, text: str) -> str:
    """`pattern.sub`, kept linear for the private-key block on adversarial text.

    Python's backtracking engine scans to the end of the text for every `-----BEGIN` that has no
    `-----END` after it (quadratic on a file of many headers; Rust's engine is linear). Every
    match ends where some END marker ends, so substituting only up to the end of the last END
    marker gives the same text while no failing attempt can run past it.
    """
    if pattern is not _PRIVATE_KEY:
        return pattern.sub(replacement, text)
    cut = _last_private_key_end(text)
    if cut == 0:
        return text
    return pattern.sub(replacement, text[:cut]) + text[cut:]


def _last_private_key_end(text: str) -> int:
    """End offset of the last `-----END … PRIVATE KEY-----` marker, or 0 when there is none."""
    pos = text.rfind("-----END ")
    while pos >= 0:
        match = _PRIVATE_KEY_END.match(text, pos)
        if match is not None:
            return match.end()
        pos = text.rfind("-----END ", 0, pos)
    return 0


def is_placeholder(inner: str) -> bool:
    """Whether a value's inner text is a documentation placeholder rather than a secret.

    Such values (`your-api-key`, `${DB_PASSWORD}`, `null`, `--------`, an exact
    `[REDACTED:LABEL]` token) are left alone so examples and already-redacted text survive.
    """
    if _is_redaction_token(inner):
        return True
    lowered = ascii_lower(inner)
    return (
        lowered.startswith(_PLACEHOLDER_PREFIXES)
        or _is_wrapped(lowered)
        or lowered in _PLACEHOLDER_LITERALS
        or _is_one_char_repeated(inner)
    )


def _redact_assignments(text: str, search: Callable[[int], re.Match[str] | None]) -> str:
    """The generic pass: walk `key <op> value` assignments left to right (§redaction step 2);
    `search(pos)` is `_ASSIGNMENT_RE.search(text, pos)`.

    `cursor` marks the end of the last consumed value, so a key that sits inside a value
    already handled does not start a second, overlapping redaction.
    """
    match = _next_assignment(text, 0, search)
    pieces: list[str] = []
    cursor = 0
    while match is not None:
        if match.start() >= cursor:
            value = _scan_value(text, match.end())
            if value is not None:
                pieces.append(text[cursor : match.start()])
                pieces.append(_render_assignment(text, match, value))
                cursor = value.end
        match = _next_assignment(text, match.end(), search)
    pieces.append(text[cursor:])
    return "".join(pieces)


def _next_assignment(
    text: str, pos: int, search: Callable[[int], re.Match[str] | None]
) -> re.Match[str] | None:
    """The leftmost assignment prefix at or after `pos` whose key starts on a word boundary;
    `search(pos)` is `_ASSIGNMENT_RE.search(text, pos)`."""
    while (match := search(pos)) is not None:
        start = match.start()
        if start == 0 or not _is_word_char(text[start - 1]):
            return match
        pos = start + 1
    return None


class _GatedSearch:
    """`_ASSIGNMENT_RE.search(text, pos)`, run only in small windows around the given operators.

    `operators` (see `_gated_operators`) include every place a match's operator can be. A match
    whose operator is at `o` starts at most `_LONGEST_KEY` characters before the whitespace in
    front of `o`, and ends no later than the whitespace after `o` (`end(o)`: the end of the run
    of Python's `\\s`, which covers Rust's). So the window of `o` reaches from there (or `pos`) to
    `end(o)`, and the windows are tried in order of `o`. The first match found is the leftmost at
    or after `pos`: one with an earlier operator starts in that operator's window and would have
    been found there; one with the same operator starts in this window; and one with a later
    operator cannot start before this match, as its key and whitespace would have to pass over
    this match's operator. Only one key name can match at a place and be followed by whitespace
    and an operator (of two names matching there, the longer continues with a letter, `_` or
    `-`), so cutting the text at `end(o)` changes no match that ends there or earlier.
    """

    def __init__(self, text: str, operators: list[tuple[int, int]]) -> None:
        self._text = text
        self._offsets = [offset for offset, _ in operators]
        self._starts = [offset - spaces - _LONGEST_KEY for offset, spaces in operators]

    def search(self, pos: int) -> re.Match[str] | None:
        text = self._text
        for i in range(bisect_left(self._offsets, pos), len(self._offsets)):
            spaces = _SPACES.match(text, self._offsets[i] + 1)
            assert spaces is not None  # `\s*` matches anywhere
            end = spaces.end()
            match = _ASSIGNMENT_RE.search(text, max(pos, self._starts[i]), end)
            if match is not None:
                return match
        return None


def _is_word_char(char: str) -> bool:
    """Rust's Unicode word character: Alphabetic, Mark, Nd, Pc or Join_Control.

    Python's `\\w` disagrees on No (`²` is a word character only there) and on marks, Pc other
    than `_`, ZWJ/ZWNJ and the alphabetic symbols (word characters only in Rust). Code points
    newer than Python's Unicode database count as unassigned here.
    """
    if char.isascii():
        return char.isalnum() or char == "_"
    category = unicodedata.category(char)
    if category[0] in "LM" or category in ("Nd", "Nl", "Pc") or char in _JOIN_CONTROLS:
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in _ALPHABETIC_SYMBOL_RANGES)


def _render_assignment(text: str, match: re.Match[str], value: _Value) -> str:
    """The assignment as emitted: verbatim when it is safe to keep, else with its value masked."""
    inner = text[value.inner_start : value.inner_end]
    keep = (_shorter_than_min_secret(inner) or is_placeholder(inner)) and (
        # A value that swallowed a further `key=` (`"changeme"token="…"`) may hide that
        # assignment's secret behind the placeholder guard, so it is never kept.
        _next_assignment(inner, 0, partial(_ASSIGNMENT_RE.search, inner)) is None
    )
    if keep:
        return text[match.start() : value.end]
    if value.quote is None:
        masked = _SECRET_REPLACEMENT
    else:
        masked = value.quote + _SECRET_REPLACEMENT + (value.quote if value.closed else "")
    return match[1] + match[2] + masked


def _shorter_than_min_secret(inner: str) -> bool:
    """The length rule counts UTF-8 bytes; a code point is at least one byte."""
    return len(inner) < _MIN_SECRET_BYTES and (
        len(inner.encode("utf-8", "surrogatepass")) < _MIN_SECRET_BYTES
    )


def _scan_value(text: str, start: int) -> _Value | None:
    """Delimit the value that begins right after an operator, or None when there is none."""
    if start == len(text) or text[start] in _ASCII_WHITESPACE:
        return None
    quote = text[start]
    if quote in _QUOTES:
        return _scan_quoted(text, start, quote)
    found = _UNQUOTED_END_RE.search(text, start)
    end = len(text) if found is None else found.start()
    return _Value(end, start, end, None, False)


def _scan_quoted(text: str, start: int, quote: str) -> _Value:
    """Find the structural close of a quoted value, never crossing a line.

    Backslash escapes and doubled quotes never close; a lone quote closes unless it is glued
    to a following value character, or followed by punctuation that reaches another such
    quote before any whitespace (`'abc'.tail'` is one value, `"abc".freeze` is not).
    """
    length = len(text)
    stops = _QUOTED_STOP_RE[quote]
    i = start + 1
    while (found := stops.search(text, i)) is not None:
        i = found.start()
        char = text[i]
        if char == "\n":
            return _Value(i, start + 1, i, quote, False)
        if char == "\\":
            i += 1 if i + 1 == length or text[i + 1] == "\n" else 2
        elif i + 1 < length and text[i + 1] == quote:
            i += 2
        elif _quote_closes(text, i, quote):
            return _Value(i + 1, start + 1, i, quote, True)
        else:
            i += 1
    return _Value(length, start + 1, length, quote, False)


def _quote_closes(text: str, index: int, quote: str) -> bool:
    """Whether the lone quote at `index` ends the value (it is not doubled)."""
    if index + 1 == len(text):
        return True
    following = text[index + 1]
    if following in _ASCII_WHITESPACE:
        return True
    if _is_value_glue(following):
        return False
    found = _LOOKAHEAD_STOP_RE[quote].search(text, index + 1)
    return found is None or found[0] != quote


def _is_value_glue(char: str) -> bool:
    """ASCII letters, digits, `_`, `-` and anything non-ASCII continue a value past a quote."""
    return not char.isascii() or char.isalnum() or char in "_-"


def _is_redaction_token(inner: str) -> bool:
    """Exactly one `[REDACTED:LABEL]` token: the first `]` is the last character."""
    return inner.startswith(_REDACTION_TOKEN_START) and inner.find("]") == len(inner) - 1


def _is_wrapped(lowered: str) -> bool:
    """Template markers `<…>`, `${…}`, `{{…}}`; start and end are tested independently."""
    return (
        (lowered.startswith("<") and lowered.endswith(">"))
        or (lowered.startswith("${") and lowered.endswith("}"))
        or (lowered.startswith("{{") and lowered.endswith("}}"))
    )


def _is_one_char_repeated(inner: str) -> bool:
    """One code point repeated, at least once (`éééé` counts; `e` + U+0301 repeated does not)."""
    return inner != "" and inner == inner[0] * len(inner)
