"""A corpus assembled from the last one's arrays and the records of the files that changed.

The head side of a pull request differs from the base in a few files, and a second local run
after an edit in one. Assembling such a corpus from all its files' records costs as much as if
every file had changed: most of it is decoding records and BM25's global merge of postings.
`splice` instead takes an earlier corpus's arrays (retrieval/corpus_record.py) for every file
whose record key is among that corpus's — same path, same bytes, indexed the same way, so the
same chunks — and the fresh records of the others, and puts them together:

* per-file and per-chunk arrays are the old slices and the new files' rows, in walk order;
* postings stay term-major: the old entries of kept chunks, renumbered (walk order is the same
  sorted order in both corpora, so chunk numbers only shift and each term's list stays
  ascending), merged by one `searchsorted` with the new files' entries sorted alone; terms new
  to the corpus are numbered after the old ones, and terms left without a document dropped.

The result is the index a full assembly gives — the same chunks, embeddings, imports, token
weights, chunk-id ranks, and for every term the same documents and frequencies — except that
terms may be numbered in another order, which no score depends on (BM25 reads a term's
postings by its name). tests/retrieval/test_corpus_splice.py checks that over sequences of
random edits against indexes built from scratch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from cce_relevance.retrieval.corpus_record import CorpusArrays, split_ids
from cce_relevance.retrieval.hash_counts import BucketCounts, joined_counts
from cce_relevance.retrieval.indexed_file import FIELDS, ID_LENGTH, IndexedFile, chunk_id_bytes, chunk_rows
from cce_relevance.retrieval.term_counts import Postings
from cce_relevance.retrieval.topk import id_ranks


def splice(old: CorpusArrays, keys: Sequence[bytes], files: Sequence[tuple[str, str]],
           fresh: Mapping[int, IndexedFile]) -> CorpusArrays:
    """The arrays of the corpus whose walked files are `files` with record keys `keys`: file i
    from `old` where `old` has its key, else from `fresh[i]` (its record, hash embedder)."""
    where = {key: j for j, key in enumerate(old.keys)}
    old_first = np.concatenate(([0], np.cumsum(old.per_file)))
    old_bucket_first = np.concatenate(([0], np.cumsum(old.counts.lengths)))
    types = {t: k for k, t in enumerate(old.types)}
    per_file, tokens, rows, ids, lengths, buckets, bucket_counts = [], [], [], [], [], [], []
    imports: dict[int, list[str]] = {}
    texts: dict[int, str] = {}
    contents: dict[int, str] = {}
    chunk_map = np.full(old.rows.shape[0], -1, dtype=np.int64)  # old chunk -> new chunk, -1: gone
    first = 0
    for i, (key, (_, walked)) in enumerate(zip(keys, files, strict=True)):
        j = where.get(key)
        if j is None:
            entry = fresh[i]
            counts = _checked_counts(entry)
            size = len(entry.chunks)
            rows.append(chunk_rows(entry, types, first, contents))
            ids.append(chunk_id_bytes(entry))
            lengths.append(counts.lengths)
            buckets.append(counts.buckets)
            bucket_counts.append(counts.counts)
            tokens.append(entry.tokens)
            if entry.imports:
                imports[i] = entry.imports
            if entry.text != walked:
                texts[i] = entry.text
        else:
            a, b = int(old_first[j]), int(old_first[j + 1])
            size = b - a
            chunk_map[a:b] = np.arange(first, first + size)
            rows.append(old.rows[a:b])
            ids.append(old.ids[ID_LENGTH * a:ID_LENGTH * b])
            lengths.append(old.counts.lengths[a:b])
            buckets.append(old.counts.buckets[old_bucket_first[a]:old_bucket_first[b]])
            bucket_counts.append(old.counts.counts[old_bucket_first[a]:old_bucket_first[b]])
            tokens.append(old.tokens[j])
            if j in old.imports:
                imports[i] = old.imports[j]
            if j in old.texts:
                texts[i] = old.texts[j]
        per_file.append(size)
        first += size
    for c, text in old.contents.items():
        if chunk_map[c] >= 0:
            contents[int(chunk_map[c])] = text
    all_ids = b"".join(ids)
    sizes = np.array(per_file, dtype=np.int64)
    return CorpusArrays(
        list(keys), sizes, tokens, imports, texts, list(types),
        np.concatenate(rows) if rows else np.zeros((0, FIELDS), np.int64), all_ids, dict(sorted(contents.items())),
        joined_counts([BucketCounts(*parts) for parts in zip(lengths, buckets, bucket_counts, strict=True)]),
        _spliced_postings(old.postings, chunk_map, first, fresh, sizes), id_ranks(split_ids(all_ids)))


def _checked_counts(entry: IndexedFile) -> BucketCounts:
    if entry.counts is None or entry.terms is None:
        raise ValueError("a file's record has no bucket or term counts")
    return entry.counts


def _spliced_postings(old: Postings, chunk_map: np.ndarray, n_chunks: int, fresh: Mapping[int, IndexedFile],
                      per_file: np.ndarray) -> Postings:
    """The old postings of the chunks kept (renumbered) merged with the fresh files' term counts."""
    stride = max(n_chunks, 1)
    old_terms = np.repeat(np.arange(len(old.term_id), dtype=np.int32), np.diff(old.indptr))
    renumbered = chunk_map[old.docs] if old.docs.size else np.zeros(0, np.int64)
    kept = renumbered >= 0
    old_keys = old_terms[kept].astype(np.int64) * stride + renumbered[kept]
    old_tfs = old.tfs[kept]
    term_id = dict(old.term_id)
    first = np.concatenate(([0], np.cumsum(per_file)))
    new_keys, new_tfs = [], []
    for i in sorted(fresh):
        terms = fresh[i].terms
        if terms is None:
            raise ValueError("a file's record has no term counts")
        local = np.array([term_id.setdefault(word, len(term_id)) for word in terms.vocabulary], dtype=np.int64)
        docs = first[i] + np.repeat(np.arange(terms.lengths.shape[0], dtype=np.int64), terms.lengths)
        new_keys.append(local[terms.terms.astype(np.int64)] * stride + docs)
        new_tfs.append(terms.counts.astype(np.float64))
    fresh_keys = np.concatenate(new_keys) if new_keys else np.zeros(0, np.int64)
    fresh_tfs = np.concatenate(new_tfs) if new_tfs else np.zeros(0, np.float64)
    order = np.argsort(fresh_keys)
    fresh_keys, fresh_tfs = fresh_keys[order], fresh_tfs[order]
    if old_keys.size > 1 and not bool((old_keys[1:] > old_keys[:-1]).all()):
        raise ValueError("the old corpus's files are not in walk order")  # never: both walks sort paths
    at = np.searchsorted(old_keys, fresh_keys)
    docs = np.insert(renumbered[kept], at, fresh_keys % stride)
    tfs = np.insert(old_tfs, at, fresh_tfs)
    # Entries per term: the old ones less those of chunks gone, plus the fresh ones.
    per_term = np.bincount(fresh_keys // stride, minlength=len(term_id))
    per_term[:len(old.term_id)] += np.diff(old.indptr) - np.bincount(old_terms[~kept], minlength=len(old.term_id))
    words = list(term_id)
    if (per_term == 0).any():  # terms only the removed or changed files had: no entries to move
        present = per_term > 0
        words = [w for w, keep in zip(words, present.tolist(), strict=True) if keep]
        per_term = per_term[present]
    doc_len = np.zeros(n_chunks, dtype=np.int64)
    moved = np.flatnonzero(chunk_map >= 0)
    doc_len[chunk_map[moved]] = old.doc_len[moved]
    doc_len += np.bincount(fresh_keys % stride, weights=fresh_tfs, minlength=n_chunks).astype(np.int64)  # exact
    return Postings(dict(zip(words, range(len(words)), strict=True)),
                    np.concatenate(([0], np.cumsum(per_term))).astype(np.int64), docs, tfs, doc_len)
