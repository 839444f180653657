"""A corpus assembled from the last one's arrays and the records of the files that changed.

The head side of a pull request differs from the base in a few files, and a second local run
after an edit in one. Assembling such a corpus from all its files' records costs as much as if
every file had changed: most of it is decoding records and BM25's global merge of postings.
`splice` instead takes an earlier corpus's arrays (retrieval/cache/corpus_record.py) for every file
whose record key is among that corpus's — same path, same bytes, indexed the same way, so the
same chunks — and the fresh records of the others, and puts them together:

* per-file and per-chunk arrays (the weighted lines' extra weights too, slot by slot) are the
  old slices and the new files' rows, in walk order;
* postings stay term-major: the old entries of kept chunks, renumbered (walk order is the same
  sorted order in both corpora, so chunk numbers only shift and each term's list stays
  ascending), with the new files' entries, sorted alone, inserted where a binary search within
  their term puts them; terms new to the corpus are numbered after the old ones, and terms left
  without a document dropped;
* chunk-id ranks: the kept chunks keep their (id, position) order, and the new files' chunks
  are merged into it.

The result is the index a full assembly gives — the same chunks, embeddings, imports, token
weights, chunk-id ranks, and for every term the same documents and frequencies — except that
terms may be numbered in another order, which no score depends on (BM25 reads a term's
postings by its name). tests/retrieval/cache/test_corpus_splice.py checks that over sequences of
random edits against indexes built from scratch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np

from cce_relevance.retrieval.cache.corpus_record import CorpusArrays, split_ids
from cce_relevance.retrieval.corpus.walk import FileText
from cce_relevance.retrieval.embedding.buckets import BucketCounts, concatenated_counts
from cce_relevance.retrieval.file_indexing.file import IndexedFile
from cce_relevance.retrieval.file_indexing.file_record import (
    FIELDS,
    ID_LENGTH,
    RUN_LENGTH,
    chunk_id_bytes,
    chunk_rows,
)
from cce_relevance.retrieval.ranking.postings import Postings
from cce_relevance.retrieval.ranking.topk import id_ranks


class _Run(NamedTuple):
    """Old chunks [a, b) — consecutive kept files — placed from new chunk `at` on."""

    a: int
    b: int
    at: int


class _Fresh(NamedTuple):
    """A changed file's record, its chunks placed from new chunk `at` on."""

    entry: IndexedFile
    at: int


def splice(
    old: CorpusArrays,
    keys: Sequence[bytes],
    files: Sequence[tuple[str, str | FileText]],
    fresh: Mapping[int, IndexedFile],
) -> CorpusArrays:
    """The arrays of the corpus whose walked files are `files` with record keys `keys`: file i
    from `old` where `old` has its key, else from `fresh[i]` (its record, hash embedder; only
    those files' walked texts are read, the others' may be given up)."""
    where = {key: j for j, key in enumerate(old.keys)}
    old_first = np.concatenate(([0], np.cumsum(old.per_file))).tolist()
    old_bucket_first = np.concatenate(([0], np.cumsum(old.counts.lengths)))
    old_line_first = np.concatenate(([0], np.cumsum(old.rows[:, RUN_LENGTH])))
    types = {t: k for k, t in enumerate(old.types)}
    pieces: list[_Run | _Fresh] = []
    per_file, tokens = [], []
    imports: dict[int, list[str]] = {}
    texts: dict[int, str] = {}
    contents: dict[int, str] = {}
    fresh_chunks = []  # new positions of the fresh files' chunks
    first = 0
    for i, (key, (_, walked)) in enumerate(zip(keys, files, strict=True)):
        j = where.get(key)
        if j is None:
            entry = fresh[i]
            size = len(entry.chunks)
            pieces.append(_Fresh(entry, first))
            fresh_chunks.append(np.arange(first, first + size, dtype=np.int64))
            tokens.append(entry.tokens)
            if entry.imports:
                imports[i] = entry.imports
            if entry.text != walked:
                texts[i] = entry.text
        else:
            a, b = old_first[j], old_first[j + 1]
            size = b - a
            last = pieces[-1] if pieces else None
            if isinstance(last, _Run) and last.b == a:
                pieces[-1] = last._replace(b=b)
            else:
                pieces.append(_Run(a, b, first))
            tokens.append(old.tokens[j])
            if j in old.imports:
                imports[i] = old.imports[j]
            if j in old.texts:
                texts[i] = old.texts[j]
        per_file.append(size)
        first += size
    chunk_map = np.full(old.rows.shape[0], -1, dtype=np.int32)  # old chunk -> new chunk, -1: gone
    rows, ids, counts, extras = [], [], [], [old.line_extras[:0]]
    for piece in pieces:
        if isinstance(piece, _Run):
            a, b, at = piece
            chunk_map[a:b] = np.arange(at, at + b - a, dtype=np.int32)
            rows.append(old.rows[a:b])
            ids.append(old.ids[ID_LENGTH * a : ID_LENGTH * b])
            lo, hi = old_bucket_first[a], old_bucket_first[b]
            counts.append(
                BucketCounts(old.counts.lengths[a:b], old.counts.buckets[lo:hi], old.counts.counts[lo:hi])
            )
            extras.append(old.line_extras[old_line_first[a] : old_line_first[b]])
        else:
            rows.append(chunk_rows(piece.entry, types, piece.at, contents))
            ids.append(chunk_id_bytes(piece.entry))
            counts.append(_checked_counts(piece.entry))
            extras.append(piece.entry.lines.extras)
    for c, text in old.contents.items():
        if chunk_map[c] >= 0:
            contents[int(chunk_map[c])] = text
    all_ids = b"".join(ids)
    sizes = np.array(per_file, dtype=np.int64)
    new_chunks = np.concatenate(fresh_chunks) if fresh_chunks else np.zeros(0, np.int64)
    return CorpusArrays(
        list(keys),
        sizes,
        tokens,
        imports,
        texts,
        list(types),
        np.concatenate(rows) if rows else np.zeros((0, FIELDS), np.int64),
        all_ids,
        dict(sorted(contents.items())),
        concatenated_counts(counts),
        _spliced_postings(old.postings, chunk_map, first, fresh, sizes),
        spliced_id_ranks(old.id_rank, chunk_map, all_ids, new_chunks),
        np.concatenate(extras),
    )


