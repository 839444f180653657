"""The `cce.relevance/v1` fixture contract (§fixtures) and errors E1–E14 (§errors)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.errors import CceError
from cce_relevance.evaluation.anchors import Anchor
from cce_relevance.evaluation.fixtures import (
    Case,
    FixtureSet,
    corpus_dir,
    load_fixtures,
    parse_fixtures,
)
from cce_relevance.strings import rust_trim

HEADER = '{"schema":"cce.relevance/v1"}'
CASE = '{"query":"q","expected":["a.py"]}'
E2_TAIL = re.compile(r"^fixture line \d+: invalid JSON: .+ at line 1 column \d+$")


def parse(text: str) -> FixtureSet:
    return parse_fixtures(text, "f.jsonl")


def error(text: str) -> str:
    with pytest.raises(CceError) as info:
        parse(text)
    return info.value.message


def case_line(**fields: object) -> str:
    return json.dumps({"query": "q", "expected": ["a.py"], **fields})


def only_case(line: str) -> Case:
    (case,) = parse(line).cases
    return case


# --- the starter sets ------------------------------------------------------------------------


def test_code_starter_set(upstream: Path) -> None:
    fixtures = load_fixtures(str(upstream / "eval/relevance/code.jsonl"))
    assert fixtures.corpus == "../../test/fixture/samples"
    assert [c.id for c in fixtures.cases] == [
        "code-read-config",
        "code-parse-json",
        "code-build-index",
        "code-loader-class",
        "code-sum-node",
        "code-interface-kind",
        "code-read-config-span",
    ]
    assert {c.k for c in fixtures.cases} == {5}
    assert [c.line for c in fixtures.cases] == [2, 3, 4, 5, 6, 7, 8]
    assert [c.ranged for c in fixtures.cases] == [False] * 6 + [True]
    assert fixtures.cases[5].anchors == (Anchor("typescript.ts", "interface_declaration", None),)
    assert fixtures.cases[6].anchors == (Anchor("python.py", None, (3, 4)),)
    assert fixtures.cases[0].query == "where is the read_config function"
    assert (
        corpus_dir("eval/relevance/code.jsonl", fixtures.corpus)
        == "eval/relevance/../../test/fixture/samples"
    )


def test_docs_starter_set(upstream: Path) -> None:
    fixtures = load_fixtures(str(upstream / "eval/relevance/docs.jsonl"))
    assert fixtures.corpus == "docs-corpus"
    assert len(fixtures.cases) == 4
    assert not any(c.ranged for c in fixtures.cases)
    assert corpus_dir("eval/relevance/docs.jsonl", fixtures.corpus) == "eval/relevance/docs-corpus"


# --- E1: reading ------------------------------------------------------------------------------


def test_e1_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CceError) as info:
        load_fixtures("nope/missing.jsonl")
    assert info.value.message == (
        "could not read fixtures nope/missing.jsonl: No such file or directory (os error 2)"
    )


def test_e1_directory(tmp_path: Path) -> None:
    with pytest.raises(CceError) as info:
        load_fixtures(str(tmp_path))
    assert info.value.message == f"could not read fixtures {tmp_path}: Is a directory (os error 21)"


def test_e1_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "f.jsonl").write_text(CASE)
    with pytest.raises(CceError) as info:
        load_fixtures(f"{tmp_path}/f.jsonl/x")
    assert (
        info.value.message == f"could not read fixtures {tmp_path}/f.jsonl/x: Not a directory (os error 20)"
    )


def test_e1_empty_path_and_nul_byte() -> None:
    """Worded as rustc 1.95's `fs::read_to_string` words them."""
    with pytest.raises(CceError) as info:
        load_fixtures("")
    assert info.value.message == "could not read fixtures : No such file or directory (os error 2)"
    with pytest.raises(CceError) as info:
        load_fixtures("a\0b")
    assert info.value.message == "could not read fixtures a\0b: file name contained an unexpected NUL byte"


def test_e1_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(CASE.encode() + b"\n\xff\n")
    with pytest.raises(CceError) as info:
        load_fixtures(str(path))
    assert info.value.message == f"could not read fixtures {path}: stream did not contain valid UTF-8"


