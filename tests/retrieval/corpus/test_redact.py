"""The secret redactor against every vector of §redaction, plus properties.

Secret-shaped inputs are joined from fragments at run time, as upstream does, so that no file
in the repository holds a whole fake credential for a secret scanner to flag.
"""

from __future__ import annotations

import re
from functools import partial

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.corpus import redact as redact_module
from cce_relevance.retrieval.corpus.redact import is_placeholder, redact

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"
STRIPE_KEY = "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
GH_TOKEN = "ghp" + "_" + "0123456789abcdefghijklmnopqrstuvwx01"
OPENAI_KEY = "sk" + "-" + "abcdefghijklmnopqrstuvwxyz012345ABCD"
ANTHROPIC_KEY = "sk-" + "ant-" + "api03_abcdefghijklmnopqrstuvwxyz0123"
SLACK_TOKEN = "xox" + "b-" + "1234567890-abcdefABCDEF"
GOOGLE_KEY = "AIza" + "SyA1234567890abcdefghijklmnopqrstuv"
JWT = "eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + ".abcDEF123456"
PRIVATE_KEY_BLOCK = "-----BEGIN RSA PRIVATE " + "KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE " + "KEY-----"

# (upstream test name, input, expected output); names shared by several inputs repeat.
UPSTREAM_VECTORS = [
    ("redacts_aws_access_key", f'AWS = "{AWS_KEY}"', 'AWS = "[REDACTED:AWS_ACCESS_KEY]"'),
    ("redacts_stripe_live_key", f'key = "{STRIPE_KEY}"', 'key = "[REDACTED:STRIPE_KEY]"'),
    (
        "redacts_github_token_and_keeps_specific_label",
        f'token = "{GH_TOKEN}"',
        'token = "[REDACTED:GITHUB_TOKEN]"',
    ),
    ("redacts_openai_key", f"OPENAI={OPENAI_KEY}", "OPENAI=[REDACTED:OPENAI_KEY]"),
    ("redacts_anthropic_key_before_openai", f"A={ANTHROPIC_KEY}", "A=[REDACTED:ANTHROPIC_KEY]"),
    ("redacts_slack_token", f"SLACK={SLACK_TOKEN}", "SLACK=[REDACTED:SLACK_TOKEN]"),
    ("redacts_google_api_key", f"G={GOOGLE_KEY}", "G=[REDACTED:GOOGLE_API_KEY]"),
    ("redacts_jwt", JWT, "[REDACTED:JWT]"),
    ("redacts_private_key_block", PRIVATE_KEY_BLOCK, "[REDACTED:PRIVATE_KEY]"),
    ("redacts_generic_secret_assignment", 'password = "hunter2secret"', 'password = "[REDACTED:SECRET]"'),
    ("redacts_generic_secret_assignment", "api_key: s3cr3tvalue", "api_key: [REDACTED:SECRET]"),
    ("placeholder_guard_leaves_examples_unchanged", 'key = "your-api-key"', 'key = "your-api-key"'),
    (
        "placeholder_guard_leaves_examples_unchanged",
        'secret = "your-token-here"',
        'secret = "your-token-here"',
    ),
    ("placeholder_guard_leaves_examples_unchanged", 'secret = "changeme"', 'secret = "changeme"'),
    ("placeholder_guard_leaves_examples_unchanged", 'secret = "placeholder"', 'secret = "placeholder"'),
    ("placeholder_guard_leaves_examples_unchanged", 'secret = "dummy-value"', 'secret = "dummy-value"'),
    ("placeholder_guard_leaves_examples_unchanged", 'secret = "test-secret"', 'secret = "test-secret"'),
    ("placeholder_guard_leaves_examples_unchanged", 'secret = "sample-key"', 'secret = "sample-key"'),
    ("placeholder_guard_leaves_examples_unchanged", 'secret = "xxxxxxxx"', 'secret = "xxxxxxxx"'),
    ("placeholder_guard_leaves_examples_unchanged", 'secret = "example-value"', 'secret = "example-value"'),
    (
        "placeholder_guard_covers_interpolation_and_literals",
        "password = ${DB_PASSWORD}",
        "password = ${DB_PASSWORD}",
    ),
    (
        "placeholder_guard_covers_interpolation_and_literals",
        "password = <your-secret>",
        "password = <your-secret>",
    ),
    ("placeholder_guard_covers_interpolation_and_literals", "password = {{token}}", "password = {{token}}"),
    ("placeholder_guard_covers_interpolation_and_literals", "password = null", "password = null"),
    ("placeholder_guard_covers_interpolation_and_literals", "password = nil", "password = nil"),
    ("placeholder_guard_covers_interpolation_and_literals", "password = none", "password = none"),
    ("placeholder_guard_covers_interpolation_and_literals", "password = true", "password = true"),
    ("placeholder_guard_covers_interpolation_and_literals", "password = false", "password = false"),
    ("placeholder_guard_covers_interpolation_and_literals", "password = --------", "password = --------"),
    ("short_values_below_eight_chars_are_not_redacted", "password = short12", "password = short12"),
    ("short_values_below_eight_chars_are_not_redacted", 'token = "abc"', 'token = "abc"'),
    (
        "redacts_unquoted_value_containing_apostrophe",
        "password = don't-tell-anyone-secretvalue",
        "password = [REDACTED:SECRET]",
    ),
    (
        "redacts_double_quoted_value_containing_apostrophe",
        'password = "abcdefghij\'tail-super-secret"',
        'password = "[REDACTED:SECRET]"',
    ),
    (
        "redacts_single_quoted_value_and_preserves_closing_quote",
        "api_key='qwertyuiop-secret'",
        "api_key='[REDACTED:SECRET]'",
    ),
    (
        "redacts_double_quoted_value_containing_single_quote_of_other_kind",
        "password = 'abcdefghij\"tail-super-secret'",
        "password = '[REDACTED:SECRET]'",
    ),
    (
        "redacts_quoted_value_containing_space",
        'password = "correct horse battery staple"',
        'password = "[REDACTED:SECRET]"',
    ),
    (
        "adjacent_assignments_do_not_over_capture_across_closing_quotes",
        'password = "a1b2c3d4e5" token = "f6g7h8i9j0"',
        'password = "[REDACTED:SECRET]" token = "[REDACTED:SECRET]"',
    ),
    (
        "quoted_values_do_not_span_lines",
        'password = "abcdefghij\ntoken = "klmnopqrst"',
        'password = "[REDACTED:SECRET]\ntoken = "[REDACTED:SECRET]"',
    ),
    ("empty_or_quote_only_values_are_left_untouched", 'password = ""', 'password = ""'),
    ("empty_or_quote_only_values_are_left_untouched", "password = ''", "password = ''"),
    ("empty_or_quote_only_values_are_left_untouched", 'password = "', 'password = "'),
    ("empty_or_quote_only_values_are_left_untouched", "password =", "password ="),
    (
        "non_secret_key_names_are_ignored_by_generic",
        "DATABASE_URL=postgres://user:password@localhost/app",
        "DATABASE_URL=postgres://user:password@localhost/app",
    ),
    ("redaction_is_idempotent", 'AWS = "[REDACTED:AWS_ACCESS_KEY]"', 'AWS = "[REDACTED:AWS_ACCESS_KEY]"'),
    (
        "leak142_same_single_quote_prefix_ge8_no_tail",
        "password = 'abcdefghij'tail-super-secret'",
        "password = '[REDACTED:SECRET]'",
    ),
    (
        "leak142_same_double_quote_escaped_inner_no_tail",
        'password = "abcdefghij\\"tail-super-secret"',
        'password = "[REDACTED:SECRET]"',
    ),
    (
        "leak142_specific_prefix_then_secret_no_tail",
        f'password = "{AWS_KEY}suffix-secret"',
        'password = "[REDACTED:SECRET]"',
    ),
    (
        "leak142_specific_prefix_then_secret_unquoted_no_tail",
        f"password = {AWS_KEY}suffix-secret",
        "password = [REDACTED:SECRET]",
    ),
    (
        "backtick_quoted_value_is_redacted_as_a_new_feature",
        "password = `abcdefghij`tail-super-secret`",
        "password = `[REDACTED:SECRET]`",
    ),
    (
        "leak142_multiple_inner_quotes_no_tail",
        "password = 'abcdefgh'mid'tail-super-secret'",
        "password = '[REDACTED:SECRET]'",
    ),
    (
        (
            "ctrl142_adjacent_same_delimiter_assignments_not_merged"
            " + r3_whitespace_separated_assignments_stay_two_independent_redactions"
        ),
        "password = 'a1b2c3d4e5' token = 'f6g7h8i9j0'",
        "password = '[REDACTED:SECRET]' token = '[REDACTED:SECRET]'",
    ),
    (
        "ctrl142_clean_non_secret_assignment_is_byte_identical",
        'password = "changeme"',
        'password = "changeme"',
    ),
    (
        "ctrl142_clean_non_secret_assignment_is_byte_identical",
        'api_key = "<your-api-key>"',
        'api_key = "<your-api-key>"',
    ),
    (
        "ctrl142_clean_non_secret_assignment_is_byte_identical",
        'secret = "${VAULT_SECRET}"',
        'secret = "${VAULT_SECRET}"',
    ),
    (
        "r2_doubled_single_quote_no_tail",
        "password = 'abcdefghij''tail-super-secret'",
        "password = '[REDACTED:SECRET]'",
    ),
    (
        "r2_doubled_single_quote_short_prefix_fully_redacted",
        "password = 'abc''realsecret-here'",
        "password = '[REDACTED:SECRET]'",
    ),
    (
        "r2_doubled_double_quote_and_backtick_no_tail",
        'password = "abcdefghij""tail-super-secret"',
        'password = "[REDACTED:SECRET]"',
    ),
    (
        "r2_doubled_double_quote_and_backtick_no_tail",
        "password = `abcdefghij``tail-super-secret`",
        "password = `[REDACTED:SECRET]`",
    ),
    (
        (
            "r2_comma_adjacent_not_merged_and_placeholder_scoped"
            " + r3_comma_delimited_placeholder_sibling_still_works"
        ),
        'password = "changeme", token = "realsecrettail123"',
        'password = "changeme", token = "[REDACTED:SECRET]"',
    ),
    (
        "r2_two_adjacent_real_secrets_each_redacted",
        'password = "realsecrettail123", token = "anotherrealsecret999"',
        'password = "[REDACTED:SECRET]", token = "[REDACTED:SECRET]"',
    ),
    (
        "r2_clean_json_sibling_is_preserved + r3_json_sibling_preserved_whitespace_before_next_quote",
        '{password: "abcdefghij", host: "publicdb"}',
        '{password: "[REDACTED:SECRET]", host: "publicdb"}',
    ),
    (
        "r2_method_chain_after_value_is_preserved + r3_method_chain_preserved_no_later_quote",
        'password = "abcdefghij".freeze',
        'password = "[REDACTED:SECRET]".freeze',
    ),
    ("r2_method_chain_after_value_is_preserved", 'password = "x".freeze', 'password = "x".freeze'),
    (
        "r2_connection_string_with_comma_inside_quotes_not_cut_short",
        'password = "p@ss,realsecret,longenough"',
        'password = "[REDACTED:SECRET]"',
    ),
    (
        "r3_no_delimiter_placeholder_merge_does_not_leak",
        'password="changeme"token="ZmaskH-mergesecret42"',
        'password="[REDACTED:SECRET]"',
    ),
    (
        "r3_no_delimiter_your_apikey_merge_does_not_leak",
        'password="your"api_key="Yourr-realapikey88"',
        'password="[REDACTED:SECRET]"',
    ),
    (
        "r3_punctuation_glued_tail_with_trailing_quote_is_redacted",
        "password = 'abcdefghij'.ZdotM-tailsecret42'",
        "password = '[REDACTED:SECRET]'",
    ),
    (
        "r3_unicode_glued_tail_is_redacted",
        "password = 'abcdefghij'\u00e9ZuniE-leaksecret777'",
        "password = '[REDACTED:SECRET]'",
    ),
    (
        "r3_backtick_punctuation_glued_tail_is_redacted",
        "password = `abcdefghij`.ZdotM-tailsecret42`",
        "password = `[REDACTED:SECRET]`",
    ),
]

