"""One file's indexed record: what indexing gives, and its bytes (worker processes, the index cache)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.chunking.chunk import chunk_file
from cce_relevance.retrieval.chunking.languages import EXTRA_PACKS
from cce_relevance.retrieval.chunking.packs import PACKS, REFERENCE_PACKS, PackSet
from cce_relevance.retrieval.corpus.redact import redact
from cce_relevance.retrieval.file_indexing.file import IndexedFile, index_file
from cce_relevance.retrieval.file_indexing.file_record import (
    WIDTHS,
    RecordReader,
    decode,
    encode,
    narrow_bytes,
    narrowest,
    raw_ids,
)
from cce_relevance.retrieval.tokens import estimate_tokens
from tests.retrieval.corpora import read_tree

ALL_PACKS = PackSet(PACKS + EXTRA_PACKS)
SECRET = 'API_KEY = "sk-ant-abcdefghijklmnopqrstuvwxyz012345"\n'


def _files() -> dict[str, str]:
    files = {
        **read_tree(Path("test/fixture/samples")),
        **read_tree(Path(__file__).parents[1] / "language_samples"),
    }
    files["secret.py"] = SECRET + "def uses_key():\n    return API_KEY\n"
    files["unicode.py"] = "# é漢\U0001f600\ndef f():\n    return 'ünïcödé'\n\nclass Ä:\n    pass\n"
    return files


def assert_same(a: IndexedFile, b: IndexedFile) -> None:
    assert (a.text, a.tokens, a.imports, a.chunks, a.char_spans) == (
        b.text,
        b.tokens,
        b.imports,
        b.chunks,
        b.char_spans,
    )
    assert (a.counts is None) == (b.counts is None)
    if a.counts is not None and b.counts is not None:
        for x, y in (
            (a.counts.lengths, b.counts.lengths),
            (a.counts.buckets, b.counts.buckets),
            (a.counts.counts, b.counts.counts),
        ):
            assert x.dtype == y.dtype and np.array_equal(x, y)
    assert (a.terms is None) == (b.terms is None)
    if a.terms is not None and b.terms is not None:
        assert a.terms.vocabulary == b.terms.vocabulary
        for x, y in (
            (a.terms.lengths, b.terms.lengths),
            (a.terms.terms, b.terms.terms),
            (a.terms.counts, b.terms.counts),
        ):
            assert x.dtype == y.dtype and np.array_equal(x, y)
    for x, y in zip(a.lines, b.lines, strict=True):
        assert x.dtype == y.dtype and np.array_equal(x, y)


@pytest.mark.parametrize("hashing", [True, False])
@pytest.mark.parametrize("protect_secrets", [True, False])
def test_index_file_is_redact_chunk_count(hashing, protect_secrets):
    for path, text in sorted(_files().items()):
        entry = index_file(path, text, ALL_PACKS, protect_secrets, hashing)
        redacted = redact(text) if protect_secrets else text
        chunked = chunk_file(path, redacted, ALL_PACKS)
        assert (entry.text, entry.tokens) == (redacted, estimate_tokens(redacted))
        assert (entry.chunks, entry.imports) == (chunked.chunks, chunked.imports)
        assert (entry.counts is not None) == (entry.terms is not None) == hashing
        for chunk, span in zip(entry.chunks, entry.char_spans, strict=True):
            assert span is not None and entry.text[span[0] : span[1]] == chunk.content


@pytest.mark.parametrize("protect_secrets", [True, False])
def test_round_trip(protect_secrets):
    for path, text in sorted(_files().items()):
        entry = index_file(path, text, ALL_PACKS, protect_secrets, True)
        assert_same(decode(encode(entry, text), path, text), entry)


def test_redacted_text_travels_with_the_record_and_the_walked_text_does_not():
    text = _files()["secret.py"]
    entry = index_file("secret.py", text, REFERENCE_PACKS, True, True)
    assert entry.text != text and "[REDACTED:ANTHROPIC_KEY]" in entry.text
    data = encode(entry, text)
    assert b"[REDACTED:ANTHROPIC_KEY]" in data
    plain = index_file("plain.py", "def f():\n    return 1\n", REFERENCE_PACKS, True, True)
    # (The record lists the file's distinct tokens for BM25, but not the text they came from.)
    assert b"f():\n    return 1" not in encode(plain, "def f():\n    return 1\n")
    assert_same(decode(data, "secret.py", text), entry)


def test_content_that_is_not_a_slice_of_the_text_is_stored_whole():
    """Text with an undecodable byte (a lone surrogate escape) gives chunk contents with U+FFFD,
    which no slice of the text equals."""
    text = "def f():\n    return '\udce9'\n"
    entry = index_file("m.py", text, REFERENCE_PACKS, False, True)
    assert entry.char_spans == [None] and "\ufffd" in entry.chunks[0].content
    assert_same(decode(encode(entry, text), "m.py", text), entry)


@given(
    text=st.text(max_size=400), path=st.sampled_from(["a.py", "b.rs", "c.c", "d.md", "e.rb", "f.ts", "g.go"])
)
@settings(max_examples=150, deadline=None)
def test_round_trip_of_any_text(text, path):
    entry = index_file(path, text, ALL_PACKS, True, True)
    assert_same(decode(encode(entry, text), path, text), entry)


def test_every_truncation_and_any_trailing_byte_is_refused():
    text = _files()["python.py"]
    data = encode(index_file("python.py", text, REFERENCE_PACKS, True, True), text)
    for size in range(len(data)):
        with pytest.raises(ValueError):
            decode(data[:size], "python.py", text)
    with pytest.raises(ValueError):
        decode(data + b"\0", "python.py", text)


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: b"XXXX" + d[4:],  # not a record
        lambda d: d[:8] + b"!" + d[9:],  # the header is not JSON
        lambda d: d[:8] + d[8:].replace(b'"chunks": ', b'"chunkz": ', 1),  # a key is missing
        lambda d: d[:8] + d[8:].replace(b'"types": [[', b'"types": [[1, ', 1),  # not a (type, kind, language)
    ],
)
def test_damaged_records_are_refused(damage):
    text = _files()["python.py"]
    data = encode(index_file("python.py", text, REFERENCE_PACKS, True, True), text)
    with pytest.raises(ValueError):
        decode(damage(data), "python.py", text)


def narrow_enough(x: np.ndarray, y: np.ndarray) -> bool:
    """Integer arrays of the same values, in int32 or in the narrowest width that holds them."""
    widths = {a.dtype.str for a in (x, y)} - {"<i4"}
    return len(widths) <= 1 and all(w == narrowest(x) for w in widths)


def _term_bytes(header: dict) -> int:
    """The bytes of a record's term counts part (its last), as its header describes them."""
    widths = {k: np.dtype(v).itemsize for k, v in header["widths"].items()}
    entries = (widths["terms"] + widths["term_counts"]) * header["termed"]
    return widths["term_lengths"] * header["chunks"] + entries