def test_e1_encoded_surrogate_is_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"query":"\xed\xa0\x80","expected":["a"]}\n')
    with pytest.raises(CceError, match="stream did not contain valid UTF-8$"):
        load_fixtures(str(path))


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads anything")
def test_e1_permission_denied(tmp_path: Path) -> None:
    path = tmp_path / "locked.jsonl"
    path.write_text(CASE)
    path.chmod(0)
    with pytest.raises(CceError) as info:
        load_fixtures(str(path))
    assert info.value.message == f"could not read fixtures {path}: Permission denied (os error 13)"


def test_load_keeps_crlf_and_bom_as_rust_reads_them(tmp_path: Path) -> None:
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(f"{HEADER}\r\n\r\n{CASE}\r\n".encode())
    fixtures = load_fixtures(str(crlf))
    assert (fixtures.path, fixtures.cases[0].line) == (str(crlf), 3)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + CASE.encode())
    with pytest.raises(CceError) as info:
        load_fixtures(str(bom))
    assert info.value.message == "fixture line 1: invalid JSON: expected value at line 1 column 1"


# --- lines -----------------------------------------------------------------------------------


def test_line_numbers_count_blank_lines_and_the_header() -> None:
    text = f"\n{HEADER}\n  \n{CASE}\n\t\n{CASE}\n"
    assert [c.line for c in parse(text).cases] == [4, 6]
    assert [c.id for c in parse(text).cases] == ["q4", "q6"]
    assert error(f"\n{HEADER}\n\n{CASE}\n[]\n") == "fixture line 5: expected a JSON object"


def test_crlf_lines() -> None:
    fixtures = parse(f"{HEADER}\r\n{CASE}\r\n\r\n{case_line(id='x')}\r\n")
    assert [(c.line, c.id) for c in fixtures.cases] == [(2, "q2"), (4, "x")]


def test_final_line_without_newline_counts_and_trailing_newline_adds_none() -> None:
    assert len(parse(f"{CASE}\n{CASE}").cases) == 2
    assert len(parse(f"{CASE}\n{CASE}\n").cases) == 2
    assert len(parse(f"{CASE}\n{CASE}\r").cases) == 2


@pytest.mark.parametrize("separator", ["\r", "\x0c", "\u2028", "\u0085"])
def test_only_lf_splits_lines(separator: str) -> None:
    message = error(f"{CASE}{separator}{CASE}\n")
    assert message.startswith("fixture line 1: invalid JSON: ")


@pytest.mark.parametrize("blank", ["", " ", "\t", "\u00a0", "\u3000 \u2028", "\x0b\x0c"])
def test_unicode_whitespace_lines_are_blank(blank: str) -> None:
    assert [c.line for c in parse(f"{blank}\n{CASE}\n").cases] == [2]


def test_information_separators_are_not_whitespace() -> None:
    """Python's str.strip() treats U+001C..U+001F as whitespace; Rust's trim does not."""
    assert error(f"\x1c\n{CASE}\n") == "fixture line 1: invalid JSON: expected value at line 1 column 1"


def test_non_json_whitespace_around_a_value_is_invalid() -> None:
    assert error(f"\u00a0{CASE}") == "fixture line 1: invalid JSON: expected value at line 1 column 1"
    assert error(f"{CASE}\u00a0") == (
        f"fixture line 1: invalid JSON: trailing characters at line 1 column {len(CASE) + 1}"
    )


def test_json_whitespace_around_a_value_is_fine() -> None:
    assert only_case(f" \t{CASE}\t \r").line == 1


# --- E2: the JSON accept/reject set ----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("x", "expected value at line 1 column 1"),
        ("{", "EOF while parsing an object at line 1 column 1"),
        ('{"query":"q"', "EOF while parsing an object at line 1 column 12"),
        ('{"query":', "EOF while parsing a value at line 1 column 9"),
        ('{"expected":["a"', "EOF while parsing a list at line 1 column 16"),
        (f"{CASE} x", f"trailing characters at line 1 column {len(CASE) + 2}"),
        (f"{CASE}{CASE}", f"trailing characters at line 1 column {len(CASE) + 1}"),
        ('{"query":"q",}', "trailing comma at line 1 column 14"),
        ('{"expected":[1,]}', "trailing comma at line 1 column 16"),
        ("{'query':'q'}", "key must be a string at line 1 column 2"),
        ('{"query" "q"}', "expected `:` at line 1 column 10"),
        ('{"query":"q" "k":1}', "expected `,` or `}` at line 1 column 14"),
        ('{"expected":["a" "b"]}', "expected `,` or `]` at line 1 column 18"),
        ('{"query":"q', "EOF while parsing a string at line 1 column 11"),
        (
            '{"query":"a\tb"}',
            "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 12",
        ),
        ('{"query":"\\x"}', "invalid escape at line 1 column 12"),
        ('{"query":tru}', "expected ident at line 1 column 13"),
        ('{"k":01}', "invalid number at line 1 column 7"),
    ],
)
def test_e2_messages(line: str, message: str) -> None:
    if line == '{"k":01}':  # Python stops at the second digit, serde one column earlier: not normative
        assert error(line).startswith("fixture line 1: invalid JSON: ")
        return
    assert error(line) == f"fixture line 1: invalid JSON: {message}"


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "nan", "inf"])
def test_e2_non_finite_literals(literal: str) -> None:
    assert E2_TAIL.match(error(case_line()[:-1] + f',"x":{literal}}}'))


