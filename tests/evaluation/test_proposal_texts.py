"""Query texts of proposals: names as words, doc sentences, the same without identifiers, callers."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.evaluation.proposals.file_rules import FileRules
from cce_relevance.evaluation.proposals.texts import (
    callers_query,
    doc_sentence,
    name_query,
    name_words,
    own_identifiers,
    without_identifiers,
)
from cce_relevance.retrieval.tokens import tokenize


def test_names_become_lowercase_words() -> None:
    assert name_words("HTTPClient.send_request") == ["http", "client", "send", "request"]
    assert name_query("read_config") == "read config"
    assert name_query("Client.send") == "client send"  # one word: its class says what it belongs to
    assert name_query("send") is None
    assert name_query("Client.__init__") is None
    assert name_query("buffer_count_lines.Buffer") is None


def test_doc_sentence_of_a_python_docstring_stops_at_the_first_sentence() -> None:
    lines = ["def read_config(path):", '    """Read the settings file. Then parse it."""', "    return 1"]
    assert doc_sentence(lines, 1, 3) == "Read the settings file"


def test_doc_sentence_spans_lines_of_a_docstring_opened_alone() -> None:
    lines = [
        "class Pool:",
        '    """',
        "    Keep open connections",
        "    for reuse by later requests.",
        '    """',
    ]
    assert doc_sentence(lines, 1, 5) == "Keep open connections for reuse by later requests"


def test_doc_sentence_spacing_is_made_single_and_long_ones_are_cut() -> None:
    lines = ["def f():", '    """Returns  the   current value of   the option."""']
    assert doc_sentence(lines, 1, 2) == "Returns the current value of the option"
    long = " ".join(f"word{i}" for i in range(40))
    assert doc_sentence(["def f():", f'    """{long}."""'], 1, 2) == " ".join(long.split()[:24])


def test_doc_sentence_reads_the_comment_above_past_attributes() -> None:
    lines = [
        "/// Parse one header line into a name",
        "/// and its value.",
        "#[inline]",
        "fn parse_header() {}",
    ]
    assert doc_sentence(lines, 4, 4) == "Parse one header line into a name and its value"


def test_doc_sentence_of_a_module_is_its_first_lines() -> None:
    assert (
        doc_sentence(['"""Helpers for the wire format."""', "import os"], 1, 2, module=True)
        == "Helpers for the wire format"
    )


def test_code_licences_pragmas_and_redacted_text_are_not_prose() -> None:
    for text in (
        "# x = compute(y)",
        "# Copyright 2020 the authors and friends",
        "# type: ignore for now please",
        "# token [REDACTED:SECRET] is the value here",
        "# see more",
    ):
        assert doc_sentence([text, "def f():", "    pass"], 2, 3) is None, text


def test_own_identifiers_are_the_name_its_enclosing_names_and_parameters() -> None:
    assert own_identifiers(
        "Client.send_request", "    def send_request(self, request, *, timeout=None):"
    ) == {"client", "send_request", "self", "request", "timeout", "none"}


def test_without_identifiers_takes_out_names_name_words_and_code() -> None:
    own = {"read_config", "path"}
    assert (
        without_identifiers(
            "Read config from path and decode the `json` document via os.path", "read_config", own
        )
        == "from and decode document via"
    )
    assert without_identifiers("Load settings from disk", "read_config", own) is None  # nothing taken out
    assert without_identifiers("This is overridden in `Reader`", "read_config", own) is None  # says nothing


@given(
    st.lists(
        st.sampled_from(
            [
                "load",
                "the",
                "Config",
                "config",
                "file",
                "path",
                "`x`",
                "a_b",
                "from",
                "disk",
                "read",
                "fooBar",
                "(path)",
            ]
        ),
        min_size=1,
        max_size=14,
    )
)
def test_without_identifiers_never_keeps_an_own_identifier_or_code(words: list[str]) -> None:
    own = own_identifiers("Loader.read_config", "def read_config(self, path):")
    text = without_identifiers(" ".join(words), "Loader.read_config", own)
    if text is not None:
        assert not set(tokenize(text)) & own
        assert not any(ch in text for ch in "`_()") and "fooBar" not in text
        assert len(tokenize(text)) >= 3


def test_callers_query_uses_callers_words_not_the_callees() -> None:
    assert (
        callers_query(["load_settings", "Handler.__init__", "App.load_settings"], "read_settings")
        == "load handler"
    )
    assert callers_query(["read_settings"], "read_settings") is None


def test_file_rules_leave_out_tests_vendored_and_generated_code() -> None:
    rules = FileRules()
    assert rules.skip_reason("tests/test_api.py", "") == "test"
    assert rules.skip_reason("pkg/api_test.go", "") == "test"
    assert rules.skip_reason("web/button.spec.ts", "") == "test"
    assert rules.skip_reason("idlelib/idle_test/htest.py", "") == "test"
    assert rules.skip_reason("third_party/lib.py", "") == "vendored"
    assert rules.skip_reason("api/service_pb2.py", "") == "generated"
    assert rules.skip_reason("api/models.py", "# Code generated by sqlc. DO NOT EDIT.\n") == "generated"
    assert rules.skip_reason("api/models.py", "\n" * 5 + "# generated by hand, in line six\n") is None
    assert rules.skip_reason("pkg/contest.py", "") is None
    assert FileRules(tests=False).skip_reason("tests/test_api.py", "") is None
    assert FileRules(skip=("docs/",)).skip_reason("docs/api/x.py", "") == "skipped"
    assert FileRules(skip=("*.md", "!keep.md")).skip_reason("a/notes.md", "") == "skipped"
    assert FileRules(skip=("*.md", "!keep.md")).skip_reason("a/keep.md", "") is None
    assert FileRules(skip=("/api",)).skip_reason("src/api/x.py", "") is None  # anchored at the corpus root
