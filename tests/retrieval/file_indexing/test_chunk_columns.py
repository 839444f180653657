"""An index's chunks as columns (retrieval/file_indexing/chunk_columns.py): for any corpus, the columns
a corpus record's chunks are made from are the list of chunks indexing made, position by
position, iterated, sliced, compared and with embeddings attached."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.cache.corpus_record import decode_corpus, encode_corpus, materialize
from cce_relevance.retrieval.chunking.chunk import _CONTENT, Chunk
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS
from cce_relevance.retrieval.corpus.walk import FileText
from cce_relevance.retrieval.file_indexing import chunk_columns
from cce_relevance.retrieval.file_indexing.chunk_columns import (
    ChunkColumns,
    ChunkIds,
    attach_rows,
    chunk_ids_of,
    path_reader,
)
from cce_relevance.retrieval.file_indexing.file import index_files
from cce_relevance.retrieval.index.build import build_index
from tests.retrieval.cache.test_corpus_record import arrays_from_entries_of
from tests.retrieval.index.test_build import SECRET_FILE

_LINES = [
    "def f():\n",
    "    return 1\n",
    "class A:\n",
    "    def g(self):\n",
    "        pass\n",
    "# é漢\U0001f600\n",
    'x = "ünï"\n',
    "\n",
    "fn f() -> u8 { 1 }\n",
    "struct S;\n",
    "function h() { return 2; }\n",
    SECRET_FILE,
]
_FILES = st.dictionaries(
    st.builds(
        "{}.{}".format, st.sampled_from(["a", "b/c", "b/d", "é"]), st.sampled_from(["py", "rs", "js", "txt"])
    ),
    st.lists(st.sampled_from(_LINES), max_size=12).map("".join),
    max_size=6,
)


def _columns_and_chunks(files: dict[str, str], whole: frozenset[str] = frozenset()):
    """The chunks a corpus record of `files` is made of, and the list indexing made; the chunks
    of the files in `whole` keep their contents whole, not as ranges of the text."""
    walked = sorted(files.items())
    entries = index_files(walked, REFERENCE_PACKS, True, True)
    entries = [
        dataclasses.replace(e, char_spans=[None] * len(e.chunks)) if path in whole else e
        for (path, _), e in zip(walked, entries, strict=True)
    ]
    columns = materialize(
        decode_corpus(encode_corpus(arrays_from_entries_of(walked, entries))), walked
    ).chunks
    return columns, [c for e in entries for c in e.chunks]


@settings(max_examples=60, deadline=None)
@given(_FILES, st.data())
def test_columns_are_the_chunks_they_replace(files, data):
    whole = frozenset(data.draw(st.lists(st.sampled_from(sorted(files)), max_size=2)) if files else [])
    columns, chunks = _columns_and_chunks(files, whole)
    assert isinstance(columns, ChunkColumns) and len(columns) == len(chunks)
    assert columns == chunks and chunks == columns and not columns != chunks
    assert [dataclasses.astuple(c) for c in columns] == [dataclasses.astuple(c) for c in chunks]
    paths, listed = path_reader(columns), path_reader(chunks)
    for i in range(-len(chunks), len(chunks)):
        assert dataclasses.astuple(columns[i]) == dataclasses.astuple(chunks[i])
        assert paths(i) == listed(i) == chunks[i].file_path
    assert columns[1:-1:2] == chunks[1:-1:2]
    assert list(columns.chunk_ids) == [c.chunk_id for c in chunks] == list(chunk_ids_of(chunks))
    for bad in (len(chunks), -len(chunks) - 1):
        with pytest.raises(IndexError):
            columns[bad]
        with pytest.raises(IndexError):
            columns.chunk_ids[bad]
        with pytest.raises(IndexError):
            paths(bad)


def test_iterating_makes_chunks_block_by_block(monkeypatch):
    """Chunks made a block at a time are the chunks made one by one, across block boundaries."""
    monkeypatch.setattr(chunk_columns, "_BLOCK", 3)
    files = {f"m{i}.py": "def f():\n    return 1\n\ndef g():\n    pass\n" for i in range(5)}
    columns, chunks = _columns_and_chunks(files, frozenset({"m2.py"}))
    assert len(chunks) == 10
    assert list(columns) == [columns[i] for i in range(len(columns))] == chunks


def test_a_chunk_made_from_columns_is_a_new_value_each_time():
    """What one made chunk is given stays with it; the next one made at that position is as the
    columns hold it, with its content not made until read."""
    columns, chunks = _columns_and_chunks({"a.py": "def f():\n    return 1\n"})
    first = columns[0]
    assert first.content == chunks[0].content and _CONTENT.__get__(first) is first.content
    again = columns[0]
    with pytest.raises(AttributeError):
        _CONTENT.__get__(again)
    assert again is not first and again == first


def test_attached_rows_are_the_embeddings_of_chunks_made_afterwards():
    columns, chunks = _columns_and_chunks(
        {"a.py": "def f():\n    pass\ndef g():\n    pass\n", "b.txt": "x\n"}
    )
    vectors = np.arange(len(chunks) * 3, dtype=np.float64).reshape(len(chunks), 3)
    assert all(c.embedding is None for c in columns)
    attach_rows(columns, vectors)
    attach_rows(chunks, vectors)
    for made, chunk, row in zip(columns, chunks, vectors, strict=True):
        assert np.shares_memory(made.embedding, vectors) and np.array_equal(made.embedding, row)
        assert chunk.embedding is row or np.array_equal(chunk.embedding, row)
    with pytest.raises(ValueError, match="one per chunk"):
        columns.attach_rows(vectors[1:])


def test_chunk_ids_compare_as_lists():
    ids = ChunkIds(b"0123456789abcdeffedcba9876543210")
    assert ids == ["0123456789abcdef", "fedcba9876543210"] and ids[-1] == "fedcba9876543210"
    assert ids[:1] == ["0123456789abcdef"] and ids != ["0123456789abcdef"]


def test_an_index_cached_holds_columns_equal_to_the_chunks_of_an_uncached_one(tmp_path: Path):
    """A cold run that writes the corpus record and a warm run from it hold their chunks as
    columns; they are the chunks of a build without the cache, embeddings included once the
    matrix is made."""
    shutil.copytree("test/fixture/samples", tmp_path / "corpus")
    plain = build_index(tmp_path / "corpus")
    assert isinstance(plain.chunks, list)
    plain.attach_embeddings()
    for _ in ("cold", "warm"):
        index = build_index(tmp_path / "corpus", cache=str(tmp_path / "cache"))
        assert isinstance(index.chunks, ChunkColumns)
        assert index.walked is not None and all(isinstance(text, FileText) for _, text in index.walked)
        assert index.chunks == plain.chunks and list(index.chunk_ids) == plain.chunk_ids
        assert index.chunks != plain.chunks[:-1] and index.chunks != plain.chunks[1:] + plain.chunks[:1]
        assert np.array_equal(index.id_rank, plain.id_rank) and dict(index.chunks_by_file) == {
            path: range(positions[0], positions[-1] + 1) for path, positions in plain.chunks_by_file.items()
        }
        index.attach_embeddings()
        for a, b in zip(index.chunks, plain.chunks, strict=True):
            assert isinstance(a, Chunk) and a.embedding is not None and b.embedding is not None
            assert np.array_equal(a.embedding, b.embedding)
