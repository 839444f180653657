"""The trend history document: what we write reads back the same, the same entries give the same
bytes, and a file that is not a history we wrote is refused with the field that is wrong (the file
comes back from actions/cache or an artifact: input, not ours). The JSON Schema in docs/schemas/
accepts what we write and refuses what the reader refuses."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema.exceptions import ValidationError

from cce_relevance import schemas
from cce_relevance.action.trend.history import (
    MAX_BYTES,
    Entry,
    History,
    HistoryError,
    commit_date,
    dumps_history,
    parse_history,
    read_history,
    write_history,
)
from tests.action.test_schemas import validator

SHA = "a" * 40
history_schema = functools.cache(lambda: validator("cce.relevance.history.v1"))
names = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,12}", fullmatch=True)
texts = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30)
means = st.dictionaries(
    texts,
    st.dictionaries(names, st.dictionaries(names, st.floats(0.0, 1.0), max_size=4), max_size=3),
    max_size=3,
)
entries = st.builds(
    Entry,
    st.from_regex(r"[0-9a-f]{40}", fullmatch=True),
    st.integers(0, 2**33).map(commit_date),
    texts,
    means,
)
histories = st.builds(History, texts, st.lists(entries, max_size=6, unique_by=lambda e: e.commit).map(tuple))


def entry(commit: str, mrr: float = 0.5) -> Entry:
    return Entry(commit, "2024-01-01T00:00:00Z", "0.1.0", {"eval/a.jsonl": {"bm25": {"mrr": mrr}}})


@given(histories)
def test_what_we_write_reads_back_the_same_and_gives_the_same_bytes(history: History) -> None:
    text = dumps_history(history)
    again = parse_history(text.encode())
    assert again == history and dumps_history(again) == text
    history_schema().validate(json.loads(text))


@given(histories, entries, st.integers(1, 8))
def test_an_entry_is_recorded_once_in_place_of_its_commit_and_the_size_is_kept(
    history: History, new: Entry, size: int
) -> None:
    recorded = history.with_entry(new, "main", size)
    commits = [e.commit for e in recorded.entries]
    assert recorded.branch == "main" and new in recorded.entries and len(set(commits)) == len(commits)
    assert len(recorded.entries) <= size
    kept = [e for e in history.entries if e.commit != new.commit]
    others = [e for e in recorded.entries if e.commit != new.commit]
    assert others == kept[len(kept) - len(others) :]  # the newest of the others, in their order
    if new.commit not in [e.commit for e in history.entries]:
        assert recorded.entries[-1] == new


def test_a_commit_scored_again_keeps_its_place() -> None:
    history = History("main", (entry("1" * 40), entry("2" * 40), entry("3" * 40)))
    again = history.with_entry(entry("2" * 40, 0.9), "main", 100)
    assert [e.commit for e in again.entries] == ["1" * 40, "2" * 40, "3" * 40]
    assert again.series("eval/a.jsonl", "bm25", "mrr")[1][1] == 0.9
    assert again.series("eval/a.jsonl", "vector", "mrr") == []


def test_the_date_is_utc_to_the_second() -> None:
    assert commit_date(0) == "1970-01-01T00:00:00Z"
    assert commit_date(1_706_781_600) == "2024-02-01T10:00:00Z"


def _doc(**changes: object) -> bytes:
    doc: dict[str, object] = json.loads(dumps_history(History("main", (entry(SHA),))))
    entry_doc = doc["entries"][0]  # type: ignore[index]
    for key, value in changes.items():
        if key.startswith("entry_"):
            entry_doc[key.removeprefix("entry_")] = value
        else:
            doc[key] = value
    return json.dumps(doc).encode()


HOSTILE = {
    "not JSON": (b"{", "cannot be parsed: invalid JSON: Expecting property name"),
    "a BOM": (b"\xef\xbb\xbf{}", "byte order mark"),
    "too deep": (b"[" * 200 + b"]" * 200, "cannot be parsed: nested 200 levels deep"),
    "an array": (b"[]", "the document: expected an object, got a JSON array"),
    "another schema": (_doc(schema="cce.relevance.history/v2"), "has schema 'cce.relevance.history/v2'"),
    "an unknown field": (_doc(extra=1), "the document has unknown fields extra"),
    "a missing field": (
        b'{"schema": "cce.relevance.history/v1", "branch": "main"}',
        "the document lacks entries",
    ),
    "entries not an array": (_doc(entries={}), "entries: expected an array, got a JSON object"),
    "too many entries": (_doc(entries=[{}] * 1001), "1001 entries, more than the 1000"),
    "an empty branch": (_doc(branch=""), "branch is '': expected a non-empty string"),
    "a branch with a newline": (_doc(branch="main\n::error::x"), "branch is 'main\\n::error::x'"),
    "a short commit": (_doc(entry_commit="abc"), "entries[0].commit is 'abc': expected a commit SHA"),
    "a local date": (
        _doc(entry_date="2024-01-01T00:00:00+01:00"),
        "entries[0].date is '2024-01-01T00:00:00+01:00'",
    ),
    "a version number": (_doc(entry_version=1), "entries[0].version is 1: expected a non-empty string"),
    "sets an array": (_doc(entry_sets=[]), "entries[0].sets: expected an object, got a JSON array"),
    "a mean above 1": (
        _doc(entry_sets={"a": {"bm25": {"mrr": 1.5}}}),
        "entries[0].sets['a']['bm25']['mrr'] is 1.5: expected a mean between 0 and 1",
    ),
    "a mean as text": (_doc(entry_sets={"a": {"bm25": {"mrr": "0.5"}}}), "is '0.5': expected a mean"),
    "a mean that is true": (
        _doc(entry_sets={"a": {"bm25": {"mrr": True}}}),
        "is a JSON boolean: expected a mean",
    ),
    "a backend named like markup": (
        _doc(entry_sets={"a": {"<b>x</b>": {"mrr": 0.5}}}),
        "entries[0].sets['a'] key '<b>x</b>': expected a backend name or metric key",
    ),
    "a duplicate commit": (
        dumps_history(History("main", (entry(SHA), entry("b" * 40)))).replace("b" * 40, SHA).encode(),
        f"entries: commit {SHA} has more than one entry",
    ),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_file_that_is_not_a_history_we_wrote_is_refused_naming_the_field(name: str) -> None:
    data, message = HOSTILE[name]
    with pytest.raises(HistoryError) as caught:
        parse_history(data)
    assert message in str(caught.value)
    if name == "a duplicate commit":
        return  # a JSON Schema cannot say that one field is unique across the items (its description does)
    try:
        doc = json.loads(data.decode("utf-8"))
    except ValueError:
        return
    with pytest.raises(ValidationError):  # the schema says no to the same document
        history_schema().validate(doc)


def test_reading_a_missing_file_a_directory_and_a_huge_file(tmp_path: Path) -> None:
    assert read_history(tmp_path / "absent.json") is None
    with pytest.raises(HistoryError, match="is a directory"):
        read_history(tmp_path)
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(MAX_BYTES + 1)  # sparse: refused by its size, never read
    with pytest.raises(HistoryError, match=f"{MAX_BYTES + 1} bytes, more than"):
        read_history(huge)


def test_written_and_read_back(tmp_path: Path) -> None:
    history = History("main", (entry(SHA, 0.25),))
    path = tmp_path / "deep" / "history.json"
    write_history(path, history)
    assert path.read_text(encoding="utf-8") == dumps_history(history)
    assert read_history(path) == history
    assert json.loads(path.read_text(encoding="utf-8"))["schema"] == schemas.HISTORY


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=30,
)


@given(st.binary(max_size=200))
def test_any_bytes_are_a_history_or_a_history_error(data: bytes) -> None:
    try:
        parse_history(data)
    except HistoryError:
        pass


@given(
    json_values, st.sampled_from(["schema", "branch", "entries", "commit", "date", "version", "sets", "bm25"])
)
def test_any_json_in_any_field_is_a_history_or_a_history_error(value: object, field: str) -> None:
    """The document we write with one field (at any level) replaced by arbitrary JSON."""
    doc = json.loads(dumps_history(History("main", (entry(SHA),))))
    if field in ("schema", "branch", "entries"):
        doc[field] = value
    elif field == "bm25":
        doc["entries"][0]["sets"]["eval/a.jsonl"]["bm25"] = value
    else:
        doc["entries"][0][field] = value
    try:
        text = json.dumps(doc)
    except ValueError:  # NaN and friends: json.dumps writes them, untrusted_json refuses them
        return
    try:
        parsed = parse_history(text.encode())
    except HistoryError:
        return
    assert parse_history(dumps_history(parsed).encode()) == parsed  # whatever is accepted round-trips
