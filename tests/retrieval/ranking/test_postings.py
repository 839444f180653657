"""BM25 term counts taken while indexing, and the postings merged from them, against tokenizing.

Per file: each chunk's (term, count) list must be `Counter(tokenize(content))` item for item —
the same terms in the same first-occurrence order — for chunks of real files and for arbitrary
byte ranges that cut tokens and characters, overlap and nest. Terms are grouped by hash and each
group checked to hold one string; with the hashes replaced by lossy ones (forced collisions:
same length or not, differing in any 8-byte word or past the 32 bytes compared as words) the
check must catch every collision and the counts stay exact. Per corpus: the merged postings
must be exactly the arrays `BM25(contents, ...)` builds (tests/retrieval/search/test_fast_ranking.py
checks the rankings on larger corpora).
"""

from __future__ import annotations

import dataclasses
import sysconfig
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.chunking.chunk import chunk_file
from cce_relevance.retrieval.chunking.languages import EXTRA_PACKS
from cce_relevance.retrieval.chunking.packs import PACKS, PackSet
from cce_relevance.retrieval.embedding.buckets import ChunkTokens, chunk_tokens
from cce_relevance.retrieval.ranking import postings as term_counts_module
from cce_relevance.retrieval.ranking.bm25 import BM25
from cce_relevance.retrieval.ranking.postings import TermCounts, corpus_postings, term_counts
from cce_relevance.retrieval.tokens import tokenize
from tests.retrieval.corpora import DOCS_CORPUS, read_tree

ALL_PACKS = PackSet(PACKS + EXTRA_PACKS)


def per_chunk(counts: TermCounts) -> list[list[tuple[str, int]]]:
    ends = np.cumsum(counts.lengths).tolist()
    starts = [0, *ends][: len(ends)]
    return [
        [
            (counts.vocabulary[t], c)
            for t, c in zip(counts.terms[a:b].tolist(), counts.counts[a:b].tolist(), strict=True)
        ]
        for a, b in zip(starts, ends, strict=True)
    ]


def assert_counts_are_tokenizing(
    source: bytes, spans: list[tuple[int, int]], tokens: ChunkTokens | None = None
) -> TermCounts:
    counts = term_counts(chunk_tokens(source, spans) if tokens is None else tokens)
    contents = [source[s:e].decode("utf-8", "replace") for s, e in spans]
    assert per_chunk(counts) == [list(Counter(tokenize(content)).items()) for content in contents]
    assert counts.lengths.dtype == np.int64 and counts.terms.dtype == counts.counts.dtype == np.int32
    # The vocabulary lists each term once, in the order the terms first appear.
    assert counts.vocabulary == list(dict.fromkeys(t for chunk in per_chunk(counts) for t, _ in chunk))
    return counts


