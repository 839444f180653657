"""Several files' tokens found, hashed and counted in one pass, against each file counted alone.

`buckets.files_tokens` joins the files' bytes and `postings.files_term_and_bucket_counts` counts
their chunks at once, numbering each file's terms apart. The oracle is the per-file path
(`chunk_tokens` + `term_and_bucket_counts`, itself held to `Counter(tokenize(content))` and to
token-by-token bucket counts in test_postings.py and test_buckets.py), and the tokenizer
directly: every array, dtype and vocabulary must be the same, for real files in batches of any
size, for generated texts whose chunk boundaries cut tokens and characters, for files without
tokens or chunks, and when lossy hashes make tokens of different files (or of one) collide.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS
from cce_relevance.retrieval.embedding.buckets import (
    BucketCounts,
    ChunkTokens,
    bucket_counts,
    chunk_tokens,
    files_tokens,
)
from cce_relevance.retrieval.file_indexing.file import index_file, index_files
from cce_relevance.retrieval.file_indexing.file_record import encode
from cce_relevance.retrieval.ranking import postings as postings_module
from cce_relevance.retrieval.ranking.postings import (
    TermCounts,
    files_term_and_bucket_counts,
    term_and_bucket_counts,
)
from cce_relevance.retrieval.tokens import tokenize
from tests.retrieval.corpora import read_tree
from tests.retrieval.ranking.test_postings import ALL_PACKS, _real_files, _stdlib_files, per_chunk

File = tuple[bytes, list[tuple[int, int]]]


def counted_together(files: list[File]) -> list[tuple[TermCounts, BucketCounts]]:
    tokens = files_tokens([source for source, _ in files], [spans for _, spans in files])
    return files_term_and_bucket_counts(tokens, [len(spans) for _, spans in files])


def assert_same_arrays(one: TermCounts | BucketCounts, other: TermCounts | BucketCounts) -> None:
    for field in dataclasses.fields(one):
        a, b = getattr(one, field.name), getattr(other, field.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), field.name
        else:
            assert a == b, field.name


def assert_each_as_alone(files: list[File]) -> None:
    together = counted_together(files)
    assert len(together) == len(files)
    for (source, spans), (terms, buckets) in zip(files, together, strict=True):
        alone_terms, alone_buckets = term_and_bucket_counts(chunk_tokens(source, spans))
        assert_same_arrays(terms, alone_terms)
        assert_same_arrays(buckets, alone_buckets)
        contents = [source[s:e].decode("utf-8", "replace") for s, e in spans]
        assert per_chunk(terms) == [list(Counter(tokenize(content)).items()) for content in contents]


@pytest.mark.parametrize("batch", [1, 2, 7, 40, 10_000])
def test_real_files_in_batches_of_any_size(batch):
    files = [(source, spans) for source, spans, _ in _real_files()]
    for start in range(0, len(files), batch):
        assert_each_as_alone(files[start : start + batch])


@pytest.mark.parametrize("table_entries", [1, 7, 300])
def test_first_and_last_occurrences_paired_a_few_chunks_at_a_time(monkeypatch, table_entries):
    monkeypatch.setattr(postings_module, "_TABLE_ENTRIES", table_entries)
    files = [(source, spans) for source, spans, _ in _real_files()[:40]]
    assert_each_as_alone(files[:13])
    assert_each_as_alone(files[13:])


def test_files_without_tokens_or_chunks():
    assert_each_as_alone([(b"", [(0, 0)]), (b"abc", []), (b"... ;;", [(0, 6), (1, 3)])])
    assert_each_as_alone([(b"", []), (b"x = y_1", [(0, 7), (4, 7)]), (b"", [(0, 0)]), (b"y_1", [(0, 3)])])
    assert_each_as_alone(
        [(b"ab ab", [(0, 5), (3, 5)]), (b"", [(0, 0)]), (b";", [(0, 1)])]
    )  # tokens in file 0 only


_text = st.lists(
    st.sampled_from(["a", "b", "_", "Z", "0", " ", "\n", ".", "é", "ab" * 9, "q" * 33]), max_size=30
).map("".join)
_file = st.tuples(_text, st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), max_size=6))


def _files(drawn: list[tuple[str, list[tuple[float, float]]]]) -> list[File]:
    files = []
    for text, cuts in drawn:
        source = text.encode("utf-8")
        spans = [(int(a * len(source)), int(b * len(source))) for a, b in cuts]
        files.append((source, [(min(s, e), max(s, e)) for s, e in spans]))
    return files


@given(drawn=st.lists(_file, min_size=1, max_size=6))
@settings(max_examples=300, deadline=None)
def test_generated_files_with_boundaries_cutting_tokens(drawn):
    """Chunks of several files, nested, overlapping, empty, cutting tokens and characters, and
    the same tokens in several files: each file's counts are the ones it has alone."""
    assert_each_as_alone(_files(drawn))


