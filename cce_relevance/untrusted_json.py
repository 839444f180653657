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

The fixture parser (`evaluation.fixtures`) has its own, stricter reader that mirrors serde_json's
messages byte for byte; this one is for everything else.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 64
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JsonInputError(ValueError):
    """The text is not JSON this program reads; the message says why (without naming the file)."""


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
