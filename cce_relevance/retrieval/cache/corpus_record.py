"""A whole corpus's assembled index as flat arrays, and the record it is kept in between runs.

Files' records (retrieval/file_indexing/file_record.py) make a second run index nothing, but assembling the
index from them is still work proportional to the corpus: a JSON header and a dozen small
arrays decoded per file, BM25's postings merged by one global sort, chunk-id ranks sorted. When
not one file changed — re-running fixtures against the same tree, the base side of the Action
run again — all of that gives the same result as last time, so the result itself is kept:
`CorpusArrays`, the chunks of every file as flat arrays, the bucket counts behind the embedding
matrix, the merged postings, the chunk-id ranks and the files' weighted lines, each file's
record key beside them. When a few files changed, the last corpus's arrays are spliced with the
changed files' records instead (retrieval/cache/corpus_splice.py).

The record is stored under a key that hashes the keys of all the files' records in walk order
(retrieval/cache/index_cache.py), so it stands for exactly those paths with exactly those bytes,
indexed exactly that way. As in a file's record, a chunk's content is a character range of its
file's walked (or, when redaction changed it, redacted) text, and the walked texts are supplied
again when the chunks are made (`materialize`; a content is sliced when first read). Decoding
checks every length and range and raises `ValueError` on anything inconsistent; the caller then
assembles the index from the files' records instead. The arrays of a decoded record are views
of its bytes, which the cache maps from its file: a warm run copies none of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cce_relevance.memory_pages import read_in_blocks, release_array
from cce_relevance.retrieval.chunking.line_weights import (
    EXTRA_DTYPE,
    CorpusLineWeights,
    check_slots,
    unique_paths,
)
from cce_relevance.retrieval.corpus.walk import FileText
from cce_relevance.retrieval.embedding.buckets import BucketCounts, concatenated_counts
from cce_relevance.retrieval.file_indexing.chunk_columns import ChunkColumns
from cce_relevance.retrieval.file_indexing.file import IndexedFile
from cce_relevance.retrieval.file_indexing.file_record import (
    FIELDS,
    ID_BYTES,
    ID_LENGTH,
    NOT_A_SLICE,
    RUN_LENGTH,
    RUN_START,
    WIDTHS,
    RecordReader,
    chunk_id_bytes,
    chunk_rows,
    narrowest,
    raw_ids,
    type_triple,
)
from cce_relevance.retrieval.ranking.postings import Postings
from cce_relevance.retrieval.ranking.vocabulary import RecordVocabulary, vocabulary_of

_MAGIC = b"CCEj"  # c: the first layout; d: arrays aligned, widest first, postings as int32; e: weighted
# lines; f: BM25's term numbers in the terms' order; i (g and h are files' records'): the counts in
# their narrowest width, chunk ids as raw bytes; j: the rows too
_ALIGN = 8
KEY_LENGTH = 32  # a file record's key: SHA-256


@dataclass(frozen=True)
class CorpusArrays:
    """A corpus as assembled, file by file in walk order: `keys[i]` is file i's record key and
    `per_file[i]` its number of chunks; `tokens`, `imports` and `texts` (its redacted text, only
    where redaction changed it) are per file; `rows` (FIELDS per chunk: start line, end line,
    index into `types`, character range in the file's text, token count, a slot of the file's
    weighted lines), `ids` (ID_LENGTH ASCII bytes each), `contents` (a chunk's content where it
    is not a range of the text), the bucket counts and the chunk-id ranks are per chunk;
    `postings` are BM25's; `line_extras` are the weighted lines' extra weights, slot by slot."""

    keys: list[bytes]
    per_file: np.ndarray
    tokens: list[int]
    imports: dict[int, list[str]]
    texts: dict[int, str]
    types: list[tuple[str, str, str]]
    rows: np.ndarray
    ids: bytes
    contents: dict[int, str]
    counts: BucketCounts
    postings: Postings
    id_rank: np.ndarray
    line_extras: np.ndarray

    def lines(self, paths: Sequence[str]) -> CorpusLineWeights:
        """The files' weighted lines, by path (file i's is `paths[i]`)."""
        first = np.concatenate(([0], np.cumsum(self.per_file))).tolist()
        files = unique_paths((path, (first[i], first[i + 1])) for i, path in enumerate(paths))
        starts, lengths = (np.ascontiguousarray(self.rows[:, k]) for k in (RUN_START, RUN_LENGTH))
        return CorpusLineWeights(files, starts, lengths, self.line_extras)


def split_ids(ids: bytes) -> list[str]:
    """Chunk ids kept as ID_LENGTH ASCII bytes each, as strings."""
    text = ids.decode("ascii")
    return [text[i : i + ID_LENGTH] for i in range(0, len(text), ID_LENGTH)]


@dataclass(frozen=True)
class AssembledCorpus:
    """What `build_index` assembles (embeddings not yet attached), made from `CorpusArrays`."""

    chunks: ChunkColumns
    file_imports: dict[str, list[str]]
    file_token_estimates: dict[str, int]  # each file's token weight as estimated (§token-estimate)
    counts: BucketCounts


def arrays_from_entries(
    keys: Sequence[bytes],
    files: Sequence[tuple[str, str]],
    entries: Sequence[IndexedFile],
    postings: Postings,
    id_rank: np.ndarray,
    counts: BucketCounts | None = None,
) -> CorpusArrays:
    """The arrays of a corpus assembled from every file's record (hash embedder); `counts` are
    the records' bucket counts joined, when the caller holds them already (`HashEmbeddings`)."""
    types: dict[tuple[str, str, str], int] = {}
    contents: dict[int, str] = {}
    rows, first = np.empty((sum(len(e.chunks) for e in entries), FIELDS), np.int64), 0
    for entry in entries:
        rows[first : first + len(entry.chunks)] = chunk_rows(entry, types, first, contents)
        first += len(entry.chunks)
    if counts is None:
        parts = [e.counts for e in entries if e.counts is not None]
        if len(parts) != len(entries):
            raise ValueError("a file's record has no bucket counts")
        counts = concatenated_counts(parts)
    if counts.lengths.shape[0] != first:
        raise ValueError("the bucket counts are not one row per chunk")
    return CorpusArrays(
        list(keys),
        np.array([len(e.chunks) for e in entries], dtype=np.int64),
        [e.tokens for e in entries],
        {i: e.imports for i, e in enumerate(entries) if e.imports},
        {
            i: e.text
            for i, (e, (_, walked)) in enumerate(zip(entries, files, strict=True))
            if e.text != walked
        },
        list(types),
        rows,
        b"".join(chunk_id_bytes(e) for e in entries),
        contents,
        counts,
        postings,
        id_rank,
        np.concatenate([e.lines.extras for e in entries]) if entries else np.zeros(0, EXTRA_DTYPE),
    )


