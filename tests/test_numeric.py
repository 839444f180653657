"""numeric.py (§numbers, §score-key) and strings.py (§strings)."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.numeric import I64_MAX, I64_MIN, round_half_away, score_key, seq_sum
from cce_relevance.reporting.numbers import format6
from cce_relevance.strings import rust_split_whitespace, rust_trim

# ---------------------------------------------------------------- round_half_away (§numbers)


@pytest.mark.parametrize(
    ("y", "expected"),
    [
        (2.5, 3),  # spec example: ties away from zero (Python's round() gives 2)
        (-2.5, -3),  # spec example
        (0.5, 1),
        (-0.5, -1),
        (1.5, 2),
        (3.5, 4),
        (1.4999999999999998, 1),
        (0.49999999999999994, 0),  # spec: floor(y + 0.5) wrongly gives 1 here
        (-0.49999999999999994, 0),
        (0.0, 0),
        (-0.0, 0),
        (4503599627370495.5, 4503599627370496),  # 2^52 - 0.5: largest tie with a fraction
        (9007199254740993.0, 9007199254740992),  # 2^53 + 1 is not a double: literal is 2^53
        (123456.5, 123457),
    ],
)
def test_round_half_away_examples(y, expected):
    got = round_half_away(y)
    assert got == expected
    assert type(got) is int


def test_round_half_away_nan_is_zero():
    # §numbers: conversion to i64 maps NaN to 0 (Rust `as i64`).
    assert round_half_away(float("nan")) == 0


@pytest.mark.parametrize(
    ("y", "expected"),
    [
        (float("inf"), I64_MAX),
        (float("-inf"), I64_MIN),
        (1e300, I64_MAX),
        (-1e300, I64_MIN),
        (2.0**63, I64_MAX),  # one past i64::MAX saturates
        (-(2.0**63), I64_MIN),  # exactly i64::MIN is representable
        (9.2233720368547748e18, 9223372036854774784),  # largest double below 2^63 is kept exactly
    ],
)
def test_round_half_away_saturates_to_i64(y, expected):
    assert I64_MAX == 2**63 - 1 and I64_MIN == -(2**63)
    assert round_half_away(y) == expected


@settings(max_examples=400, deadline=None)
@given(st.floats(min_value=-1e15, max_value=1e15, allow_nan=False))
def test_round_half_away_matches_decimal_half_up(y):
    # §numbers names Decimal.quantize(ROUND_HALF_UP) as an exact reference.
    assert round_half_away(y) == int(Decimal(y).quantize(Decimal(1), rounding=ROUND_HALF_UP))


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_round_half_away_exact_halves(n):
    # n + 0.5 (exact in doubles for |n| <= 2^52) always moves away from zero.
    y = n + 0.5
    expected = n + 1 if y > 0 else n
    assert round_half_away(y) == expected


# ---------------------------------------------------------------- score_key (§score-key)


def test_score_key_multiplies_before_rounding():
    # 0.1234565 is stored slightly below ...65 (exact decimal 0.12345649999999999679...), but the
    # IEEE product with 1e6 is exactly 123456.5, which rounds away from zero to 123457 (§score-key and
    # §number-format). A decimal-exact rounding would give 123456.
    assert Decimal(0.1234565) < Decimal("0.1234565")
    assert 0.1234565 * 1000000.0 == 123456.5
    assert score_key(0.1234565) == 123457
    assert format6(0.1234565) == "0.123457"


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (0.0, 0),
        (0.0000004, 0),  # below half a micro-unit: key 0 (the BM25 drop threshold, §bm25)
        (0.0000005, 1),  # 5e-7 * 1e6 == 0.5 exactly in doubles -> 1
        (-0.0000005, -1),
        (0.902322, 902322),
        (1.0, 1000000),
        (-0.25, -250000),
        (float("nan"), 0),
    ],
)
def test_score_key_examples(x, expected):
    assert score_key(x) == expected


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_score_key_is_round_half_away_of_product(x):
    p = x * 1000000.0
    assert score_key(x) == int(Decimal(p).quantize(Decimal(1), rounding=ROUND_HALF_UP))


# ---------------------------------------------------------------- seq_sum (§numbers)


def test_seq_sum_is_plain_left_to_right():
    # 1e16 + 1.0 rounds back to 1e16 (ulp 2, tie to even), so a left-to-right loop gives 0.0;
    # math.fsum (and Python 3.12's sum) give 1.0. The spec demands the plain loop.
    values = [1e16, 1.0, -1e16]
    assert math.fsum(values) == 1.0
    assert seq_sum(values) == 0.0
    assert seq_sum([]) == 0.0
    assert seq_sum(iter([0.1, 0.2, 0.3])) == (0.1 + 0.2) + 0.3


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=30))
def test_seq_sum_property(values):
    total = 0.0
    for v in values:
        total += v
    got = seq_sum(values)
    assert got == total or (math.isnan(got) and math.isnan(total))


# ---------------------------------------------------------------- strings (§strings)

# Unicode White_Space (Rust char::is_whitespace): 25 code points.
WHITE_SPACE_CODEPOINTS = (
    list(range(0x09, 0x0E))
    + [0x20, 0x85, 0xA0, 0x1680]
    + list(range(0x2000, 0x200B))
    + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
)


def test_white_space_set_has_25_code_points():
    assert len(set(WHITE_SPACE_CODEPOINTS)) == 25


def test_rust_trim_does_not_strip_information_separators():
    # U+001C..U+001F are whitespace to Python's str.strip() but not to Rust (§strings).
    for cp in range(0x1C, 0x20):
        s = chr(cp) + "a" + chr(cp)
        assert s.strip() == "a"  # the Python behaviour the spec warns about
        assert rust_trim(s) == s
        assert rust_split_whitespace(f"x{chr(cp)}y z") == [f"x{chr(cp)}y", "z"]


def test_rust_trim_strips_unicode_white_space():
    ws = " \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000"
    assert rust_trim(ws + "a b" + ws) == "a b"
    assert rust_trim("") == ""
    assert rust_trim("   ") == ""


def test_rust_trim_keeps_non_white_space_format_characters():
    # U+200B ZERO WIDTH SPACE, U+180E MONGOLIAN VOWEL SEPARATOR and U+FEFF BOM are not White_Space.
    for cp in (0x200B, 0x180E, 0xFEFF, 0x2060):
        s = chr(cp) + "a"
        assert rust_trim(s) == s


def test_rust_trim_classifies_every_bmp_code_point():
    ws = set(WHITE_SPACE_CODEPOINTS)
    wrong = [
        cp
        for cp in range(0x10000)
        if not (0xD800 <= cp <= 0xDFFF) and (rust_trim(chr(cp)) == "") != (cp in ws)
    ]
    assert wrong == []


def test_rust_split_whitespace():
    assert rust_split_whitespace("") == []
    assert rust_split_whitespace(" \u3000 ") == []
    assert rust_split_whitespace("  a\u2003b\n\nc ") == ["a", "b", "c"]
    assert rust_split_whitespace("config.yml, please") == ["config.yml,", "please"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "b", " ", "\t", "\x1c", "\x1f", "\u3000", "\u200b", "\n"])))
def test_rust_split_whitespace_property(text):
    ws = {chr(c) for c in WHITE_SPACE_CODEPOINTS}
    pieces, cur = [], ""
    for ch in text:
        if ch in ws:
            if cur:
                pieces.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        pieces.append(cur)
    assert rust_split_whitespace(text) == pieces
    trimmed = text
    while trimmed and trimmed[0] in ws:
        trimmed = trimmed[1:]
    while trimmed and trimmed[-1] in ws:
        trimmed = trimmed[:-1]
    assert rust_trim(text) == trimmed