@pytest.mark.parametrize(
    "number",
    [
        "1e400",
        "-1e400",
        "1.7976931348623159e308",
        "1e99999999999",
        "2" + "0" * 308,
        "9" * 5000,
        "-" + "9" * 400,
    ],
)
def test_e2_numbers_that_overflow_a_double(number: str) -> None:
    assert E2_TAIL.match(error(case_line()[:-1] + f',"ignored":[{number}]}}'))


@pytest.mark.parametrize("number", ["1e-400", "0e400", "-0", "1.7976931348623157e308", "1" + "0" * 307])
def test_numbers_serde_accepts(number: str) -> None:
    assert only_case(case_line()[:-1] + f',"ignored":{number}}}').k == 10


@pytest.mark.parametrize(
    "escaped",
    [r"\ud800", r"\ud800\u0041", r"\ud800\n", r"\udc00", r"\udbff\ud800", r"x\udfffy", r"\ud800\\udc00"],
)
def test_e2_lone_surrogate_escapes_anywhere(escaped: str) -> None:
    for line in (
        f'{{"query":"{escaped}","expected":["a"]}}',
        f'{{"query":"q","expected":["a"],"{escaped}":1}}',
        f'{{"query":"q","expected":["a"],"note":["{escaped}"]}}',
    ):
        message = error(line)
        assert E2_TAIL.match(message), message
        assert "surrogate" in message or "hex escape" in message


def test_lone_surrogate_message_names_the_place() -> None:
    assert error('{"query":"\\ud800"}') == (
        "fixture line 1: invalid JSON: unexpected end of hex escape at line 1 column 17"
    )
    assert error('{"query":"\\udc00"}') == (
        "fixture line 1: invalid JSON: lone leading surrogate in hex escape at line 1 column 16"
    )


def test_surrogate_pairs_decode_to_one_character() -> None:
    assert only_case('{"query":"\\ud83d\\ude00","expected":["a"]}').query == "\U0001f600"


def test_raw_surrogate_in_python_text_is_rejected() -> None:
    """Only reachable through parse_fixtures on a Python str; a file cannot carry one."""
    assert E2_TAIL.match(error('{"query":"\ud800","expected":["a"]}'))


def _nested(levels: int) -> str:
    """An object `levels` deep in total: the line's own object plus arrays under an ignored key."""
    inner = "[" * (levels - 1) + "]" * (levels - 1)
    return case_line()[:-1] + f',"deep":{inner}}}'


def test_nesting_of_127_levels_is_accepted() -> None:
    assert only_case(_nested(127)).line == 1


def test_nesting_of_128_levels_is_e2() -> None:
    line = _nested(128)
    column = line.index("[" * 127) + 127
    assert error(line) == f"fixture line 1: invalid JSON: recursion limit exceeded at line 1 column {column}"


def test_nesting_far_past_pythons_recursion_limit_is_e2() -> None:
    assert "recursion limit exceeded" in error("[" * 100_000 + "]" * 100_000)
    assert "recursion limit exceeded" in error('{"a":' * 50_000)


def test_bom_on_line_one_is_e2() -> None:
    assert error("\ufeff" + CASE) == "fixture line 1: invalid JSON: expected value at line 1 column 1"


def test_duplicate_keys_last_wins() -> None:
    case = only_case('{"query":"a","query":"b","expected":[5],"expected":["x.py"],"k":0,"k":3}')
    assert (case.query, case.anchors, case.k) == ("b", (Anchor("x.py", None, None),), 3)


