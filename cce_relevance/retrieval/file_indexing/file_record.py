"""The compact bytes one file's `IndexedFile` travels in (worker processes, the index cache).

A magic, a JSON header for the small irregular parts (imports, the distinct
(chunk type, kind, language) triples, anything that is not a slice of the walked text), then
arrays of integers, each stored in the narrowest of `WIDTHS` that holds its values (named in the
header's "widths", checked on reading and widened to the type the index uses: most files' line
numbers, ranges and counts fit two bytes or one, which makes the cache about half as large as
with fixed 8- and 4-byte columns), and the chunk ids as raw bytes (`ID_BYTES` each, not 16 hex
characters). The file's weighted lines (retrieval/chunking/line_weights.py) take two numbers of
each chunk's row (a run's first line and length; a file has at most one run per chunk) and one
array of every weighed line's extra weight. A chunk's content is stored as a character range
of the file's text when slicing that text gives exactly the content (checked when encoding), so
the cache holds little more than the per-chunk numbers; the walked text the file was read as is
supplied again when decoding. Decoding checks every length and raises `ValueError` on anything inconsistent.
"""

from __future__ import annotations

import json

import numpy as np

from cce_relevance.retrieval.chunking.chunk import Chunk, sliced_chunk
from cce_relevance.retrieval.chunking.line_weights import (
    EXTRA_DTYPE,
    lines_in_slots,
)
from cce_relevance.retrieval.embedding.buckets import BucketCounts
from cce_relevance.retrieval.file_indexing.file import IndexedFile
from cce_relevance.retrieval.ranking.postings import TermCounts

_MAGIC = b"CCEh"  # g: weighted lines; h: arrays in the narrowest width that holds them, raw chunk ids
ID_LENGTH = 16  # a chunk id's hex characters
ID_BYTES = ID_LENGTH // 2  # and the bytes a record keeps of it
# Integer widths a record's arrays are stored in, narrowest first (`narrowest`).
WIDTHS = ("|u1", "|i1", "<u2", "<i2", "<i4", "<i8")
FIELDS = 8  # start line, end line, (type, kind, language) index, char start, char end, token count,
RUN_START, RUN_LENGTH = 6, 7  # and a run of the file's weighted lines (length 0: none in this slot)
NOT_A_SLICE = -1


def chunk_rows(
    entry: IndexedFile, types: dict[tuple[str, str, str], int], first: int, contents: dict[int, str]
) -> np.ndarray:
    """The FIELDS-wide rows of a file's chunks, numbering new (type, kind, language) triples in
    `types` and putting contents that are not ranges of the text in `contents` (by chunk index,
    the file's first chunk being `first`): shared by this record and a corpus's. The runs of
    the file's weighted lines fill the first slots, the others hold none."""
    rows = np.zeros((len(entry.chunks), FIELDS), dtype=np.int64)
    for i, (chunk, span) in enumerate(zip(entry.chunks, entry.char_spans, strict=True)):
        kind = types.setdefault((chunk.chunk_type, chunk.kind, chunk.language), len(types))
        if span is None:
            contents[first + i] = chunk.content
            span = (NOT_A_SLICE, NOT_A_SLICE)
        rows[i, :RUN_START] = (chunk.start_line, chunk.end_line, kind, span[0], span[1], chunk.token_count)
    runs = entry.lines.starts.shape[0]
    if runs > len(entry.chunks):
        raise ValueError("a file has more runs of weighted lines than chunks")
    rows[:runs, RUN_START] = entry.lines.starts
    rows[:runs, RUN_LENGTH] = entry.lines.lengths
    return rows


def chunk_id_bytes(entry: IndexedFile) -> bytes:
    """The file's chunk ids, ID_LENGTH ASCII bytes each."""
    ids = "".join(c.chunk_id for c in entry.chunks).encode("ascii")
    if len(ids) != ID_LENGTH * len(entry.chunks):
        raise ValueError("a chunk id is not 16 characters")
    return ids


