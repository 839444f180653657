"""A whole corpus's assembled index as one record: what a run over an unchanged tree loads.

Files' records (retrieval/indexed_file.py) make a second run index nothing, but assembling the
index from them is still work proportional to the corpus: a JSON header and a dozen small
arrays decoded per file, BM25's postings merged by one global sort, chunk-id ranks sorted. When
not one file changed — re-running fixtures against the same tree, the base side of the Action
run again — all of that gives the same result as last time, so the result itself is kept: the
chunks of every file as flat arrays, the bucket counts behind the embedding matrix, the merged
postings and the chunk-id ranks, decoded with a handful of array reads and one pass that makes
the chunk objects.

The record is stored under a key that hashes the keys of all the files' records in walk order
(retrieval/index_cache.py), so it stands for exactly those paths with exactly those bytes,
indexed exactly that way. As in a file's record, a chunk's content is a character range of its
file's walked (or, when redaction changed it, redacted) text, and the walked texts are supplied
again when decoding. Decoding checks every length and range and raises `ValueError` on anything
inconsistent; the caller then assembles the index from the files' records instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, repeat

import numpy as np

from cce_relevance.retrieval.chunk import Chunk
from cce_relevance.retrieval.hash_counts import BucketCounts
from cce_relevance.retrieval.indexed_file import (
    FIELDS,
    ID_LENGTH,
    NOT_A_SLICE,
    IndexedFile,
    RecordReader,
    type_triple,
)
from cce_relevance.retrieval.term_counts import Postings

_MAGIC = b"CCEc"


@dataclass(frozen=True)
class AssembledCorpus:
    """What `build_index` assembles from the files' records (embeddings not yet attached)."""

    chunks: list[Chunk]
    file_imports: dict[str, list[str]]
    file_tokens: dict[str, int]
    counts: BucketCounts
    postings: Postings
    id_rank: np.ndarray


def encode_corpus(files: Sequence[tuple[str, str]], entries: Sequence[IndexedFile], postings: Postings,
                  id_rank: np.ndarray) -> bytes:
    """The record of a corpus whose walked (path, text) files gave `entries` (hash embedder)."""
    types: dict[tuple[str, str, str], int] = {}
    rows: list[tuple[int, int, int, int, int, int]] = []
    contents: dict[str, str] = {}
    counts: list[BucketCounts] = []
    for entry in entries:
        if entry.counts is None:
            raise ValueError("a file's record has no bucket counts")
        counts.append(entry.counts)
        for chunk, span in zip(entry.chunks, entry.char_spans, strict=True):
            kind = types.setdefault((chunk.chunk_type, chunk.kind, chunk.language), len(types))
            if span is None:
                contents[str(len(rows))] = chunk.content
                span = (NOT_A_SLICE, NOT_A_SLICE)
            rows.append((chunk.start_line, chunk.end_line, kind, span[0], span[1], chunk.token_count))
    n = len(rows)
    ids = "".join(c.chunk_id for e in entries for c in e.chunks).encode("ascii")
    if len(ids) != ID_LENGTH * n:
        raise ValueError("a chunk id is not 16 characters")
    header = json.dumps({
        "files": len(entries), "chunks": n, "types": list(types),
        "tokens": [e.tokens for e in entries],
        "imports": {str(i): e.imports for i, e in enumerate(entries) if e.imports},
        "texts": {str(i): e.text for i, (e, (_, walked)) in enumerate(zip(entries, files, strict=True))
                  if e.text != walked},
        "contents": contents, "counted": int(sum(c.buckets.shape[0] for c in counts)),
        "terms": len(postings.term_id), "entries": int(postings.docs.shape[0]),
        "vocabulary": " ".join(postings.term_id),
    }).encode("ascii")
    table = np.array(rows, dtype="<i8").reshape(n, FIELDS)
    parts = [_MAGIC, len(header).to_bytes(4, "little"), header,
             np.array([len(e.chunks) for e in entries], dtype="<i8").tobytes(), table.tobytes(), ids,
             *(np.concatenate([getattr(c, name) for c in counts]).astype(dtype).tobytes() if counts else b""
               for name, dtype in (("lengths", "<i8"), ("buckets", "u1"), ("counts", "<i4"))),
             postings.indptr.astype("<i8").tobytes(), postings.docs.astype("<i4").tobytes(),
             postings.tfs.astype("<i4").tobytes(), postings.doc_len.astype("<i8").tobytes(),
             id_rank.astype("<i8").tobytes()]
    return b"".join(parts)


