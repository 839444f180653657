"""String primitives with the reference's (Rust's) semantics, shared by every room.

Rust's `str::trim` and `split_whitespace` use the Unicode White_Space property. Python's
`str.strip()`/`str.split()` additionally treat U+001C–U+001F as whitespace, which would make a
fixture line or a query parse differently from the reference, so these helpers spell the set out.
"""

from __future__ import annotations

import json
import re

# Unicode White_Space: TAB..CR, space, NEL, NBSP, OGHAM SPACE MARK, U+2000..U+200A,
# LINE/PARAGRAPH SEPARATOR, NARROW NBSP, MEDIUM MATHEMATICAL SPACE, IDEOGRAPHIC SPACE.
WHITE_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)
_SPLIT_RE = re.compile(f"[{re.escape(WHITE_SPACE)}]+")


def rust_trim(text: str) -> str:
    """`str::trim`: strip Unicode White_Space from both ends (not U+001C–U+001F)."""
    return text.strip(WHITE_SPACE)


def rust_split_whitespace(text: str) -> list[str]:
    """`str::split_whitespace`: non-empty pieces between runs of Unicode White_Space."""
    return [p for p in _SPLIT_RE.split(text) if p]


def rust_lines(text: str) -> list[str]:
    """`str::lines`: split on LF, drop one CR right before each LF, no phantom final empty line.

    A final line without LF keeps a trailing CR, as current Rust toolchains do.
    """
    *terminated, last = text.split("\n")
    lines = [line.removesuffix("\r") for line in terminated]
    return lines + [last] if last else lines


def rust_line_count(text: str) -> int:
    """`len(rust_lines(text))` without splitting: one line per LF, and one for a last line without LF."""
    return text.count("\n") + (not text.endswith("\n") and text != "")


def escape_unprintable(text: str) -> str:
    """Spell every unprintable character but TAB as `\\uXXXX`: untrusted text that cannot drive a terminal."""
    return "".join(c if c.isprintable() or c == "\t" else f"\\u{ord(c):04x}" for c in text)


def quoted(text: str) -> str:
    """`text` as a JSON string literal, safe to print: how messages show names, ids and paths."""
    return escape_unprintable(json.dumps(text, ensure_ascii=False))
