"""Hash embeddings of many chunks at once, bit-identical to `embed.hash_embed` on each chunk.

`hash_embed` tokenizes a chunk, adds ±1 per token to a bucket and divides by the norm. An
index needs it for every chunk, and chunks overlap (a class chunk holds its methods), so this
module tokenizes each *file* once instead: a chunk's tokens are the file's tokens that lie
inside its byte range, because a token is a maximal run of word bytes and a chunk boundary
that is not inside such a run cannot split one. A chunk whose boundary does fall inside a run
(possible after error recovery) is tokenized on its own. Tokens are found and hashed with
numpy over the file's bytes, never as Python strings: the ASCII-lowercased UTF-8 bytes have
the same runs of `[a-z0-9_]` as the text has tokens (every byte of a non-ASCII character is
>= 0x80, never a word byte), and the tokenizer lowercases ASCII only, as `bytes.lower` does.

What is kept per chunk are the integer bucket counts (sparse: bucket, count), which is also
what the index cache stores. Indexing sums them from the chunks' term counts, which it takes
anyway (`summed_bucket_counts`, called by retrieval/ranking/postings.py); `bucket_counts` counts
them token by token, and the tests hold the two equal. `HashEmbeddings` turns them into the
unit vectors. The counts are small integers, so the sum of their squares is exact in any order
(below 2**53; a chunk has at most one token per two bytes and files are at most MAX_FILE_SIZE
bytes), its square root is the one IEEE square root, and each component is divided by it as
`hash_embed` does.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from cce_relevance.reference import EMBED_DIM
from cce_relevance.retrieval.embedding.embed import FNV_OFFSET, FNV_PRIME, fnv1a64

# bytes.translate table: each word byte to 1, every other byte to 0 (read as numpy bools)
_WORD_BYTES = bytes(
    c in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_" for c in range(256)
)
_SIGNED = 2 * EMBED_DIM  # a token's code: its bucket, plus EMBED_DIM when its sign is negative
_ROWS_PER_BLOCK = 2048  # chunks counted per bincount, bounding its (rows × 512) scratch array
_EXACT_SOURCE_LIMIT = 1 << 27  # below this many bytes a chunk's sum of squares stays under 2**53
_VECTOR_HASH_BYTES = 32  # tokens up to this long are hashed with numpy, longer ones one by one
_FNV_OFFSET = np.uint64(FNV_OFFSET)
_FNV_PRIME = np.uint64(FNV_PRIME)


class _LongTokenHashes(dict[bytes, int]):
    """token → FNV-1a-64 for the rare long tokens, hashed on first sight and kept for the process."""

    def __missing__(self, token: bytes) -> int:
        h = fnv1a64(token)
        self[token] = h
        return h


_LONG_HASHES = _LongTokenHashes()


@dataclass(frozen=True)
class BucketCounts:
    """Each chunk's non-zero bucket counts: `lengths[i]` entries of `buckets`/`counts` per chunk,
    chunks in order, buckets ascending within a chunk."""

    lengths: np.ndarray  # int64, one per chunk
    buckets: np.ndarray  # uint8
    counts: np.ndarray  # int32


@dataclass(frozen=True)
class ChunkTokens:
    """Where the tokens of a file's chunks are: token k is `lowered[starts[k]:ends[k]]`, its
    FNV-1a-64 hash is `hashes[k]`, and chunk i's tokens are tokens `first[i]:stop[i]`. The file's
    own tokens come first (`file_tokens` of them, in order), then those of the chunks tokenized
    by themselves. Several files' chunks (`files_tokens`) are those of one text, the files
    joined by newlines, where `files[k]` is the file token k is in."""

    lowered: bytes
    starts: np.ndarray
    ends: np.ndarray
    first: np.ndarray
    stop: np.ndarray
    file_tokens: int
    hashes: np.ndarray  # uint64
    files: np.ndarray | None = None  # int64: each token's file, when these are several files' chunks


def chunk_counts(source: bytes, spans: Sequence[tuple[int, int]]) -> BucketCounts:
    """The bucket counts of the chunks at byte ranges `spans` of `source`."""
    return bucket_counts(chunk_tokens(source, spans))


def bucket_counts(tokens: ChunkTokens) -> BucketCounts:
    """The bucket counts of the chunks whose tokens are `tokens`."""
    h = tokens.hashes
    codes = (h % np.uint64(EMBED_DIM) + (h >> np.uint64(63)) * np.uint64(EMBED_DIM)).astype(np.int64)
    return _count(codes, tokens.first, tokens.stop)


def summed_bucket_counts(
    lengths: np.ndarray, terms: np.ndarray, counts: np.ndarray, term_hashes: np.ndarray
) -> BucketCounts:
    """The bucket counts of chunks given by their distinct terms: `lengths[i]` (term, count)
    entries per chunk, and `term_hashes[t]` the FNV-1a-64 hash of term t. Each term's count goes
    with its hash's sign into its hash's bucket: the very integers `bucket_counts` adds up one
    token at a time (exactly, in floats: they stay far below 2**53), from a chunk's distinct
    terms — a third of its tokens on real code."""
    n = lengths.shape[0]
    buckets = (term_hashes % np.uint64(EMBED_DIM)).astype(np.int64)[terms]
    signed = np.where((term_hashes >> np.uint64(63)).astype(bool)[terms], -counts, counts).astype(np.float64)
    cells = np.repeat(np.arange(n), lengths) * EMBED_DIM + buckets  # row-major: row * EMBED_DIM + bucket
    ends = np.cumsum(lengths)
    parts = []
    for lo in range(0, n, _ROWS_PER_BLOCK):
        hi = min(lo + _ROWS_PER_BLOCK, n)
        first, stop = int(ends[lo] - lengths[lo]), int(ends[hi - 1])
        dense = np.bincount(
            cells[first:stop] - lo * EMBED_DIM, weights=signed[first:stop], minlength=(hi - lo) * EMBED_DIM
        )
        parts.append(_nonzero(dense, hi - lo))
    return concatenated_counts(parts)


def chunk_tokens(source: bytes, spans: Sequence[tuple[int, int]]) -> ChunkTokens:
    """The tokens of the chunks at byte ranges `spans` of `source`, found once for the file."""
    return files_tokens([source], [spans])


def files_tokens(sources: Sequence[bytes], spans: Sequence[Sequence[tuple[int, int]]]) -> ChunkTokens:
    """The tokens of the chunks of several files at once (file f's chunks at byte ranges
    `spans[f]` of `sources[f]`, the files' chunks one after the other), found and hashed in one
    pass over the files' bytes joined by a newline: a byte that is no word byte, so no token
    runs from one file into the next and every file's tokens are the ones it has alone. With
    more than one file, `files` says which file each token is in."""
    for source in sources:
        if len(source) >= _EXACT_SOURCE_LIMIT:
            raise ValueError(f"a {len(source)}-byte source is past the exact hash-embedding bound")
    lowered = (
        sources[0] if len(sources) == 1 else b"\n".join(sources)
    ).lower()  # ASCII only, like the tokenizer
    word, starts, ends = _runs(lowered)
    file_tokens = starts.shape[0]
    offsets = np.zeros(len(sources), dtype=np.int64)
    if len(sources) > 1:
        np.cumsum(np.array([len(source) + 1 for source in sources[:-1]], dtype=np.int64), out=offsets[1:])
    bounds = np.array(
        [bound for file_spans in spans for span in file_spans for bound in span], dtype=np.int64
    )
    bounds += np.repeat(offsets, [2 * len(file_spans) for file_spans in spans])
    span_starts, span_ends = bounds[0::2], bounds[1::2]
    first = np.searchsorted(starts, span_starts, "left")
    stop = np.searchsorted(ends, span_ends, "right")
    # A boundary inside a run of word bytes cuts a token: tokenize that chunk by itself.
    cut = (word[span_starts] & word[span_starts + 1]) | (word[span_ends] & word[span_ends + 1])
    starts_parts, ends_parts = [starts], [ends]
    offset = file_tokens
    for i in np.flatnonzero(cut):
        _, piece_starts, piece_ends = _runs(lowered[span_starts[i] : span_ends[i]])
        first[i], stop[i] = offset, offset + piece_starts.shape[0]
        offset += piece_starts.shape[0]
        starts_parts.append(piece_starts + span_starts[i])
        ends_parts.append(piece_ends + span_starts[i])
    if len(starts_parts) > 1:
        starts, ends = np.concatenate(starts_parts), np.concatenate(ends_parts)
    files = None if len(sources) == 1 else np.searchsorted(offsets, starts, "right") - 1
    return ChunkTokens(
        lowered,
        starts,
        ends,
        first,
        np.maximum(stop, first),
        file_tokens,
        _hashes(lowered, starts, ends),
        files,
    )


def token_positions(first: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For chunks whose tokens are `first[i]:stop[i]`: each chunk token's chunk (0, 1, ... within
    these chunks) and its token position, chunk by chunk in order."""
    sizes = stop - first
    rows = np.repeat(np.arange(first.shape[0]), sizes)
    return rows, np.arange(rows.shape[0]) + np.repeat(first - (np.cumsum(sizes) - sizes), sizes)


def _runs(lowered: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Word-byte flags padded by one at each end (`word[p + 1]` is byte p), and the start and
    end offsets of every token (maximal run of word bytes), in order."""
    word = np.zeros(len(lowered) + 2, dtype=bool)
    word[1:-1] = np.frombuffer(lowered.translate(_WORD_BYTES), dtype=bool)  # C, not a numpy gather
    edges = np.flatnonzero(word[1:] != word[:-1])  # alternately where a token starts and where it ends
    return word, edges[0::2], edges[1::2]


def _hashes(lowered: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Each token's FNV-1a-64 hash, computed for all tokens at once: byte j of every token longer
    than j is xor-ed in and multiplied (uint64 arithmetic wraps like the spec's)."""
    data = np.frombuffer(lowered, dtype=np.uint8)
    # Longest first, so the tokens still going at byte j are a prefix; lengths past the limit all
    # sort alike. Sorting (shortness, position) keys is a stable sort by length, and numpy sorts
    # plain integers far faster than it argsorts.
    keys = (_VECTOR_HASH_BYTES + 1 - np.minimum(ends - starts, _VECTOR_HASH_BYTES + 1)) << 32
    keys |= np.arange(keys.shape[0])
    keys.sort()
    order = keys & 0xFFFF_FFFF
    by_length = _VECTOR_HASH_BYTES + 1 - (keys >> 32)
    first_bytes = starts[order]
    n_long = int(np.searchsorted(-by_length, -_VECTOR_HASH_BYTES, "left"))  # longer than the limit
    going = np.searchsorted(-by_length, -np.arange(_VECTOR_HASH_BYTES), "left")  # longer than j
    hashes = np.full(order.shape[0], _FNV_OFFSET, dtype=np.uint64)
    for j in range(min(_VECTOR_HASH_BYTES, int(by_length[0]) if order.shape[0] else 0)):
        h = hashes[n_long : going[j]]
        h ^= data[first_bytes[n_long : going[j]] + j]
        h *= _FNV_PRIME
    in_place = np.empty(order.shape[0], dtype=np.uint64)
    in_place[order] = hashes
    for k in order[:n_long].tolist():
        in_place[k] = _LONG_HASHES[lowered[starts[k] : ends[k]]]
    return in_place


def _count(codes: np.ndarray, first: np.ndarray, stop: np.ndarray) -> BucketCounts:
    """Bucket counts of the chunks whose tokens are `codes[first[i]:stop[i]]`."""
    n = first.shape[0]
    parts = []
    for lo in range(0, n, _ROWS_PER_BLOCK):
        hi = min(lo + _ROWS_PER_BLOCK, n)
        rows, positions = token_positions(first[lo:hi], stop[lo:hi])
        signed = np.bincount(rows * _SIGNED + codes[positions], minlength=(hi - lo) * _SIGNED)
        signed = signed.reshape(hi - lo, 2, EMBED_DIM)
        parts.append(_nonzero((signed[:, 0, :] - signed[:, 1, :]).reshape(-1), hi - lo))
    return concatenated_counts(parts)


def _nonzero(dense: np.ndarray, rows: int) -> BucketCounts:
    """The non-zero entries of `rows` chunks' bucket counts, laid out row-major (row * EMBED_DIM + bucket)."""
    nonzero = np.flatnonzero(dense != 0)  # the same entries; numpy finds them far faster in bools
    return BucketCounts(
        np.bincount(nonzero // EMBED_DIM, minlength=rows).astype(np.int64),
        (nonzero % EMBED_DIM).astype(np.uint8),
        dense[nonzero].astype(np.int32),
    )


def concatenated_counts(parts: Sequence[BucketCounts]) -> BucketCounts:
    """The bucket counts of `parts` (files, in order) as one corpus's; one part is itself (its
    arrays are not copied: callers only read them)."""
    if not parts:
        return BucketCounts(np.zeros(0, np.int64), np.zeros(0, np.uint8), np.zeros(0, np.int32))
    if len(parts) == 1:
        return parts[0]
    return BucketCounts(
        *(np.concatenate([getattr(p, name) for p in parts]) for name in ("lengths", "buckets", "counts"))
    )


_ROWS_PER_PASS = 1 << 12  # rows whose entries one pass works on: ~100k entries, under 1 MB an array


@dataclass(frozen=True)
class HashEmbeddings:
    """The hash embeddings of a corpus's chunks, kept sparse: row r's entries are
    `offsets[r]:offsets[r + 1]` of `buckets` (its components, ascending) and `counts` (its bucket
    counts); its values are those counts divided by `norms[r]`, the same doubles `hash_embed`
    makes. Only the integers are kept: each value is the one IEEE division of its count by its
    row's norm, so a dense matrix, its float32 copy or a few rows of it are made exactly when
    asked for — and a corpus holds neither its float64 matrix (chunks × 256 doubles) nor its
    values (retrieval/ranking/cosine.py). The counts are those the corpus's record holds (a view of
    it when it was read from the cache)."""

    buckets: np.ndarray  # uint8 (EMBED_DIM components)
    offsets: np.ndarray  # int64, one more than rows
    counts: np.ndarray  # int32 (or narrower, from a kept corpus's record): what each value is divided from
    norms: np.ndarray  # float64 per row: what its counts are divided by (0.0 for a row without any)

    @classmethod
    def of(cls, parts: Sequence[BucketCounts]) -> HashEmbeddings:
        joined = concatenated_counts(parts)
        lengths, buckets = joined.lengths, joined.buckets.astype(np.uint8, copy=False)
        n = lengths.shape[0]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        norms = np.zeros(n, dtype=np.float64)
        for lo, hi, rows in _row_passes(offsets):
            squares = joined.counts[offsets[lo] : offsets[hi]].astype(np.float64)
            squares *= squares
            norms[lo:hi] = np.sqrt(np.bincount(rows - lo, weights=squares, minlength=hi - lo))
        return cls(buckets, offsets, joined.counts, norms)

    @property
    def n_rows(self) -> int:
        return self.offsets.shape[0] - 1

    def bucket_counts(self) -> BucketCounts:
        """The bucket counts these embeddings were made of, as `concatenated_counts` joined
        them: the same arrays, not a copy (a corpus record is written from them)."""
        return BucketCounts(np.diff(self.offsets), self.buckets, self.counts)

    def dense(self, dtype: type[np.floating]) -> np.ndarray:
        """Every row, column-major, in `dtype` (float32: each double rounded to nearest)."""
        n = self.n_rows
        matrix = np.zeros((n, EMBED_DIM), dtype=dtype, order="F")
        by_column = matrix.T.reshape(-1)  # a view: the transpose of a column-major matrix is row-major
        for lo, hi, rows in _row_passes(self.offsets):
            values = self.counts[self.offsets[lo] : self.offsets[hi]].astype(np.float64)
            np.divide(values, self.norms[rows], out=values)
            where = self.buckets[self.offsets[lo] : self.offsets[hi]].astype(np.int64)
            where *= n
            where += rows
            by_column[where] = values
        return matrix

    def count_matrix(self) -> CountMatrix:
        """Every row's bucket counts, column-major, in the narrowest of int8 and int16 that leaves
        the fewest bytes once the rows holding a count it cannot (`CountMatrix`) are kept apart."""
        n = self.n_rows
        outside_of: dict[type[np.signedinteger], list[np.ndarray]] = {np.int8: [], np.int16: []}
        for lo, hi, rows in _row_passes(self.offsets):
            counts = self.counts[self.offsets[lo] : self.offsets[hi]]
            for dtype, found in outside_of.items():
                limits = np.iinfo(dtype)
                found.append(np.unique(rows[(counts < limits.min) | (counts > limits.max)]))
        sizes = {}
        for dtype, found in outside_of.items():
            rows = np.concatenate(found) if found else np.zeros(0, np.int64)
            sizes[dtype] = (n * EMBED_DIM * np.iinfo(dtype).bits // 8 + rows.shape[0] * EMBED_DIM * 4, rows)
        dtype = min(sizes, key=lambda t: sizes[t][0])  # int8 first on a tie
        outside = sizes[dtype][1]
        matrix = np.zeros((n, EMBED_DIM), dtype=dtype, order="F")
        by_column = matrix.T.reshape(-1)  # a view, as in `dense`
        limits = np.iinfo(dtype)
        for lo, hi, rows in _row_passes(self.offsets):
            counts = self.counts[self.offsets[lo] : self.offsets[hi]]
            where = self.buckets[self.offsets[lo] : self.offsets[hi]].astype(np.int64)
            where *= n
            where += rows
            fits = (counts >= limits.min) & (counts <= limits.max)
            by_column[where[fits]] = counts[fits]
        if outside.shape[0]:
            matrix[outside, :] = 0  # those rows' counts are kept whole, below
        wide = np.zeros((outside.shape[0], EMBED_DIM), dtype=np.int32, order="F")
        for k, row in enumerate(outside.tolist()):
            a, b = int(self.offsets[row]), int(self.offsets[row + 1])
            wide[k, self.buckets[a:b]] = self.counts[a:b]
        return CountMatrix(matrix, outside, wide)

    def columns(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """The float64 matrix's entries at `rows` (positions, in that order) and `columns`
        (ascending components), as a small dense array: what exact cosines of those rows read."""
        where_column = np.full(EMBED_DIM, -1, dtype=np.int64)
        where_column[columns] = np.arange(columns.shape[0])
        starts = self.offsets[rows]
        lengths = self.offsets[rows + 1] - starts
        ends = np.cumsum(lengths)
        entries = np.arange(int(ends[-1]) if ends.shape[0] else 0) + np.repeat(
            starts - (ends - lengths), lengths
        )
        column = where_column[self.buckets[entries]]
        wanted = np.flatnonzero(column >= 0)
        out = np.zeros((rows.shape[0], columns.shape[0]), dtype=np.float64)
        picked = entries[wanted]
        values = self.counts[picked].astype(np.float64)
        values /= np.repeat(self.norms[rows], lengths)[wanted]
        out[np.repeat(np.arange(rows.shape[0]), lengths)[wanted], column[wanted]] = values
        return out


@dataclass(frozen=True)
class CountMatrix:
    """Hash embeddings' bucket counts as a column-major matrix of small integers: row r's counts
    are `narrow[r]`, except for the rows listed in `wide_rows` (ascending), some count of which the
    narrow type cannot hold: theirs are `wide[k]` (int32) for `wide_rows[k]`, and zeros in `narrow`."""

    narrow: np.ndarray
    wide_rows: np.ndarray  # int64
    wide: np.ndarray

    def entries(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """The counts at `rows` (positions, any order) and `columns`, as int64."""
        counts = self.narrow[rows[:, None], columns].astype(np.int64)
        if self.wide_rows.shape[0]:
            at = np.searchsorted(self.wide_rows, rows)
            held = np.flatnonzero(self.wide_rows[np.minimum(at, self.wide_rows.shape[0] - 1)] == rows)
            counts[held] = self.wide[at[held][:, None], columns]
        return counts


def _row_passes(offsets: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
    """(lo, hi, the row of each entry of rows lo:hi) for consecutive blocks of rows: what works on
    every entry does it a block at a time, so its scratch arrays stay a few megabytes."""
    n = offsets.shape[0] - 1
    for lo in range(0, n, _ROWS_PER_PASS):
        hi = min(lo + _ROWS_PER_PASS, n)
        yield lo, hi, np.repeat(np.arange(lo, hi, dtype=np.int64), np.diff(offsets[lo : hi + 1]))