def _checked_counts(entry: IndexedFile) -> BucketCounts:
    if entry.counts is None or entry.terms is None:
        raise ValueError("a file's record has no bucket or term counts")
    return entry.counts


def _spliced_postings(
    old: Postings,
    chunk_map: np.ndarray,
    n_chunks: int,
    fresh: Mapping[int, IndexedFile],
    per_file: np.ndarray,
) -> Postings:
    """The old postings of the chunks kept (renumbered) merged with the fresh files' term counts.

    Only the fresh entries are sorted and searched; the old ones are renumbered by one gather
    and copied around them (`np.delete`, `np.insert`), all in int32: on a large corpus this is
    a few passes over the postings, and little new memory to touch."""
    term_id, fresh_terms, fresh_docs, fresh_tfs = _fresh_entries(old.term_id, fresh, per_file)
    n_old_terms, n_terms = len(old.term_id), len(term_id)
    stride = max(n_chunks, 1)
    order = np.argsort(fresh_terms * stride + fresh_docs, kind="stable")
    fresh_terms, fresh_docs, fresh_tfs = fresh_terms[order], fresh_docs[order], fresh_tfs[order]
    renumbered = chunk_map[old.docs]
    gone = np.flatnonzero(renumbered < 0)
    before = _old_entries_before(old, chunk_map, fresh_terms, fresh_docs)
    at = before - np.searchsorted(gone, before)  # where in the old entries kept each fresh one goes
    docs = _moved(renumbered, gone, at, fresh_docs.astype(np.int32))
    tfs = _moved(old.tfs.astype(np.int32, copy=False), gone, at, fresh_tfs)  # a record's may be narrower
    # Entries per term: the old ones less those of chunks gone, plus the fresh ones.
    per_term = np.bincount(fresh_terms, minlength=n_terms)
    per_term[:n_old_terms] += np.diff(old.indptr) - np.bincount(
        np.searchsorted(old.indptr, gone, side="right") - 1, minlength=n_old_terms
    )
    if (per_term == 0).any():  # terms only the removed or changed files had: no entries to move
        present = per_term > 0
        words = [w for w, keep in zip(term_id, present.tolist(), strict=True) if keep]
        term_id = dict(zip(words, range(len(words)), strict=True))
        per_term = per_term[present]
    doc_len = np.zeros(n_chunks, dtype=np.int64)
    moved = np.flatnonzero(chunk_map >= 0)
    doc_len[chunk_map[moved]] = old.doc_len[moved]
    doc_len += np.bincount(fresh_docs, weights=fresh_tfs, minlength=n_chunks).astype(np.int64)  # exact
    return Postings(term_id, np.concatenate(([0], np.cumsum(per_term))).astype(np.int64), docs, tfs, doc_len)


def _moved(values: np.ndarray, gone: np.ndarray, at: np.ndarray, new: np.ndarray) -> np.ndarray:
    """`values` without the entries at `gone`, with `new` inserted before positions `at` of what is left."""
    kept = np.delete(values, gone) if gone.shape[0] else values
    return np.insert(kept, at, new) if at.shape[0] else kept