# §redaction "further probes": outputs of upstream's redactor that settle the finer rules.
UPSTREAM_PROBES = [
    ('password = "<ABCDEFGHIJ>"', 'password = "<ABCDEFGHIJ>"'),
    ('password = "<abc def ghi>"', 'password = "<abc def ghi>"'),
    ('password = "${ABCDEFGH}}"', 'password = "${ABCDEFGH}}"'),
    ('password = "{{ABCDEFGH}"', 'password = "[REDACTED:SECRET]"'),
    ('password = "YOUR-KEY-HERE"', 'password = "YOUR-KEY-HERE"'),
    ('password = "[REDACTED:]"', 'password = "[REDACTED:]"'),
    ('password = "[REDACTED:X]]"', 'password = "[REDACTED:SECRET]"'),
    ('password = "[redacted:abcd]"', 'password = "[REDACTED:SECRET]"'),
    ('password = "\u00e9\u00e9\u00e9\u00e9"', 'password = "\u00e9\u00e9\u00e9\u00e9"'),
    ('password = "' + "e\u0301" * 4 + '"', 'password = "[REDACTED:SECRET]"'),
    ("password = AAAAAAAA", "password = AAAAAAAA"),
    ("password = aAaAaAaA", "password = [REDACTED:SECRET]"),
    ("password = abcdefg", "password = abcdefg"),
    ("password = abcdefgh", "password = [REDACTED:SECRET]"),
    ('password = "abc', 'password = "abc'),
    ('password = "abcdefghij', 'password = "[REDACTED:SECRET]'),
    ('password = "abcdefghij\\', 'password = "[REDACTED:SECRET]'),
    ("password = token=a", "password = [REDACTED:SECRET]"),
    ("password:\nabcdefghij", "password:\n[REDACTED:SECRET]"),
    ("my_password = abcdefghij", "my_password = abcdefghij"),
    ("password_hash = abcdefghij", "password_hash = abcdefghij"),
    ('password = "abcdefghij"\x0bmore"', 'password = "[REDACTED:SECRET]"'),
    ("password = 'abcdefgh'.x y'", "password = '[REDACTED:SECRET]'.x y'"),
]