# --- E3 / header -----------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["[]", '"text"', "1", "null", "true", '[{"query":"q"}]'])
def test_e3_not_an_object(line: str) -> None:
    assert error(line) == "fixture line 1: expected a JSON object"


def test_header_is_optional_and_may_follow_blank_lines() -> None:
    assert parse(CASE).corpus is None
    fixtures = parse(f'\n\n{{"schema":"cce.relevance/v1","corpus":"c"}}\n{CASE}')
    assert (fixtures.corpus, fixtures.cases[0].line) == ("c", 4)


def test_header_is_decided_by_key_presence() -> None:
    """`schema` with `query` is a case whose schema is ignored, whatever its value."""
    case = only_case('{"schema":"nonsense","query":"q","expected":["a"]}')
    assert case.query == "q"
    assert error('{"schema":null}') == 'fixture line 1: unsupported schema "" (expected "cce.relevance/v1")'


@pytest.mark.parametrize("header", ['{"schema":"cce.relevance/v1","corpus":"c"}', '{"schema":"bad"}'])
def test_e4_header_after_a_case(header: str) -> None:
    assert error(f"{CASE}\n\n{header}") == "fixture line 3: header must be the first non-blank line"


@pytest.mark.parametrize(
    "first", ['{"schema":"cce.relevance/v1"}', '{"schema":"cce.relevance/v1","corpus":""}', HEADER]
)
def test_e4_second_header_checked_before_its_schema(first: str) -> None:
    assert (
        error(f'{first}\n{{"schema":"v0"}}\n{CASE}')
        == "fixture line 2: header must be the first non-blank line"
    )


@pytest.mark.parametrize(
    ("schema", "shown"),
    [
        ('"cce.relevance/v2"', '"cce.relevance/v2"'),
        ('" cce.relevance/v1"', '" cce.relevance/v1"'),
        ('"cce.relevance/v1\\n"', '"cce.relevance/v1\\n"'),
        ('"say \\"hi\\""', '"say \\"hi\\""'),
        ('"it\'s \\u00e9\\u0301\\u001b"', '"it\'s é\\u{301}\\u{1b}"'),
        ('""', '""'),
        ("null", '""'),
        ("1", '""'),
        ('["cce.relevance/v1"]', '""'),
    ],
)
def test_e5_unsupported_schema(schema: str, shown: str) -> None:
    assert error(f'{{"schema":{schema}}}\n{CASE}') == (
        f'fixture line 1: unsupported schema {shown} (expected "cce.relevance/v1")'
    )


@pytest.mark.parametrize(
    ("corpus", "expected"),
    [('"c"', "c"), ('" spaced/ "', " spaced/ "), ('""', None), ("5", None), ("null", None), ('["c"]', None)],
)
def test_header_corpus(corpus: str, expected: str | None) -> None:
    assert parse(f'{{"schema":"cce.relevance/v1","corpus":{corpus}}}\n{CASE}').corpus == expected


def test_unknown_keys_are_ignored() -> None:
    fixtures = parse('{"schema":"cce.relevance/v1","owner":"me"}\n' + case_line(note={"a": [1, None]}))
    assert len(fixtures.cases) == 1


# --- cases: E6–E13 ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        '{"expected":["a"]}',
        '{"query":null,"expected":["a"]}',
        '{"query":5,"expected":["a"]}',
        '{"query":["q"],"expected":["a"]}',
        '{"query":"","expected":["a"]}',
        '{"query":" \\t\\n ","expected":["a"]}',
        '{"query":"\\u3000\\u00a0","expected":["a"]}',
        '{"query":"","expected":5}',
    ],
)
def test_e6_query(line: str) -> None:
    assert error(line) == 'fixture line 1: missing or empty "query"'


def test_query_is_trimmed_with_rust_whitespace() -> None:
    assert only_case(case_line(query="\u00a0 where is it \u3000")).query == "where is it"
    assert only_case(case_line(query="\x1c")).query == "\x1c"


@pytest.mark.parametrize("expected", ["absent", '"a.py"', "[]", "{}", "null"])
def test_e7_expected(expected: str) -> None:
    line = '{"query":"q"}' if expected == "absent" else f'{{"query":"q","expected":{expected}}}'
    assert error(line) == 'fixture line 1: "expected" must be a non-empty array of anchors'


