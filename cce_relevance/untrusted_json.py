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

`read_document` reads such a document from a file, naming the file and what it should hold in
the `CceError` when it cannot; `expect_object` and `expect_array` check the shape of what was
read, one field at a time, naming the field (`where`) in the error.

The fixture parser (`evaluation.fixtures`) has its own, stricter reader that mirrors serde_json's
messages byte for byte; this one is for everything else.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Collection
from itertools import accumulate
from typing import Any

from cce_relevance.errors import CceError

MAX_DEPTH = 64
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


def read_document(
    path: str | os.PathLike[str], what: str, *, name: str | None = None, limit: int | None = None
) -> Any:
    """The JSON document in the file at `path`, read by `loads`'s rules: a file that cannot be
    read, holds more than `limit` bytes or is not such JSON is an input error naming the file
    (as `name`, default `path`) and `what` it should hold (`could not read report r.json: invalid
    JSON: ...`)."""
    shown = os.fspath(path) if name is None else name
    try:
        with open(path, "rb") as handle:
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
