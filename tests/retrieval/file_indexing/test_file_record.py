"""One file's indexed record: what indexing gives, and its bytes (worker processes, the index cache)."""

from __future__ import annotations

import json
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
from cce_relevance.retrieval.file_indexing.file_record import decode, encode
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


def first_format(data: bytes) -> bytes:
    """`data` as the index cache's first record format wrote it: no BM25 term counts."""
    size = int.from_bytes(data[4:8], "little")
    header = json.loads(data[8 : 8 + size])
    chunks, termed = header.pop("chunks"), header.pop("termed")
    del header["vocabulary"]
    header["chunks"] = chunks
    old = json.dumps(header).encode("ascii")
    body = data[8 + size : len(data) - (8 * chunks + 8 * termed)]
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
        chunks, termed = header["chunks"], json.loads(data[8 : 8 + size])["termed"]
        body = body[: len(body) - (8 * chunks + 8 * termed)]
    with pytest.raises(ValueError):
        decode(data[:4] + len(new).to_bytes(4, "little") + new + body, "python.py", text)
