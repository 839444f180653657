"""BM25's term counts: made per file while indexing, merged into the corpus's postings once.

BM25 (retrieval/ranking/bm25.py) needs, for every chunk, each distinct token and how often it occurs.
Tokenizing every chunk's content again for that is the costliest part of building it — chunks
overlap (a class chunk holds its methods), so the contents are far more text than the files —
and it would be paid on every run, cached or not. But indexing a file with the hash embedder
already finds its chunks' tokens (retrieval/embedding/buckets.py `chunk_tokens`), so the counts are
taken there, per file, in the worker processes, and kept in the file's cached record; building
the index then only merges arrays.

Files are counted a batch at a time (`files_term_and_bucket_counts`: one pass of numpy over
many files, each file's arrays exactly those it has alone), so numpy's per-call cost is paid per
batch, not per file.

The merged postings are exactly those `BM25(contents, ...)` makes: terms numbered in order of
first occurrence over the chunks in index order (each chunk's tokens in text order), each
term's documents ascending, the same counts. That is why a file's terms are listed chunk by
chunk in first-occurrence order, and its vocabulary in the order its terms first appear there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from cce_relevance.retrieval.embedding.buckets import (
    BucketCounts,
    ChunkTokens,
    summed_bucket_counts,
    token_positions,
)
from cce_relevance.retrieval.ranking.vocabulary import vocabulary_of

# The tokens of lowered text read as Latin-1 (one character per byte): no character from
# U+0080 on is in the class, so these are exactly the runs of word bytes `chunk_tokens` found.
_LOWERED_TOKEN = re.compile(r"[a-z0-9_]+")
_WORD = 8  # bytes compared at once when checking that tokens with one hash are one term
_WORD_COMPARED = 4 * _WORD  # tokens longer than this are compared as bytes objects past that
_TABLE_ENTRIES = 1 << 18  # (chunk, term) slots pairing first and last occurrences, per block
_BLOCK_ENTRIES = 1 << 16  # entries of whole files merged at a time (a block's scratch, ~4 MB, stays resident)
_LOW_BYTES = np.array([(1 << (8 * i)) - 1 for i in range(_WORD + 1)], dtype=np.uint64)  # the first i bytes


@dataclass(frozen=True)
class TermCounts:
    """One file's chunks' term counts: `lengths[i]` entries of `terms`/`counts` per chunk, in
    chunk order, each chunk's terms in the order they first occur in it; `terms` index
    `vocabulary`, which lists the file's terms in the order they first appear in `terms`.

    The vocabulary is kept as `words`, the terms separated by spaces (a term is a run of ASCII
    word bytes): one bytes object a file, about a byte more than its letters a term, where a
    string a term takes some 56 bytes — the files' vocabularies are held from indexing until
    they are merged (`corpus_postings`), tens of megabytes of strings at 100k chunks."""

    words: bytes
    lengths: np.ndarray  # int64, one per chunk
    terms: np.ndarray  # int32
    counts: np.ndarray  # int32

    @property
    def vocabulary(self) -> list[str]:
        """The file's terms, in the order they first appear in `terms` (made when asked for)."""
        return self.words.decode("ascii").split(" ") if self.words else []


def term_counts(tokens: ChunkTokens) -> TermCounts:
    """The term counts of the chunks whose tokens are `tokens` (see `_term_counts`)."""
    return _term_counts(tokens)[0]


def term_and_bucket_counts(tokens: ChunkTokens) -> tuple[TermCounts, BucketCounts]:
    """The term counts of the chunks whose tokens are `tokens`, and their bucket counts summed
    from them (`buckets.summed_bucket_counts`) rather than from every token again."""
    terms, hashes, _ = _term_counts(tokens)
    return terms, summed_bucket_counts(terms.lengths, terms.terms, terms.counts, hashes)