@pytest.mark.parametrize("expected", ["[1]", '["a.py",null]', '[["a.py"]]', '[{"path":"a"}]'])
def test_e8_anchor_not_a_string(expected: str) -> None:
    assert error(f'{{"query":"q","expected":{expected}}}') == "fixture line 1: anchors must be strings"


@pytest.mark.parametrize(
    ("anchor", "message"),
    [
        ("auth.py#", "anchor \"auth.py#\" has an empty kind after '#'"),
        ("  ", "anchor is empty — expected `path`, `path#kind`, `#kind`, or `path@a-b`"),
        (
            "#function_definition@1-5",
            (
                'anchor "#function_definition@1-5" has a line range but no file path — '
                "a range needs `path@a-b` or `path#kind@a-b`"
            ),
        ),
        ("f.py@42", "anchor \"f.py@42\" has an invalid line range after '@' — expected `a-b` with 1 ≤ a ≤ b"),
        (
            " \tf.py@0-1",
            "anchor \" \\tf.py@0-1\" has an invalid line range after '@' — expected `a-b` with 1 ≤ a ≤ b",
        ),
    ],
)
def test_e9_to_e12_carry_the_line_prefix(anchor: str, message: str) -> None:
    assert error(f"{HEADER}\n\n{case_line(expected=['ok.py', anchor])}") == f"fixture line 3: {message}"


def test_anchor_elements_are_checked_in_order() -> None:
    assert error('{"query":"q","expected":["#",5]}').endswith("has an empty kind after '#'")
    assert error('{"query":"q","expected":[5,"#"]}') == "fixture line 1: anchors must be strings"


def test_check_order_query_expected_anchor_k() -> None:
    assert error('{"query":"","expected":[],"k":0}') == 'fixture line 1: missing or empty "query"'
    assert error('{"query":"q","expected":[],"k":0}').endswith(
        '"expected" must be a non-empty array of anchors'
    )
    assert error('{"query":"q","expected":["#"],"k":0}').endswith("has an empty kind after '#'")
    assert error('{"query":"q","expected":["a"],"k":0}').endswith('"k" must be a positive integer')


@pytest.mark.parametrize(
    ("k", "expected"),
    [("absent", 10), ("1", 1), ("5", 5), ("18446744073709551615", 2**64 - 1)],
)
def test_k_accepted(k: str, expected: int) -> None:
    line = CASE if k == "absent" else case_line()[:-1] + f',"k":{k}}}'
    assert only_case(line).k == expected


@pytest.mark.parametrize(
    "k", ["5.0", "5e0", "5E0", '"5"', "true", "false", "null", "0", "-0", "-1", "18446744073709551616", "[5]"]
)
def test_e13_k(k: str) -> None:
    assert error(case_line()[:-1] + f',"k":{k}}}') == 'fixture line 1: "k" must be a positive integer'


@pytest.mark.parametrize(
    ("raw_id", "expected"),
    [('"x"', "x"), ('"  spaced "', "  spaced "), ('""', ""), ("7", "q1"), ("null", "q1"), ('["x"]', "q1")],
)
def test_ids(raw_id: str, expected: str) -> None:
    assert only_case(case_line()[:-1] + f',"id":{raw_id}}}').id == expected


def test_duplicate_ids_are_accepted_and_order_is_kept() -> None:
    fixtures = parse("\n".join(case_line(id="same", query=q) for q in ("b", "a", "c")))
    assert [(c.id, c.query) for c in fixtures.cases] == [("same", "b"), ("same", "a"), ("same", "c")]


def test_case_fields_and_ranged() -> None:
    case = only_case(case_line(id="x", query=" q ", expected=["a.py#k", "b.py@3-4"], k=3))
    assert case == Case(
        line=1, id="x", query="q", anchors=(Anchor("a.py", "k", None), Anchor("b.py", None, (3, 4))), k=3
    )
    assert case.ranged
    assert not only_case(case_line(expected=["a.py", "#k", "user@host.py"])).ranged


@pytest.mark.parametrize("text", ["", "\n", "\n\n  \n", HEADER, f"\n{HEADER}\n\n"])
def test_e14_no_cases(text: str) -> None:
    assert error(text) == "fixture set contains no query cases"


def test_first_offending_line_wins() -> None:
    assert error(f"{CASE}\n[]\nnot json\n") == "fixture line 2: expected a JSON object"


