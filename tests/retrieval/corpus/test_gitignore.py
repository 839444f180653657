"""`.gitignore` semantics of the reference walker (§gitignore).

Each case states a `.gitignore` file, a path relative to its directory, whether that path is a
directory, and the verdict: True (ignored), False (re-included by a `!` line), None (no line
applies). The expectations follow the spec's edge-case list, which was checked against the real
`ignore`/`globset` crates.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.corpus.gitignore import Gitignore, GlobError, NestLimitError, compile_line

IGNORED, REINCLUDED, NO_MATCH = True, False, None


def verdict(gitignore: str | bytes, path: str | bytes, is_dir: bool = False) -> bool | None:
    data = gitignore if isinstance(gitignore, bytes) else gitignore.encode()
    raw_path = path if isinstance(path, bytes) else path.encode()
    return Gitignore.from_bytes(data).match(raw_path, is_dir)


def case(gitignore: str | bytes, path: str | bytes, expected: bool | None, *, is_dir: bool = False, id: str):
    return pytest.param(gitignore, path, is_dir, expected, id=id)


CASES = [
    # Line syntax: comments, escapes, whitespace, line ends.
    case("#foo", "#foo", NO_MATCH, id="comment"),
    case("\\#foo", "#foo", IGNORED, id="escaped-hash"),
    case(" #x", " #x", IGNORED, id="hash-after-space-is-a-pattern"),
    case("\\!x", "!x", IGNORED, id="escaped-bang"),
    case("\n\n\n", "a", NO_MATCH, id="blank-lines"),
    case("foo   ", "foo", IGNORED, id="trailing-spaces-trimmed"),
    case("foo\t", "foo", IGNORED, id="trailing-tab-trimmed"),
    case("foo\u00a0\u3000", "foo", IGNORED, id="trailing-unicode-whitespace-trimmed"),
    case("foo\x1c", "foo\x1c", IGNORED, id="u001c-is-not-rust-whitespace"),
    case("foo\\ ", "foo ", IGNORED, id="escaped-trailing-space-kept"),
    case("foo\\ ", "foo", NO_MATCH, id="escaped-trailing-space-required"),
    case("foo\r\nbar\r\n", "bar", IGNORED, id="crlf"),
    case(b"foo\\ \r\n", "foo ", IGNORED, id="cr-dropped-before-newline-only"),
    case(b"foo\\ \r", "foo ", NO_MATCH, id="final-cr-is-trimmed-so-line-is-invalid"),
    case("foo\rbar", "foo", NO_MATCH, id="inner-cr-is-literal"),
    case("Foo", "foo", NO_MATCH, id="case-sensitive"),
    # Negation and precedence.
    case("*.log\n!keep.log", "keep.log", REINCLUDED, id="negation"),
    case("*.log\n!keep.log", "a.log", IGNORED, id="negation-leaves-others"),
    case("!keep.log\n*.log", "keep.log", IGNORED, id="last-matching-line-wins"),
    case("*.log\n!", "a.log", REINCLUDED, id="lone-bang-reincludes-everything"),
    # Directory-only patterns.
    case("build/", "build", IGNORED, is_dir=True, id="dir-only-dir"),
    case("build/", "build", NO_MATCH, id="dir-only-skips-file"),
    case("build/", "src/build", IGNORED, is_dir=True, id="dir-only-any-depth"),
    case("*\n!keep/", "keep", IGNORED, id="dir-only-negation-skipped-for-file"),
    case("foo\\/", "foo", IGNORED, is_dir=True, id="escaped-trailing-slash-is-dir-only"),
    case("foo\\/", "foo", NO_MATCH, id="escaped-trailing-slash-not-file"),
    # Anchoring.
    case("/a", "a", IGNORED, id="leading-slash-anchors"),
    case("/a", "x/a", NO_MATCH, id="leading-slash-not-deeper"),
    case("a/b", "a/b", IGNORED, id="inner-slash-anchors"),
    case("a/b", "x/a/b", NO_MATCH, id="inner-slash-not-deeper"),
    case("a", "x/y/a", IGNORED, id="no-slash-any-depth"),
    case("a\\/b", "a/b", IGNORED, id="escaped-slash-is-literal"),
    case("a\\/b", "x/a/b", NO_MATCH, id="escaped-slash-still-anchors"),
    case("/build/", "x/build", NO_MATCH, is_dir=True, id="anchored-dir-only"),
    # `*` and `?`: bytes, never `/`.
    case("*.py", "a/b.py", IGNORED, id="star-basename"),
    case("a/*", "a/b", IGNORED, id="star-one-segment"),
    case("a/*", "a/b/c", NO_MATCH, id="star-not-slash"),
    case("a?b", "a/b", NO_MATCH, id="question-not-slash"),
    case("a?b", "aéb", NO_MATCH, id="question-is-one-byte"),
    case("c????d", "cééd", IGNORED, id="questions-match-bytes"),
    case("a?b", b"a\xffb", IGNORED, id="question-matches-non-utf8-byte"),
    case("a*b", b"a\n/b", NO_MATCH, id="star-matches-newline-but-not-slash"),
    case("a*b", b"a\nb", IGNORED, id="star-matches-newline"),
    # `**` only as a whole segment.
    case("**", "x/y", IGNORED, id="doublestar-alone"),
    case("**/foo", "a/b/foo", IGNORED, id="leading-doublestar"),
    case("**/foo", "foo", IGNORED, id="leading-doublestar-zero-dirs"),
    case("**/foo", "foo/x", NO_MATCH, id="leading-doublestar-basename-only"),
    case("foo/**", "foo/x/y", IGNORED, id="trailing-doublestar-contents"),
    case("foo/**", "foo", NO_MATCH, is_dir=True, id="trailing-doublestar-not-dir-itself"),
    case("a/**/b", "a/b", IGNORED, id="middle-doublestar-zero-dirs"),
    case("a/**/b", "a/x/y/b", IGNORED, id="middle-doublestar-many-dirs"),
    case("a/**/b", "a/xb", NO_MATCH, id="middle-doublestar-needs-slash"),
    case("a**b", "axyzb", IGNORED, id="inner-doublestar-is-star"),
    case("a**b", "ab", IGNORED, id="inner-doublestar-empty"),
    case("a**b", "sub/axb", IGNORED, id="inner-doublestar-unanchored"),
    case("a**b", "ax/yb", NO_MATCH, id="inner-doublestar-not-slash"),
    case("a/**b", "a/xb", IGNORED, id="doublestar-prefix-of-segment"),
    case("a/**b", "a/x/b", NO_MATCH, id="doublestar-prefix-of-segment-not-slash"),
    case("/***", "abc", IGNORED, id="triple-star-is-star"),
    case("/***", "a/b", NO_MATCH, id="triple-star-not-slash"),
    # Classes.
    case("[ab].py", "a.py", IGNORED, id="class"),
    case("[ab].py", "c.py", NO_MATCH, id="class-miss"),
    case("[!a].py", "a.py", NO_MATCH, id="class-bang-negates"),
    case("[^a].py", "b.py", IGNORED, id="class-caret-negates"),
    case("[a-c]x", "bx", IGNORED, id="class-range"),
    case("[a-c]x", "dx", NO_MATCH, id="class-range-miss"),
    case("[]]x", "]x", IGNORED, id="class-leading-bracket-is-member"),
    case("[!]]x", "]x", NO_MATCH, id="class-negated-leading-bracket"),
    case("[-a]", "-", IGNORED, id="class-leading-dash"),
    case("[a-]", "-", IGNORED, id="class-trailing-dash"),
    case("[a-b-d]", "c", IGNORED, id="class-range-extends"),
    case("foo[!x]bar", "foo/bar", IGNORED, id="class-can-match-slash"),
    case("/a[/]b", "a/b", IGNORED, id="class-slash-member"),
    case("[\\]]", "\\]", IGNORED, id="class-backslash-is-member"),
    case("[\\]]", "]", NO_MATCH, id="class-backslash-is-not-escape"),
    case("[é]", "é", NO_MATCH, id="class-non-ascii-bytewise"),
    case("[é][é]", "é", IGNORED, id="class-non-ascii-each-byte"),
    # Braces.
    case("*.{js,ts}", "a.ts", IGNORED, id="braces"),
    case("*.{js,ts}", "a.py", NO_MATCH, id="braces-miss"),
    case("x{,y}", "xy", IGNORED, id="braces-empty-alternative-dropped"),
    case("x{,y}", "x", NO_MATCH, id="braces-empty-alternative-not-empty-match"),
    case("x{}", "x", IGNORED, id="braces-empty-group"),
    case("{a,{b,c}}", "c", IGNORED, id="braces-nested"),
    case("a,b", "a,b", IGNORED, id="comma-outside-braces-is-literal"),
    case("{a/**,b}", "a/x", IGNORED, id="braces-with-doublestar"),
    # Backslash escapes.
    case("\\*", "*", IGNORED, id="escaped-star"),
    case("\\*", "a", NO_MATCH, id="escaped-star-is-literal"),
    case("\\?", "?", IGNORED, id="escaped-question"),
    case("\\[", "[", IGNORED, id="escaped-bracket"),
    case("\\{x", "{x", IGNORED, id="escaped-brace"),
    case("\\\\", "\\", IGNORED, id="escaped-backslash"),
    case("\\a", "a", IGNORED, id="escaped-ordinary"),
    # Invalid lines are skipped one by one.
    case("[z-a]\n*.py\nfoo\\\n*.txt", "a.txt", IGNORED, id="invalid-lines-skipped"),
    case("{a\nb}\nc", "c", IGNORED, id="unbalanced-braces-skipped"),
    # Encoding: a bad line ends the file; a BOM is kept.
    case(b"a\n\xffx\nb", "a", IGNORED, id="lines-before-bad-utf8-apply"),
    case(b"a\n\xffx\nb", "b", NO_MATCH, id="lines-after-bad-utf8-ignored"),
    case(b"\xef\xbb\xbfa\nb", "a", NO_MATCH, id="bom-kept-in-first-pattern"),
    case(b"\xef\xbb\xbfa\nb", "\ufeffa", IGNORED, id="bom-is-part-of-pattern"),
    case(b"\xef\xbb\xbf#c", "\ufeff#c", IGNORED, id="bom-line-is-not-a-comment"),
    # Names ending in or made of dots.
    case("x.", "x.", IGNORED, id="name-ending-in-dot"),
    case("y*", "y.", IGNORED, id="wildcard-name-ending-in-dot"),
    case("...", "...", NO_MATCH, id="all-dots-name-has-no-basename"),
    case("...", "a/...", IGNORED, id="all-dots-name-deeper"),
    case("/...", "...", IGNORED, id="all-dots-anchored-literal"),
    case("*.", "...", NO_MATCH, id="all-dots-no-extension"),
]


@pytest.mark.parametrize(("gitignore", "path", "is_dir", "expected"), CASES)
def test_gitignore_rule(
    gitignore: str | bytes, path: str | bytes, is_dir: bool, expected: bool | None
) -> None:
    assert verdict(gitignore, path, is_dir) is expected


@pytest.mark.parametrize(
    "line",
    ["[", "foo[bar", "[]", "[!]", "[z-a]", "[z--]", "{a", "{a,{b}", "a}", "{a}}", "foo\\", "foo\\  "],
)
def test_invalid_lines_raise_glob_error(line: str) -> None:
    with pytest.raises(GlobError):
        compile_line(line)


@pytest.mark.parametrize("line", ["", "   ", "\t", "#", "# comment", "\u3000"])
def test_blank_and_comment_lines_compile_to_nothing(line: str) -> None:
    assert compile_line(line) is None


@pytest.mark.parametrize(
    ("line", "glob", "negated", "dir_only"),
    [
        ("*.py", "**/*.py", False, False),
        ("/a/b", "a/b", False, False),
        ("!x/", "**/x", True, True),
        ("a/**", "a/**/*", False, False),
        ("**", "**", False, False),
        ("**/x", "**/x", False, False),
        ("\\!x", "**/!x", False, False),
    ],
)
def test_line_is_turned_into_the_reference_glob(line: str, glob: str, negated: bool, dir_only: bool) -> None:
    pattern = compile_line(line)
    assert pattern is not None
    assert (pattern.glob, pattern.negated, pattern.dir_only) == (glob, negated, dir_only)


def _nested_braces(levels: int) -> str:
    return "{x," * levels + "y" + "}" * levels


def test_regex_nesting_limit_voids_the_whole_file() -> None:
    # Each `{x,...}` level nests two deeper (group + alternation); the Rust parser stops at 250.
    assert verdict("keep\n" + _nested_braces(124), "keep") is IGNORED
    assert verdict("keep\n" + _nested_braces(124), "y") is IGNORED
    with pytest.raises(NestLimitError):
        compile_line(_nested_braces(125))
    assert verdict("keep\n" + _nested_braces(125), "keep") is NO_MATCH


def test_too_deep_but_invalid_line_is_only_skipped() -> None:
    assert verdict("keep\n" + _nested_braces(300) + "[", "keep") is IGNORED


def test_deep_empty_groups_do_not_recurse() -> None:
    assert verdict("{" * 5000 + "}" * 5000 + "x", "x") is IGNORED


def test_empty_file_matches_nothing() -> None:
    gitignore = Gitignore.from_bytes(b"")
    assert not gitignore
    assert gitignore.match(b"a", False) is None


@given(st.text(max_size=40))
def test_compile_line_raises_only_glob_errors(line: str) -> None:
    try:
        compile_line(line)
    except (GlobError, NestLimitError):
        pass


@settings(max_examples=300)
@given(st.binary(max_size=200), st.binary(min_size=1, max_size=40), st.booleans())
def test_arbitrary_files_and_paths_never_raise(data: bytes, path: bytes, is_dir: bool) -> None:
    assert Gitignore.from_bytes(data).match(path, is_dir) in (True, False, None)


_GLOB_TEXT = st.text(alphabet="ab./*?[]!^-{},\\# é", max_size=12)


@settings(max_examples=300)
@given(st.lists(_GLOB_TEXT, max_size=6), st.text(alphabet="ab./*?[]{},\\# é", min_size=1, max_size=12))
def test_glob_like_files_and_paths_never_raise(lines: list[str], path: str) -> None:
    gitignore = Gitignore.from_bytes("\n".join(lines).encode())
    assert gitignore.match(path.encode(), False) in (True, False, None)


_NAME = st.text(alphabet="abcxyz_0", min_size=1, max_size=4)


@given(_NAME, st.lists(_NAME, min_size=1, max_size=4))
def test_plain_name_matches_the_last_component_only(pattern: str, components: list[str]) -> None:
    expected = IGNORED if components[-1] == pattern else NO_MATCH
    assert verdict(pattern, "/".join(components)) is expected