def _fresh_entries(
    old_terms: Mapping[str, int], fresh: Mapping[int, IndexedFile], per_file: np.ndarray
) -> tuple[Mapping[str, int], np.ndarray, np.ndarray, np.ndarray]:
    """The corpus's term numbers (the old ones, terms new to the corpus numbered after them) and
    the fresh files' entries as (term, new chunk, frequency) arrays, in file order."""
    term_id: Mapping[str, int] = old_terms
    grown: dict[str, int] | None = None  # the old numbers and the new terms', once there are any
    first = np.concatenate(([0], np.cumsum(per_file)))
    terms, docs, tfs = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0, np.int32)]
    for i in sorted(fresh):
        counts = fresh[i].terms
        if counts is None:
            raise ValueError("a file's record has no term counts")
        if any(word not in term_id for word in counts.vocabulary):
            if grown is None:  # the old corpus's stays as it was; its numbers are its order
                term_id = grown = dict(zip(old_terms, range(len(old_terms)), strict=True))
            for word in counts.vocabulary:
                grown.setdefault(word, len(grown))
        local = np.array([term_id[word] for word in counts.vocabulary], dtype=np.int64)
        terms.append(local[counts.terms.astype(np.int64)])
        docs.append(first[i] + np.repeat(np.arange(counts.lengths.shape[0], dtype=np.int64), counts.lengths))
        tfs.append(counts.counts.astype(np.int32))
    return term_id, np.concatenate(terms), np.concatenate(docs), np.concatenate(tfs)


def _old_entries_before(
    old: Postings, chunk_map: np.ndarray, terms: np.ndarray, docs: np.ndarray
) -> np.ndarray:
    """For each fresh entry (term, new chunk), the number of old entries (gone ones included)
    before the place it takes in the term-major order: the old entries of earlier terms, and
    those of its own term whose chunk lies before the first kept old chunk placed after it.

    Kept chunks keep their order, so within a term the old entries stay ascending; a vectorised
    binary search over each fresh entry's term finds the count. A term new to the corpus goes
    after every old entry."""
    kept = np.flatnonzero(chunk_map >= 0)
    after = np.searchsorted(chunk_map[kept], docs)  # kept old chunks placed before each fresh chunk
    bound = np.append(kept, chunk_map.shape[0])[after]  # the first kept old chunk placed after it
    n_old_terms = old.indptr.shape[0] - 1
    known = terms < n_old_terms
    lo = np.full(terms.shape[0], old.indptr[-1], dtype=np.int64)
    hi = lo.copy()
    lo[known], hi[known] = old.indptr[terms[known]], old.indptr[terms[known] + 1]
    last = max(old.docs.shape[0] - 1, 0)
    while (active := lo < hi).any():
        mid = (lo + hi) >> 1
        below = old.docs[np.minimum(mid, last)] < bound
        lo = np.where(active & below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)
    return lo


def spliced_id_ranks(
    old_ranks: np.ndarray, chunk_map: np.ndarray, ids: bytes, fresh_chunks: np.ndarray
) -> np.ndarray:
    """`id_ranks` of the spliced corpus whose chunk ids are `ids` (ID_LENGTH bytes each), from the
    old corpus's ranks: the kept chunks stay in their (id, position) order — positions only
    shift — and the fresh chunks (`fresh_chunks`, new positions, ascending) are merged in by a
    binary search, instead of sorting every id again.

    Ids are compared as numpy fixed-width byte strings, byte by byte as Python compares ASCII
    strings; such strings drop trailing NUL bytes, so ids holding one are sorted as strings."""
    n = len(ids) // ID_LENGTH
    if b"\0" in ids:
        return id_ranks(split_ids(ids))
    by_id = np.empty_like(old_ranks)
    by_id[old_ranks] = np.arange(old_ranks.shape[0])
    moved = chunk_map[by_id]
    order = moved[moved >= 0].astype(np.int64)  # kept chunks' new positions in (id, position) order
    if fresh_chunks.shape[0]:
        table = np.frombuffer(ids, dtype=f"S{ID_LENGTH}")
        fresh_order = fresh_chunks[np.argsort(table[fresh_chunks], kind="stable")]
        kept_ids, fresh_ids = table[order], table[fresh_order]
        at = np.searchsorted(kept_ids, fresh_ids, side="left")
        for k in np.flatnonzero(np.searchsorted(kept_ids, fresh_ids, side="right") > at).tolist():
            same = order[
                at[k] : np.searchsorted(kept_ids, fresh_ids[k], side="right")
            ]  # equal ids: by position
            at[k] += int(np.count_nonzero(same < fresh_order[k]))
        order = np.insert(order, at, fresh_order)
    ranks = np.empty(n, dtype=np.int64)
    ranks[order] = np.arange(n, dtype=np.int64)
    return ranks
