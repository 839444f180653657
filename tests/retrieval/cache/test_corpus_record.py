"""Assembled corpora in the index cache: a run over an unchanged tree loads one record and gets
the index a cold build makes — every chunk field, embedding, posting and chunk-id rank — and a
changed, damaged or evicted record never gives anything else."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import mmap
import os
import pickle
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.errors import CceError
from cce_relevance.retrieval.cache.corpus_record import (
    CorpusArrays,
    arrays_from_entries,
    decode_corpus,
    encode_corpus,
    materialize,
)
from cce_relevance.retrieval.cache.index_cache import (
    _CHECKSUM_WINDOW,
    _KEEP_CORPORA,
    CORPORA_DIR,
    DB_FILE,
    IndexCache,
    record_checksum,
)
from cce_relevance.retrieval.chunking.chunk import (
    _CONTENT,
    Chunk,
    SlicedChunk,
    chunk_file,
    set_content,
    set_embedding,
)
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS
from cce_relevance.retrieval.corpus.redact import redact
from cce_relevance.retrieval.corpus.walk import FileText, walk
from cce_relevance.retrieval.embedding.buckets import HashEmbeddings
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.file_indexing.file import index_file
from cce_relevance.retrieval.file_indexing.file_record import chunk_id_bytes, narrowest
from cce_relevance.retrieval.index import build as index_module
from cce_relevance.retrieval.index.build import build_index
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.ranking.postings import corpus_postings
from cce_relevance.retrieval.ranking.topk import id_ranks
from cce_relevance.retrieval.ranking.vocabulary import RecordVocabulary, term_order
from cce_relevance.retrieval.tokens import unique_tokens
from tests.resident import mapping_of, needs_smaps, resident_kib
from tests.retrieval.chunking.test_line_weights import assert_same_index_lines
from tests.retrieval.corpus.test_walk import forget_recent
from tests.retrieval.file_indexing.test_file_record import narrow_enough
from tests.retrieval.index.test_build import SECRET_FILE, reference_index, snapshot


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Our samples, a secret (redaction changes its text) and a non-ASCII file."""
    root = tmp_path_factory.mktemp("tree")
    shutil.copytree("test/fixture/samples", root / "samples")
    (root / "secret.py").write_text(SECRET_FILE, encoding="utf-8")
    (root / "unicode.rs").write_text(
        '// é漢\U0001f600\nfn f() -> &\'static str { "ünï" }\n', encoding="utf-8"
    )
    return root


@pytest.fixture
def assembled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many builds assembled their corpus from the files' records (a corpus record hit does not)."""
    count: list[int] = []
    real = index_module.indexed_files

    def counting(*args, **kwargs):
        count.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(index_module, "indexed_files", counting)
    return count


def positions_by_file(index: Index, made_from_the_chunks: bool = False) -> list[tuple[str, list[int]]]:
    """Each file's chunk positions (ranges of a corpus record as lists), or as the plain
    `Index.chunks_by_file` works them out from the chunks."""
    by_file = Index.chunks_by_file.func(index) if made_from_the_chunks else index.chunks_by_file
    return [(path, list(positions)) for path, positions in by_file.items()]


def same_index(a: Index, b: Index) -> None:
    assert snapshot(a) == snapshot(b)
    assert_same_index_lines(a, b)
    assert (a.walk_skipped, a.embedder) == (b.walk_skipped, b.embedder)
    assert positions_by_file(a) == positions_by_file(b) == positions_by_file(a, made_from_the_chunks=True)
    assert a.postings is not None and b.postings is not None
    assert list(a.postings.term_id.items()) == list(b.postings.term_id.items())
    for name in ("indptr", "docs", "tfs", "doc_len"):
        x, y = getattr(a.postings, name), getattr(b.postings, name)
        assert np.array_equal(x, y), name
        # A kept corpus's frequencies are in the narrowest width that holds them, the others as made.
        assert x.dtype == y.dtype or name == "tfs" and narrow_enough(x, y), name
    assert np.array_equal(a.id_rank, b.id_rank) and np.array_equal(a.id_rank, id_ranks(a.chunk_ids))
    assert a.matrix.flags.f_contiguous and np.array_equal(a.matrix, b.matrix)
    for row, chunk in zip(a.matrix, a.chunks, strict=True):
        assert np.shares_memory(chunk.embedding, a.matrix) and np.array_equal(row, chunk.embedding)