def first_format(data: bytes) -> bytes:
    """`data` as the index cache's first record format wrote it (in this format's widths): no
    BM25 term counts."""
    size = int.from_bytes(data[4:8], "little")
    header = json.loads(data[8 : 8 + size])
    body = data[8 + size : len(data) - _term_bytes(header)]
    chunks = header.pop("chunks")
    del header["termed"], header["vocabulary"]
    header["chunks"] = chunks
    old = json.dumps(header).encode("ascii")
    return data[:4] + len(old).to_bytes(4, "little") + old + body


def test_a_record_of_the_first_format_is_refused():
    text = _files()["python.py"]
    entry = index_file("python.py", text, REFERENCE_PACKS, True, True)
    assert entry.terms is not None and entry.terms.counts.size
    old = first_format(encode(entry, text))
    assert b'"termed"' not in old and b'"counted"' in old
    with pytest.raises(ValueError, match="termed"):
        decode(old, "python.py", text)


@pytest.mark.parametrize(
    "change",
    [
        {"termed": None, "vocabulary": None},  # bucket counts without term counts
        {"vocabulary": "one_word"},  # a term index past the vocabulary
    ],
)
def test_term_counts_that_do_not_hold_are_refused(change):
    text = _files()["python.py"]
    data = encode(index_file("python.py", text, REFERENCE_PACKS, True, True), text)
    size = int.from_bytes(data[4:8], "little")
    header = {**json.loads(data[8 : 8 + size]), **change}
    new = json.dumps(header).encode("ascii")
    body = data[8 + size :]
    if change.get("termed", 0) is None:
        body = body[: len(body) - _term_bytes(json.loads(data[8 : 8 + size]))]
    with pytest.raises(ValueError, match="bucket counts without term counts|names no term"):
        decode(data[:4] + len(new).to_bytes(4, "little") + new + body, "python.py", text)