def corpus_parts(arrays: CorpusArrays) -> list[bytes | memoryview]:
    """The record of `arrays` as consecutive pieces (`corpus_sections` without their names)."""
    return [part for _, part in corpus_sections(arrays)]


def corpus_sections(arrays: CorpusArrays) -> list[tuple[str, bytes | memoryview]]:
    """The record of `arrays` as consecutive named pieces: a header, then every array's bytes in place
    (no copy of an array already in the record's little-endian type), so that a thread can hash
    and write them without the GIL (retrieval/cache/index_cache.py `put_corpus`).

    The header is padded with spaces so that the arrays start 8-byte aligned, and the arrays
    come widest type first (`_in_record_order`): read back from a mapped file (`decode_corpus`)
    every array is an aligned view, not a copy. The bucket counts, their lengths and BM25's
    frequencies are kept in the narrowest integer width that holds them (`narrowest`, named in
    the header's "widths"; 2 bytes or 1 for almost any corpus instead of 4 and 8), and so are
    the chunks' rows (4 bytes a number: character ranges pass 65,535 in large files), the chunk ids
    as raw bytes. The long strings — BM25's vocabulary, the redacted texts — follow as UTF-8,
    not as JSON strings, which are slow to unescape."""
    p = arrays.postings
    terms = vocabulary_of(p.term_id)  # a cold build's postings are numbered so already
    vocabulary, by_word = terms.utf8, terms.by_word
    texts = {i: text.encode("utf-8", "surrogatepass") for i, text in sorted(arrays.texts.items())}
    narrowed = {
        "rows": arrays.rows,
        "lengths": arrays.counts.lengths,
        "counts": arrays.counts.counts,
        "tfs": p.tfs,
    }
    widths = {name: narrowest(array) for name, array in narrowed.items()}
    header = json.dumps(
        {
            "widths": widths,
            "files": len(arrays.keys),
            "chunks": int(arrays.rows.shape[0]),
            "types": arrays.types,
            "tokens": arrays.tokens,
            "imports": {str(i): v for i, v in arrays.imports.items()},
            "texts": [[i, len(text)] for i, text in texts.items()],
            "contents": {str(i): v for i, v in arrays.contents.items()},
            "counted": int(arrays.counts.buckets.shape[0]),
            "terms": len(p.term_id),
            "entries": int(p.docs.shape[0]),
            "vocabulary": len(vocabulary),
            "weighed": int(arrays.line_extras.shape[0]),
        }
    ).encode("ascii")
    header += b" " * (-(len(_MAGIC) + 4 + len(header)) % _ALIGN)
    arrays_in_order = _in_record_order(
        widths,
        {
            "chunks per file": arrays.per_file,
            "chunk rows": arrays.rows,
            "bucket lengths": arrays.counts.lengths,
            "postings offsets": p.indptr,
            "document lengths": p.doc_len,
            "chunk-id ranks": arrays.id_rank,
            "bucket counts": arrays.counts.counts,
            "postings documents": p.docs,
            "postings frequencies": p.tfs,
            "weighted lines": arrays.line_extras,
            "term order": by_word,
            "buckets": arrays.counts.buckets,
        },
    )
    return [
        ("header", _MAGIC + len(header).to_bytes(4, "little") + header),
        *((name, _in_place(a, width)) for name, (width, a) in arrays_in_order.items()),
        ("chunk ids", raw_ids(arrays.ids)),
        ("file keys", b"".join(arrays.keys)),
        ("vocabulary", vocabulary),
        *(("redacted texts", text) for text in texts.values()),
    ]