def _stdlib_files(step: int = 25) -> dict[str, str]:
    """Every `step`-th .py file of the installed standard library (sorted paths)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    paths = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.parts)[::step]
    return {p.relative_to(root).as_posix(): p.read_bytes().decode("utf-8", "surrogateescape") for p in paths}


def _real_files() -> list[tuple[bytes, list[tuple[int, int]], list[str]]]:
    files = {
        **read_tree(Path("test/fixture/samples")),
        **read_tree(Path(__file__).parents[1] / "language_samples"),
        **read_tree(Path(DOCS_CORPUS)),
        **_stdlib_files(),
    }
    cases = []
    for path, text in sorted(files.items()):
        chunked = chunk_file(path, text, ALL_PACKS)
        cases.append((chunked.source, chunked.spans, [c.content for c in chunked.chunks]))
    return cases


def test_chunks_of_real_files():
    cases = _real_files()
    assert sum(len(spans) for _, spans, _ in cases) > 1500
    for source, spans, _ in cases:
        assert_counts_are_tokenizing(source, spans)


def test_real_files_are_grouped_by_hash_without_falling_back(monkeypatch):
    """No collision in real files: the string grouping (the fallback) is never needed there."""

    def refuse(tokens):
        raise AssertionError("fell back to grouping by strings")

    monkeypatch.setattr(term_counts_module, "_string_ids", refuse)
    for source, spans, _ in _real_files():
        term_counts(chunk_tokens(source, spans))


@pytest.mark.parametrize("table_entries", [1, 7, 300])
def test_first_and_last_occurrences_paired_a_few_chunks_at_a_time(monkeypatch, table_entries):
    monkeypatch.setattr(term_counts_module, "_TABLE_ENTRIES", table_entries)
    for source, spans, _ in _real_files()[:40]:
        assert_counts_are_tokenizing(source, spans)


def _with_hashes(tokens: ChunkTokens, hashes: np.ndarray) -> ChunkTokens:
    return dataclasses.replace(tokens, hashes=hashes.astype(np.uint64))


_LONG = "q" * 40
# Pairs of distinct tokens a lossy hash may merge: same length differing in the first, second,
# fourth 8-byte word or past the 32 bytes compared as words; different lengths; a prefix.
_COLLIDING = [
    ("alpha", "alphb"),
    ("abcdefgh_1", "abcdefgh_2"),
    ("x" * 31 + "a", "x" * 31 + "b"),
    (_LONG + "a", _LONG + "b"),
    ("ab", "abc"),
    (_LONG, _LONG + "0"),
    ("a" * 16, "a" * 8),
]


@pytest.mark.parametrize(("one", "other"), _COLLIDING)
def test_a_forced_hash_collision_is_caught_and_counted_by_strings(monkeypatch, one, other):
    source = f"{one} {other} x {one}\n{other}{{{other} {one}}} {one}".encode("ascii")
    spans = [(0, len(source)), (0, len(one) + 1), (len(one) + 1, len(source)), (3, 9)]
    tokens = chunk_tokens(source, spans)
    spelled = [
        source[a:b].decode("ascii") for a, b in zip(tokens.starts.tolist(), tokens.ends.tolist(), strict=True)
    ]
    # Only these two tokens collide: `other` takes `one`'s hash, every other token keeps its own.
    h = tokens.hashes
    merged = _with_hashes(tokens, np.where(np.array(spelled) == other, h[spelled.index(one)], h))
    calls = []
    string_ids = term_counts_module._string_ids
    monkeypatch.setattr(term_counts_module, "_string_ids", lambda t: calls.append(1) or string_ids(t))
    assert_counts_are_tokenizing(source, spans, merged)
    assert calls == [1]  # the collision was seen, and the file grouped by strings


_text_with_long_tokens = st.lists(
    st.sampled_from(["a", "b", "_", "Z", "0", " ", ".", "é", "ab" * 9, "q" * 33]), max_size=30
).map("".join)


@given(
    texts=st.lists(
        st.tuples(_text_with_long_tokens, st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), max_size=6)),
        min_size=1,
        max_size=3,
    ),
    modulus=st.sampled_from([1, 2, 3, 5, 2**32 + 1]),
)
@settings(max_examples=300, deadline=None)
def test_counts_stay_exact_under_any_lossy_hash(texts, modulus):
    """Whatever the hashes merge, the groups are checked and the counts are the tokenizer's."""
    for text, cuts in texts:
        source = text.encode("utf-8")
        spans = [(int(a * len(source)), int(b * len(source))) for a, b in cuts]
        spans = [(min(s, e), max(s, e)) for s, e in spans]
        tokens = chunk_tokens(source, spans)
        assert_counts_are_tokenizing(source, spans, _with_hashes(tokens, tokens.hashes % np.uint64(modulus)))
        assert_counts_are_tokenizing(source, spans, _with_hashes(tokens, tokens.ends - tokens.starts))


