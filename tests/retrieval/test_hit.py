"""A chunk and a hit on it share one `Span`: the fields anchors and metrics read are declared
once, a hit made from a chunk carries exactly them, and both records stay frozen."""

import dataclasses
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.retrieval.chunking.chunk import Chunk, chunk_file, set_embedding
from cce_relevance.retrieval.hit import Hit, Span

SPAN_FIELDS = [f.name for f in dataclasses.fields(Span)]

spans = st.builds(
    Span,
    st.text(max_size=16),
    st.text(max_size=30),
    st.integers(1, 10**6),
    st.integers(1, 10**6),
    st.sampled_from(["function", "class", "module", "external"]),
    st.text(max_size=20),
)


def test_chunk_and_hit_begin_with_the_span_fields():
    assert SPAN_FIELDS == ["chunk_id", "file_path", "start_line", "end_line", "chunk_type", "kind"]
    for record in (Chunk, Hit):
        assert issubclass(record, Span)
        assert [f.name for f in dataclasses.fields(record)][: len(SPAN_FIELDS)] == SPAN_FIELDS
    assert [f.name for f in dataclasses.fields(Hit)][len(SPAN_FIELDS) :] == ["rank", "score"]


@given(spans, st.integers(1, 1000), st.floats(allow_nan=False))
def test_a_hit_of_a_span_carries_its_fields_and_no_more(span, rank, score):
    hit = Hit.of(span, rank, score)
    assert [getattr(hit, name) for name in SPAN_FIELDS] == [getattr(span, name) for name in SPAN_FIELDS]
    assert (hit.rank, hit.score) == (rank, score)
    assert hit == Hit(*dataclasses.astuple(span), rank, score)
    assert hash(hit) == hash(Hit.of(span, rank, score))
    assert Hit.of(hit, rank + 1, score).rank == rank + 1  # a hit is a span too
    assert pickle.loads(pickle.dumps(hit)) == hit


def test_hits_of_real_chunks_name_them():
    text = (
        "def load(path):\n    return open(path).read()\n\n\n"
        "class Router:\n    def route(self):\n        pass\n"
    )
    chunks = chunk_file("app/router.py", text).chunks
    assert [c.kind for c in chunks] == ["function_definition", "class_definition", "function_definition"]
    for rank, chunk in enumerate(chunks, 1):
        hit = Hit.of(chunk, rank, 1.0 / rank)
        assert (hit.file_path, hit.start_line, hit.end_line, hit.chunk_id) == (
            chunk.file_path,
            chunk.start_line,
            chunk.end_line,
            chunk.chunk_id,
        )


def test_chunks_and_hits_are_frozen_but_a_chunk_takes_its_embedding():
    chunk = chunk_file("a.py", "def f():\n    pass\n").chunks[0]
    hit = Hit.of(chunk, 1, 0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        chunk.kind = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        hit.rank = 2  # type: ignore[misc]
    assert chunk.embedding is None
    set_embedding(chunk, np.arange(3.0))
    assert np.array_equal(chunk.embedding, np.arange(3.0))
    assert chunk == dataclasses.replace(chunk, embedding=None)  # the embedding is not compared