def corpus_files(cache: Path) -> list[str]:
    return sorted(os.listdir(cache / CORPORA_DIR))


def test_an_unchanged_tree_loads_the_corpus_record(tree, tmp_path, assembled):
    cache = str(tmp_path / "cache")
    cold = build_index(tree, cache=cache, workers=1)
    assert snapshot(cold) == snapshot(reference_index(tree)) and len(assembled) == 1
    seen: list[tuple[int, int]] = []
    warm = build_index(tree, cache=cache, workers=1, progress=lambda done, total: seen.append((done, total)))
    assert len(assembled) == 1  # nothing assembled: one record read
    same_index(warm, cold)
    files = len(walk(tree).files)
    assert seen == [(0, files), (files, files)]
    assert any(
        c.content != c.content.encode("ascii", "replace").decode() for c in warm.chunks
    )  # non-ASCII kept
    assert "ghp_" not in next(
        c.content for c in warm.chunks if c.file_path == "secret.py"
    )  # redacted text kept


def test_a_cold_run_with_the_cache_scores_from_the_record_it_stored(tree, tmp_path, monkeypatch):
    """The index a cold build returns, assembled or spliced, is the one made from the record it
    has just stored — it holds no walked text and its postings are views of the mapped record —
    and equals the index built without a cache; when the record could not be stored, the build's
    own index (holding the texts) is returned."""
    root = tmp_path / "tree"
    shutil.copytree(tree, root)
    cache = str(tmp_path / "cache")
    spliced: list[int] = []
    real_splice = index_module.splice
    monkeypatch.setattr(index_module, "splice", lambda *args: spliced.append(1) or real_splice(*args))
    for step in ("assembled", "spliced"):
        if step == "spliced":
            (root / "unicode.rs").write_text("fn g() {}\n", encoding="utf-8")
        cold = build_index(root, cache=cache, workers=1)
        assert len(spliced) == (step == "spliced")
        assert cold.walked is not None and all(isinstance(text, FileText) for _, text in cold.walked)
        assert cold.postings is not None and isinstance(_mapping_of(cold.postings.docs), mmap.mmap)
        same_index(cold, build_index(root, workers=1))
    unwritable = tmp_path / "unwritable"
    unwritable.mkdir()
    (unwritable / CORPORA_DIR).write_text("a file where the directory should be", encoding="utf-8")
    kept_nothing = build_index(root, cache=str(unwritable), workers=1)
    assert kept_nothing.walked is not None and all(isinstance(text, str) for _, text in kept_nothing.walked)
    same_index(kept_nothing, build_index(root, workers=1))


def _mapping_of(array: np.ndarray) -> object:
    """What the memory of `array` finally belongs to (a mapping for a record's views)."""
    owner: object = array
    while isinstance(owner, np.ndarray):
        owner = owner.base
    return owner.obj if isinstance(owner, memoryview) else owner


def test_a_warm_index_holds_no_walked_text_and_reads_the_same_contents(tree, tmp_path):
    """A corpus record's chunks slice their file's text read again from disk when first read:
    every content and line count is the cold build's — the redacted file's, a non-ASCII one's,
    one under a name that is not UTF-8 — and the index holds no walked text, only the redacted
    one the record keeps."""
    root = tmp_path / "tree"
    shutil.copytree(tree, root)
    with open(os.fsencode(root) + b"/caf\xe9.py", "wb") as handle:
        handle.write("def caf\u00e9():\n    return '\u00e9'\n".encode())
    cache = str(tmp_path / "cache")
    build_index(root, cache=cache, workers=1)
    cold = build_index(root, workers=1)
    for spliced in (False, True):
        if spliced:  # a changed file: the other files' chunks come from the last corpus
            (root / "unicode.rs").write_text("fn g() {}\n", encoding="utf-8")
            cold = build_index(root, workers=1)
        warm = build_index(root, cache=cache, workers=1)
        assert warm.walked is not None and all(isinstance(text, FileText) for _, text in warm.walked)
        assert {c.file_path for c in warm.chunks if isinstance(c._text, str)} == {"secret.py"}
        forget_recent()
        assert [c.content for c in warm.chunks] == [c.content for c in cold.chunks]
        assert dict(warm.line_counts or {}) == dict(cold.line_counts or {})
        assert "caf\ufffd.py" in (warm.line_counts or {})