def files_term_and_bucket_counts(
    tokens: ChunkTokens, chunks_per_file: Sequence[int]
) -> list[tuple[TermCounts, BucketCounts]]:
    """`term_and_bucket_counts` of each file, for the chunks of several files whose tokens are
    `tokens` (`buckets.files_tokens`; file f has the next `chunks_per_file[f]` chunks), counted
    in one pass: the same arrays as counting each file alone, as the files' terms are numbered
    apart (see `_term_counts`)."""
    if tokens.files is None:  # one file's chunks
        return [term_and_bucket_counts(tokens)]
    terms, hashes, term_files = _term_counts(tokens)
    buckets = summed_bucket_counts(terms.lengths, terms.terms, terms.counts, hashes)
    n_files = len(chunks_per_file)
    chunk_ends = np.cumsum(np.asarray(chunks_per_file, dtype=np.int64))
    term_ends = _ends_at(terms.lengths, chunk_ends)
    bucket_ends = _ends_at(buckets.lengths, chunk_ends)
    vocabulary_sizes = np.bincount(term_files, minlength=n_files)
    vocabulary_ends = np.cumsum(vocabulary_sizes)
    # A file's terms are numbered after the terms of the files before it: count them from 0.
    local = terms.terms - np.repeat(vocabulary_ends - vocabulary_sizes, np.diff(term_ends, prepend=0)).astype(
        np.int32
    )
    # The batch's words v0:v1 (v1 > v0) are bytes bounds[v0] + 1 to bounds[v1] of its `words`.
    spaces = np.flatnonzero(np.frombuffer(terms.words, dtype=np.uint8) == 0x20)
    bounds = np.concatenate(([-1], spaces, [len(terms.words)]))
    word_starts = bounds[vocabulary_ends - vocabulary_sizes] + 1
    word_ends = np.maximum(bounds[vocabulary_ends], word_starts)  # a file without terms: empty
    counted = []
    c0 = t0 = b0 = 0
    ends = (chunk_ends, term_ends, bucket_ends, word_starts, word_ends)
    for c1, t1, b1, w0, w1 in zip(*(e.tolist() for e in ends), strict=True):
        words = terms.words[w0:w1]
        counted.append(
            (
                TermCounts(words, terms.lengths[c0:c1], local[t0:t1], terms.counts[t0:t1]),
                BucketCounts(buckets.lengths[c0:c1], buckets.buckets[b0:b1], buckets.counts[b0:b1]),
            )
        )
        c0, t0, b0 = c1, t1, b1
    return counted


def _ends_at(lengths: np.ndarray, chunk_ends: np.ndarray) -> np.ndarray:
    """Where the entries of the chunks before each of `chunk_ends` end (`lengths` per chunk)."""
    ends = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=ends[1:])
    return ends[chunk_ends]


