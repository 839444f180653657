"""What indexing one file yields.

A file is indexed on its own: redacted, chunked, and — with the hash embedder — tokenized once
for the bucket counts and the BM25 term counts of every chunk. Nothing in the result depends on
other files, so a file can be indexed in another process or taken from the index cache, and the
corpus is the files' results in walk order (retrieval/file_indexing/file_record.py is the bytes
it travels in).
Several files are indexed together (`index_files`) to count their tokens in one numpy pass,
which changes no file's result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cce_relevance.retrieval.chunking.chunk import Chunk, ChunkedFile, chunk_file, sliced_chunk
from cce_relevance.retrieval.chunking.line_weights import FileLineWeights, file_weighted_lines
from cce_relevance.retrieval.chunking.packs import PackSet
from cce_relevance.retrieval.corpus.redact import redact
from cce_relevance.retrieval.embedding.buckets import BucketCounts, files_tokens
from cce_relevance.retrieval.ranking.postings import TermCounts, files_term_and_bucket_counts
from cce_relevance.retrieval.tokens import estimate_tokens


@dataclass(frozen=True)
class IndexedFile:
    """One file's share of the index: its token weight, imports, chunks (embeddings not set), the
    token weights of their lines and, with the hash embedder, their bucket counts and BM25 term
    counts. `text` is the (redacted) text the chunks were cut from; `char_spans[i]` is chunk i's
    range in it, or None when the content is not a slice."""

    text: str
    tokens: int
    imports: list[str]
    chunks: list[Chunk]
    char_spans: list[tuple[int, int] | None]
    counts: BucketCounts | None
    terms: TermCounts | None
    lines: FileLineWeights


def index_file(path: str, text: str, packs: PackSet, protect_secrets: bool, with_counts: bool) -> IndexedFile:
    """Redact, chunk and (with `with_counts`) count one walked file."""
    return index_files([(path, text)], packs, protect_secrets, with_counts)[0]


def index_files(
    files: Sequence[tuple[str, str]], packs: PackSet, protect_secrets: bool, with_counts: bool
) -> list[IndexedFile]:
    """`index_file` of each (path, text) walked file. Each file is redacted and chunked alone;
    their tokens are found, hashed and counted in one pass over all of them (the same arrays as
    file by file, in a few large numpy operations instead of many small ones per file)."""
    redacted = [redact(text) if protect_secrets else text for _, text in files]
    chunked = [chunk_file(path, text, packs) for (path, _), text in zip(files, redacted, strict=True)]
    counted: list[tuple[TermCounts | None, BucketCounts | None]] = (
        list(
            files_term_and_bucket_counts(
                files_tokens([c.source for c in chunked], [c.spans for c in chunked]),
                [len(c.spans) for c in chunked],
            )
        )
        if with_counts and files
        else [(None, None)] * len(files)
    )
    return [
        _indexed(text, chunks, terms, counts)
        for text, chunks, (terms, counts) in zip(redacted, chunked, counted, strict=True)
    ]


def _indexed(
    redacted: str, chunked: ChunkedFile, terms: TermCounts | None, counts: BucketCounts | None
) -> IndexedFile:
    spans = _char_spans(redacted, chunked)
    sliced = None not in spans and (redacted.isascii() or _no_surrogates(redacted))
    return IndexedFile(
        redacted,
        estimate_tokens(redacted),
        chunked.imports,
        [
            c if span is None else _sliced(c, redacted, span)
            for c, span in zip(chunked.chunks, spans, strict=True)
        ],
        spans,
        counts,
        terms,
        file_weighted_lines(chunked, sliced),
    )


def _sliced(chunk: Chunk, text: str, span: tuple[int, int]) -> Chunk:
    """`chunk` with its content dropped, to be sliced from `text` again when read: a corpus's
    contents are more text than the corpus (class chunks repeat their methods), and ranking reads
    few of them."""
    where = (chunk.chunk_id, chunk.file_path, chunk.start_line, chunk.end_line)
    kind = (chunk.chunk_type, chunk.kind, chunk.language)
    return sliced_chunk(*where, *kind, text, span[0], span[1], chunk.token_count)


def _no_surrogates(text: str) -> bool:
    """Whether `text` encodes to valid UTF-8 (so the parser's nodes start and end between
    characters, and every chunk's content is its bytes decoded as they are)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _char_spans(text: str, chunked: ChunkedFile) -> list[tuple[int, int] | None]:
    """Each chunk's byte range as a character range of `text`, where that slice is its content."""
    if text.isascii():
        return list(chunked.spans)
    data = np.frombuffer(chunked.source, dtype=np.uint8)
    char_at = np.zeros(data.shape[0] + 1, dtype=np.int64)
    np.cumsum((data & 0xC0) != 0x80, out=char_at[1:])  # characters begun before each byte offset
    spans: list[tuple[int, int] | None] = []
    for chunk, (start, end) in zip(chunked.chunks, chunked.spans, strict=True):
        span = (int(char_at[start]), int(char_at[end]))
        spans.append(span if text[span[0] : span[1]] == chunk.content else None)
    return spans
