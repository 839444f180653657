"""The `cce.relevance/v1` fixture contract: NDJSON lines, an optional header, labeled cases.

Everything here mirrors the reference parser (§fixtures): which lines count, which JSON is
accepted, which check fires first and the exact wording of errors E1–E14. The reference parses
each line with serde_json into a generic value; Python's `json` accepts a few things serde
rejects (NaN/Infinity literals, overflowing numbers, lone surrogate escapes, unlimited nesting),
so those are rejected here explicitly. The E2 text after `invalid JSON: ` is serde_json's in the
reference; it is not normative, and is approximated from what Python reports.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from cce_relevance import schemas
from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchors import U64_MAX, Anchor, AnchorError, parse_anchor
from cce_relevance.evaluation.rust_debug import rust_debug_str
from cce_relevance.reference import DEFAULT_TOP_K
from cce_relevance.retrieval.corpus.exclusion import compile_patterns
from cce_relevance.strings import rust_lines, rust_trim

# serde_json gives up when nesting reaches 128 levels; the line's own object is level 1.
_MAX_DEPTH = 127

_I64_MIN = -(2**63)


@dataclass(frozen=True)
class Case:
    """One labeled query; `line` is its 1-based physical line in the fixture file."""

    line: int
    id: str
    query: str
    anchors: tuple[Anchor, ...]
    k: int
    # One grade (≥ 1) per anchor, from the optional `grades` object; None when the case has none
    # or the set was parsed without reading grades (the reference ignores the field).
    grades: tuple[int, ...] | None = None
    # Anchors of results a reviewer judged not relevant, from the optional `irrelevant` array
    # (read with `grades`, or `labels` alone): they make those results judged without making them
    # relevant.
    irrelevant: tuple[Anchor, ...] = ()

    @property
    def ranged(self) -> bool:
        """Whether the case is also scored at token level (it has a `path@a-b` or `path::Name` anchor)."""
        return any(a.path is not None and (a.range is not None or a.symbol is not None) for a in self.anchors)

    @property
    def has_symbols(self) -> bool:
        """Whether some anchor names a symbol, whose lines must be looked up in the corpus."""
        return any(a.symbol is not None for a in (*self.anchors, *self.irrelevant))


@dataclass(frozen=True)
class FixtureSet:
    """A parsed fixture file: the path as typed, the header's corpus hint, the cases in file order,
    and the header's `exclude` patterns (gitignore lines relative to the corpus root; our extension)."""

    path: str
    corpus: str | None
    cases: tuple[Case, ...]
    exclude: tuple[str, ...] = ()


def load_fixtures(path: str, *, grades: bool = False, labels: bool = False) -> FixtureSet:
    """Read `path` (`read_fixture_text`) and parse it.

    `grades=True` also reads and checks each case's optional `grades` object and `irrelevant`
    array, `labels=True` the `irrelevant` array alone (see `parse_fixtures`).
    """
    return parse_fixtures(read_fixture_text(path), path, grades=grades, labels=labels)