def _term_counts(tokens: ChunkTokens) -> tuple[TermCounts, np.ndarray, np.ndarray]:
    """The term counts of the chunks whose tokens are `tokens`, each vocabulary term's hash, and
    each vocabulary term's file (0 for one file's tokens).

    Tokens are grouped into terms by their FNV-1a-64 hashes (already computed for the bucket
    counts) and, for several files, by file: a term of two files is a term of each, so each
    file's terms come out as counting that file alone would number them. Every group is then
    checked to hold one string only, so no hash collision can merge two terms: tokens where one
    does are grouped by their strings instead. Chunk i's tokens are the contiguous tokens
    `first[i]:stop[i]`, so a token is its term's first occurrence in the chunk when the term's
    previous occurrence lies before `first[i]`, and its last when the next one lies at or after
    `stop[i]`; the count is the number of the term's occurrences from the first to the last.
    """
    n = tokens.starts.shape[0]
    n_chunks = tokens.first.shape[0]
    if n == 0:
        return (
            TermCounts(b"", np.zeros(n_chunks, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int32)),
            np.zeros(0, np.uint64),
            np.zeros(0, np.int64),
        )
    shift = n.bit_length()  # token positions fit in the low `shift` bits of a sort key
    files = tokens.files
    file_bits = 0 if files is None else int(files.max()).bit_length()
    # Sort keys: the file in the top bits (so each file's terms are numbered together), then as
    # many of the hash's bits as fit above the position.
    high = (tokens.hashes >> np.uint64(file_bits)) & np.uint64(-1 << shift & 0xFFFF_FFFF_FFFF_FFFF)
    if files is not None and file_bits:  # (no bits: every token is in file 0)
        high |= files.astype(np.uint64) << np.uint64(64 - file_bits)
    order, begins = _grouped(high, shift)
    if not _one_string_each(tokens, order, begins):
        ids = _string_ids(tokens)
        order, begins = _grouped((ids if files is None else files << shift | ids) << shift, shift)
    group = np.cumsum(begins) - 1  # the term of each entry of `order`
    n_terms = int(group[-1]) + 1
    term, sorted_at = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    term[order] = group
    sorted_at[order] = np.arange(n)
    # A term's number among its file's terms: what the (chunk, term) table below is indexed by.
    if files is None:
        local, width = term, n_terms
    else:
        group_files = files[order[begins]]
        local = term - (np.cumsum(np.bincount(group_files)) - np.bincount(group_files))[files]
        width = int(np.bincount(group_files).max())
    rows, positions = token_positions(tokens.first, tokens.stop)
    previous, following = _neighbours(order, begins)
    firsts = previous[positions] < tokens.first[rows]
    lasts = following[positions] >= tokens.stop[rows]
    first_tokens, chunk_of = positions[firsts], rows[firsts]  # chunk by chunk, in first-occurrence order
    terms = term[first_tokens]
    counts = _counts(
        chunk_of,
        local[first_tokens],
        sorted_at[first_tokens],
        rows[lasts],
        local,
        sorted_at,
        positions[lasts],
        n_chunks,
        width,
    )
    appearing, renumbered = _numbered_by_appearance(terms, n_terms)
    lowered = tokens.lowered
    spelled = order[np.flatnonzero(begins)[appearing]]  # each term's first token
    words = b" ".join(
        [
            lowered[a:b]
            for a, b in zip(tokens.starts[spelled].tolist(), tokens.ends[spelled].tolist(), strict=True)
        ]
    )
    return (
        TermCounts(
            words,
            np.bincount(chunk_of, minlength=n_chunks).astype(np.int64),
            renumbered[terms],
            counts.astype(np.int32),
        ),
        tokens.hashes[spelled],
        np.zeros(spelled.shape[0], dtype=np.int64) if files is None else files[spelled],
    )