def _with_hashes(tokens: ChunkTokens, hashes: np.ndarray) -> ChunkTokens:
    return dataclasses.replace(tokens, hashes=hashes.astype(np.uint64))


@given(drawn=st.lists(_file, min_size=2, max_size=4), modulus=st.sampled_from([1, 2, 3, 2**32 + 1]))
@settings(max_examples=200, deadline=None)
def test_counts_stay_exact_when_tokens_of_different_files_collide(drawn, modulus):
    """Lossy hashes merge tokens within and across files: the groups are checked, and every
    file's counts are still the tokenizer's and its bucket counts the token-by-token ones."""
    files = _files(drawn)
    tokens = files_tokens([source for source, _ in files], [spans for _, spans in files])
    sizes = [len(spans) for _, spans in files]
    exact_buckets = bucket_counts(tokens)
    for lossy in (tokens.hashes % np.uint64(modulus), tokens.ends - tokens.starts):
        counted = files_term_and_bucket_counts(_with_hashes(tokens, lossy), sizes)
        for (source, spans), (terms, _) in zip(files, counted, strict=True):
            contents = [source[s:e].decode("utf-8", "replace") for s, e in spans]
            assert per_chunk(terms) == [list(Counter(tokenize(content)).items()) for content in contents]
            assert terms.vocabulary == list(dict.fromkeys(t for c in per_chunk(terms) for t, _ in c))
    # With the true hashes, the summed bucket counts are the token-by-token ones, file by file.
    summed = counted_together(files)
    rows = np.cumsum([0, *sizes])
    entry_ends = np.concatenate(([0], np.cumsum(exact_buckets.lengths)))
    for f, (_, buckets) in enumerate(summed):
        lo, hi = int(entry_ends[rows[f]]), int(entry_ends[rows[f + 1]])
        assert np.array_equal(buckets.lengths, exact_buckets.lengths[rows[f] : rows[f + 1]])
        assert np.array_equal(buckets.buckets, exact_buckets.buckets[lo:hi])
        assert np.array_equal(buckets.counts, exact_buckets.counts[lo:hi])


def test_every_token_knows_its_file():
    tokens = files_tokens([b"ab cd", b"", b"ef", b"gh ij kl"], [[(0, 5)], [], [(0, 1)], [(3, 8)]])
    spelled = [tokens.lowered[a:b] for a, b in zip(tokens.starts.tolist(), tokens.ends.tolist(), strict=True)]
    assert spelled[: tokens.file_tokens] == [b"ab", b"cd", b"ef", b"gh", b"ij", b"kl"]
    assert spelled[tokens.file_tokens :] == [b"e"]  # the chunk cutting "ef", tokenized alone
    assert tokens.files is not None and tokens.files.tolist() == [0, 0, 2, 3, 3, 3, 2]
    assert chunk_tokens(b"ab", [(0, 2)]).files is None


def test_files_indexed_together_get_the_records_they_get_alone():
    """`index_files` over a batch against `index_file` one by one, record bytes compared: real
    files of every pack, a secret to redact, non-ASCII and undecodable text, an empty file."""
    files = sorted(
        {
            **read_tree(Path("test/fixture/samples")),
            **read_tree(Path(__file__).parents[1] / "language_samples"),
            **_stdlib_files(step=60),
            "secret.py": 'API_KEY = "sk-abcdefghijklmnopqrstuvwxyz012345"\ndef f():\n    return 1\n',
            "unicode.py": "def café(x):\n    return 'naïve'  # é\n\nclass Ünï:\n    pass\n",
            "bytes.py": "def f():\n    return '\udcff\udcfe'\n",
            "empty.py": "",
        }.items()
    )
    for packs, protect_secrets, with_counts in ((REFERENCE_PACKS, True, True), (ALL_PACKS, False, True)):
        together = index_files(files, packs, protect_secrets, with_counts)
        for (path, text), entry in zip(files, together, strict=True):
            alone = index_file(path, text, packs, protect_secrets, with_counts)
            assert encode(entry, text) == encode(alone, text), path
    without_counts = index_files(files, REFERENCE_PACKS, True, False)
    assert all(entry.terms is None and entry.counts is None for entry in without_counts)
