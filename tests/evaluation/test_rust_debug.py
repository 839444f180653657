"""Rust `Debug` quoting of strings (§errors), the `<q:…>` form of error messages."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.evaluation.rust_debug import UNICODE_VERSION, rust_debug_str

# `format!("{:?}", c.to_string())` printed by rustc 1.95 (Unicode 17.0.0) for one character.
# The last twelve were assigned after Unicode 14: Python's stdlib calls them Cn, Rust prints them.
RUSTC_1_95 = [
    (0x0000, '"\\0"'),
    (0x0009, '"\\t"'),
    (0x000A, '"\\n"'),
    (0x000D, '"\\r"'),
    (0x001B, '"\\u{1b}"'),
    (0x001C, '"\\u{1c}"'),
    (0x001F, '"\\u{1f}"'),
    (0x0020, '" "'),
    (0x0022, '"\\""'),
    (0x0027, '"\'"'),
    (0x005C, '"\\\\"'),
    (0x007F, '"\\u{7f}"'),
    (0x0085, '"\\u{85}"'),
    (0x00A0, '"\\u{a0}"'),
    (0x00AD, '"\\u{ad}"'),
    (0x00E9, '"é"'),
    (0x0301, '"\\u{301}"'),
    (0x0378, '"\\u{378}"'),
    (0x05D0, '"א"'),
    (0x0600, '"\\u{600}"'),
    (0x09BE, '"\\u{9be}"'),
    (0x200B, '"\\u{200b}"'),
    (0x200C, '"\\u{200c}"'),
    (0x200D, '"\\u{200d}"'),
    (0x2028, '"\\u{2028}"'),
    (0x2029, '"\\u{2029}"'),
    (0x3000, '"\\u{3000}"'),
    (0x65E5, '"日"'),
    (0xE000, '"\\u{e000}"'),
    (0xFEFF, '"\\u{feff}"'),
    (0xFFFD, '"\ufffd"'),
    (0xFFFF, '"\\u{ffff}"'),
    (0x1F600, '"\U0001f600"'),
    (0xE0020, '"\\u{e0020}"'),
    (0xE0100, '"\\u{e0100}"'),
    (0xF0000, '"\\u{f0000}"'),
    (0x10FFFF, '"\\u{10ffff}"'),
    (0x13DA2, '"\U00013da2"'),
    (0x18DC7, '"\U00018dc7"'),
    (0x1CCB4, '"\U0001ccb4"'),
    (0x2EC6B, '"\U0002ec6b"'),
    (0x31478, '"\U00031478"'),
    (0x31B5F, '"\U00031b5f"'),
    (0x31C89, '"\U00031c89"'),
    (0x3244B, '"\U0003244b"'),
    (0x32708, '"\U00032708"'),
    (0x32718, '"\U00032718"'),
    (0x32AFE, '"\U00032afe"'),
    (0x32D97, '"\U00032d97"'),
]

# Other_Grapheme_Extend characters that are neither Cf nor Mn/Me (§errors).
OTHER_GRAPHEME_EXTEND = [
    *(0x09BE, 0x09D7, 0x0B3E, 0x0B57, 0x0BBE, 0x0BD7, 0x0CC0, 0x0CC2, 0x0CC7, 0x0CC8, 0x0CCA),
    *(0x0CCB, 0x0CD5, 0x0CD6, 0x0D3E, 0x0D57, 0x0DCF, 0x0DDF, 0x1715, 0x1734, 0x1B35, 0x1B3B),
    *(0x1B3D, 0x1B43, 0x1B44, 0x1BAA, 0x1BF2, 0x1BF3, 0x302E, 0x302F, 0xA953, 0xA9C0, 0xFF9E),
    *(0xFF9F, 0x111C0, 0x11235, 0x1133E, 0x1134D, 0x11357, 0x113B8, 0x113C2, 0x113C5, 0x113C7),
    *(0x113C8, 0x113C9, 0x113CF, 0x114B0, 0x114BD, 0x115AF, 0x116B6, 0x11930, 0x1193D, 0x11F41),
    *(0x16FF0, 0x16FF1, 0x1D165, 0x1D166, 0x1D16D, 0x1D16E, 0x1D16F, 0x1D170, 0x1D171, 0x1D172),
]


def test_unicode_data_is_the_version_rustc_1_95_uses() -> None:
    """Without `unicodedata2` 17.0 about 15,000 characters would be quoted differently."""
    assert UNICODE_VERSION == "17.0.0"


@pytest.mark.parametrize(("code_point", "expected"), RUSTC_1_95)
def test_matches_rustc_for_single_characters(code_point: int, expected: str) -> None:
    assert rust_debug_str(chr(code_point)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", '""'),
        ("auth.py#", '"auth.py#"'),
        ("cce.relevance/v1", '"cce.relevance/v1"'),
        ('say "hi"\\', '"say \\"hi\\"\\\\"'),
        ("tab\there\r\n\0", '"tab\\there\\r\\n\\0"'),
        ("it's", '"it\'s"'),
        ("\x1b[0m", '"\\u{1b}[0m"'),
        ("naïve 日本 😀", '"naïve 日本 😀"'),
        ("a\u00a0b", '"a\\u{a0}b"'),
        ("zero\u200bwidth", '"zero\\u{200b}width"'),
        ("e\u0301", '"e\\u{301}"'),
        ("\u0301e", '"\\u{301}e"'),
        ("\ue000", '"\\u{e000}"'),
        ("\ud800", '"\\u{d800}"'),
    ],
)
def test_examples(text: str, expected: str) -> None:
    assert rust_debug_str(text) == expected


@pytest.mark.parametrize("code_point", OTHER_GRAPHEME_EXTEND)
def test_grapheme_extenders_outside_mn_me_are_escaped(code_point: int) -> None:
    """Per character, not per position: escaped at the start and after a letter alike."""
    hex_form = f"\\u{{{code_point:x}}}"
    assert len(OTHER_GRAPHEME_EXTEND) == 63
    assert rust_debug_str(chr(code_point)) == f'"{hex_form}"'
    assert rust_debug_str("a" + chr(code_point) + "b") == f'"a{hex_form}b"'


_ESCAPE = re.compile(r"\\u\{([0-9a-f]+)\}|\\(.)", re.DOTALL)
_SIMPLE = {"0": "\0", "t": "\t", "r": "\r", "n": "\n", '"': '"', "\\": "\\"}


def _unescape(quoted: str) -> str:
    body = quoted[1:-1]
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else _SIMPLE[m.group(2)], body)


@given(st.text())
def test_escaping_is_lossless(text: str) -> None:
    quoted = rust_debug_str(text)
    assert quoted.startswith('"') and quoted.endswith('"')
    assert _unescape(quoted) == text


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\')))
def test_printable_ascii_is_kept_as_is(text: str) -> None:
    assert rust_debug_str(text) == f'"{text}"'