def _neighbours(order: np.ndarray, begins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each token's term's previous occurrence (-1 for none) and next one (n for none), from the
    tokens grouped by term (`order`, each group ascending, split where `begins`)."""
    n = order.shape[0]
    previous_sorted = np.empty(n, dtype=np.int64)
    previous_sorted[0] = -1
    previous_sorted[1:] = order[:-1]
    previous_sorted[begins] = -1
    following_sorted = np.empty(n, dtype=np.int64)
    following_sorted[-1] = n
    following_sorted[:-1] = order[1:]
    following_sorted[:-1][begins[1:]] = n
    previous, following = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    previous[order] = previous_sorted
    following[order] = following_sorted
    return previous, following


def _counts(
    chunk_of: np.ndarray,
    terms: np.ndarray,
    first_at: np.ndarray,
    last_chunk: np.ndarray,
    term: np.ndarray,
    sorted_at: np.ndarray,
    last_tokens: np.ndarray,
    n_chunks: int,
    n_terms: int,
) -> np.ndarray:
    """For each (chunk, term) first occurrence, how often the term occurs in the chunk: its last
    occurrence's place among the term's occurrences minus the first's, plus one. Firsts and lasts
    pair up by (chunk, term) through a dense table, a block of chunks at a time."""
    counts = np.empty(terms.shape[0], dtype=np.int64)
    block = max(1, min(n_chunks, _TABLE_ENTRIES // n_terms))
    edges = np.arange(0, n_chunks + block, block)
    first_edges, last_edges = np.searchsorted(chunk_of, edges), np.searchsorted(last_chunk, edges)
    last_terms, last_at = term[last_tokens], (sorted_at[last_tokens] + 1).astype(np.int32)
    # One table for every block, of int32 (a batch has fewer than 2**31 tokens): fresh memory
    # for each block would cost a page fault per page written.
    whole = np.empty(block * n_terms, dtype=np.int32)
    for lo, f0, f1, l0, l1 in zip(
        edges.tolist(),
        first_edges.tolist(),
        first_edges[1:].tolist(),
        last_edges.tolist(),
        last_edges[1:].tolist(),
        strict=False,
    ):
        table = whole[: min(block, n_chunks - lo) * n_terms]
        table[(last_chunk[l0:l1] - lo) * n_terms + last_terms[l0:l1]] = last_at[l0:l1]
        counts[f0:f1] = table[(chunk_of[f0:f1] - lo) * n_terms + terms[f0:f1]] - first_at[f0:f1]
    return counts


def _numbered_by_appearance(terms: np.ndarray, n_terms: int) -> tuple[np.ndarray, np.ndarray]:
    """The terms in the order they first appear in `terms`, and each term's number in that order."""
    entries = terms.shape[0]
    first_entry = np.full(n_terms, entries, dtype=np.int64)
    np.minimum.at(first_entry, terms, np.arange(entries))
    is_first = np.zeros(entries + 1, dtype=bool)
    is_first[first_entry] = True
    appearing = terms[is_first[:entries]]
    renumbered = np.zeros(n_terms, dtype=np.int32)
    renumbered[appearing] = np.arange(appearing.shape[0], dtype=np.int32)
    return appearing, renumbered


def _grouped(high: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """Token positions sorted by `high` (whose low `shift` bits are zero), ascending within equal
    values, and whether each begins a new value."""
    keys = high.astype(np.uint64) | np.arange(high.shape[0], dtype=np.uint64)
    keys.sort()
    order = (keys & np.uint64((1 << shift) - 1)).astype(np.int64)
    keys >>= np.uint64(shift)
    begins = np.empty(keys.shape[0], dtype=bool)
    begins[0] = True
    np.not_equal(keys[1:], keys[:-1], out=begins[1:])
    return order, begins


def _one_string_each(tokens: ChunkTokens, order: np.ndarray, begins: np.ndarray) -> bool:
    """Whether the tokens of every group (`order` split where `begins`) are the same bytes: each
    is compared with the one before it in its group — lengths, then 8 bytes at a time."""
    lengths = (tokens.ends - tokens.starts)[order]
    if not ((lengths[1:] == lengths[:-1]) | begins[1:]).all():
        return False
    lowered = tokens.lowered
    padded = lowered + bytes(_WORD)
    words = np.ndarray(
        (len(lowered) + 1,), dtype="<u8", buffer=padded, strides=(1,)
    )  # 8 bytes from each offset
    offsets = tokens.starts[order]
    for step in range(0, _WORD_COMPARED, _WORD):
        if step:  # a group's tokens have one length, so this keeps whole groups
            longer = lengths > step
            offsets, lengths, begins = offsets[longer], lengths[longer], begins[longer]
        word = words[offsets + step] & _LOW_BYTES[np.minimum(lengths - step, _WORD)]
        if not ((word[1:] == word[:-1]) | begins[1:]).all():
            return False
    longer = np.flatnonzero(lengths > _WORD_COMPARED)
    return all(
        lowered[a : a + size] == lowered[b : b + size]
        for a, b, size, begun in zip(
            offsets[longer].tolist(),
            offsets[longer - 1].tolist(),
            lengths[longer].tolist(),
            begins[longer].tolist(),
            strict=True,
        )
        if not begun
    )


def _string_ids(tokens: ChunkTokens) -> np.ndarray:
    """Each token's term numbered by its string (in first-occurrence order): exact whatever the hashes."""
    text = tokens.lowered.decode("latin-1")
    words = _LOWERED_TOKEN.findall(text)
    own = zip(
        tokens.starts[tokens.file_tokens :].tolist(), tokens.ends[tokens.file_tokens :].tolist(), strict=True
    )
    words += [text[start:end] for start, end in own]  # the tokens of chunks tokenized by themselves
    number = {word: i for i, word in enumerate(dict.fromkeys(words))}
    return np.fromiter(map(number.__getitem__, words), dtype=np.int64, count=len(words))


@dataclass(frozen=True)
class Postings:
    """A corpus's term-major postings, as `BM25.from_postings` takes them: term `t` (numbered by
    `term_id`) occurs in documents `docs[indptr[t]:indptr[t + 1]]` (ascending) with frequencies
    `tfs` at the same positions; `doc_len` is each document's number of tokens."""

    term_id: Mapping[str, int]  # numbered 0, 1, ... in iteration order
    indptr: np.ndarray  # int64
    docs: np.ndarray  # int32 (a corpus has fewer than 2**31 chunks)
    tfs: np.ndarray  # int32 as counted (narrower as a kept corpus's record keeps them: corpus_record.py)
    doc_len: np.ndarray  # int64


def corpus_postings(parts: Sequence[TermCounts], block: int = _BLOCK_ENTRIES) -> Postings:
    """The postings of the chunks of `parts` (one per file, in index order), one after the other.

    The entries are placed straight into the term-major arrays, `block` entries or so (whole
    files) at a time: each block is sorted by (term, entry), and a term's entries go to the next
    free places of its range (`indptr`), so each term's documents stay ascending across blocks.
    Sorting all the corpus's entries at once would hold a few int64 arrays of all of them besides
    the result (several times the postings themselves, the peak of a cold build)."""
    term_id: dict[str, int] = {}
    ids = [
        np.array([term_id.setdefault(word, len(term_id)) for word in p.vocabulary], dtype=np.int32)
        for p in parts  # numbered in order of first appearance
    ]
    vocabulary = vocabulary_of(term_id)  # the strings let go before the postings are filled
    del term_id
    n_terms = len(vocabulary)
    blocks = list(_blocks(parts, block))
    per_term = np.zeros(n_terms, dtype=np.int64)
    for lo, hi in blocks:
        _, found, sizes = _block_terms(parts[lo:hi], ids[lo:hi])
        per_term[found] += sizes
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(per_term, out=indptr[1:])
    n_entries = int(indptr[-1])
    n_docs = sum(p.lengths.shape[0] for p in parts)
    docs, tfs = np.empty(n_entries, dtype=np.int32), np.empty(n_entries, dtype=np.int32)
    doc_len = np.zeros(n_docs, dtype=np.int64)
    free = indptr[:-1].copy()  # each term's next place
    first_doc = 0
    for lo, hi in blocks:
        by_term, found, sizes = _block_terms(parts[lo:hi], ids[lo:hi])
        lengths = np.concatenate([p.lengths for p in parts[lo:hi]])
        counts = np.concatenate([p.counts for p in parts[lo:hi]])
        block_docs = np.repeat(np.arange(first_doc, first_doc + lengths.shape[0], dtype=np.int32), lengths)
        # the k-th entry of a term in this block goes k places after the term's next free one
        group_start = np.repeat(np.cumsum(sizes) - sizes, sizes)
        places = np.repeat(free[found], sizes) + (np.arange(by_term.shape[0]) - group_start)
        docs[places] = block_docs[by_term]
        tfs[places] = counts[by_term]
        free[found] += sizes
        doc_len[first_doc : first_doc + lengths.shape[0]] = np.bincount(
            block_docs - first_doc, weights=counts, minlength=lengths.shape[0]
        ).astype(np.int64)  # exact: small integers
        first_doc += lengths.shape[0]
    return Postings(vocabulary, indptr, docs, tfs, doc_len)


def _blocks(parts: Sequence[TermCounts], block: int) -> Iterator[tuple[int, int]]:
    """`parts` cut into runs of consecutive files holding about `block` entries each."""
    lo, size = 0, 0
    for i, p in enumerate(parts):
        size += p.terms.shape[0]
        if size >= block:
            yield lo, i + 1
            lo, size = i + 1, 0
    if lo < len(parts):
        yield lo, len(parts)


def _block_terms(
    parts: Sequence[TermCounts], ids: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the entries of consecutive files' term counts: their positions sorted by (corpus term
    number, position), the terms found, ascending, and each one's number of entries."""
    terms = np.concatenate([i[p.terms] for p, i in zip(parts, ids, strict=True)]).astype(np.int64)
    if terms.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    # numpy sorts integers far faster than it argsorts: (term, position) keys, below 2**62
    shift = terms.shape[0].bit_length()
    keys = terms << shift | np.arange(terms.shape[0], dtype=np.int64)
    keys.sort()
    by_term = keys & ((1 << shift) - 1)
    keys >>= shift
    begins = np.empty(keys.shape[0], dtype=bool)
    begins[0] = True
    np.not_equal(keys[1:], keys[:-1], out=begins[1:])
    starts = np.flatnonzero(begins)
    return by_term, keys[starts], np.diff(starts, append=keys.shape[0])