def test_a_file_changed_after_a_warm_walk_is_refused_not_read(tmp_path):
    """A file changed between the walk and the first read of one of its chunks gives an error
    naming it, never the new text; a chunk read before keeps the text the walk saw."""
    root = tmp_path / "tree"
    make = {"a.py": "def f():\n    return 1\n", "b.py": "def g():\n    return 2\n"}
    for name, text in make.items():
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    cache = str(tmp_path / "cache")
    build_index(root, cache=cache, workers=1)
    warm = build_index(root, cache=cache, workers=1)
    a, b = (next(c for c in warm.chunks if c.file_path == name) for name in make)
    assert a.content == "def f():\n    return 1"
    for name in make:
        (root / name).write_text(make[name].replace("1", "3").replace("2", "4"), encoding="utf-8")
    forget_recent()
    assert a.content == "def f():\n    return 1"
    with pytest.raises(CceError, match="^b.py: the file changed while the corpus was being ranked"):
        b.passing_content()
    with pytest.raises(CceError, match="^b.py: "):
        (warm.line_counts or {})["b.py"]


def test_a_changed_file_misses_and_stores_the_new_corpus(tree, tmp_path, assembled):
    cache = tmp_path / "cache"
    first = build_index(tree, cache=str(cache), workers=1)
    changed = tree / "secret.py"
    try:
        changed.write_text(SECRET_FILE + "\ndef more():\n    return 1\n", encoding="utf-8")
        second = build_index(tree, cache=str(cache), workers=1)
        assert len(assembled) == 2 and snapshot(second) == snapshot(reference_index(tree))
        assert len(corpus_files(cache)) == 2
        same_index(build_index(tree, cache=str(cache), workers=1), second)
        assert len(assembled) == 2
    finally:
        changed.write_text(SECRET_FILE, encoding="utf-8")
    same_index(build_index(tree, cache=str(cache), workers=1), first)
    assert len(assembled) == 2  # the first tree's record is still kept


def test_a_renamed_file_is_another_corpus(tree, tmp_path, assembled):
    cache = str(tmp_path / "cache")
    moved = tmp_path / "moved"
    shutil.copytree(tree, moved)
    build_index(moved, cache=cache, workers=1)
    os.rename(moved / "unicode.rs", moved / "renamed.rs")
    index = build_index(moved, cache=cache, workers=1)
    assert len(assembled) == 2 and snapshot(index) == snapshot(reference_index(moved))


def test_only_the_most_recently_used_corpora_are_kept(tree, tmp_path, assembled):
    cache = tmp_path / "cache"
    moved = tmp_path / "moved"
    shutil.copytree(tree, moved)
    target = moved / "secret.py"
    states = _KEEP_CORPORA + 2
    for state in range(states):
        target.write_text(SECRET_FILE + f"# state {state}\n", encoding="utf-8")
        build_index(moved, cache=str(cache), workers=1)
    assert len(assembled) == states and len(corpus_files(cache)) == _KEEP_CORPORA
    build_index(moved, cache=str(cache), workers=1)  # the newest state is kept
    assert len(assembled) == states
    target.write_text(SECRET_FILE + "# state 0\n", encoding="utf-8")  # the oldest was dropped
    build_index(moved, cache=str(cache), workers=1)
    assert len(assembled) == states + 1


def _damage_truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _damage_flipped(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 1]) + data[middle + 1 :]


def _damage_not_a_record(_: bytes) -> bytes:
    junk = b"CCEc\x02\x00\x00\x00{}"
    return hashlib.sha256(junk).digest() + junk  # a valid checksum over something that does not decode


_CHECKSUM = 32  # a corpus file's SHA-256 of its record, before it


def _damage_older_layout(data: bytes) -> bytes:
    old = b"CCEf" + data[_CHECKSUM + 4 :]
    return hashlib.sha256(old).digest() + old  # checksummed, but of the layout before narrow widths