# Each array's width in a record, by section; None: the narrowest, named in the header's "widths".
_WIDTHS = {
    "chunks per file": "<i8",
    "chunk rows": None,
    "bucket lengths": None,
    "postings offsets": "<i8",
    "document lengths": "<i8",
    "chunk-id ranks": "<i8",
    "bucket counts": None,
    "postings documents": "<i4",
    "postings frequencies": None,
    "weighted lines": "<i4",
    "term order": "<i4",
    "buckets": "u1",
}
_NARROWED = {
    "chunk rows": "rows",
    "bucket lengths": "lengths",
    "bucket counts": "counts",
    "postings frequencies": "tfs",
}


def _in_record_order(widths: Mapping[str, object], items: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
    """(width, item) of every array section in the order a record keeps them: widest first, so
    that each starts aligned to its width (sections of a width in `_WIDTHS`'s order). The widths
    of the narrowed sections are `widths` (a header's: checked here)."""
    chosen = {}
    for name, fixed in _WIDTHS.items():
        width = widths[_NARROWED[name]] if fixed is None else fixed
        if width not in WIDTHS and width != fixed:
            raise ValueError(f"an array's width {width!r} is not one a record keeps it in")
        chosen[name] = str(width)
    names = sorted(_WIDTHS, key=lambda name: -np.dtype(chosen[name]).itemsize)  # stable
    return {name: (chosen[name], items[name]) for name in names}


def _in_place(array: np.ndarray, dtype: str) -> memoryview:
    """The bytes of `array` as `dtype`, C order: a view when it already is that, else a copy."""
    return np.ascontiguousarray(array, dtype=dtype).reshape(-1).view(np.uint8).data


def encode_corpus(arrays: CorpusArrays) -> bytes:
    """The record of `arrays`, in one piece."""
    return b"".join(corpus_parts(arrays))


def decode_corpus(data: bytes | memoryview) -> CorpusArrays:
    """The arrays `encode_corpus` recorded; ValueError when anything is inconsistent.

    Every array is a read-only view of `data` (which must outlive them and not change: the
    cache maps a record file that is only ever replaced, never rewritten), so nothing of a
    record (tens of megabytes for a large corpus) is copied; only strings (the header's, the
    chunk ids and keys) become objects, and BM25's vocabulary stays bytes (`RecordVocabulary`)."""
    header, header_end = _header(data)
    try:
        n_files, n, counted, n_terms, n_entries, weighed = (
            header[k] for k in ("files", "chunks", "counted", "terms", "entries", "weighed")
        )
        reader = RecordReader(data, header_end)
        sizes = {
            "chunks per file": n_files,
            "chunk rows": n * FIELDS,
            "bucket lengths": n,
            "postings offsets": n_terms + 1,
            "document lengths": n,
            "chunk-id ranks": n,
            "bucket counts": counted,
            "postings documents": n_entries,
            "postings frequencies": n_entries,
            "weighted lines": weighed,
            "term order": n_terms,
            "buckets": counted,
        }
        # Views of the record, in its widths: the narrowed ones' readers take any integer type
        # (ranking converts frequencies to doubles, counts are divided or copied as they are),
        # except the rows and lengths, widened to int64 (copies: a few numbers a chunk; the rows'
        # copy is dropped once the chunks are made, `lines` keeping two columns of it).
        got = {
            name: _native(reader.array(width, count))
            for name, (width, count) in _in_record_order(header["widths"], sizes).items()
        }
        for name, widest in (("bucket counts", np.int32), ("postings frequencies", np.int32)):
            if not np.can_cast(got[name].dtype, widest):
                raise ValueError(f"an array's width {got[name].dtype.str!r} is not one a record keeps it in")
        per_file, indptr, doc_len, id_rank = (
            got[k] for k in ("chunks per file", "postings offsets", "document lengths", "chunk-id ranks")
        )
        rows = got["chunk rows"].reshape(n, FIELDS).astype(np.int64)
        release_array(got["chunk rows"])  # read whole for the copy (a mapped record's pages)
        docs, tfs, line_extras, by_word = (
            got[k] for k in ("postings documents", "postings frequencies", "weighted lines", "term order")
        )
        lengths = got["bucket lengths"].astype(np.int64)
        release_array(got["bucket lengths"])
        counts = BucketCounts(lengths, got["buckets"], got["bucket counts"])
        ids = reader.take(ID_BYTES * n).hex().encode("ascii")
        keys = reader.take(KEY_LENGTH * n_files)
        vocabulary = reader.take(header["vocabulary"])
        vocabulary.decode("utf-8", "surrogatepass")
        texts = {
            _index(i, n_files): reader.take(size).decode("utf-8", "surrogatepass")
            for i, size in header["texts"]
        }
        reader.finish()
        words = RecordVocabulary(vocabulary, by_word)
        types = [type_triple(t) for t in header["types"]]
        tokens = [int(t) for t in header["tokens"]]
        if len(tokens) != n_files:
            raise ValueError("token weights are not one per file")
        _check_arrays(per_file, rows, counts, indptr, docs, doc_len, id_rank, len(words), n_terms, len(types))
        check_slots(rows[:, RUN_START], rows[:, RUN_LENGTH], line_extras, np.cumsum(per_file) - per_file)
        for checked in (line_extras, indptr, id_rank):
            release_array(checked)
        imports = {_index(i, n_files): [str(name) for name in v] for i, v in header["imports"].items()}
        contents = {_index(i, n): str(v) for i, v in header["contents"].items()}
        if any(rows[i, 3] != NOT_A_SLICE for i in contents) or len(contents) != int(
            np.count_nonzero(rows[:, 3] == NOT_A_SLICE)
        ):
            raise ValueError("chunk contents and ranges do not match")
        postings = Postings(words, indptr, docs, tfs, doc_len)
        return CorpusArrays(
            [keys[i : i + KEY_LENGTH] for i in range(0, len(keys), KEY_LENGTH)],
            per_file,
            tokens,
            imports,
            texts,
            types,
            rows,
            ids,
            contents,
            counts,
            postings,
            id_rank,
            line_extras,
        )
    except (KeyError, IndexError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed corpus record: {exc!r}") from None


def _native(array: np.ndarray) -> np.ndarray:
    """A record's little-endian array in the machine's byte order (itself on little-endian machines)."""
    return array.astype(array.dtype.newbyteorder("="), copy=False)


def _header(data: bytes | memoryview) -> tuple[dict[str, Any], int]:
    if bytes(data[:4]) != _MAGIC:
        raise ValueError("not a corpus record")
    header_end = 8 + int.from_bytes(data[4:8], "little")
    try:
        header = json.loads(bytes(data[8:header_end]))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"malformed corpus record header: {exc}") from None
    if not isinstance(header, dict):
        raise ValueError("malformed corpus record header")
    return header, header_end


def _index(key: str, size: int) -> int:
    i = int(key)
    if not 0 <= i < size:
        raise ValueError("an index is out of range")
    return i


def _check_arrays(
    per_file: np.ndarray,
    rows: np.ndarray,
    counts: BucketCounts,
    indptr: np.ndarray,
    docs: np.ndarray,
    doc_len: np.ndarray,
    id_rank: np.ndarray,
    words: int,
    terms: int,
    types: int,
) -> None:
    """Every count adds up and every index points inside what it indexes."""
    n = rows.shape[0]
    if (per_file < 0).any() or int(per_file.sum()) != n:
        raise ValueError("chunks per file do not add up")
    if n and not (0 <= rows[:, 2].min() and rows[:, 2].max() < types):
        raise ValueError("a chunk names no (type, kind, language)")
    if (counts.lengths < 0).any() or int(counts.lengths.sum()) != counts.buckets.shape[0]:
        raise ValueError("bucket counts do not add up")
    if words != terms or indptr[0] != 0 or indptr[-1] != docs.shape[0] or (np.diff(indptr) < 0).any():
        raise ValueError("postings do not add up")
    if docs.shape[0] and not (0 <= (bounds := _bounds(docs))[0] and bounds[1] < n):
        raise ValueError("a posting names no chunk")
    if not np.array_equal(np.sort(id_rank), np.arange(n)):
        raise ValueError("chunk-id ranks are not a permutation")


def _bounds(array: np.ndarray) -> tuple[int, int]:
    """The least and greatest value of a non-empty array, read a block at a time (the postings'
    documents, a record's largest array: a mapped record's pages of it go as they are read)."""
    blocks = [(int(block.min()), int(block.max())) for block in read_in_blocks(array)]
    return min(low for low, _ in blocks), max(high for _, high in blocks)


def chunk_columns(arrays: CorpusArrays, files: Sequence[tuple[str, str | FileText]]) -> ChunkColumns:
    """The chunks of `arrays` as columns, for the walked (path, text) files it was made of; each
    chunk's content is a range of its file's redacted text (the walked one, unless redaction
    changed it), or kept whole in `arrays.contents`."""
    if len(files) != len(arrays.keys):
        raise ValueError("the record is of another number of files")
    texts: list[tuple[str, str | FileText]] = list(files)
    for i, text in arrays.texts.items():
        texts[i] = (files[i][0], text)
    return ChunkColumns(arrays.ids, texts, arrays.per_file, arrays.types, arrays.rows, arrays.contents)


def materialize(arrays: CorpusArrays, files: Sequence[tuple[str, str | FileText]]) -> AssembledCorpus:
    """The chunks and per-file maps of `arrays`, for the walked (path, text) files it was made of;
    a text may be the `FileText` that reads it again, which the file's chunks then slice from."""
    chunks = chunk_columns(arrays, files)
    file_imports = {files[i][0]: list(v) for i, v in sorted(arrays.imports.items())}
    file_tokens = {path: tokens for (path, _), tokens in zip(files, arrays.tokens, strict=True)}
    return AssembledCorpus(chunks, file_imports, file_tokens, arrays.counts)
