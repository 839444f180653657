"""Rust's `Debug` rendering of a string: the `<q:…>` form of error messages (§errors).

Upstream formats anchors, schema values and backend names with `{:?}`, so an error message
shows e.g. `"auth.py#"` with Rust's escaping rules. Those rules depend on Unicode data: a
character is escaped when its general category marks it unprintable or when it extends a
grapheme. rustc 1.95 carries Unicode 17.0; Python 3.11's `unicodedata` is Unicode 14.0 and
would print about 15,000 newer characters as `\\u{…}` where Rust prints them raw, so the
`unicodedata2` backport is preferred when it is installed.
"""

from __future__ import annotations

try:
    import unicodedata2 as _unicodedata
except ImportError:  # pragma: no cover - exercised only without the optional backport
    import unicodedata as _unicodedata

UNICODE_VERSION: str = _unicodedata.unidata_version

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\t": "\\t", "\r": "\\r", "\n": "\\n", "\0": "\\0"}

# Categories Rust's `is_printable` rejects: controls, format, surrogates, private use,
# unassigned, and the separators (U+0020 SPACE is special-cased as printable).
_UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})

# Grapheme_Extend = Mn + Me + Other_Grapheme_Extend. The Other_Grapheme_Extend characters
# that are neither Cf (already unprintable) nor Mn/Me: spacing marks (Mc) and two Lm, as of
# Unicode 17.0. Rust's `escape_debug` escapes every grapheme extender in a `str`.
_OTHER_GRAPHEME_EXTEND = frozenset(
    [
        0x09BE, 0x09D7, 0x0B3E, 0x0B57, 0x0BBE, 0x0BD7, 0x0CC0, 0x0CC2, 0x0CC7, 0x0CC8,
        0x0CCA, 0x0CCB, 0x0CD5, 0x0CD6, 0x0D3E, 0x0D57, 0x0DCF, 0x0DDF, 0x1715, 0x1734,
        0x1B35, 0x1B3B, 0x1B3D, 0x1B43, 0x1B44, 0x1BAA, 0x1BF2, 0x1BF3, 0x302E, 0x302F,
        0xA953, 0xA9C0, 0xFF9E, 0xFF9F, 0x111C0, 0x11235, 0x1133E, 0x1134D, 0x11357,
        0x113B8, 0x113C2, 0x113C5, 0x113C7, 0x113C8, 0x113C9, 0x113CF, 0x114B0, 0x114BD,
        0x115AF, 0x116B6, 0x11930, 0x1193D, 0x11F41, 0x16FF0, 0x16FF1, 0x1D165, 0x1D166,
        0x1D16D, 0x1D16E, 0x1D16F, 0x1D170, 0x1D171, 0x1D172,
    ]
)  # fmt: skip


def _needs_unicode_escape(c: str) -> bool:
    """True when Rust prints `c` as `\\u{hex}`: unprintable, or a grapheme extender."""
    if c == " ":
        return False
    category = _unicodedata.category(c)
    if category in _UNPRINTABLE_CATEGORIES:
        return True
    return category in ("Mn", "Me") or ord(c) in _OTHER_GRAPHEME_EXTEND


def rust_debug_str(s: str) -> str:
    """`format!("{:?}", s)`: quoted, with Rust's per-character escapes.

    The rule is per character and position-independent (a combining mark is escaped at the
    start of the string and after a letter alike); `'` is not escaped inside a `str`.
    """
    out = ['"']
    for c in s:
        short = _SHORT_ESCAPES.get(c)
        if short is not None:
            out.append(short)
        elif _needs_unicode_escape(c):
            out.append(f"\\u{{{ord(c):x}}}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)