def decode_corpus(data: bytes, files: Sequence[tuple[str, str]]) -> AssembledCorpus:
    """The corpus `encode_corpus` recorded, for the same walked files; ValueError when inconsistent."""
    if data[:4] != _MAGIC:
        raise ValueError("not a corpus record")
    header_end = 8 + int.from_bytes(data[4:8], "little")
    try:
        header = json.loads(data[8:header_end])
        n_files, n, counted, n_terms, n_entries = (header[k] for k in ("files", "chunks", "counted", "terms",
                                                                      "entries"))
        if n_files != len(files) or len(header["tokens"]) != n_files:
            raise ValueError("the record is of another number of files")
        reader = RecordReader(data, header_end)
        per_file = reader.array("<i8", n_files)
        rows = reader.array("<i8", n * FIELDS).reshape(n, FIELDS)
        ids = reader.take(ID_LENGTH * n).decode("ascii")
        counts = BucketCounts(reader.array("<i8", n).astype(np.int64), reader.array("u1", counted),
                              reader.array("<i4", counted).astype(np.int32))
        indptr = reader.array("<i8", n_terms + 1).astype(np.int64)
        docs = reader.array("<i4", n_entries).astype(np.int64)
        tfs = reader.array("<i4", n_entries).astype(np.float64)
        doc_len = reader.array("<i8", n).astype(np.int64)
        id_rank = reader.array("<i8", n).astype(np.int64)
        reader.finish()
        words = header["vocabulary"].split(" ") if n_terms else []
        types = [type_triple(t) for t in header["types"]]
        _check_arrays(per_file, rows, counts, indptr, docs, doc_len, id_rank, len(words), n_terms, len(types))
        texts = [walked for _, walked in files]
        for key, text in header["texts"].items():
            texts[int(key)] = text
        contents = _contents(texts, per_file, rows[:, 3].tolist(), rows[:, 4].tolist(), header["contents"])
        kinds = [types[k] for k in rows[:, 2].tolist()]
        paths = chain.from_iterable(map(repeat, (path for path, _ in files), per_file.tolist()))
        chunks = list(map(Chunk, [ids[i:i + ID_LENGTH] for i in range(0, ID_LENGTH * n, ID_LENGTH)], paths,
                          rows[:, 0].tolist(), rows[:, 1].tolist(), [k[0] for k in kinds], [k[1] for k in kinds],
                          [k[2] for k in kinds], contents, rows[:, 5].tolist()))
        file_imports = {files[int(i)][0]: list(imports) for i, imports in header["imports"].items()}
        file_tokens = {path: tokens for (path, _), tokens in zip(files, header["tokens"], strict=True)}
        postings = Postings(dict(zip(words, range(n_terms), strict=True)), indptr, docs, tfs, doc_len)
        return AssembledCorpus(chunks, file_imports, file_tokens, counts, postings, id_rank)
    except (KeyError, IndexError, TypeError, AttributeError, UnicodeDecodeError) as exc:
        raise ValueError(f"malformed corpus record: {exc!r}") from None


def _check_arrays(per_file: np.ndarray, rows: np.ndarray, counts: BucketCounts, indptr: np.ndarray,
                  docs: np.ndarray, doc_len: np.ndarray, id_rank: np.ndarray, words: int, terms: int,
                  types: int) -> None:
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
    if docs.shape[0] and not (0 <= docs.min() and docs.max() < n):
        raise ValueError("a posting names no chunk")
    if not np.array_equal(np.sort(id_rank), np.arange(n)):
        raise ValueError("chunk-id ranks are not a permutation")


def _contents(texts: list[str], per_file: np.ndarray, starts: list[int], ends: list[int],
              others: dict[str, str]) -> list[str]:
    """Each chunk's content: its range of its file's text, or the content kept for it."""
    contents: list[str] = []
    lo = 0
    for text, size in zip(texts, per_file.tolist(), strict=True):
        hi = lo + size
        contents += [text[a:b] for a, b in zip(starts[lo:hi], ends[lo:hi], strict=True)]
        lo = hi
    for key, content in others.items():
        i = int(key)
        if starts[i] != NOT_A_SLICE:
            raise ValueError("a chunk has both a range and a content")
        contents[i] = content
    if len(others) != sum(s == NOT_A_SLICE for s in starts):
        raise ValueError("a chunk has neither a range nor a content")
    return contents