# Not captured from upstream: consequences of the Rust `regex` semantics §redaction names (Unicode
# White_Space for `\s`, simple case folding for `(?i)`, Alphabetic/M/Nd/Pc/Join_Control for
# `\b`) and of the byte scanner, at the points where Python's `re` or a naive port differs.
RUST_SEMANTICS_PROBES = [
    ("\u0301password = abcdefghij", "\u0301password = abcdefghij"),  # mark: word char in Rust
    ("\u00b2password = abcdefghij", "\u00b2password = [REDACTED:SECRET]"),  # No: word only in Python
    ("\u200dtoken = abcdefghij", "\u200dtoken = abcdefghij"),  # Join_Control
    ("\u203ftoken = abcdefghij", "\u203ftoken = abcdefghij"),  # Pc other than `_`
    ("\u24b6token = abcdefghij", "\u24b6token = abcdefghij"),  # circled letter: Alphabetic
    ("\u017fecret = abcdefghij", "\u017fecret = [REDACTED:SECRET]"),  # long s folds to s
    ("api_\u212aey = abcdefghij", "api_\u212aey = [REDACTED:SECRET]"),  # Kelvin sign folds to k
    ("PR\u0130VATE_KEY = abcdefghij", "PR\u0130VATE_KEY = abcdefghij"),  # no simple fold to i
    ("pr\u0131vate_key = abcdefghij", "pr\u0131vate_key = abcdefghij"),
    ("password\x1c= abcdefghij", "password\x1c= abcdefghij"),  # U+001C is not White_Space
    ("password\u00a0=\u3000abcdefghij", "password\u00a0=\u3000[REDACTED:SECRET]"),
    ("password =\x0babcdefghij", "password =\x0b[REDACTED:SECRET]"),  # VT belongs to the operator
    ("password =\x1cabcdefghij", "password =[REDACTED:SECRET]"),  # U+001C starts the value
    ("password = \u00e9a\u00e9a", "password = \u00e9a\u00e9a"),  # 6 UTF-8 bytes
    ("password = \u00e9a\u00e9a\u00e9", "password = [REDACTED:SECRET]"),  # 8 UTF-8 bytes
    ('password = "abcdefghij"\r\nx', 'password = "[REDACTED:SECRET]"\r\nx'),  # CR closes
    ('password = "abc\\\nabcdefghij"', 'password = "abc\\\nabcdefghij"'),  # `\` never eats LF
    ("password = 'abcdefghij'\u00e9", "password = '[REDACTED:SECRET]"),  # glued, then unterminated
]