def raw_ids(ids: bytes) -> bytes:
    """Chunk ids of ID_LENGTH lowercase hex characters each as ID_BYTES bytes each (`bytes.hex`
    gives them back); ValueError for any other id, which the raw bytes could not give back."""
    try:
        raw = bytes.fromhex(ids.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise ValueError("a chunk id is not hex") from None
    if raw.hex().encode("ascii") != ids:
        raise ValueError("a chunk id is not lowercase hex")
    return raw


def narrowest(array: np.ndarray) -> str:
    """The first of WIDTHS whose range holds every value of the integer `array` ("|u1" when empty)."""
    if array.size == 0:
        return WIDTHS[0]
    lo, hi = int(array.min()), int(array.max())
    return next(w for w in WIDTHS if np.iinfo(w).min <= lo and hi <= np.iinfo(w).max)


def narrow_bytes(array: np.ndarray, width: str) -> bytes:
    """The bytes of `array` stored as `width` (`narrowest`'s choice for it)."""
    return np.ascontiguousarray(array, dtype=width).tobytes()


def encode(entry: IndexedFile, walked_text: str) -> bytes:
    """The bytes of `entry`, for a file that was walked as `walked_text`."""
    types: dict[tuple[str, str, str], int] = {}
    others: dict[int, str] = {}
    rows = chunk_rows(entry, types, 0, others)
    contents = {str(i): content for i, content in others.items()}
    ids = chunk_id_bytes(entry)
    counts, terms = entry.counts, entry.terms
    if (counts is None) != (terms is None):
        raise ValueError("a record has bucket counts without term counts or the other way round")
    arrays = {"rows": rows, "extras": entry.lines.extras}
    if counts is not None:
        arrays |= {"bucket_lengths": counts.lengths, "bucket_counts": counts.counts}
    if terms is not None:
        arrays |= {"term_lengths": terms.lengths, "terms": terms.terms, "term_counts": terms.counts}
    widths = {name: narrowest(array) for name, array in arrays.items()}
    header = json.dumps(
        {
            "widths": widths,
            "tokens": entry.tokens,
            "imports": entry.imports,
            "types": list(types),
            "contents": contents,
            "text": None if entry.text == walked_text else entry.text,
            "chunks": len(entry.chunks),
            "weighed": int(entry.lines.extras.shape[0]),
            "counted": None if counts is None else int(counts.buckets.shape[0]),
            "termed": None if terms is None else int(terms.terms.shape[0]),
            "vocabulary": None if terms is None else terms.words.decode("ascii"),
        }
    ).encode("ascii")
    parts = [
        _MAGIC,
        len(header).to_bytes(4, "little"),
        header,
        narrow_bytes(rows, widths["rows"]),
        raw_ids(ids),
        narrow_bytes(entry.lines.extras, widths["extras"]),
    ]
    if counts is not None:
        parts += [
            narrow_bytes(counts.lengths, widths["bucket_lengths"]),
            counts.buckets.astype(np.uint8).tobytes(),
            narrow_bytes(counts.counts, widths["bucket_counts"]),
        ]
    if terms is not None:
        parts += [
            narrow_bytes(terms.lengths, widths["term_lengths"]),
            narrow_bytes(terms.terms, widths["terms"]),
            narrow_bytes(terms.counts, widths["term_counts"]),
        ]
    return b"".join(parts)


def decode(data: bytes, path: str, walked_text: str) -> IndexedFile:
    """The entry `encode` made for `path`, walked as `walked_text`; ValueError when inconsistent."""
    if data[:4] != _MAGIC:
        raise ValueError("not an indexed-file record")
    header_end = 8 + int.from_bytes(data[4:8], "little")
    try:
        header = json.loads(data[8:header_end])
        n, counted, termed, weighed = header["chunks"], header["counted"], header["termed"], header["weighed"]
        text = walked_text if header["text"] is None else header["text"]
        types = [type_triple(t) for t in header["types"]]
        widths = header["widths"]
        reader = RecordReader(data, header_end)
        rows = reader.narrow(widths["rows"], n * FIELDS, np.int64).reshape(n, FIELDS)
        ids = reader.take(ID_BYTES * n).hex()
        # Copied, as the counts below are: a view would keep the whole record alive with the index.
        extras = reader.narrow(widths["extras"], weighed, EXTRA_DTYPE, copy=True)
        lines = lines_in_slots(rows[:, RUN_START], rows[:, RUN_LENGTH], extras)
        counts = None
        if counted is not None:
            lengths = reader.narrow(widths["bucket_lengths"], n, np.int64, copy=True)
            buckets = reader.array("u1", counted)
            counts = BucketCounts(
                lengths, buckets, reader.narrow(widths["bucket_counts"], counted, np.int32, copy=True)
            )
            if int(lengths.sum()) != counted or (lengths < 0).any():
                raise ValueError("bucket counts do not add up")
        terms = None if termed is None else _term_counts(reader, widths, n, termed, header["vocabulary"])
        if (counts is None) != (terms is None):
            raise ValueError("a record has bucket counts without term counts or the other way round")
        reader.finish()
        if n and not (0 <= rows[:, 2].min() and rows[:, 2].max() < len(types)):
            raise ValueError("a chunk names no (type, kind, language)")
        char_starts, char_ends = rows[:, 3].tolist(), rows[:, 4].tolist()
        contents: dict[int, str] = {}  # the chunks whose content is not a slice of the text
        spans: list[tuple[int, int] | None] = list(zip(char_starts, char_ends, strict=True))
        for key, content in header["contents"].items():
            i = int(key)
            if char_starts[i] != NOT_A_SLICE:
                raise ValueError("a chunk has both a range and a content")
            contents[i], spans[i] = str(content), None
        if any(span is not None and span[0] == NOT_A_SLICE for span in spans):
            raise ValueError("a chunk has neither a range nor a content")
        kinds = [types[k] for k in rows[:, 2].tolist()]
        ids_list = [ids[i : i + ID_LENGTH] for i in range(0, ID_LENGTH * n, ID_LENGTH)]
        starts, ends, tokens = rows[:, 0].tolist(), rows[:, 1].tolist(), rows[:, 5].tolist()
        chunks: list[Chunk] = []
        for i, span in enumerate(spans):
            (ctype, kind, language), chunk_id = kinds[i], ids_list[i]
            if span is None:
                chunk = Chunk(
                    chunk_id, path, starts[i], ends[i], ctype, kind, language, contents[i], tokens[i]
                )
            else:
                chunk = sliced_chunk(
                    chunk_id,
                    path,
                    starts[i],
                    ends[i],
                    ctype,
                    kind,
                    language,
                    text,
                    span[0],
                    span[1],
                    tokens[i],
                )
            chunks.append(chunk)
        return IndexedFile(
            text, header["tokens"], list(header["imports"]), chunks, spans, counts, terms, lines
        )
    except (KeyError, IndexError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed indexed-file record: {exc!r}") from None


def _term_counts(
    reader: RecordReader, widths: dict[str, str], chunks: int, entries: int, vocabulary: str
) -> TermCounts:
    """The term counts part of a record, checked: every index names a term, counts are positive
    (a vocabulary that is not ASCII, as no tokenizing makes one, raises UnicodeEncodeError: a
    ValueError)."""
    words = vocabulary.encode("ascii")
    n_words = words.count(b" ") + 1 if words else 0
    lengths = reader.narrow(widths["term_lengths"], chunks, np.int64, copy=True)
    terms = reader.narrow(widths["terms"], entries, np.int32, copy=True)
    counts = reader.narrow(widths["term_counts"], entries, np.int32, copy=True)
    if int(lengths.sum()) != entries or (lengths < 0).any():
        raise ValueError("term counts do not add up")
    if entries and not (terms.min() >= 0 and terms.max() < n_words and counts.min() > 0):
        raise ValueError("a term count names no term or is not positive")
    return TermCounts(words, lengths, terms, counts)


def type_triple(value: list[str]) -> tuple[str, str, str]:
    if len(value) != 3 or not all(isinstance(v, str) for v in value):
        raise ValueError("not a (type, kind, language) triple")
    return value[0], value[1], value[2]


class RecordReader:
    """Consecutive fixed-size pieces of a record, refusing to read past its end (also read by
    retrieval/cache/corpus_record.py, whose records share these conventions)."""

    def __init__(self, data: bytes | memoryview, offset: int) -> None:
        self._data = memoryview(data)  # arrays are read in place, not copied out first
        self._offset = offset

    def _piece(self, size: int) -> memoryview:
        if size < 0 or self._offset + size > len(self._data):
            raise ValueError("record is truncated")
        piece = self._data[self._offset : self._offset + size]
        self._offset += size
        return piece

    def take(self, size: int) -> bytes:
        return bytes(self._piece(size))

    def array(self, dtype: str, count: int) -> np.ndarray:
        """`count` items of `dtype` (a view of the record's bytes: copy what must outlive them)."""
        return np.frombuffer(self._piece(np.dtype(dtype).itemsize * count), dtype=dtype)

    def narrow(self, width: object, count: int, dtype: type[np.integer], copy: bool = False) -> np.ndarray:
        """`count` integers stored as `width` (one of WIDTHS, as the record's header names it), as
        `dtype`: a view of the record's bytes when stored so (on a little-endian machine) and
        `copy` is false, else a copy. A width that is not one of WIDTHS, or holds values `dtype`
        cannot, is refused rather than cut down."""
        if width not in WIDTHS or not np.can_cast(np.dtype(str(width)), dtype):
            raise ValueError(f"an array's width {width!r} is not one a record keeps it in")
        return self.array(str(width), count).astype(dtype, copy=copy)

    def finish(self) -> None:
        if self._offset != len(self._data):
            raise ValueError("record has trailing bytes")
