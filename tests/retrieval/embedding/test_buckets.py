"""Batch hash embeddings (tokenize each file once, numpy FNV, one matrix) against `hash_embed` per chunk.

The batch path must give, for every chunk, the very bits `embed.hash_embed` gives on the chunk's
content (which the spec oracle in test_embed.py pins): chunks from real files, and arbitrary
byte ranges that cut tokens and multi-byte characters, overlap and nest. The bucket counts that
indexing sums from the term counts must be the ones counted token by token, array for array.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.retrieval.chunking.chunk import chunk_file
from cce_relevance.retrieval.chunking.languages import EXTRA_PACKS
from cce_relevance.retrieval.chunking.packs import PACKS, PackSet
from cce_relevance.retrieval.embedding.buckets import (
    BucketCounts,
    HashEmbeddings,
    bucket_counts,
    chunk_counts,
    chunk_tokens,
)
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.ranking.postings import term_and_bucket_counts
from tests.retrieval.corpora import DOCS_CORPUS, read_tree

ALL_PACKS = PackSet(PACKS + EXTRA_PACKS)


def assert_rows_are_hash_embed(sources_and_spans: list[tuple[bytes, list[tuple[int, int]]]]) -> None:
    """Each span's matrix row has exactly the bytes of `hash_embed` of the span's decoded text."""
    matrix = HashEmbeddings.of([chunk_counts(source, spans) for source, spans in sources_and_spans]).dense(
        np.float64
    )
    expected = [
        hash_embed(source[s:e].decode("utf-8", "replace"))
        for source, spans in sources_and_spans
        for s, e in spans
    ]
    assert matrix.shape == (len(expected), 256)
    assert matrix.flags.f_contiguous
    for row, vector in zip(matrix, expected, strict=True):
        assert np.ascontiguousarray(row).tobytes() == vector.tobytes()


def assert_summed_counts_are_token_counts(source: bytes, spans: list[tuple[int, int]]) -> None:
    tokens = chunk_tokens(source, spans)
    summed, counted = term_and_bucket_counts(tokens)[1], bucket_counts(tokens)
    for name in ("lengths", "buckets", "counts"):
        a, b = getattr(summed, name), getattr(counted, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    assert isinstance(summed, BucketCounts)


def _real_cases() -> list[tuple[bytes, list[tuple[int, int]]]]:
    files = {
        **read_tree(Path("test/fixture/samples")),
        **read_tree(Path(__file__).parents[1] / "language_samples"),
        **read_tree(Path(DOCS_CORPUS)),
    }
    cases = []
    for path, text in sorted(files.items()):
        chunked = chunk_file(path, text, ALL_PACKS)
        cases.append((chunked.source, chunked.spans))
    return cases


def test_chunks_of_real_files():
    cases = _real_cases()
    assert sum(len(spans) for _, spans in cases) > 50
    assert_rows_are_hash_embed(cases)
    for source, spans in cases:
        assert_summed_counts_are_token_counts(source, spans)


_text = st.text(
    alphabet=st.sampled_from(list("abcXYZ_019 \n\t.,:;(){}é漢\U0001f600-") + ["\x00"]), max_size=300
)


@given(text=_text, cuts=st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), max_size=12))
@settings(max_examples=400, deadline=None)
def test_arbitrary_spans_cutting_tokens_and_characters(text, cuts):
    source = text.encode("utf-8")
    spans = [(int(a * len(source)), int(b * len(source))) for a, b in cuts]
    spans = [(min(s, e), max(s, e)) for s, e in spans]
    assert_rows_are_hash_embed([(source, spans)])
    assert_summed_counts_are_token_counts(source, spans)


@given(lengths=st.lists(st.integers(1, 80), min_size=1, max_size=40), repeats=st.integers(1, 3))
@settings(max_examples=100, deadline=None)
def test_long_tokens_hashed_one_by_one_and_in_bulk(lengths, repeats):
    """Tokens up to 32 bytes are hashed with numpy, longer ones one by one; both, repeated."""
    tokens = [("Tok" * 30)[:n] + str(i % 7) for i, n in enumerate(lengths)] * repeats
    source = " ".join(tokens).encode("ascii")
    assert_rows_are_hash_embed(
        [(source, [(0, len(source)), (0, len(source) // 2), (len(source) // 3, len(source))])]
    )


def test_more_chunks_than_one_counting_block():
    source = " ".join(f"w{i % 97} x{i % 13}" for i in range(3000)).encode("ascii")
    spans = [(i, i + 40) for i in range(0, 2 * 2100, 2)]  # 2,100 chunks: more than one 2,048-row block
    assert_rows_are_hash_embed([(source, spans)])
    assert_summed_counts_are_token_counts(source, spans)


def test_no_tokens_no_spans_and_empty_sources():
    assert_rows_are_hash_embed([(b"", [(0, 0)]), (b"... !!", [(0, 6), (2, 2)]), (b"abc", [])])
    for source, spans in ((b"", [(0, 0)]), (b"... !!", [(0, 6), (2, 2)]), (b"abc", []), (b"", [])):
        assert_summed_counts_are_token_counts(source, spans)
    assert HashEmbeddings.of([]).dense(np.float64).shape == (0, 256)


def test_opposite_signs_cancel_to_zero_components():
    from tests.retrieval.corpora import opposite_sign_pair

    a, b = opposite_sign_pair()
    source = f"{a} {b}".encode("ascii")
    assert_rows_are_hash_embed([(source, [(0, len(source))])])
    assert_summed_counts_are_token_counts(source, [(0, len(source)), (0, len(a))])
    assert not HashEmbeddings.of([chunk_counts(source, [(0, len(source))])]).dense(np.float64).any()
