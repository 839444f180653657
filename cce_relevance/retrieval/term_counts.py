"""BM25's term counts: made per file while indexing, merged into the corpus's postings once.

BM25 (retrieval/bm25.py) needs, for every chunk, each distinct token and how often it occurs.
Tokenizing every chunk's content again for that is the costliest part of building it — chunks
overlap (a class chunk holds its methods), so the contents are far more text than the files —
and it would be paid on every run, cached or not. But indexing a file with the hash embedder
already finds its chunks' tokens (retrieval/hash_counts.py `chunk_tokens`), so the counts are
taken there, per file, in the worker processes, and kept in the file's cached record; building
the index then only merges arrays.

The merged postings are exactly those `BM25(contents, ...)` makes: terms numbered in order of
first occurrence over the chunks in index order (each chunk's tokens in text order), each
term's documents ascending, the same counts. That is why a file's terms are listed chunk by
chunk in first-occurrence order, and its vocabulary in the order its terms first appear there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from cce_relevance.retrieval.hash_counts import ChunkTokens, token_positions

# The tokens of lowered text read as Latin-1 (one character per byte): no character from
# U+0080 on is in the class, so these are exactly the runs of word bytes `chunk_tokens` found.
_LOWERED_TOKEN = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class TermCounts:
    """One file's chunks' term counts: `lengths[i]` entries of `terms`/`counts` per chunk, in
    chunk order, each chunk's terms in the order they first occur in it; `terms` index
    `vocabulary`, which lists the file's terms in the order they first appear in `terms`."""

    vocabulary: list[str]
    lengths: np.ndarray  # int64, one per chunk
    terms: np.ndarray  # int32
    counts: np.ndarray  # int32


def term_counts(tokens: ChunkTokens) -> TermCounts:
    """The term counts of the chunks whose tokens are `tokens`."""
    text = tokens.lowered.decode("latin-1")
    words = _LOWERED_TOKEN.findall(text)
    own = zip(tokens.starts[tokens.file_tokens:].tolist(), tokens.ends[tokens.file_tokens:].tolist(), strict=True)
    words += [text[start:end] for start, end in own]  # the tokens of chunks tokenized by themselves
    distinct = list(dict.fromkeys(words))
    size = len(distinct)
    number = dict(zip(distinct, range(size), strict=True))
    ids = np.fromiter(map(number.__getitem__, words), dtype=np.int64, count=len(words))
    rows, positions = token_positions(tokens.first, tokens.stop)
    # One key per (chunk, term); ordering the distinct keys by where each first occurs puts them
    # chunk by chunk, and within a chunk in first-occurrence order.
    keys, first_at, counts = np.unique(rows * size + ids[positions], return_index=True, return_counts=True)
    order = np.argsort(first_at)
    keys, counts = keys[order], counts[order]
    chunk_of, terms = (keys // size, keys % size) if size else (keys, keys)
    seen, seen_at = np.unique(terms, return_index=True)
    appearing = seen[np.argsort(seen_at)]
    renumbered = np.zeros(size, dtype=np.int64)
    renumbered[appearing] = np.arange(appearing.shape[0])
    return TermCounts([distinct[t] for t in appearing.tolist()],
                      np.bincount(chunk_of, minlength=tokens.first.shape[0]).astype(np.int64),
                      renumbered[terms].astype(np.int32), counts.astype(np.int32))


@dataclass(frozen=True)
class Postings:
    """A corpus's term-major postings, as `BM25.from_postings` takes them: term `t` (numbered by
    `term_id`) occurs in documents `docs[indptr[t]:indptr[t + 1]]` (ascending) with frequencies
    `tfs` at the same positions; `doc_len` is each document's number of tokens."""

    term_id: dict[str, int]
    indptr: np.ndarray  # int64
    docs: np.ndarray  # int64
    tfs: np.ndarray  # float64
    doc_len: np.ndarray  # int64


def corpus_postings(parts: Sequence[TermCounts]) -> Postings:
    """The postings of the chunks of `parts` (one per file, in index order), one after the other."""
    words = list(chain.from_iterable(p.vocabulary for p in parts))
    term_id = dict(zip(dict.fromkeys(words), range(len(words)), strict=False))
    global_ids = np.fromiter(map(term_id.__getitem__, words), dtype=np.int64, count=len(words))
    vocabulary_sizes = np.array([len(p.vocabulary) for p in parts], dtype=np.int64)
    entry_counts = np.array([p.terms.shape[0] for p in parts], dtype=np.int64)
    local = np.concatenate([p.terms for p in parts]).astype(np.int64) if parts else np.zeros(0, np.int64)
    terms = global_ids[local + np.repeat(np.cumsum(vocabulary_sizes) - vocabulary_sizes, entry_counts)]
    lengths = np.concatenate([p.lengths for p in parts]) if parts else np.zeros(0, np.int64)
    counts = np.concatenate([p.counts for p in parts]) if parts else np.zeros(0, np.int32)
    n_docs = lengths.shape[0]
    docs = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
    by_term = np.argsort(terms, kind="stable")  # each term's documents stay ascending
    indptr = np.concatenate(([0], np.cumsum(np.bincount(terms, minlength=len(term_id))))).astype(np.int64)
    doc_len = np.bincount(docs, weights=counts, minlength=n_docs).astype(np.int64)  # exact: small integers
    return Postings(term_id, indptr, docs[by_term], counts[by_term].astype(np.float64), doc_len)