def test_corpus_postings_are_the_tokenizing_bm25_arrays():
    cases = _real_files()
    parts = [term_counts(chunk_tokens(source, spans)) for source, spans, _ in cases]
    contents = [content for _, _, chunk_contents in cases for content in chunk_contents]
    ids = [f"{i:016x}" for i in range(len(contents))][::-1]
    p = corpus_postings(parts)
    assert_same_bm25(
        BM25.from_postings(p.term_id, p.indptr, p.docs, p.tfs, p.doc_len, ids, 1.1, 0.6),
        BM25(contents, ids, 1.1, 0.6),
    )


@pytest.mark.parametrize("block", [1, 2, 3, 50, 1000])
def test_corpus_postings_merged_a_few_files_at_a_time_are_the_tokenizing_bm25_arrays(block):
    """Blocks of any size (down to one entry: every file a block of its own) give the postings
    the tokenizer's BM25 makes: each term's documents ascending across blocks."""
    cases = _real_files()
    parts = [term_counts(chunk_tokens(source, spans)) for source, spans, _ in cases]
    contents = [content for _, _, chunk_contents in cases for content in chunk_contents]
    ids = [f"{i:016x}" for i in range(len(contents))]
    p = corpus_postings(parts, block=block)
    assert len(list(term_counts_module._blocks(parts, block))) > (1 if block < 1000 else 0)
    assert_same_bm25(
        BM25.from_postings(p.term_id, p.indptr, p.docs, p.tfs, p.doc_len, ids), BM25(contents, ids)
    )


def assert_same_bm25(fast: BM25, tokenizing: BM25) -> None:
    """Every array and number the two BM25s rank with is the same, with the same dtype."""
    assert list(fast._term_id.items()) == list(tokenizing._term_id.items())
    for name in ("_docs", "_freqs", "_starts", "doc_len", "_length_norm", "id_rank"):
        x, y = getattr(fast, name), getattr(tokenizing, name)
        assert x.dtype == y.dtype and np.array_equal(x, y), name
    assert (fast.n_docs, fast.avgdl, fast.k1, fast.b) == (
        tokenizing.n_docs,
        tokenizing.avgdl,
        tokenizing.k1,
        tokenizing.b,
    )


def test_nothing_to_count():
    for source, spans in ((b"", [(0, 0)]), (b"... ;; \xc3\xa9", [(0, 9), (2, 5)]), (b"abc", [])):
        counts = assert_counts_are_tokenizing(source, spans)
        assert counts.vocabulary == [] and counts.lengths.tolist() == [0] * len(spans)
    p = corpus_postings([])
    assert (p.term_id, p.indptr.tolist(), p.docs.size, p.tfs.size, p.doc_len.size) == ({}, [0], 0, 0, 0)
    assert_same_bm25(BM25.from_postings(p.term_id, p.indptr, p.docs, p.tfs, p.doc_len, []), BM25([], []))


_text = st.text(
    alphabet=st.sampled_from(list("abcXYZ_019 \n\t.,:;(){}é漢\U0001f600-") + ["\x00"]), max_size=300
)


@given(
    texts=st.lists(
        st.tuples(_text, st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), max_size=8)), max_size=4
    ),
    block=st.integers(1, 40),
)
@settings(max_examples=300, deadline=None)
def test_arbitrary_spans_cutting_tokens_and_characters(texts, block):
    parts, contents = [], []
    for text, cuts in texts:
        source = text.encode("utf-8")
        spans = [(int(a * len(source)), int(b * len(source))) for a, b in cuts]
        spans = [(min(s, e), max(s, e)) for s, e in spans]
        parts.append(assert_counts_are_tokenizing(source, spans))
        contents += [source[s:e].decode("utf-8", "replace") for s, e in spans]
    ids = [f"{i:016x}" for i in range(len(contents))]
    p = corpus_postings(parts, block=block)
    assert_same_bm25(
        BM25.from_postings(p.term_id, p.indptr, p.docs, p.tfs, p.doc_len, ids), BM25(contents, ids)
    )