def replaced_by(path: Path, data: bytes) -> None:
    """`path` replaced by a file of `data`, as every writer of the cache replaces a corpus file (a
    rename): `cold`, an index made from the record it stored, still maps the file's first bytes,
    and truncating a mapped file in place would fault the reads it makes afterwards."""
    fresh = path.with_name(f".damaged-{path.name}")
    fresh.write_bytes(data)
    os.replace(fresh, path)


@pytest.mark.parametrize(
    "damage", [_damage_truncated, _damage_flipped, _damage_not_a_record, _damage_older_layout, lambda _: b""]
)
def test_a_damaged_corpus_record_is_never_used_and_is_replaced(tree, tmp_path, assembled, damage):
    cache = tmp_path / "cache"
    cold = build_index(tree, cache=str(cache), workers=1)
    (name,) = corpus_files(cache)
    path = cache / CORPORA_DIR / name
    replaced_by(path, damage(path.read_bytes()))
    same_index(build_index(tree, cache=str(cache), workers=1), cold)
    assert len(assembled) == 2
    same_index(build_index(tree, cache=str(cache), workers=1), cold)
    assert len(assembled) == 2  # a good record took the damaged one's place


def test_an_empty_tree_and_a_tree_emptied_are_kept_too(tmp_path, assembled):
    root, cache = tmp_path / "tree", str(tmp_path / "cache")
    root.mkdir()
    for content in (None, "def only():\n    return 1\n", None):
        if content is None:
            for f in root.iterdir():
                f.unlink()
        else:
            (root / "only.py").write_text(content, encoding="utf-8")
        cold = build_index(root, workers=1)
        assembled.clear()
        same_index(build_index(root, cache=cache, workers=1), cold)
        same_index(build_index(root, cache=cache, workers=1), cold)
        assert len(assembled) <= 1  # the second run read the record


def test_an_unwritable_corpora_directory_only_costs_the_record(tree, tmp_path, assembled):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / CORPORA_DIR).write_text("a file where the directory should be", encoding="utf-8")
    cold = build_index(tree, cache=str(cache), workers=1)
    same_index(build_index(tree, cache=str(cache), workers=1), cold)
    assert len(assembled) == 2


# ---------------------------------------------------------------- the record itself


def _entries(tree: Path) -> tuple[list[tuple[str, str]], list]:
    files = [(f.path, f.text) for f in walk(tree).files]
    return files, [index_file(path, text, REFERENCE_PACKS, True, True) for path, text in files]


def arrays_from_entries_of(files, entries) -> CorpusArrays:
    postings = corpus_postings([e.terms for e in entries])
    keys = [hashlib.sha256(path.encode()).digest() for path, _ in files]
    ranks = id_ranks([c.chunk_id for e in entries for c in e.chunks])
    return arrays_from_entries(keys, files, entries, postings, ranks)


def _record(files, entries) -> bytes:
    return encode_corpus(arrays_from_entries_of(files, entries))


def test_a_record_written_from_the_hash_embeddings_counts_is_the_one_joined_from_the_files(tree):
    """A cold build writes its corpus record from the counts its hash embeddings joined (not a
    second copy): the same bytes as the counts joined from the files' records; counts of another
    number of chunks are refused."""
    files, entries = _entries(tree)
    postings = corpus_postings([e.terms for e in entries])
    keys = [hashlib.sha256(path.encode()).digest() for path, _ in files]
    ranks = id_ranks([c.chunk_id for e in entries for c in e.chunks])
    shared = HashEmbeddings.of([e.counts for e in entries]).bucket_counts()
    assert encode_corpus(arrays_from_entries(keys, files, entries, postings, ranks, shared)) == _record(
        files, entries
    )
    fewer = HashEmbeddings.of([e.counts for e in entries[1:]]).bucket_counts()
    with pytest.raises(ValueError, match="one row per chunk"):
        arrays_from_entries(keys, files, entries, postings, ranks, fewer)


def test_contents_that_are_not_slices_of_the_text_are_kept_whole(tree):
    files, entries = _entries(tree)
    entries[0] = dataclasses.replace(entries[0], char_spans=[None] * len(entries[0].chunks))
    decoded = materialize(decode_corpus(_record(files, entries)), files)
    assert [dataclasses.astuple(c) for c in decoded.chunks] == [
        dataclasses.astuple(c) for e in entries for c in e.chunks
    ]