def read_fixture_text(path: str) -> str:
    """The fixture file's text: strict UTF-8, no BOM stripping, no newline translation (E1)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise CceError(f"could not read fixtures {_display_path(path)}: {_rust_io_error(exc)}") from exc
    except ValueError as exc:  # an embedded NUL in the path; Rust words it like this
        raise CceError(
            f"could not read fixtures {_display_path(path)}: file name contained an unexpected NUL byte"
        ) from exc
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CceError(
            f"could not read fixtures {_display_path(path)}: stream did not contain valid UTF-8"
        ) from exc
    return text


def parse_fixtures(text: str, path: str, *, grades: bool = False, labels: bool = False) -> FixtureSet:
    """Parse fixture text; the first offending line in file order fails the whole set (E2–E14).

    The reference ignores unknown fields, `grades` included, so by default it is not even looked
    at: a malformed `grades` object cannot fail a reference-compatible run. Options that use
    graded relevance (`--metrics`, `--trec-qrels`, `validate`) pass `grades=True`, which reads
    the `irrelevant` array too; `labels=True` reads only that array (`--per-query text`, and the
    Action, which must not fail on a `grades` object `run` ignores).
    """
    corpus: str | None = None
    exclude: tuple[str, ...] = ()
    header_seen = False
    cases: list[Case] = []
    for number, line in enumerate(rust_lines(text), start=1):
        if not rust_trim(line):
            continue
        try:
            value = _decode_line(line)
        except _InvalidJson as exc:
            bom = "the file starts with a UTF-8 byte order mark (BOM): save it as UTF-8 without a BOM"
            raise CceError(
                f"fixture line {number}: invalid JSON: {exc}",
                hint=bom if number == 1 and line.startswith("\ufeff") else None,
            ) from None
        if not isinstance(value, dict):
            raise CceError(f"fixture line {number}: expected a JSON object")
        if "schema" in value and "query" not in value:
            if header_seen or cases:
                raise CceError(f"fixture line {number}: header must be the first non-blank line")
            header_seen = True
            schema = value["schema"]
            if schema != schemas.FIXTURES:
                shown = schema if isinstance(schema, str) else ""
                raise CceError(
                    f"fixture line {number}: unsupported schema {rust_debug_str(shown)} "
                    f"(expected {rust_debug_str(schemas.FIXTURES)})"
                )
            declared = value.get("corpus")
            corpus = declared if isinstance(declared, str) and declared else None
            exclude = _header_exclude(value, number)
            continue
        cases.append(_parse_case(value, number, grades, grades or labels))
    if not cases:
        raise CceError("fixture set contains no query cases")
    return FixtureSet(path=path, corpus=corpus, cases=tuple(cases), exclude=exclude)


def corpus_dir(fixture_path: str, header_corpus: str) -> str:
    """The header corpus joined lexically onto the fixture file's parent, as Rust's `Path` does.

    Nothing is canonicalised (`..` stays), an absolute corpus wins, and a bare file name has an
    empty parent so the corpus comes back unchanged.
    """
    if header_corpus.startswith("/"):
        return header_corpus
    parent = _lexical_parent(fixture_path)
    if not parent:
        return header_corpus
    return parent + header_corpus if parent.endswith("/") else f"{parent}/{header_corpus}"


def _header_exclude(header: dict[str, object], number: int) -> tuple[str, ...]:
    """The header's optional `exclude`: an array of gitignore patterns for the corpus (the
    reference ignores the field, so a set without it reads exactly as there)."""
    value = header.get("exclude", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CceError(
            f'fixture line {number}: "exclude" must be an array of gitignore patterns, '
            'e.g. ["docs/generated/", "*.golden.json"]'
        )
    compile_patterns(value, f"fixture line {number}: exclude pattern")
    return tuple(value)


# --- cases -----------------------------------------------------------------------------------


def _parse_case(obj: dict[str, object], number: int, read_grades: bool, read_labels: bool) -> Case:
    """Checks in the reference's order: query (E6), expected (E7), each anchor (E8–E12), k (E13),
    then, when asked, our `grades` and `irrelevant` extensions."""
    query = obj.get("query")
    if not isinstance(query, str) or not rust_trim(query):
        raise CceError(f'fixture line {number}: missing or empty "query"')
    expected = obj.get("expected")
    if not isinstance(expected, list) or not expected:
        raise CceError(f'fixture line {number}: "expected" must be a non-empty array of anchors')
    anchors = []
    for item in expected:
        if not isinstance(item, str):
            raise CceError(f"fixture line {number}: anchors must be strings")
        try:
            anchors.append(parse_anchor(item))
        except AnchorError as exc:
            raise CceError(f"fixture line {number}: {exc.message}") from None
    case_id = obj.get("id")
    k = obj.get("k", DEFAULT_TOP_K)
    # serde's `as_u64`: only an integer literal in u64 range; `true` is a bool, not an int.
    if type(k) is not int or not 1 <= k <= U64_MAX:
        raise CceError(f'fixture line {number}: "k" must be a positive integer')
    return Case(
        line=number,
        id=case_id if isinstance(case_id, str) else f"q{number}",
        query=rust_trim(query),
        anchors=tuple(anchors),
        k=k,
        grades=_parse_grades(obj, expected, number) if read_grades else None,
        irrelevant=_parse_irrelevant(obj, number) if read_labels else (),
    )


def _parse_grades(obj: dict[str, object], expected: list[object], number: int) -> tuple[int, ...] | None:
    """The optional `grades` object, one grade per anchor (an anchor it does not name gets 1).

    Keys are anchors exactly as written in `expected`. Grades are positive integers because they
    become TREC qrels relevance levels: a 0 would make an anchor listed as expected not relevant,
    and trec_eval reads only integers.
    """
    if "grades" not in obj:
        return None
    grades = obj["grades"]
    if not isinstance(grades, dict):
        raise CceError(
            f'fixture line {number}: "grades" must be an object mapping anchors of "expected" '
            "to positive integer grades"
        )
    checked: dict[str, int] = {}
    for key, value in grades.items():
        if key not in expected:
            raise CceError(
                f'fixture line {number}: "grades" names {rust_debug_str(key)}, '
                'which is not an anchor in "expected"'
            )
        if type(value) is not int or value < 1:
            raise CceError(
                f"fixture line {number}: grade of {rust_debug_str(key)} must be a positive integer"
            )
        checked[key] = value
    return tuple(checked.get(text, 1) if isinstance(text, str) else 1 for text in expected)


def _parse_irrelevant(obj: dict[str, object], number: int) -> tuple[Anchor, ...]:
    """The optional `irrelevant` array: anchors of results a reviewer looked at and judged not
    relevant (trec_eval's grade 0). They never make a result relevant; they make it *judged*
    (`judged_at_k`), and `validate --unjudged` stops listing it."""
    value = obj.get("irrelevant", [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise CceError(f'fixture line {number}: "irrelevant" must be an array of anchors')
    anchors = []
    for item in value:
        try:
            anchors.append(parse_anchor(item))
        except AnchorError as exc:
            raise CceError(f'fixture line {number}: "irrelevant": {exc.message}') from None
    return tuple(anchors)


# --- JSON, with serde_json's accept/reject rules ---------------------------------------------


class _InvalidJson(Exception):
    """A line serde_json would reject; the message imitates serde's, ending `at line 1 column C`."""


class _Rejected(Exception):
    """Raised from a `json` hook for a token serde_json rejects.

    `token` is the token's source text; `offset` is the character serde stops at, counted
    from the token's start (`None`: its last character, where an overflow is noticed).
    """

    def __init__(self, token: str, code: str, offset: int | None) -> None:
        super().__init__(code)
        self.token = token
        self.code = code
        self.offset = offset


def _reject_constant(token: str) -> object:
    """NaN, Infinity and -Infinity are not JSON; serde stops at the `N`/`I`, or after `-I`."""
    if token.startswith("-"):
        raise _Rejected(token, "invalid number", offset=1)
    raise _Rejected(token, "expected value", offset=0)


def _checked_float(token: str) -> float:
    """A number that rounds to ±infinity as a double is out of range for serde."""
    value = float(token)
    if math.isinf(value):
        raise _Rejected(token, "number out of range", offset=None)
    return value


def _checked_int(token: str) -> int | float:
    """serde keeps integers within i64/u64 exact and reads wider ones as doubles.

    The length guard keeps `int()` away from Python's limit on long digit strings; a
    309-digit integer overflows the double and is rejected like an overflowing float.
    """
    if len(token) <= 21:
        value = int(token)
        if _I64_MIN <= value <= U64_MAX:
            return value
    return _checked_float(token)


def _decode_line(line: str) -> object:
    """Decode one line as serde_json would, or raise `_InvalidJson`.

    Python decides syntax; a lexical scan adds the two things only serde rejects while reading
    (lone surrogate escapes, nesting past 127 levels). The scan stops where Python stopped, so
    whichever problem comes first in the line is the one reported, as serde would.
    """
    try:
        value = json.loads(
            line, parse_constant=_reject_constant, parse_float=_checked_float, parse_int=_checked_int
        )
    except json.JSONDecodeError as exc:
        stop, message = exc.pos, _describe_decode_error(line, exc.msg, exc.pos)
    except _Rejected as exc:
        stop = _token_start(line, exc.token)
        where = stop + (len(exc.token) - 1 if exc.offset is None else exc.offset)
        message = _serde_position(exc.code, line, where)
    except RecursionError:  # nesting far past serde's limit, which the scan below locates
        stop, message = len(line), _serde_position("recursion limit exceeded", line, len(line))
    else:
        problem = _serde_only_problem(line, len(line))
        if problem is None:
            return value
        raise _InvalidJson(problem)
    raise _InvalidJson(_serde_only_problem(line, stop) or message)


def _serde_position(code: str, line: str, index: int) -> str:
    """serde_json's `<code> at line 1 column C` for a stop at character `index`.

    serde counts UTF-8 bytes and reports the 1-based column of the byte it was looking at or
    had just consumed, capped at the line's length (so running out of input gives the length).
    """
    encoded = len(line[:index].encode("utf-8", "surrogatepass"))
    return f"{code} at line 1 column {min(encoded + 1, len(line.encode('utf-8', 'surrogatepass')))}"


_LITERALS = {"t": "true", "f": "false", "n": "null"}


def _describe_decode_error(line: str, python_msg: str, pos: int) -> str:
    """Translate a `JSONDecodeError` into serde_json's wording and column.

    serde reports most errors at the offending character (column = index + 1) and running out
    of input at the end of the line; a few, after consuming a bad escape or literal.
    """
    end = len(line)
    innermost = _open_containers(line, pos)[-1:]
    before = line[:pos].rstrip(" \t\n\r")[-1:]
    if python_msg.startswith("Unterminated string"):
        return _serde_position("EOF while parsing a string", line, end)
    if python_msg.startswith("Invalid \\uXXXX"):  # pos is the `u`; serde reads four bytes on
        if pos + 5 > end:
            return _serde_position("EOF while parsing a string", line, end)
        return _serde_position("invalid escape", line, pos + 4)
    if python_msg.startswith("Invalid \\escape"):  # pos is the backslash
        return _serde_position("invalid escape", line, pos + 1)
    if pos >= end:
        if before in (",", ":"):
            return _serde_position("EOF while parsing a value", line, end)
        return _serde_position(
            "EOF while parsing a list" if innermost == "[" else "EOF while parsing an object", line, end
        )
    here = line[pos]
    if before == "," and (innermost, here) in (("[", "]"), ("{", "}")):
        return _serde_position("trailing comma", line, pos)
    if python_msg == "Expecting value" and here == "-":  # serde wants a digit next
        return (
            _serde_position("EOF while parsing a value", line, end)
            if pos + 1 >= end
            else _serde_position("invalid number", line, pos + 1)
        )
    if python_msg == "Expecting value" and here in _LITERALS:  # a misspelt true/false/null
        literal = _LITERALS[here]
        for i in range(1, len(literal)):
            if pos + i >= end:
                return _serde_position("EOF while parsing a value", line, end)
            if line[pos + i] != literal[i]:
                return _serde_position("expected ident", line, pos + i)
    codes = {
        "Extra data": "trailing characters",
        "Expecting ':' delimiter": "expected `:`",
        "Expecting ',' delimiter": "expected `,` or `]`" if innermost == "[" else "expected `,` or `}`",
        "Expecting property name enclosed in double quotes": "key must be a string",
        "Invalid control character at": "control character (\\u0000-\\u001F) found while parsing a string",
    }
    # "Expecting value", and a leading BOM, which serde does not skip either.
    return _serde_position(codes.get(python_msg, "expected value"), line, pos)


# Outside strings: a quote, a bracket, or a number/constant token as Python's scanner reads it.
_STRUCTURE = re.compile(r'["\[\]{}]|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|-?Infinity|NaN')
# Inside a string: the closing quote, a backslash, or a raw surrogate (only from a Python str).
_STRING_EVENT = re.compile('["\\\\\ud800-\udfff]')
_HEX_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_BRACKETS = frozenset("[]{}")


class _Event(NamedTuple):
    """One lexical event: `kind` is `bracket`, `token` (number or constant) or `problem`.

    For a problem, `text` is serde's error code and `at` the character serde stops at; the
    column is only rendered when the problem is the one reported.
    """

    start: int
    kind: str
    text: str
    at: int


_LONE = "lone leading surrogate in hex escape"


def _lexical_events(line: str) -> Iterator[_Event]:
    """Brackets and number tokens outside strings, and rejected surrogates inside them, in order.

    Never raises and always ends on any text, so it can scan lines Python rejected.
    """
    pos = 0
    while (match := _STRUCTURE.search(line, pos)) is not None:
        pos = match.end()
        if match.group() != '"':
            kind = "bracket" if match.group() in _BRACKETS else "token"
            yield _Event(match.start(), kind, match.group(), match.start())
            continue
        while (event := _STRING_EVENT.search(line, pos)) is not None:
            pos = event.end()
            if event.group() == '"':
                break
            if event.group() != "\\":
                yield _Event(event.start(), "problem", _LONE, event.start())
                continue
            escape = _HEX_ESCAPE.match(line, event.start())
            if escape is None:
                pos += 1  # a one-character escape such as \" or \\
                continue
            pos = escape.end()
            unit = int(escape.group(1), 16)
            if 0xDC00 <= unit <= 0xDFFF:
                yield _Event(event.start(), "problem", _LONE, pos - 1)
            elif 0xD800 <= unit <= 0xDBFF:
                low = _HEX_ESCAPE.match(line, pos)
                if low is None:  # serde consumes one more character, two after a backslash
                    consumed = pos + 1 if line.startswith("\\", pos) else pos
                    yield _Event(event.start(), "problem", "unexpected end of hex escape", consumed)
                elif 0xDC00 <= int(low.group(1), 16) <= 0xDFFF:
                    pos = low.end()
                else:
                    yield _Event(event.start(), "problem", _LONE, low.end() - 1)
        else:
            return


def _serde_only_problem(line: str, stop: int) -> str | None:
    """The first lone surrogate or too-deep bracket serde would meet before index `stop`."""
    depth = 0
    for event in _lexical_events(line):
        if event.start >= stop:
            break
        if event.kind == "problem":
            return _serde_position(event.text, line, event.at)
        if event.text in ("[", "{"):
            depth += 1
            if depth > _MAX_DEPTH:
                return _serde_position("recursion limit exceeded", line, event.start)
        elif event.text in ("]", "}"):
            depth -= 1
    return None


def _open_containers(line: str, stop: int) -> str:
    """The brackets still open at index `stop`, outermost first (e.g. `{[`)."""
    stack = ""
    for event in _lexical_events(line):
        if event.start >= stop:
            break
        if event.text in ("[", "{"):
            stack += event.text
        elif event.text in ("]", "}"):
            stack = stack[:-1]
    return stack


def _token_start(line: str, token: str) -> int:
    """Where a rejected number or constant starts: its first occurrence outside strings.

    Python's hooks raise at the first offending token, and an identical earlier token would
    have raised first, so the first occurrence is the one.
    """
    for event in _lexical_events(line):
        if event.kind == "token" and event.text == token:
            return event.start
    return len(line)


# --- paths -----------------------------------------------------------------------------------


def _lexical_parent(path: str) -> str:
    """Rust's `Path::parent` on POSIX, as a string ('' when there is none).

    Empty and `.` components are skipped, except a leading `./`; the last component is
    dropped together with the separators and `.` components before it. This is
    `os.path.dirname` except for inputs such as `a/./f.jsonl`, where Rust gives `a`.
    """
    base = 1 if path.startswith(("/", "./")) or path == "." else 0

    def component_start(end: int) -> int:
        cut = path.rfind("/", base, end)
        return cut + 1 if cut >= 0 else base

    def trim_back(end: int) -> int:
        while end > base and path[component_start(end) : end] in ("", "."):
            end = max(component_start(end) - 1, base)
        return end

    end = trim_back(len(path))
    if end == base:
        return ""
    return path[: trim_back(max(component_start(end) - 1, base))]


def _display_path(path: str) -> str:
    """`Path::display`: undecodable bytes (surrogate-escaped by Python) become U+FFFD."""
    try:
        return os.fsencode(path).decode("utf-8", "replace")
    except UnicodeError:
        return path


def _rust_io_error(exc: OSError) -> str:
    """Rust's `io::Error` display for an OS error: the C library's text plus `(os error N)`."""
    if exc.errno is not None and exc.strerror:
        return f"{exc.strerror} (os error {exc.errno})"
    return str(exc)
