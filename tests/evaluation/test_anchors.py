"""Anchor grammar, errors E9–E12, canonical display and matching (§anchors–§anchor-matching)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from cce_relevance.evaluation.anchors import U64_MAX, Anchor, AnchorError, parse_anchor

E9 = "anchor {} has an empty kind after '#'"
E10 = "anchor is empty — expected `path`, `path#kind`, `#kind`, or `path@a-b`"
E11 = "anchor {} has a line range but no file path — a range needs `path@a-b` or `path#kind@a-b`"
E12 = "anchor {} has an invalid line range after '@' — expected `a-b` with 1 ≤ a ≤ b"


# --- the table of §anchors, row by row -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "kind", "line_range"),
    [
        ("auth.py", "auth.py", None, None),
        ("auth.py#function_definition", "auth.py", "function_definition", None),
        ("#interface_declaration", None, "interface_declaration", None),
        ("src/auth.py@10-42", "src/auth.py", None, (10, 42)),
        ("auth.py#function_definition@3-4", "auth.py", "function_definition", (3, 4)),
        ("f.py@7-7", "f.py", None, (7, 7)),
        ("user@host.py", "user@host.py", None, None),
        ("v2@latest.md#section", "v2@latest.md", "section", None),
        ("f.py@3-4#kind", "f.py@3-4", "kind", None),
        ("a@1-2@3-4", "a@1-2", None, (3, 4)),
        (" f.py @ 3-4 ", "f.py", None, (3, 4)),
        ("f.py@", "f.py@", None, None),
        ("@", "@", None, None),
    ],
)
def test_table_accepted(
    text: str, path: str | None, kind: str | None, line_range: tuple[int, int] | None
) -> None:
    assert parse_anchor(text) == Anchor(path=path, kind=kind, range=line_range)


@pytest.mark.parametrize("text", ["f.py@10-", "f.py@-42", "f.py@42", "f.py@42-10", "f.py@0-4", "f.py@1-2-3"])
def test_table_invalid_ranges_are_e12(text: str) -> None:
    with pytest.raises(AnchorError) as info:
        parse_anchor(text)
    assert info.value.code == "E12"
    assert info.value.message == E12.format(f'"{text}"')


def test_table_range_without_path_is_e11() -> None:
    with pytest.raises(AnchorError) as info:
        parse_anchor("#function_definition@1-5")
    assert (info.value.code, info.value.message) == ("E11", E11.format('"#function_definition@1-5"'))


@pytest.mark.parametrize("text", ["@1-5", "", "   "])
def test_table_empty_anchors_are_e10(text: str) -> None:
    with pytest.raises(AnchorError) as info:
        parse_anchor(text)
    assert (info.value.code, info.value.message) == ("E10", E10)


@pytest.mark.parametrize("text", ["auth.py#", "#"])
def test_table_empty_kinds_are_e9(text: str) -> None:
    with pytest.raises(AnchorError) as info:
        parse_anchor(text)
    assert (info.value.code, info.value.message) == ("E9", E9.format(f'"{text}"'))


# --- the rules behind the table --------------------------------------------------------------


def test_malformed_range_wins_over_everything() -> None:
    with pytest.raises(AnchorError) as info:
        parse_anchor("#@1-")
    assert info.value.code == "E12"


def test_empty_kind_is_checked_before_the_range_needs_a_path() -> None:
    with pytest.raises(AnchorError) as info:
        parse_anchor("#@1-2")
    assert info.value.code == "E9"


@pytest.mark.parametrize(
    ("text", "line_range"),
    [
        ("f.py@007-010", (7, 10)),
        ("f.py@1-18446744073709551615", (1, U64_MAX)),
        ("f.py@18446744073709551615-18446744073709551615", (U64_MAX, U64_MAX)),
        ("f.py@" + "0" * 5000 + "1-2", (1, 2)),  # Rust parses any number of leading zeros
        ("f.py@\u20033-4\u3000", (3, 4)),  # the tail is trimmed with Unicode White_Space
    ],
)
def test_range_numbers(text: str, line_range: tuple[int, int]) -> None:
    assert parse_anchor(text) == Anchor("f.py", None, line_range)


@pytest.mark.parametrize(
    "text",
    [
        "f.py@1-18446744073709551616",
        "f.py@18446744073709551616-18446744073709551617",
        "f.py@1-" + "9" * 5000,
        "f.py@0-0",
        "f.py@-",
        "f.py@--",
        "f.py@1--2",
        "f.py@3-2",
    ],
)
def test_range_numbers_rejected(text: str) -> None:
    with pytest.raises(AnchorError) as info:
        parse_anchor(text)
    assert info.value.code == "E12"


@pytest.mark.parametrize(
    "text",
    [
        "f.py@3 -4",  # a space inside the tail: not all digits/dashes
        "f.py@١-٢",  # Arabic-Indic digits are digits to Python, not to the grammar
        "f.py@+1-2",
        "f.py@1-2\x1c",  # U+001C is not whitespace to Rust, so the tail is not a range
    ],
)
def test_tails_that_are_not_ranges_stay_literal(text: str) -> None:
    assert parse_anchor(text) == Anchor(text, None, None)


@pytest.mark.parametrize(
    ("text", "path", "kind"),
    [
        ("a#b#c", "a", "b#c"),
        (" a # b ", "a", "b"),
        ("\u00a0f.py\u3000", "f.py", None),
        ("\x1cf.py", "\x1cf.py", None),  # Python's str.strip() would drop U+001C; Rust does not
        ("#k@x", None, "k@x"),
    ],
)
def test_kind_split_and_trimming(text: str, path: str | None, kind: str | None) -> None:
    assert parse_anchor(text) == Anchor(path, kind, None)


def test_errors_quote_the_whole_untrimmed_anchor_in_rust_debug_form() -> None:
    with pytest.raises(AnchorError) as info:
        parse_anchor(' "x".py#\t')
    assert info.value.message == E9.format('" \\"x\\".py#\\t"')
    with pytest.raises(AnchorError) as info:
        parse_anchor("\tx.py#\u00a0")
    assert info.value.message == E9.format('"\\tx.py#\\u{a0}"')
    with pytest.raises(AnchorError) as info:
        parse_anchor("é.py@9-1")
    assert info.value.message == E12.format('"é.py@9-1"')
    with pytest.raises(AnchorError) as info:
        parse_anchor(" #k @1-2")
    assert info.value.message == E11.format('" #k @1-2"')


# --- display and matching --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("anchor", "shown"),
    [
        (Anchor("auth.py", None, None), "auth.py"),
        (Anchor("auth.py", "function_definition", None), "auth.py#function_definition"),
        (Anchor(None, "interface_declaration", None), "#interface_declaration"),
        (Anchor("f.py", None, (7, 10)), "f.py@7-10"),
        (Anchor("f.py", "k", (3, 4)), "f.py#k@3-4"),
    ],
)
def test_display(anchor: Anchor, shown: str) -> None:
    assert anchor.display() == shown


def test_display_is_canonical() -> None:
    assert parse_anchor(" f.py # k @ 007-010 ").display() == "f.py#k@7-10"


def test_matches_each_facet() -> None:
    anchor = parse_anchor("auth.py#function_definition@10-20")
    assert anchor.matches("auth.py", "function_definition", 15, 16)
    assert not anchor.matches("./auth.py", "function_definition", 15, 16)
    assert not anchor.matches("Auth.py", "function_definition", 15, 16)
    assert not anchor.matches("auth.py", "class_definition", 15, 16)
    assert not anchor.matches("auth.py", "function_definition", 21, 30)


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [(1, 9, False), (1, 10, True), (20, 30, True), (21, 30, False), (5, 25, True), (12, 12, True)],
)
def test_range_overlap_is_inclusive(start: int, end: int, expected: bool) -> None:
    assert parse_anchor("f.py@10-20").matches("f.py", "x", start, end) is expected


def test_unranged_facets_match_anything() -> None:
    assert parse_anchor("#interface_declaration").matches("any/file.ts", "interface_declaration", 1, 1)
    assert parse_anchor("f.py").matches("f.py", "anything", 10**6, 10**6)


# --- properties ------------------------------------------------------------------------------


@given(st.text())
def test_arbitrary_text_parses_or_raises_anchor_error(text: str) -> None:
    try:
        anchor = parse_anchor(text)
    except AnchorError as exc:
        assert exc.code in {"E9", "E10", "E11", "E12", "S1", "S2", "S3"}
        return
    assert anchor.path is not None or anchor.kind is not None
    assert anchor.range is None or (anchor.path is not None and 1 <= anchor.range[0] <= anchor.range[1])
    assert parse_anchor(anchor.display()) == anchor


@given(st.text(alphabet="ab@#-:.0123456789 \t\u00a0"))
def test_grammar_corner_alphabet(text: str) -> None:
    try:
        anchor = parse_anchor(text)
    except AnchorError:
        return
    assert parse_anchor(anchor.display()) == anchor


_PATH = st.text(alphabet="abcxyzABC019_./-", min_size=1, max_size=20)
_KIND = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_#", min_size=1, max_size=20)


@st.composite
def _anchors(draw: st.DrawFn) -> Anchor:
    path = draw(st.none() | _PATH)
    kind = draw(st.none() | _KIND)
    assume(path is not None or kind is not None)
    line_range = None
    if path is not None and draw(st.booleans()):
        a = draw(st.integers(1, U64_MAX))
        line_range = (a, draw(st.integers(a, U64_MAX)))
    return Anchor(path, kind, line_range)


@given(_anchors())
def test_display_round_trips(anchor: Anchor) -> None:
    assert parse_anchor(anchor.display()) == anchor


# --- symbol anchors: `path::Name`, `path#kind::Name` -------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "kind", "symbol"),
    [
        ("httpx/_client.py::Client.send", "httpx/_client.py", None, "Client.send"),
        ("a.py#function_definition::Client.send", "a.py", "function_definition", "Client.send"),
        (" a.py :: Foo :: bar ", "a.py", None, "Foo.bar"),  # `::` inside the symbol reads as `.`
        ("lib.rs::tests::parses", "lib.rs", None, "tests.parses"),
        ("user@host.py::f", "user@host.py", None, "f"),  # `@` in a path, as before
        ("a@1-2.py::f", "a@1-2.py", None, "f"),
        ("c:d.py::f", "c:d.py", None, "f"),  # a single `:` is part of the path
        ("a.py::X@y", "a.py", None, "X@y"),  # a tail that is not a range stays in the symbol
        ("a.py::[Symbol.iterator]", "a.py", None, "[Symbol.iterator]"),
        ("a.js::A.#private", "a.js", None, "A.#private"),  # `#` after the `::` is the symbol's
        ("a.js#method_definition::A.#p", "a.js", "method_definition", "A.#p"),
        ("a.py::Foo#k", "a.py", None, "Foo#k"),
    ],
)
def test_symbol_anchors(text: str, path: str, kind: str | None, symbol: str) -> None:
    assert parse_anchor(text) == Anchor(path, kind, None, symbol)


@pytest.mark.parametrize(
    ("text", "path", "kind"),
    [
        ("c:d.py", "c:d.py", None),
        ("a:b:c", "a:b:c", None),
    ],
)
def test_colons_that_start_no_symbol(text: str, path: str, kind: str | None) -> None:
    assert parse_anchor(text) == Anchor(path, kind, None)


@pytest.mark.parametrize(
    ("text", "code", "message"),
    [
        ("a.py::", "S1", "anchor \"a.py::\" has an empty symbol after '::'"),
        ("a.py#k:: ", "S1", "anchor \"a.py#k:: \" has an empty symbol after '::'"),
        ("::Client", "S2", "anchor \"::Client\" names a symbol but no file path — "
                           "a symbol needs `path::Name` or `path#kind::Name`"),
        ("#function_definition::f", "S2", "anchor \"#function_definition::f\" names a symbol but no file path — "
                                          "a symbol needs `path::Name` or `path#kind::Name`"),
        ("a.py::f@3-4", "S3", "anchor \"a.py::f@3-4\" has both a symbol and a line range — "
                              "a symbol anchor finds its own lines; drop the `@a-b`"),
        ("a.py#k::f@3-4", "S3", "anchor \"a.py#k::f@3-4\" has both a symbol and a line range — "
                                "a symbol anchor finds its own lines; drop the `@a-b`"),
        ("a.py#::f", "E9", "anchor \"a.py#::f\" has an empty kind after '#'"),
        ("a.py::f@0-4", "E12", E12.format('"a.py::f@0-4"')),
    ],
)
def test_symbol_errors(text: str, code: str, message: str) -> None:
    with pytest.raises(AnchorError) as info:
        parse_anchor(text)
    assert (info.value.code, info.value.message) == (code, message)


def test_no_chunk_kind_contains_a_colon() -> None:
    """Why `path#kind::Name` reinterprets nothing: before symbols, such an anchor's kind contained
    `::` and so never matched a chunk of any language."""
    from cce_relevance.retrieval.chunking.chunk import MODULE
    from cce_relevance.retrieval.chunking.languages import EXTRA_PACKS
    from cce_relevance.retrieval.chunking.packs import PACKS

    kinds = {k for pack in (*PACKS, *EXTRA_PACKS) for k in pack.chunk_kinds} | {MODULE}
    assert len(kinds) > 30 and not any(":" in k for k in kinds)


@given(st.text())
def test_text_without_a_double_colon_names_no_symbol(text: str) -> None:
    try:
        anchor = parse_anchor(text.replace("::", ":"))
    except AnchorError as exc:
        assert exc.code in {"E9", "E10", "E11", "E12"}
        return
    assert anchor.symbol is None and anchor.bound == ()


def test_symbol_display_and_matching_through_bound_lines() -> None:
    anchor = parse_anchor("a.py # function_definition :: Client :: send")
    assert anchor.display() == "a.py#function_definition::Client.send"
    assert parse_anchor(anchor.display()) == anchor
    assert not anchor.matches("a.py", "function_definition", 1, 100)  # unbound: matches nothing
    assert anchor.line_spans() == ()
    bound = anchor.bind(((10, 12), (20, 25)))
    assert bound.line_spans() == ((10, 12), (20, 25))
    assert bound.display() == anchor.display()
    assert bound.matches("a.py", "function_definition", 12, 14)
    assert bound.matches("a.py", "function_definition", 25, 25)
    assert not bound.matches("a.py", "function_definition", 13, 19)
    assert not bound.matches("a.py", "class_definition", 10, 12)
    assert not bound.matches("b.py", "function_definition", 10, 12)
    assert parse_anchor("a.py::f").bind(((1, 2),)).matches("a.py", "class_definition", 2, 9)


_SYMBOL = st.text(alphabet="abcXYZ_.019[]~#@ -", min_size=1, max_size=20).map(str.strip).filter(bool)


@given(path=_PATH, kind=st.none() | _KIND.filter(lambda k: "#" not in k), symbol=_SYMBOL)
def test_symbol_display_round_trips(path: str, kind: str | None, symbol: str) -> None:
    anchor = Anchor(path, kind, None, symbol)
    try:
        parsed = parse_anchor(anchor.display())
    except AnchorError as exc:
        # `@` after a symbol starts a line range: a valid one is refused with a symbol (S3),
        # anything else is an invalid range (E12)
        assert "@" in symbol and exc.code in {"S3", "E12"}
        return
    assert parsed == anchor
