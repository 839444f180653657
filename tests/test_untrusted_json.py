"""`untrusted_json.Field`, the schema-strict reader of documents from outside (shard states, saved
sides, publish artifacts): each reader returns what the field must hold and refuses anything else
with a `CceError` (exit 2) naming the file and the field, never another exception."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from cce_relevance import untrusted_json
from cce_relevance.errors import EXIT_USAGE, CceError
from cce_relevance.untrusted_json import LINE_LIMIT, Field

HOSTILE = [
    "%0A::warning::X",
    "\n::error::X",
    "a\r\nb",
    "--output=/x",
    "../../etc/passwd",
    "a\x00b",
    "a\u2028b",
    "a\u2029b",
    "\x1b[31m",
    "x" * (LINE_LIMIT + 1),
    "",
    "/etc/passwd",
    "C:\\Windows",
    "a\\..\\b",
    "./a",
    "a//b",
    "a/./b",
    "a/",
]
NOT_STRINGS: list[Any] = [None, 1, 1.5, True, False, [], {}, ["a"], {"a": 1}]


def refused(read: Callable[[], object], where: str = 'field "f"') -> str:
    with pytest.raises(CceError) as raised:
        read()
    assert raised.value.exit_code == EXIT_USAGE
    assert raised.value.message.startswith(f"doc.json: {where}: "), raised.value.message
    return raised.value.message


def field(value: Any) -> Field:
    return Field(value, "doc.json", "f")


def test_the_error_names_the_file_and_the_field_path() -> None:
    document = Field({"edited": ["a.py", None]}, "doc.json")
    message = refused(lambda: document.key("edited").list_of(Field.path), 'field "edited[1]"')
    assert message == 'doc.json: field "edited[1]": expected a path, got null'
    with pytest.raises(CceError, match="^doc.json: expected an object, got an array$"):
        Field([], "doc.json").object(())  # the root has no field name


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"a": 1}, "lacks b: expected exactly a, b"),
        ({"a": 1, "b": 2, "c": 3}, 'has unknown fields "c": expected exactly a, b'),
        ([], "expected an object, got an array"),
    ],
)
def test_an_object_has_exactly_its_keys(value: Any, message: str) -> None:
    assert refused(lambda: field(value).object(("a", "b"))).endswith(message)


def test_an_object_may_have_its_optional_keys() -> None:
    assert set(field({"a": 1}).object(("a",), ("b",))) == {"a"}
    assert set(field({"a": 1, "b": 2}).object(("a",), ("b",))) == {"a", "b"}


def test_children_name_their_place() -> None:
    document = Field({"sets": [{"top_hits": {"my id": [{"rank": 0}]}}]}, "doc.json")
    [entry] = document.key("sets").items()
    [(_, by_case)] = entry.key("top_hits").entries()
    [hit] = by_case.items()
    message = refused(lambda: hit.key("rank").integer(1), "field \"sets[0].top_hits['my id'][0].rank\"")
    assert message.endswith("expected an integer from 1, got 0")


@pytest.mark.parametrize("value", [True, False, 1.0, "1", None, 0, 11, -1, 2**64])
def test_an_integer_is_a_whole_number_in_its_range_never_a_boolean(value: Any) -> None:
    refused(lambda: field(value).integer(1, 10))


def test_an_integer_in_range_is_read() -> None:
    assert [field(v).integer(1, 10) for v in (1, 10)] == [1, 10]


@pytest.mark.parametrize("value", [-0.1, 1.0000001, 2, True, "0.5", None])
def test_a_fraction_is_a_number_from_0_to_1(value: Any) -> None:
    refused(lambda: field(value).fraction())


def test_a_fraction_or_an_integer_0_or_1_is_read_as_a_float() -> None:
    assert [field(v).fraction() for v in (0, 1, 0.25)] == [0.0, 1.0, 0.25]
    assert type(field(0).fraction()) is float


@pytest.mark.parametrize(
    "value",
    ["A" * 40, "a" * 39, "a" * 41, "a" * 63, "g" * 40, " " + "a" * 40, "a" * 40 + "\n", "--output=PATH", 1],
)
def test_a_commit_is_40_or_64_lowercase_hex_digits(value: Any) -> None:
    assert "expected a commit (40 or 64 lowercase hex digits)" in refused(lambda: field(value).commit())


def test_a_commit_is_read() -> None:
    assert field("0a" * 20).commit() == "0a" * 20 and field("f" * 64).commit() == "f" * 64


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\x00b", "a\u2028b", "\x1b[0m", "\x7f", "a\x85b"])
def test_one_line_of_text_has_no_control_character_or_line_break(value: str) -> None:
    refused(lambda: field(value).line())


def test_one_line_of_text_is_limited_in_length() -> None:
    assert field("x" * LINE_LIMIT).line() == "x" * LINE_LIMIT
    assert "at most" in refused(lambda: field("x" * (LINE_LIMIT + 1)).line())
    assert field("%0A::warning::X").line() == "%0A::warning::X"  # escaped where printed, not here


@pytest.mark.parametrize(
    "value",
    [
        "",
        "/etc/passwd",
        "--output=/x",
        "-x",
        "../x",
        "a/../../b",
        "a/..",
        ".",
        "./a",
        "a/./b",
        "a//b",
        "a/",
        "a\\b",
        "C:x",
        "a\nb",
        None,
    ],
)
def test_a_path_is_relative_and_normalised(value: Any) -> None:
    refused(lambda: field(value).path())


def test_a_path_is_read_and_the_root_only_when_asked() -> None:
    assert field("eval/search.jsonl").path() == "eval/search.jsonl"
    assert field("..a/b..c/.d").path() == "..a/b..c/.d"  # dots inside a name are a name
    assert field(".").path(root=True) == "."
    refused(lambda: field(".").path())


def test_lists_and_optional_values() -> None:
    assert field(["a", "b"]).list_of(Field.line) == ["a", "b"]
    assert field(None).optional(Field.commit) is None
    assert field([1, 2]).items(length=2)[1].integer() == 2
    refused(lambda: field([1]).items(length=2))
    refused(lambda: field("ab").list_of(Field.line))


def test_const_choice_boolean_digest() -> None:
    assert field("x").const("x") == "x" and field("b").choice(("a", "b")) == "b"
    refused(lambda: field("y").const("x"))
    refused(lambda: field(["a"]).choice(("a",)))
    refused(lambda: field(0).boolean())
    refused(lambda: field("A" * 64).sha256())


_READERS: dict[str, Callable[[Field], object]] = {
    "object": lambda f: f.object(("a",)),
    "entries": Field.entries,
    "items": Field.items,
    "integer": Field.integer,
    "number": Field.number,
    "fraction": Field.fraction,
    "boolean": Field.boolean,
    "text": Field.text,
    "line": Field.line,
    "name": Field.name,
    "commit": Field.commit,
    "sha256": Field.sha256,
    "path": Field.path,
    "paths": lambda f: f.list_of(Field.path),
    "optional path": lambda f: f.optional(Field.path),
    "choice": lambda f: f.choice(("moved", "changed")),
}
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.sampled_from(HOSTILE),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@given(st.sampled_from(sorted(_READERS)), _JSON)
def test_every_reader_returns_or_refuses_naming_the_file_and_field(reader: str, value: Any) -> None:
    """Any JSON value through any reader: a value, or the one input error naming the place."""
    try:
        read = _READERS[reader](field(value))
    except CceError as exc:
        assert exc.exit_code == EXIT_USAGE and exc.message.startswith('doc.json: field "f')
        assert not _CONTROL.search(exc.message)  # the refused value is shown escaped
        return
    if reader in ("line", "name", "path", "commit", "sha256", "choice"):
        assert isinstance(read, str) and not _CONTROL.search(read) and len(read) <= LINE_LIMIT
    if reader == "paths":
        assert isinstance(read, list) and all(".." not in p.split("/") for p in read)


@given(st.sampled_from(HOSTILE + NOT_STRINGS))
def test_hostile_strings_are_no_commit_and_no_path(value: Any) -> None:
    refused(lambda: field(value).commit())
    if value != "%0A::warning::X":  # a file may be named so: escaped where it is printed
        refused(lambda: field(value).path())


@pytest.mark.parametrize(
    ("value", "under", "read"),
    [
        ("../golden.json", "sub", True),
        ("../../golden.json", "a/b", True),
        ("../../golden.json", "sub", False),
        ("../golden.json", ".", False),
        ("..", "sub", False),
        ("../a/../b", "a/b", False),
        ("a/..", "sub", False),
    ],
)
def test_a_path_under_a_directory_may_climb_to_the_workspace_not_past_it(
    value: str, under: str, read: bool
) -> None:
    if read:
        assert field(value).path(under=under) == value
    else:
        refused(lambda: field(value).path(under=under))


_SIDE_SCHEMA = (
    Path(__file__).resolve().parents[1] / "docs" / "schemas" / "cce.relevance.action.side.v1.schema.json"
)
_PATH_PIECES = st.sampled_from(["a", "b.py", "..", ".", "", "-", "\\", "C:", "\n", "\u2028", "x y", "é"])


@given(st.lists(_PATH_PIECES, min_size=1, max_size=5).map("/".join))
@example("../-x")
@example("../C:")
def test_the_documented_path_pattern_is_the_readers_rule(path: str) -> None:
    """docs/schemas/ states the rule `Field.path` applies (the schema cannot say how far a path
    may climb: here the working directory is deep enough for any climb)."""
    pattern = json.loads(_SIDE_SCHEMA.read_text(encoding="utf-8"))["$defs"]["relative_path"]["pattern"]
    documented = re.search(pattern, path) is not None and not path.endswith("\n")
    try:
        field(path).path(under="/".join(["d"] * 8))
    except CceError:
        assert not documented, path
    else:
        assert documented, path


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("{", "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"),
        (b"\xef\xbb\xbf{}", "starts with a UTF-8 byte order mark (BOM)"),
        ("[" * 65 + "]" * 65, "nested 65 levels deep; at most 64 are allowed"),
        ("NaN", "NaN is not a JSON number"),
    ],
)
def test_text_in_hand_that_is_not_json_is_an_input_error_naming_where_it_came_from(
    text: str | bytes, why: str
) -> None:
    with pytest.raises(CceError) as raised:
        untrusted_json.parse(text, "runs.jsonl line 3", "not a JSON object")
    assert raised.value.message.startswith(f"runs.jsonl line 3: not a JSON object ({why}")
    assert raised.value.message.endswith(")") and raised.value.exit_code == EXIT_USAGE


def test_text_in_hand_is_read_by_the_same_rules_as_a_file() -> None:
    assert untrusted_json.parse(b'{"id": "q1", "n": 18446744073709551615}', "x", "y") == {
        "id": "q1",
        "n": 2**64 - 1,
    }