def test_a_vocabulary_that_no_tokenizing_makes_is_refused():
    """A file's terms are runs of ASCII word bytes, kept as bytes: a record whose vocabulary is
    not ASCII (one word respelled, the same number of words) is refused, not decoded."""
    text = _files()["python.py"]
    data = encode(index_file("python.py", text, REFERENCE_PACKS, True, True), text)

    def respelled(header: dict) -> None:
        header["vocabulary"] = "\u00e9" + header["vocabulary"][1:]

    with pytest.raises(ValueError, match="ascii"):
        decode(_with_header(data, respelled), "python.py", text)


def _with_header(data: bytes, change: Callable[[dict], None]) -> bytes:
    size = int.from_bytes(data[4:8], "little")
    header = json.loads(data[8 : 8 + size])
    change(header)
    new = json.dumps(header).encode("ascii")
    return data[:4] + len(new).to_bytes(4, "little") + new + data[8 + size :]


def test_arrays_are_kept_in_the_narrowest_width_and_come_back_in_the_index_types():
    text = _files()["python.py"]
    entry = index_file("python.py", text, REFERENCE_PACKS, True, True)
    data = encode(entry, text)
    widths = json.loads(data[8 : 8 + int.from_bytes(data[4:8], "little")])["widths"]
    assert widths["rows"] == "<u2" and widths["terms"] in ("|u1", "<u2")  # a small file
    assert all(np.dtype(w).itemsize <= 2 for w in widths.values())
    assert entry.chunks[0].chunk_id.encode("ascii") not in data  # ids as raw bytes
    assert bytes.fromhex(entry.chunks[0].chunk_id) in data
    decoded = decode(data, "python.py", text)
    assert_same(decoded, entry)  # dtypes included: int64 lengths, int32 counts and terms
    # A wide value makes its whole array wide, and only that one.
    wide = dataclasses.replace(entry.terms, counts=entry.terms.counts.copy())
    wide.counts[0] = 2**31 - 1
    data = encode(dataclasses.replace(entry, terms=wide), text)
    widths = json.loads(data[8 : 8 + int.from_bytes(data[4:8], "little")])["widths"]
    assert widths["term_counts"] == "<i4" and widths["rows"] == "<u2"
    assert decode(data, "python.py", text).terms.counts[0] == 2**31 - 1


@pytest.mark.parametrize(
    "width",
    [
        "<i8",  # term counts wider than the index keeps them: refused, not cut down
        "<f4",  # not an integer width
        ">i2",  # not little-endian
        7,
    ],
)
def test_a_width_a_record_does_not_use_is_refused(width):
    text = _files()["python.py"]
    data = encode(index_file("python.py", text, REFERENCE_PACKS, True, True), text)
    with pytest.raises(ValueError, match="width"):
        decode(_with_header(data, lambda h: h["widths"].update(term_counts=width)), "python.py", text)


def test_a_record_of_the_format_before_narrow_widths_is_refused():
    """A record as the previous format wrote it (fixed 8- and 4-byte arrays, ids as hex, no
    widths) is refused by its magic; under its magic it would still be refused, not misread."""
    text = _files()["python.py"]
    data = encode(index_file("python.py", text, REFERENCE_PACKS, True, True), text)
    with pytest.raises(ValueError, match="not an indexed-file record"):
        decode(b"CCEg" + data[4:], "python.py", text)
    with pytest.raises(ValueError, match="widths"):
        decode(_with_header(data, lambda h: h.pop("widths")), "python.py", text)


@given(
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=40)
    | st.lists(st.integers(-200, 70_000), max_size=40)
    | st.lists(st.sampled_from([0, 255, 256, -128, -129, 127, 128, 65535, 65536, -32768, -32769]), max_size=8)
)
@settings(max_examples=300, deadline=None)
def test_narrow_arrays_round_trip_in_the_narrowest_width(values):
    array = np.array(values, dtype=np.int64)
    width = narrowest(array)
    data = narrow_bytes(array, width)
    assert len(data) == np.dtype(width).itemsize * len(values)
    back = RecordReader(data, 0).narrow(width, len(values), np.int64)
    assert back.dtype == np.int64 and back.tolist() == values
    # no narrower width holds them
    for narrower in WIDTHS[: WIDTHS.index(width)]:
        info = np.iinfo(narrower)
        assert not all(info.min <= v <= info.max for v in values)


def test_ids_that_raw_bytes_could_not_give_back_are_refused():
    assert raw_ids(b"0123456789abcdef") == bytes.fromhex("0123456789abcdef")
    for ids in (b"0123456789ABCDEF", b"0123456789abcdeg", "0123456789abcde\xe9".encode("latin-1")):
        with pytest.raises(ValueError, match="chunk id"):
            raw_ids(ids)
