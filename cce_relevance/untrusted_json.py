"""Reading JSON that someone else wrote: a report, a store, an event payload, a retriever's answer.

`loads` accepts only what the rest of the code can handle, and says why in one line otherwise
(`JsonInputError`, a `ValueError`, which each caller words as a `CceError` naming its file):

* UTF-8 text; a byte order mark is named as such, not reported as a syntax error at column 1;
* nesting at most `MAX_DEPTH` (64) arrays/objects deep: our documents nest under 10 levels, and a
  deeper one (100,000 `[`) would otherwise exhaust the parser's recursion;
* integers within 64 bits (from −2⁶³ to 2⁶⁴ − 1, what the reference's fields can hold), finite
  numbers only (no `NaN`, `Infinity`, or `1e999`);
* strings that UTF-8 can encode: a lone surrogate escape (`"\\ud800"`) is refused, or it would fail
  later, wherever the text is printed or written.

`parse` reads such a text in hand (an answer, one line of a file) and `read_document` such a
document from a file, naming where it came from in the `CceError` when it cannot (and, for a
file, what it should hold); `expect_object` and `expect_array` check the shape of what was read,
one field at a time, naming the field (`where`) in the error.

`Field` is the schema-strict reader of a document that crosses a trust boundary (a shard state,
a saved side, a publish artifact): one value with the file it came from and its field path,
read by what it must be — an object with exactly these keys, an integer in a range (never a
boolean), a fraction in 0..1, a commit (40 or 64 lowercase hex digits), one line of text (no
control character, CR, LF, NUL or line separator; at most `LINE_LIMIT` characters), a
relative normalised POSIX path (no leading `/` or `-`, no `.`, `..` or empty component, no
backslash or drive), a list of one of these, or null. Anything else is a `CceError` (exit 2) naming
both: `shard-1-of-3.json: field "edited[1]": expected a path, got null`.

The fixture parser (`evaluation.fixtures`) has its own, stricter reader that mirrors serde_json's
messages byte for byte; this one is for everything else.
"""

from __future__ import annotations

import json
import math
import os
import re
import unicodedata
from collections.abc import Callable, Collection
from itertools import accumulate
from typing import Any, NoReturn, TypeVar

from cce_relevance.errors import CceError
from cce_relevance.input_files import open_input

MAX_DEPTH = 64
LINE_LIMIT = 4096  # characters of one line of text: a name, a symbol, a command, a path
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JsonInputError(ValueError):
    """The text is not JSON this program reads; the message says why (without naming the file)."""


class ShapeError(JsonInputError):
    """The JSON parses, but a value is not of the type or shape the document needs there."""


