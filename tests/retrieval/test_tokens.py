"""Tokenizer (§tokenizer) and the `cce.tokens/v1` estimator (§token-estimate)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.tokens import ESTIMATOR_ID, ascii_lower, estimate_tokens, tokenize, unique_tokens
from tests.retrieval.corpora import ref_tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hashPassword(user_id)", ["hashpassword", "user_id"]),  # spec example (no camelCase split)
        ("cafébar", ["caf", "bar"]),  # spec example: every byte of é separates
        ("", []),
        ("???", []),
        ("日本語", []),
        ("a1 2b __x__", ["a1", "2b", "__x__"]),
        ("a a A", ["a", "a", "a"]),  # repeats kept, ASCII-lowercased
        ("naïve", ["na", "ve"]),
        ("ÀBC", ["bc"]),  # À is not ASCII
        ("１２３ ab", ["ab"]),  # fullwidth digits are not [0-9]
        ("\u212a", []),  # KELVIN SIGN: str.lower() gives 'k', but it is not an ASCII letter
        ("İstanbul", ["stanbul"]),
        ("foo-bar.baz/qux", ["foo", "bar", "baz", "qux"]),
        ("the THE The", ["the", "the", "the"]),  # no stop words
        ("running runs", ["running", "runs"]),  # no stemming
        ("x\u0301y", ["x", "y"]),  # combining mark separates
    ],
)
def test_tokenize_examples(text, expected):
    assert tokenize(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_tokenize_matches_byte_scanner(text):
    # Oracle: the §tokenizer byte scanner written independently in corpora.ref_tokenize.
    assert tokenize(text) == ref_tokenize(text)


def test_unique_tokens_first_occurrence_order():
    assert unique_tokens("b a B c a") == ["b", "a", "c"]
    assert unique_tokens("user user") == ["user"]
    assert unique_tokens("") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", 1),  # spec: the empty string is 1
        ("abc", 1),
        ("abcd", 1),
        ("abcdefg", 1),
        ("abcdefgh", 2),
        ("日本語字", 3),  # spec: four CJK characters = 12 bytes -> 3
        ("éééé", 2),  # 8 bytes
        ("😀😀", 2),  # 8 bytes
        ("a" * 41, 10),
    ],
)
def test_estimate_tokens_examples(text, expected):
    assert estimate_tokens(text) == expected


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_estimate_tokens_property(text):
    assert estimate_tokens(text) == max(1, len(text.encode("utf-8")) // 4)


def test_estimator_id():
    assert ESTIMATOR_ID == "cce.tokens/v1"


def test_ascii_lower_only_maps_a_to_z():
    # §strings: str.lower() is not equivalent (it folds non-ASCII and can change the length).
    assert ascii_lower("ABC xyz 123") == "abc xyz 123"
    assert ascii_lower("ÀÉ") == "ÀÉ"
    assert ascii_lower("İ") == "İ" and len("İ".lower()) == 2
    assert ascii_lower("\u212a") == "\u212a"
    assert ascii_lower("Config.YML") == "config.yml"