def test_chunks_made_from_a_record_are_chunks_whose_content_is_made_when_read(tree):
    files, entries = _entries(tree)
    chunks = materialize(decode_corpus(_record(files, entries)), files).chunks
    made = [c for path, text in files for c in chunk_file(path, redact(text)).chunks]
    assert all(isinstance(c, SlicedChunk) for c in chunks) and not any(
        isinstance(c, SlicedChunk) for c in made
    )
    indexed = [c for e in entries for c in e.chunks]  # indexing drops contents that are slices too
    assert all(isinstance(c, SlicedChunk) for c in indexed) and indexed == made
    first = chunks[0]
    with pytest.raises(AttributeError):
        _CONTENT.__get__(first)  # not made yet
    assert first.content == made[0].content and _CONTENT.__get__(first) is first.content  # made once, kept
    assert chunks == made and made == chunks and not chunks != made  # equal both ways, field by field
    assert [dataclasses.astuple(c) for c in chunks] == [dataclasses.astuple(c) for c in made]
    assert pickle.loads(pickle.dumps(chunks)) == made and copy.copy(chunks[1]) == made[1]
    assert dataclasses.replace(chunks[2], token_count=7) == dataclasses.replace(made[2], token_count=7)
    other = chunks[3]
    set_content(other, "given")
    assert other.content == "given" and other != made[3] and made[3] != other
    assert chunks[4] != dataclasses.replace(made[4], kind="elsewhere")


def test_a_record_is_made_for_its_number_of_files(tree):
    files, entries = _entries(tree)
    with pytest.raises(ValueError):
        materialize(decode_corpus(_record(files, entries)), files[:-1])


@pytest.mark.parametrize(
    "change",
    [
        lambda data: data[:-1],  # truncated
        lambda data: data + b"\0",  # trailing bytes
        lambda data: b"CCEh" + data[4:],  # a file's record, not a corpus's
        lambda data: b"CCEf" + data[4:],  # the layout before narrow widths and raw chunk ids
        lambda data: b"CCEi" + data[4:],  # the layout before narrow rows
        lambda data: b"CCEc" + data[4:],  # an earlier layout's
        lambda data: b"CCEd" + data[4:],  # the layout before weighted lines
        lambda data: b"CCEe" + data[4:],  # the layout before the terms' order
        lambda data: data[:8] + b"[]" + data[10:],  # a header that is not an object
    ],
)
def test_inconsistent_records_do_not_decode(tree, change):
    files, entries = _entries(tree)
    with pytest.raises(ValueError):
        decode_corpus(change(_record(files, entries)))


def _rank_out_of_range(arrays: CorpusArrays) -> CorpusArrays:
    ranks = arrays.id_rank.copy()
    ranks[-1] = 2**40
    return dataclasses.replace(arrays, id_rank=ranks)


def _posting_of_no_chunk(arrays: CorpusArrays) -> CorpusArrays:
    docs = arrays.postings.docs.copy()
    docs[-1] = arrays.rows.shape[0]
    return dataclasses.replace(arrays, postings=dataclasses.replace(arrays.postings, docs=docs))


def _chunks_not_adding_up(arrays: CorpusArrays) -> CorpusArrays:
    return dataclasses.replace(arrays, per_file=arrays.per_file + 1)


@pytest.mark.parametrize("change", [_rank_out_of_range, _posting_of_no_chunk, _chunks_not_adding_up])
def test_inconsistent_arrays_do_not_decode(tree, change):
    files, entries = _entries(tree)
    arrays = decode_corpus(_record(files, entries))
    decode_corpus(encode_corpus(arrays))  # the record re-encoded as it is decodes
    with pytest.raises(ValueError):
        decode_corpus(encode_corpus(change(arrays)))


def test_texts_and_terms_of_any_characters_round_trip(tree):
    """Redacted texts and the vocabulary are stored as UTF-8 after the arrays, not in the header."""
    files, entries = _entries(tree)
    arrays = decode_corpus(_record(files, entries))
    texts = {len(files) - 1: 'last "quoted"\n', 0: "é漢\U0001f600 \udc80 lone surrogate\n", 1: ""}
    terms = {"über": 0, "\udcff": 1, "plain": 2}
    changed = dataclasses.replace(
        arrays,
        texts=texts,
        postings=dataclasses.replace(
            arrays.postings, term_id=terms, indptr=arrays.postings.indptr[:4].copy()
        ),
    )
    changed.postings.indptr[-1] = arrays.postings.docs.shape[0]  # three terms own every entry
    decoded = decode_corpus(encode_corpus(changed))
    assert decoded.texts == texts and list(decoded.postings.term_id.items()) == list(terms.items())