def decode_utf8(data: bytes) -> str:
    """`data` as UTF-8 text; a BOM or an invalid byte is a `JsonInputError` naming the line."""
    if data.startswith(b"\xef\xbb\xbf"):
        raise JsonInputError(
            "starts with a UTF-8 byte order mark (BOM): save the file as UTF-8 without a BOM"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise JsonInputError(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}") from None


def nesting_depth(text: str) -> int:
    """How deeply arrays and objects nest in JSON `text` (brackets inside strings do not count)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(accumulate(_STEP[c] for c in brackets), default=0)


def loads(data: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Parse JSON by the rules above, or raise `JsonInputError`."""
    text = decode_utf8(data) if isinstance(data, bytes) else data
    if text.startswith("\ufeff"):
        raise JsonInputError(
            "starts with a UTF-8 byte order mark (BOM): save the file as UTF-8 without a BOM"
        )
    depth = nesting_depth(text)
    if depth > max_depth:
        raise JsonInputError(f"nested {depth} levels deep; at most {max_depth} are allowed")
    try:
        value = json.loads(text, parse_constant=_constant, parse_int=_integer, parse_float=_float)
    except json.JSONDecodeError as exc:
        raise JsonInputError(f"invalid JSON: {exc}") from None
    except RecursionError:  # a depth the scan could not see (unbalanced brackets); never deeper than it
        raise JsonInputError(f"nested more than {max_depth} levels deep") from None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise JsonInputError(
            f"a string holds {exc.object[exc.start : exc.end]!r}, a lone surrogate that UTF-8 cannot encode"
        ) from None
    return value


def parse(data: str | bytes, where: str, problem: str) -> Any:
    """JSON text in hand (an answer, one line of a file) read by `loads`'s rules, or an input
    error `WHERE: PROBLEM (why)`: `runs.jsonl line 3: not a JSON object (invalid JSON: ...)`."""
    try:
        return loads(data)
    except JsonInputError as exc:
        raise CceError(f"{where}: {problem} ({exc})") from None


def read_document(
    path: str | os.PathLike[str], what: str, *, name: str | None = None, limit: int | None = None
) -> Any:
    """The JSON document in the file at `path`, read by `loads`'s rules: a file that cannot be
    read, holds more than `limit` bytes or is not such JSON is an input error naming the file
    (as `name`, default `path`) and `what` it should hold (`could not read report r.json: invalid
    JSON: ...`)."""
    shown = os.fspath(path) if name is None else name
    try:
        with open_input(path) as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
        if limit is not None and len(data) > limit:
            raise JsonInputError(f"larger than the {limit} bytes such a file can need")
        return loads(data)
    except OSError as exc:
        raise CceError(f"could not read {what} {shown}: {exc.strerror or exc}") from None
    except JsonInputError as exc:
        raise CceError(f"could not read {what} {shown}: {exc}") from None


def expect_object(
    value: Any,
    where: str,
    *,
    keys: Collection[str] | None = None,
    error: type[Exception] = ShapeError,
) -> dict[str, Any]:
    """`value` when it is a JSON object (with exactly `keys`, when given); else `error` naming
    `where` (`entries[3].sets: expected an object, got a JSON array`)."""
    if not isinstance(value, dict):
        raise error(f"{where}: expected an object, got a JSON {describe_type(value)}")
    if keys is not None:
        missing = [k for k in keys if k not in value]
        extra = sorted(k for k in value if k not in keys)
        if missing or extra:
            problem = f"lacks {', '.join(missing)}" if missing else f"has unknown fields {', '.join(extra)}"
            raise error(f"{where} {problem}: expected exactly {', '.join(keys)}")
    return value


def expect_array(value: Any, where: str, *, error: type[Exception] = ShapeError) -> list[Any]:
    """`value` when it is a JSON array; else `error` naming `where`."""
    if not isinstance(value, list):
        raise error(f"{where}: expected an array, got a JSON {describe_type(value)}")
    return value


def describe_type(value: Any) -> str:
    """A JSON value's type in JSON's words (`null`, not `NoneType`), for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not a JSON number")


def _integer(token: str) -> int:
    digits = len(token.lstrip("-"))
    value = int(token) if digits <= 20 else None
    if value is None or not _INT_MIN <= value <= _INT_MAX:
        shown = token if digits <= 24 else f"{token[:12]}…({digits} digits)"
        raise JsonInputError(f"the integer {shown} is out of range (at most 64 bits)")
    return value


def _float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise JsonInputError(f"the number {token[:24]} is out of range (not a finite double)")
    return value


T = TypeVar("T")
_BARE_KEY = re.compile(r"[A-Za-z0-9_@:/+-][A-Za-z0-9_.@:/+-]*\Z")
_COMMIT = re.compile(r"(?:[0-9a-f]{40}|[0-9a-f]{64})\Z")
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_DRIVE = re.compile(r"[A-Za-z]:")
_SHOWN = 40  # characters of a refused string the message shows


class Field:
    """One value of an untrusted document and where it is: the file (`source`, as the message
    names it) and the field path inside it, `where` (`sides.head.sets[0].corpus`; empty at the root).

    Each reader returns the value when it is what the document must hold there, and raises a
    `CceError` naming the file and the field otherwise; `object` and `items` give the children
    as `Field`s, so a document is read top-down in the shape its schema has."""

    __slots__ = ("source", "value", "where")

    def __init__(self, value: Any, source: str, where: str = "") -> None:
        self.value = value
        self.source = source
        self.where = where

    def refuse(self, problem: str) -> NoReturn:
        """Raise the input error for this field: `FILE: field "PATH": PROBLEM`."""
        where = f'{self.source}: field "{self.where}"' if self.where else self.source
        raise CceError(f"{where}: {problem}")

    def expected(self, what: str) -> NoReturn:
        """Raise `expected WHAT, got ...` for this field."""
        self.refuse(f"expected {what}, got {_shown(self.value)}")

    def key(self, name: str) -> Field:
        """The child `name` of this object (no check of its own)."""
        if _BARE_KEY.match(name):
            child = f"{self.where}.{name}" if self.where else name
        else:  # quoted and escaped: a key is data too
            child = f"{self.where}['{json.dumps(name[:_SHOWN], ensure_ascii=True)[1:-1]}']"
        return Field(self.value.get(name) if isinstance(self.value, dict) else None, self.source, child)

    def object(self, keys: Collection[str], optional: Collection[str] = ()) -> dict[str, Field]:
        """The fields of a JSON object holding every one of `keys`, any of `optional`, and
        nothing else."""
        if not isinstance(self.value, dict):
            self.expected("an object")
        missing = [k for k in keys if k not in self.value]
        if missing:
            self.refuse(f"lacks {', '.join(missing)}: expected exactly {_listed(keys, optional)}")
        extra = sorted(k for k in self.value if k not in keys and k not in optional)
        if extra:
            names = ", ".join(_shown(k) for k in extra[:3])
            self.refuse(f"has unknown fields {names}: expected exactly {_listed(keys, optional)}")
        return {k: self.key(k) for k in self.value}

    def entries(self, key: Callable[[Field], str] | None = None) -> list[tuple[str, Field]]:
        """A JSON object of any keys, each key read by `key` (default: one line of text), in
        the document's order."""
        if not isinstance(self.value, dict):
            self.expected("an object")
        check = Field.line if key is None else key
        return [(check(Field(k, self.source, f"{self.where} (a key)")), self.key(k)) for k in self.value]

    def items(self, *, length: int | None = None) -> list[Field]:
        """The items of a JSON array (of exactly `length`, when given)."""
        if not isinstance(self.value, list) or (length is not None and len(self.value) != length):
            self.expected("an array" if length is None else f"an array of {length}")
        return [Field(v, self.source, f"{self.where}[{i}]") for i, v in enumerate(self.value)]

    def list_of(self, read: Callable[[Field], T]) -> list[T]:
        """A JSON array whose every item is read by `read` (`field.list_of(Field.path)`)."""
        return [read(item) for item in self.items()]

    def optional(self, read: Callable[[Field], T]) -> T | None:
        """None for null; else the value read by `read`."""
        return None if self.value is None else read(self)

    def const(self, value: str) -> str:
        """This exact string (a schema id)."""
        if self.value != value:
            self.expected(json.dumps(value))
        return value

    def choice(self, values: Collection[str]) -> str:
        """One of `values`."""
        if not isinstance(self.value, str) or self.value not in values:
            self.expected(f"one of {', '.join(json.dumps(v) for v in values)}")
        return self.value

    def boolean(self) -> bool:
        """`true` or `false`."""
        if not isinstance(self.value, bool):
            self.expected("true or false")
        return self.value

    def integer(self, low: int = 0, high: int = _INT_MAX) -> int:
        """A whole number from `low` to `high` (a boolean is no number here, nor is `1.0`)."""
        if type(self.value) is not int or not low <= self.value <= high:
            self.expected(f"an integer from {low}" + ("" if high == _INT_MAX else f" to {high}"))
        return self.value

    def number(self) -> float:
        """A finite number (an integer read as a float: a value scored as 0 may be saved as `0`)."""
        if type(self.value) not in (int, float) or not math.isfinite(self.value):
            self.expected("a finite number")
        return float(self.value)

    def fraction(self) -> float:
        """A number from 0 to 1 (a precision, a recall, an nDCG)."""
        value = self.number()
        if not 0.0 <= value <= 1.0:
            self.expected("a number from 0 to 1")
        return value

    def text(self) -> str:
        """A string, any (a fixture file's text, a golden's)."""
        if not isinstance(self.value, str):
            self.expected("a string")
        return self.value

    def line(self, limit: int = LINE_LIMIT) -> str:
        """One line of text: a string of at most `limit` characters with no control character
        (CR, LF, NUL, ESC, ...) and no line or paragraph separator, so it prints as one line."""
        text = self.text()
        if len(text) > limit:
            self.refuse(f"expected at most {limit} characters of text, got {len(text)}")
        bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Zl", "Zp")), None)
        if bad is not None:
            self.expected(f"one line of text (no U+{ord(bad):04X})")
        return text

    def name(self) -> str:
        """A non-empty line of text (a backend, a metric, an embedder)."""
        text = self.line()
        if not text:
            self.expected("a non-empty name")
        return text

    def commit(self) -> str:
        """A commit id: 40 (SHA-1) or 64 (SHA-256) lowercase hex digits."""
        if not isinstance(self.value, str) or not _COMMIT.match(self.value):
            self.expected("a commit (40 or 64 lowercase hex digits)")
        return self.value

    def sha256(self) -> str:
        """A SHA-256 digest: 64 lowercase hex digits."""
        if not isinstance(self.value, str) or not _SHA256.match(self.value):
            self.expected("a SHA-256 digest (64 lowercase hex digits)")
        return self.value

    def path(self, *, root: bool = False, under: str = ".") -> str:
        """A relative, normalised POSIX path (`eval/search.jsonl`): one line of text with no
        leading `/` or `-` (never an option where a program takes one), no backslash, no drive
        (`C:`), and no empty, `.` or `..` component; so joined to a directory it stays inside it.
        `root`: `.` (the directory itself) too. `under`: the path is relative to this directory
        of the workspace (a path read so), and may climb out of it with leading `..` parts, as
        far as the workspace (`../golden.json` under `sub`, never under `.`)."""
        if not isinstance(self.value, str):
            self.expected("a path")
        text = self.line()
        if root and text == ".":
            return text
        parts = text.split("/")
        climbs = next((i for i, part in enumerate(parts) if part != ".."), len(parts))
        depth = 0 if under == "." else len(under.split("/"))
        if (
            text[:1] in ("", "-")
            or "\\" in text
            or _DRIVE.match(text)
            or climbs > depth
            or climbs == len(parts)
            or any(part in ("", ".", "..") for part in parts[climbs:])
        ):
            self.expected("a relative path inside the workspace (no leading / or -, no . or .. part)")
        return text


def _shown(value: Any) -> str:
    """A refused value as the message shows it: a string quoted, escaped and cut to `_SHOWN`
    characters (it is data from outside: it never reaches the log raw), a number as written,
    else its JSON type."""
    if isinstance(value, str):
        cut = value if len(value) <= _SHOWN else value[:_SHOWN] + "..."
        return json.dumps(cut, ensure_ascii=True)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        text = repr(value)
        return text if len(text) <= 24 else f"a number of {len(text)} digits"
    return "null" if value is None else f"an {describe_type(value)}"


def _listed(keys: Collection[str], optional: Collection[str]) -> str:
    return ", ".join([*keys, *(f"{k} (optional)" for k in optional)])