# --- corpus_dir (§corpus-choice) -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "corpus", "expected"),
    [
        (
            "eval/relevance/code.jsonl",
            "../../test/fixture/samples",
            "eval/relevance/../../test/fixture/samples",
        ),
        ("eval/relevance/docs.jsonl", "docs-corpus", "eval/relevance/docs-corpus"),
        ("code.jsonl", "../x", "../x"),
        ("./f.jsonl", "c", "./c"),
        ("../f.jsonl", "c", "../c"),
        ("/f.jsonl", "c", "/c"),
        ("/abs/f.jsonl", "c/", "/abs/c/"),
        ("a/f.jsonl", "/abs/corpus", "/abs/corpus"),
        ("a//f.jsonl", "c", "a/c"),
        ("a/./f.jsonl", "c", "a/c"),  # Rust's Path::parent drops the `.`; os.path.dirname keeps it
        ("./././f.jsonl", "c", "./c"),
        ("a/../f.jsonl", "c", "a/../c"),
        ("a/b/", "c", "a/c"),
        (".", "c", "c"),
    ],
)
def test_corpus_dir(fixture: str, corpus: str, expected: str) -> None:
    assert corpus_dir(fixture, corpus) == expected


_SEGMENT = st.text(alphabet="abz09_-", min_size=1, max_size=6) | st.just("..")


@given(st.lists(_SEGMENT, min_size=1, max_size=5), st.booleans(), st.lists(_SEGMENT, min_size=1, max_size=3))
def test_corpus_dir_is_os_path_join_for_plain_paths(
    segments: list[str], absolute: bool, corpus: list[str]
) -> None:
    fixture = ("/" if absolute else "") + "/".join(segments)
    header = "/".join(corpus)
    assert corpus_dir(fixture, header) == os.path.join(os.path.dirname(fixture), header)


# --- properties ------------------------------------------------------------------------------


@given(st.text())
def test_arbitrary_text_raises_only_cce_error(text: str) -> None:
    try:
        fixtures = parse(text)
    except CceError as exc:
        if ": invalid JSON: " in exc.message:
            assert E2_TAIL.match(exc.message), exc.message
        return
    assert fixtures.cases


_JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_JSON = st.recursive(
    _JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
_KEYS = st.sampled_from(["schema", "query", "expected", "id", "k", "corpus", "x"])
_VALUES = (
    _JSON
    | st.just("cce.relevance/v1")
    | st.lists(st.text(alphabet="ab@#-12 ", max_size=8), max_size=3)
    | st.integers(-2, 2**64 + 1)
)
_OBJECT = st.dictionaries(_KEYS, _VALUES, max_size=5)


@st.composite
def _fixture_like_line(draw: st.DrawFn) -> str:
    text = json.dumps(draw(_OBJECT), allow_nan=True)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:at]
        else:
            text = text[:at] + draw(st.text(alphabet='{}[]":,\\u0d8e1 \t\r', max_size=4)) + text[at:]
    return text


@given(st.lists(_fixture_like_line() | st.sampled_from(["", " ", "\r"]), max_size=6))
def test_fixture_like_lines_raise_only_cce_error(lines: list[str]) -> None:
    try:
        fixtures = parse("\n".join(lines))
    except CceError as exc:
        assert re.match(r"^(fixture line \d+: |fixture set contains no query cases$)", exc.message)
        if ": invalid JSON: " in exc.message:
            assert E2_TAIL.match(exc.message), exc.message
        return
    for case in fixtures.cases:
        assert case.query and case.anchors and 1 <= case.k <= 2**64 - 1


_SAFE = st.text(alphabet="abcxyz_./", min_size=1, max_size=10)


@given(
    st.lists(st.tuples(_SAFE, st.text(max_size=10), _SAFE, st.integers(1, 2**64 - 1)), min_size=1, max_size=5)
)
def test_valid_cases_round_trip(rows: list[tuple[str, str, str, int]]) -> None:
    text = "\n".join(json.dumps({"id": i, "query": q, "expected": [a], "k": k}) for i, q, a, k in rows)
    blank = [n for n, (_, q, _, _) in enumerate(rows, start=1) if not rust_trim(q)]
    if blank:
        assert error(text) == f'fixture line {blank[0]}: missing or empty "query"'
        return
    assert [(c.line, c.id, c.query, c.anchors[0].path, c.k) for c in parse(text).cases] == [
        (n, i, rust_trim(q), a, k) for n, (i, q, a, k) in enumerate(rows, start=1)
    ]