_TERM = st.text(
    alphabet=st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF, exclude_characters=" "),
    min_size=1,
    max_size=6,
) | st.text(alphabet="aAbz_9\u00e9\ud800\udfff\ue000\uffff\U00010000", min_size=1, max_size=4)


@settings(max_examples=300, deadline=None)
@given(st.lists(_TERM, unique=True, max_size=40), st.lists(_TERM, max_size=20))
def test_record_vocabulary_is_the_dict_of_its_terms(terms, others):
    """A record's term numbers looked up by binary search over UTF-8 bytes are the `dict` of the
    terms numbered in order: any code points, lone surrogates beside the characters that sort
    around them, terms that are prefixes of others, terms absent (asked twice: the answer kept)."""
    words = {term: i for i, term in enumerate(terms)}
    record = RecordVocabulary(" ".join(terms).encode("utf-8", "surrogatepass"), term_order(terms))
    assert list(record) == terms and len(record) == len(terms)
    for term in [*terms, *others, *others, *(t[:-1] for t in terms if len(t) > 1)]:
        assert record.get(term) == words.get(term) and (term in record) == (term in words)
    assert dict(record.items()) == words


def test_a_kept_corpus_is_used_in_place(tree, tmp_path):
    """A warm run's arrays are aligned read-only views of the mapped record, not copies."""
    cache = str(tmp_path / "cache")
    build_index(tree, cache=cache, workers=1)
    warm = build_index(tree, cache=cache, workers=1)
    p = warm.postings
    for array in (p.indptr, p.docs, p.tfs, p.doc_len, warm.id_rank, warm.embeddings.buckets):
        assert array.flags.aligned and not array.flags.writeable and not array.flags.owndata


def test_temporary_files_of_runs_that_died_are_removed(tree, tmp_path):
    cache = tmp_path / "cache"
    (cache / CORPORA_DIR).mkdir(parents=True)
    old, recent = cache / CORPORA_DIR / ".tmp-old", cache / CORPORA_DIR / ".tmp-recent"
    old.write_bytes(b"half a record")
    recent.write_bytes(b"being written")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    build_index(tree, cache=str(cache), workers=1)
    assert not old.exists() and recent.exists()


def test_a_kept_corpus_is_read_without_opening_the_database(tree, tmp_path, assembled):
    cache = tmp_path / "cache"
    cold = build_index(tree, cache=str(cache), workers=1)
    database = cache / DB_FILE
    database.write_bytes(b"not a database")  # opening it would replace it
    same_index(build_index(tree, cache=str(cache), workers=1), cold)
    assert database.read_bytes() == b"not a database" and len(assembled) == 1


def test_corpus_files_are_created_like_the_database(tree, tmp_path):
    """Mode 0o666 less the umask (not 0o600): a cache written by root in the Action's container
    serves the runner's user too."""
    cache = tmp_path / "cache"
    old = os.umask(0o022)
    try:
        build_index(tree, cache=str(cache), workers=1)
    finally:
        os.umask(old)
    (name,) = corpus_files(cache)
    assert ((cache / CORPORA_DIR / name).stat().st_mode & 0o777) == 0o644


def test_a_chunk_made_from_a_record_pickles_and_copies_without_its_files_text(tree):
    """A pickled or copied chunk is the plain `Chunk` it equals: its content, not the whole text
    of its file that it was sliced from (a chunk of a 16 kB file pickled at 16 kB, not 200 bytes)."""
    files, entries = _entries(tree)
    chunks = materialize(decode_corpus(_record(files, entries)), files).chunks
    made = [c for e in entries for c in e.chunks]
    small = max(range(len(chunks)), key=lambda i: len(chunks[i]._text) - len(made[i].content))
    chunk = chunks[small]
    set_embedding(chunk, np.arange(3.0))
    for copied in (pickle.loads(pickle.dumps(chunk)), copy.copy(chunk), copy.deepcopy(chunk)):
        assert type(copied) is Chunk and copied == made[small] and made[small] == copied
        assert np.array_equal(copied.embedding, chunk.embedding)
    set_embedding(made[small], chunk.embedding)
    assert len(pickle.dumps(chunk)) <= len(pickle.dumps(made[small]))  # no more than a chunk made whole