PLACEHOLDER_CASES = [
    ("[REDACTED:AWS_ACCESS_KEY]", True),
    ("[REDACTED:AWS_ACCESS_KEY]suffix-secret", False),
    ("[REDACTED:]", True),
    ("[REDACTED:X]]", False),
    ("[redacted:abcd]", False),
    ("YOUR-KEY-HERE", True),
    ("<>", True),
    ("${}", True),
    ("{{}}", True),
    ("${ABCDEFGH}}", True),
    ("{{ABCDEFGH}", False),
    ("\u00e9\u00e9\u00e9\u00e9", True),
    ("e\u0301" * 4, False),
    ("AAAAAAAA", True),
    ("aAaAaAaA", False),
    ("NULL", True),
    ("", False),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(text, expected, id=name) for name, text, expected in UPSTREAM_VECTORS],
)
def test_upstream_unit_test_vectors(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(("text", "expected"), UPSTREAM_PROBES)
def test_upstream_probes(text: str, expected: str) -> None:
    assert redact(text) == expected


@pytest.mark.parametrize(("text", "expected"), RUST_SEMANTICS_PROBES)
def test_rust_regex_semantics(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redaction_is_idempotent() -> None:
    once = redact(f'AWS = "{AWS_KEY}"')
    assert redact(once) == once


@pytest.mark.parametrize(("inner", "expected"), PLACEHOLDER_CASES)
def test_is_placeholder(inner: str, expected: bool) -> None:
    assert is_placeholder(inner) is expected


# Pieces that steer random text towards the redactor's decision points.
_KEY_PIECES = ("password", "PASSWD", "secret_key", "Api-Key", "token", "\u017fecret", "api_\u212aey")
_OPENING_PIECES = (
    "AKIA",
    "AIza",
    "sk-",
    "sk-ant-",
    "sk_live_",
    "ghp_",
    "eyJ",
    "xox",
    "xoxb-",
    "-----BEGIN ",
    "0123456789ABCDEFabcdef0123456789",
    ".eyJ",
)
_NEUTRAL_PIECES = (
    "=",
    ":",
    " = ",
    ": ",
    " ",
    "\t",
    "\n",
    "\r",
    "\x0b",
    "\x1c",
    "\x85",
    "\u00a0",
    '"',
    "'",
    "`",
    "\\",
    "[REDACTED:",
    "]",
    "${",
    "}}",
    "<",
    ">",
    "your",
    "changeme",
    "\u00e9",
    "e\u0301",
    "\u0301",
    "_",
    ".",
    ",",
    "abcdefgh",
)


def _texts(pieces: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Short concatenations of the given pieces and of arbitrary snippets."""
    return st.lists(st.one_of(st.sampled_from(pieces), st.text(max_size=4)), max_size=40).map("".join)


_fuzz_text = _texts(_KEY_PIECES + _OPENING_PIECES + _NEUTRAL_PIECES)
_keyless_text = _texts(_NEUTRAL_PIECES)

# Substrings without which neither step can match: each specific pattern's literal opening,
# and the operator characters every generic assignment needs.
_TRIGGERS = ("-----BEGIN ", "sk-", "sk_live_", "gh", "xox", "AKIA", "AIza", "eyJ", ":", "=")
_SPECIFIC_OPENINGS = _TRIGGERS[:-2]
# A superset of the key names: Python's IGNORECASE also folds U+0130/U+0131 to `i`.
_KEY_NAME_RE = re.compile(
    r"password|passwd|secret|api[_-]?key|access[_-]?key|auth[_-]?token|private[_-]?key|token",
    re.IGNORECASE,
)


@given(st.one_of(st.text(), _fuzz_text))
def test_never_raises(text: str) -> None:
    assert isinstance(redact(text), str)


def _plainly_redacted(text: str) -> str:
    """Every specific pattern substituted in turn, then the generic pass searching the whole text."""
    for pattern, replacement in redact_module._SPECIFIC:
        text = pattern.sub(replacement, text)
    return redact_module._redact_assignments(text, partial(redact_module._ASSIGNMENT_RE.search, text))


@given(_fuzz_text)
@settings(max_examples=500)
def test_fast_path_matches_the_full_pipeline(text: str) -> None:
    """The screens, the gate and the windows in front of the patterns must never change an answer."""
    assert redact(text) == _plainly_redacted(text)


def _match_key(match: re.Match[str] | None) -> tuple | None:
    return None if match is None else (match.span(), match.groups())


_gate_text = st.one_of(
    st.text(),
    _fuzz_text,
    _texts(
        (
            "ſecret",
            "\u212aey",
            "API-KEY",
            "private_key",
            "\u2003",
            "\x1c",
            ":",
            "=",
            "token",
            "xtoken",
            " ",
            "İ",
        )
    ),
)


@given(_gate_text)
@settings(max_examples=500)
def test_gated_search_is_the_plain_search_from_every_position(text: str) -> None:
    search = redact_module._GatedSearch(text, redact_module._gated_operators(text)).search
    for pos in range(len(text) + 1):
        assert _match_key(search(pos)) == _match_key(redact_module._ASSIGNMENT_RE.search(text, pos))


@given(_gate_text)
def test_the_gate_finds_the_operator_of_every_assignment(text: str) -> None:
    gated = {offset for offset, _ in redact_module._gated_operators(text)}
    for pos in range(len(text)):
        match = redact_module._ASSIGNMENT_RE.match(text, pos)
        if match is not None:
            assert match.start(2) + re.search("[:=]", match[2]).start() in gated


_EVERY_CODE_POINT = "".join(map(chr, range(0x110000)))


def _accepted(pattern: str) -> list[str]:
    """Every code point that the one-character `pattern` matches."""
    return re.findall(pattern, _EVERY_CODE_POINT)


def test_the_gate_finds_every_spelling_the_assignment_pattern_accepts() -> None:
    """The gate leans on Python's IGNORECASE and `\\s` being wider than the exact classes (Rust's
    folding partners, Unicode White_Space). Checked over every code point the exact pattern takes
    at each letter of each key name and in the whitespace, not only the partners known today."""
    for pieces in redact_module._alternatives(redact_module._KEY_NAMES):
        for glue in ("_", "-", ""):
            name = [glue if piece == "[_-]?" else piece for piece in pieces]
            for i, letter in enumerate(name):
                for spelling in (
                    _accepted(redact_module._case_insensitive(letter)) if letter.isalpha() else []
                ):
                    text = "".join(name[:i] + [spelling] + name[i + 1 :]) + "=x"
                    assert redact_module._ASSIGNMENT_RE.match(text)
                    assert [offset for offset, _ in redact_module._gated_operators(text)] == [
                        len(text) - 2
                    ], text
    for space in _accepted(redact_module._WHITESPACE):
        text = f"token{space}:{space}x"
        assert redact_module._ASSIGNMENT_RE.match(text)
        assert redact_module._gated_operators(text) == [(6, 1)], ascii(space)


def test_the_gate_is_the_key_names_spelt_backwards() -> None:
    names = redact_module._KEY_NAMES
    assert redact_module._reversed_alternatives(redact_module._reversed_alternatives(names)) == names
    assert redact_module._reversed_alternatives("secret[_-]?key|token") == "yek[_-]?terces|nekot"
    assert redact_module._LONGEST_KEY == len("private_key")
    for name in (
        "password",
        "passwd",
        "secret_key",
        "secret-key",
        "secretkey",
        "secret",
        "api_key",
        "apikey",
        "access-key",
        "auth_token",
        "authtoken",
        "private_key",
        "token",
        "\u017fecret",
        "API_\u212aEY",
    ):
        for operator in (":", "=", " \t= "):
            text = f"x {name}{operator} y"
            assert [offset for offset, _ in redact_module._gated_operators(text)] == [
                text.index(operator.strip())
            ]
    assert redact_module._gated_operators("tokens = 1; passwords: no") == []
    assert redact_module._gated_operators("token \t= 1") == [(7, 2)]


def test_the_screened_runs_are_the_specific_patterns_in_order() -> None:
    assert [p for _, run in redact_module._SPECIFIC_RUNS for p in run] == list(redact_module._SPECIFIC)


_SCREENED = [
    (screen, pattern)
    for screen, run in redact_module._SPECIFIC_RUNS
    if screen is not None
    for pattern, _ in run
]


@pytest.mark.parametrize(("screen", "pattern"), _SCREENED, ids=[p.pattern[:8] for _, p in _SCREENED])
@given(data=st.data())
def test_every_match_of_a_screened_pattern_contains_a_match_of_its_screen(screen, pattern, data) -> None:
    assert screen.search(data.draw(st.from_regex(pattern, fullmatch=True))) is not None


@given(st.text())
def test_text_without_triggers_is_unchanged(text: str) -> None:
    assume(not any(trigger in text for trigger in _TRIGGERS))
    assert redact(text) == text


@given(_keyless_text)
def test_text_without_key_names_or_openings_is_unchanged(text: str) -> None:
    assume(_KEY_NAME_RE.search(text) is None)
    assume(not any(opening in text for opening in _SPECIFIC_OPENINGS))
    assert redact(text) == text


_BEGIN = "-----BEGIN " + "RSA PRIVATE KEY-----"
_END = "-----END " + "RSA PRIVATE KEY-----"


@given(st.lists(st.sampled_from([_BEGIN, _END, "x", "\n", "-----", "END ", "PRIVATE KEY-----"]), max_size=12))
def test_private_key_substitution_equals_plain_regex(pieces: list[str]) -> None:
    text = "".join(pieces)
    pattern = redact_module._PRIVATE_KEY
    plain = re.sub(pattern.pattern, "[REDACTED:PRIVATE_KEY]", text)
    assert redact_module._substitute(pattern, "[REDACTED:PRIVATE_KEY]", text) == plain


def test_unterminated_private_key_headers_are_never_scanned() -> None:
    """Many BEGIN headers and no END: the block pattern must not run at all (it is quadratic)."""
    text = (_BEGIN + "\n") * 20000
    assert redact_module._last_private_key_end(text) == 0
    assert redact(text) == text