WINDOW = _CHECKSUM_WINDOW


def kept_record(tmp_path: Path, size: int) -> tuple[IndexCache, Path, bytes]:
    """An index cache holding one corpus file whose record is `size` varied bytes (any bytes: the
    checksum is checked before anything decodes), written in two parts."""
    record = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8).tobytes()
    cache = IndexCache(str(tmp_path / "cache"), b"a context of sixteen bytes or more")
    cache.put_corpus(b"key", [record[: size // 3], memoryview(record)[size // 3 :]])
    cache.close()
    (name,) = corpus_files(tmp_path / "cache")
    return cache, tmp_path / "cache" / CORPORA_DIR / name, record


def test_a_record_checked_window_by_window_is_the_sha256_of_the_whole(tmp_path):
    cache, path, record = kept_record(tmp_path, 2 * WINDOW + 12_345)
    data = path.read_bytes()
    assert data == hashlib.sha256(record).digest() + record
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    assert record_checksum(mapped) == hashlib.sha256(data[32:]).digest()
    mapped.close()
    kept = cache.get_corpus(b"key")
    assert kept is not None and kept == record


@pytest.mark.parametrize("at", [0, WINDOW - 33, WINDOW - 32, WINDOW - 31, WINDOW, 2 * WINDOW - 32, -1])
def test_a_flipped_byte_in_any_window_of_a_record_is_refused(tmp_path, at):
    """Bytes on either side of each window's edge (record offset WINDOW - 32 is file offset WINDOW)."""
    cache, path, record = kept_record(tmp_path, 2 * WINDOW + 12_345)
    data = bytearray(path.read_bytes())
    data[32 + at if at >= 0 else at] ^= 1
    path.write_bytes(bytes(data))
    assert cache.get_corpus(b"key") is None and cache.latest_corpus() is None


@needs_smaps
def test_checking_a_kept_record_does_not_leave_it_resident(tmp_path):
    cache, _, record = kept_record(tmp_path, 4 * WINDOW)
    kept = cache.get_corpus(b"key")
    assert kept is not None
    assert resident_kib(kept.obj) < WINDOW // 1024  # of 16 MiB read: at most a page (or a large folio)
    assert kept == record  # every byte reads back
    assert resident_kib(kept.obj) >= 4 * WINDOW // 1024


@pytest.fixture(scope="module")
def large_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30,000 generated functions in 200 files: a corpus record of about 5 MiB, several times a
    large folio (2 MiB, what some kernels map a file's pages by), so what of it stays resident
    can be measured."""
    root = tmp_path_factory.mktemp("large")
    rng = np.random.default_rng(7)
    words = [
        "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), int(k))) for k in rng.integers(3, 10, 3000)
    ]
    for f in range(200):
        functions = []
        for g in range(150):
            name, a, b, *body = (words[i] for i in rng.choice(len(words), 15, replace=False))
            functions.append(f"def {name}_{g}({a}, {b}):\n    return {' + '.join(body)}\n\n")
        (root / f"module_{f:03d}.py").write_text("".join(functions), encoding="utf-8")
    return root


@needs_smaps
def test_a_warm_build_leaves_its_record_out_of_memory_until_read(large_tree, tmp_path):
    """Decoding reads most of a kept record and making the index more; what the index reads later
    is mapped again from the page cache as it is read, and nothing reads differently."""
    cache = str(tmp_path / "cache")
    cold = build_index(large_tree, cache=cache, workers=1)
    warm = build_index(large_tree, cache=cache, workers=1)
    mapping = mapping_of(warm.postings.docs)
    size_kib = len(mapping) // 1024
    assert size_kib > 4 * 1024 and resident_kib(mapping) < size_kib // 4
    warm.cosine  # noqa: B018 - the count matrix reads the bucket counts, then drops them
    assert resident_kib(mapping) < size_kib // 4
    query = hash_embed(cold.chunks[123].content)
    assert warm.cosine.top(query, 10) == cold.cosine.top(query, 10)
    for name in ("indptr", "docs", "tfs", "doc_len"):  # every page read again: the same numbers
        assert np.array_equal(getattr(warm.postings, name), getattr(cold.postings, name))
    for name in ("buckets", "counts", "offsets", "norms"):
        assert np.array_equal(getattr(warm.embeddings, name), getattr(cold.embeddings, name))
    assert warm.id_rank.tobytes() == cold.id_rank.tobytes()
    assert [c.content for c in warm.chunks[::50]] == [c.content for c in cold.chunks[::50]]


@needs_smaps
def test_bm25_over_a_kept_record_leaves_the_postings_it_read_out_of_memory(large_tree, tmp_path):
    """Queries whose terms lie on every page of a kept record's postings: each query's postings
    are mapped again as it reads them and dropped after it, so the run never holds them whole,
    and every ranking is the one over the cold build's postings in ordinary memory."""
    cache = str(tmp_path / "cache")
    cold = build_index(large_tree, cache=cache, workers=1)
    warm = build_index(large_tree, cache=cache, workers=1)
    mapping = mapping_of(warm.postings.docs)
    size_kib = len(mapping) // 1024
    postings_kib = (warm.postings.docs.nbytes + warm.postings.tfs.nbytes) // 1024
    queries = [" ".join(c.content.split("(")[0].split()[1:] + ["return"]) for c in cold.chunks[::40]]
    assert len(queries) > 500 and postings_kib > size_kib // 4
    for query in queries:
        terms = unique_tokens(query)
        assert warm.bm25().ranked(terms, 10) == cold.bm25().ranked(terms, 10)
    assert resident_kib(mapping) < size_kib // 4


def _header_of(data: bytes) -> dict:
    return json.loads(data[8 : 8 + int.from_bytes(data[4:8], "little")])


def _with_widths(data: bytes, **widths: object) -> bytes:
    size = int.from_bytes(data[4:8], "little")
    header = _header_of(data)
    header["widths"] = {**header["widths"], **widths}
    new = json.dumps(header).encode("ascii")
    new += b" " * (size - len(new))  # the arrays stay where they were
    assert len(new) == size
    return data[:8] + new + data[8 + size :]


def test_counts_and_frequencies_are_kept_narrow_and_read_in_place(tree):
    files, entries = _entries(tree)
    data = _record(files, entries)
    widths = _header_of(data)["widths"]
    arrays = decode_corpus(data)
    assert widths == {
        "rows": narrowest(arrays.rows),
        "lengths": "|u1",
        "counts": narrowest(arrays.counts.counts),
        "tfs": "|u1",
    }
    assert (
        widths["rows"] in ("<u2", "<i2") and arrays.rows.dtype == np.int64
    )  # lines and ranges of small files
    assert np.dtype(widths["counts"]).itemsize <= 2
    joined = arrays_from_entries_of(files, entries)
    for name, x, y in (
        ("lengths", arrays.counts.lengths, joined.counts.lengths),
        ("counts", arrays.counts.counts, joined.counts.counts),
        ("tfs", arrays.postings.tfs, joined.postings.tfs),
    ):
        assert np.array_equal(x, y) and x.dtype == (np.int64 if name == "lengths" else np.dtype(widths[name]))
    assert arrays.ids == b"".join(chunk_id_bytes(e) for e in entries)
    assert bytes.fromhex(arrays.ids[:16].decode()) in data and arrays.ids[:16] not in data
    assert encode_corpus(arrays) == data  # narrow arrays are written back as they were read


@pytest.mark.parametrize(
    "widths",
    [
        {"tfs": "<i8"},  # wider than ranking keeps frequencies
        {"counts": "<i8"},
        {"counts": "<f4"},  # not an integer width
        {"lengths": ">i2"},  # not little-endian
        {"lengths": ["<i8"]},
        {"rows": "<u8"},
    ],
)
def test_a_width_a_corpus_record_does_not_use_is_refused(tree, widths):
    files, entries = _entries(tree)
    with pytest.raises(ValueError, match="width|truncated|trailing"):
        decode_corpus(_with_widths(_record(files, entries), **widths))
