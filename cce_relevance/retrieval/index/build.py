"""Building the index of a corpus directory (§build).

Building walks the corpus (sorted), redacts each file, chunks it, embeds every chunk with the
hash embedder and derives BM25 statistics and the import graph (the per-file work may run in
worker processes or come from the index cache; the index is the same).
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from cce_relevance.errors import CceError
from cce_relevance.memory_pages import give_back_freed_memory, release_array
from cce_relevance.retrieval.cache.corpus_record import (
    CorpusArrays,
    arrays_from_entries,
    chunk_columns,
    corpus_parts,
    decode_corpus,
    materialize,
)
from cce_relevance.retrieval.cache.corpus_splice import splice
from cce_relevance.retrieval.cache.index_cache import IndexCache, default_cache_dir
from cce_relevance.retrieval.chunking.chunk import set_embedding
from cce_relevance.retrieval.chunking.line_weights import unique_paths
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS, PackSet
from cce_relevance.retrieval.corpus.exclusion import NO_EXCLUSION, Exclusion
from cce_relevance.retrieval.corpus.walk import FileText, text_of, walk
from cce_relevance.retrieval.embedding.buckets import BucketCounts, HashEmbeddings
from cce_relevance.retrieval.embedding.embed import HASH_DOCUMENTS, HASH_EMBEDDER, DocumentEmbedder
from cce_relevance.retrieval.file_indexing.file import IndexedFile
from cce_relevance.retrieval.file_indexing.workers import FileJob
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.index.record_sources import Progress, file_keys, indexed_files, opened_cache
from cce_relevance.retrieval.ranking.postings import TermCounts, corpus_postings
from cce_relevance.retrieval.ranking.topk import id_ranks


@dataclass(frozen=True)
class BuildOptions:
    """How the front doors want corpora indexed (`build_index`'s keyword arguments, gathered)."""

    cache: str | None = None
    workers: int | None = None
    progress: Progress | None = None

    @classmethod
    def with_cache(
        cls, cache_dir: str | None = None, *, use_cache: bool = True, progress: Progress | None = None
    ) -> BuildOptions:
        """Indexing with the index cache in `cache_dir` (default: the user's cache directory,
        where one is known) unless `use_cache` is off, reporting to `progress`.

        A directory named explicitly must be usable (an input error otherwise); the default one is
        used when it can be, and indexing goes on uncached when it cannot.
        """
        if not use_cache:
            return cls(progress=progress)
        if cache_dir is None:
            return cls(cache=default_cache_dir(), progress=progress)
        try:
            os.makedirs(cache_dir, exist_ok=True)
        except OSError as exc:
            raise CceError(f"cannot use cache directory {cache_dir}: {exc.strerror or exc}") from None
        if not os.access(cache_dir, os.W_OK | os.X_OK):
            raise CceError(f"cannot use cache directory {cache_dir}: it is not writable")
        return cls(cache=cache_dir, progress=progress)


DEFAULT_BUILD = BuildOptions()
"""No cache, worker processes when it pays, no progress: what a plain library call gets."""


def build_index(
    root: str | os.PathLike[str],
    protect_secrets: bool = True,
    embedder: DocumentEmbedder = HASH_DOCUMENTS,
    languages: PackSet = REFERENCE_PACKS,
    *,
    cache: str | None = None,
    workers: int | None = None,
    progress: Progress | None = None,
    exclude: Exclusion = NO_EXCLUSION,
) -> Index:
    """Walk, redact, chunk and embed a corpus directory, in the reference's order.

    `languages` are the packs that chunk (retrieval/chunking/languages.py `enabled_packs`); the default is
    the reference's six, which keeps every default output byte-identical to the reference. Files
    are indexed one by one (retrieval/index/record_sources.py), and with the hash embedder all embeddings are
    made at once from the files' bucket counts and kept sparse (`Index.embeddings`: chunks get
    theirs when `attach_embeddings` is called), and BM25's postings are merged from the files'
    term counts (retrieval/ranking/postings.py).

    None of the rest changes the index: `cache` is the index cache's directory (None: no cache;
    retrieval/cache/index_cache.py: files' records, and whole corpora kept as assembled or spliced
    with the files that changed — retrieval/cache/corpus_record.py, corpus_splice.py), `workers` the
    number of processes (None: one per CPU up to 4, one for a small corpus;
    retrieval/file_indexing/workers.py),
    and `progress` is called with (files done, files in all) as files are indexed. `exclude` leaves
    files out of the walk (a run's own files, the user's patterns: retrieval/corpus/exclusion.py);
    the index names them in `walk_excluded`.
    """
    with _collector_paused():
        return _build(root, protect_secrets, embedder, languages, cache, workers, progress, exclude)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building: an index is a million or so objects that
    live on and hold no reference cycles, and the collector's full passes over that growing heap
    cost a noticeable share of a warm build while finding nothing to free."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _build(
    root: str | os.PathLike[str],
    protect_secrets: bool,
    embedder: DocumentEmbedder,
    languages: PackSet,
    cache: str | None,
    workers: int | None,
    progress: Progress | None,
    exclude: Exclusion,
) -> Index:
    walked = walk(root, protect_secrets=protect_secrets, exclude=exclude)
    files = [(f.path, f.text) for f in walked.files]
    sources = [f.source for f in walked.files if f.source is not None]
    skipped, excluded = walked.skipped, walked.excluded
    del walked  # `files` holds the texts alone: a warm build can then let them go
    job = FileJob(languages, protect_secrets, embedder is HASH_DOCUMENTS)
    with opened_cache(cache, job) as store:
        if store is None:
            entries = indexed_files(files, job, None, [], workers, progress)
            give_back_freed_memory()
            index = _assembled(files, entries, embedder, skipped)
            del entries
            give_back_freed_memory()
        else:
            index = _cached_build(store, files, sources, job, workers, progress, skipped)
    index.walk_excluded = excluded
    return index


def _cached_build(
    store: IndexCache,
    files: list[tuple[str, str]],
    sources: list[FileText],
    job: FileJob,
    workers: int | None,
    progress: Progress | None,
    skipped: int,
) -> Index:
    """With the index cache (hash embedder): the corpus as kept when no file changed; else the
    last corpus spliced with the records of the files that changed, when they are at most half;
    else assembled from every file's record. Whatever is made is kept for the next run.

    The index returned is made from the corpus record kept, or just stored (`_stored`), as a warm
    run's is: it holds no walked text — its chunks and line counts read a file again when first
    asked for (`FileText`), and `files` is emptied, so the texts of the files no hit is in are let
    go before the chunks are made. Only when no record could be kept is the build's own returned."""
    keys = file_keys(store, [(path, source.digest) for (path, _), source in zip(files, sources, strict=True)])
    corpus_key = store.corpus_key(keys)
    kept = _kept(store, corpus_key, keys)
    if kept is not None:
        if progress is not None:
            progress(0, len(files))
            progress(len(files), len(files))
        return _index_of_kept(kept, files, sources, skipped)
    base = _decoded(store.latest_corpus())
    known = set(base.keys) if base is not None else set()
    changed = [i for i, key in enumerate(keys) if key not in known]
    if base is not None and 2 * len(changed) <= len(files):
        unchanged = len(files) - len(changed)
        shifted = None if progress is None else lambda done, _: progress(unchanged + done, len(files))
        changed_files = [files[i] for i in changed]
        # From here on only the changed files' texts are read (indexed, and compared with their
        # records'): the others' go now rather than once the spliced index gives them up, so that
        # they are not held while the splice makes the corpus's arrays (at a million chunks, the
        # texts are some 660 MiB, the splice's arrays 1.2 GiB).
        held = _given_up(files, sources, keep=set(changed))
        give_back_freed_memory()
        fresh = indexed_files(changed_files, job, store, [keys[i] for i in changed], workers, shifted)
        del changed_files
        try:
            arrays = splice(base, keys, held, dict(zip(changed, fresh, strict=True)))
        except ValueError:
            arrays = None  # assembled from every file's record below
        # The last corpus's mapping goes with its arrays: splicing read most of its pages, and
        # they would stay resident while the spliced record is written and read back.
        del base
        if arrays is not None:
            store.put_corpus(corpus_key, corpus_parts(arrays))
            stored = _stored(store, corpus_key, keys)
            if stored is None:
                return _from_arrays(arrays, _given_up(held, sources), skipped)
            del arrays, fresh
            return _index_of_kept(stored, held, sources, skipped)
        files.extend((path, text_of(text)) for path, text in held)  # read again, digests checked
        del held
    entries = indexed_files(files, job, store, keys, workers, progress)
    give_back_freed_memory()  # what chunking and counting freed: the rest allocates differently
    index = _assembled(files, entries, HASH_DOCUMENTS, skipped)
    if index.postings is not None and index.embeddings is not None:
        counts = index.embeddings.bucket_counts()
        ranks = id_ranks([c.chunk_id for c in index.chunks])
        arrays = arrays_from_entries(keys, files, entries, index.postings, ranks, counts)
        # The chunks as the record's columns, as a warm run holds them; the files' records, their
        # chunk objects and the redacted texts these slice go with `entries`, before the record's
        # pieces are made (which then take the freed memory, not more).
        index.chunks, index.id_rank = chunk_columns(arrays, files), ranks
        index.chunks_by_file = _chunks_by_file(files, arrays.per_file.tolist())
        del entries
        give_back_freed_memory()
        store.put_corpus(corpus_key, corpus_parts(arrays))
        del arrays
        stored = _stored(store, corpus_key, keys)
        if stored is not None:
            del index
            give_back_freed_memory()  # the build's index, before the record's is made
            return _index_of_kept(stored, files, sources, skipped)
    else:
        del entries
    give_back_freed_memory()  # the files' records and the corpus record's pieces, before scoring
    return index


def _kept(store: IndexCache, corpus_key: bytes, keys: list[bytes]) -> tuple[CorpusArrays, memoryview] | None:
    """The arrays (and mapped record) of the corpus kept under `corpus_key` when there is one for
    exactly these files' `keys`; None otherwise. What decoding read besides the arrays it checks
    (the ids, keys, vocabulary and kept texts) is dropped from the resident set again: making the
    index reads what it needs of the record once more."""
    record = store.get_corpus(corpus_key)
    kept = _decoded(record)
    _release(record)
    return (kept, record) if kept is not None and record is not None and kept.keys == keys else None


def _stored(
    store: IndexCache, corpus_key: bytes, keys: list[bytes]
) -> tuple[CorpusArrays, memoryview] | None:
    """`_kept` for the corpus record this build has just put in `store`, once written; None when
    it was not kept (the cache could not write it).

    The index the build made holds the walked texts, the arrays the record was written from and
    the chunks' columns in ordinary memory, while the record's arrays are views of a mapping whose
    pages are dropped once read: a cold run that scores from its record, as a warm run does, lets
    the build's memory go before the queries add theirs. The indexes are equal (a warm run's
    reports are the cold run's, byte for byte)."""
    store.wait()
    return _kept(store, corpus_key, keys)


def _index_of_kept(
    kept: tuple[CorpusArrays, memoryview],
    files: _Walked,
    sources: list[FileText],
    skipped: int,
) -> Index:
    """The index of a kept corpus record; the walked texts in `files` are given up first."""
    arrays, record = kept
    lazy = _given_up(files, sources)
    give_back_freed_memory()  # the walked texts' pages, before the record's are read
    index = _from_arrays(arrays, lazy, skipped)
    _release(record)
    give_back_freed_memory()  # what making the index freed
    return index


def _assembled(
    files: list[tuple[str, str]], entries: list[IndexedFile], embedder: DocumentEmbedder, skipped: int
) -> Index:
    """The index of the files whose records are `entries`."""
    chunks = [c for entry in entries for c in entry.chunks]
    file_imports = {
        path: entry.imports for (path, _), entry in zip(files, entries, strict=True) if entry.imports
    }
    file_tokens = {path: entry.tokens for (path, _), entry in zip(files, entries, strict=True)}
    lines = unique_paths((path, entry.lines) for (path, _), entry in zip(files, entries, strict=True))
    if embedder is not HASH_DOCUMENTS:
        for c, vector in zip(chunks, embedder.embed_all([c.content for c in chunks]), strict=True):
            set_embedding(c, vector)
        return Index(
            chunks, file_imports, file_tokens, embedder.name, skipped, weighted_lines=lines, walked=files
        )
    terms, counts = _counts_given_up(entries)
    postings = corpus_postings(terms) if len(terms) == len(entries) else None
    del terms  # the files' term counts: what follows (embeddings, the corpus record) does not hold them
    give_back_freed_memory()  # their pages, before the embeddings join the bucket counts
    embeddings = HashEmbeddings.of(counts)
    del counts
    give_back_freed_memory()  # the bucket counts' pages, among what lives on
    return Index(
        chunks, file_imports, file_tokens, embedder.name, skipped, postings, embeddings, lines, files
    )


def _counts_given_up(entries: list[IndexedFile]) -> tuple[list[TermCounts], list[BucketCounts]]:
    """The files' term counts and bucket counts, each entry of `entries` replaced by itself
    without them: they are merged into the postings and the embeddings once, and the entries
    live on until the corpus record is made — a few tens of megabytes at 100k chunks that would
    otherwise still be held at the build's high-water mark."""
    terms = [entry.terms for entry in entries if entry.terms is not None]
    counts = [entry.counts for entry in entries if entry.counts is not None]
    entries[:] = [replace(entry, terms=None, counts=None) for entry in entries]
    return terms, counts


def _decoded(data: memoryview | None) -> CorpusArrays | None:
    """A kept corpus's arrays, or None when there is none or it does not decode (it is then
    made again and replaced)."""
    if data is None:
        return None
    try:
        return decode_corpus(data)
    except ValueError:
        return None


def _release(record: memoryview | None) -> None:
    """Drop the resident pages of a kept corpus's mapped record once its index is made.

    Decoding checks every array whole and making the index reads the chunks' rows, the bucket
    counts (for the norms) and more, but what the index reads afterwards is a small part: the
    postings of the queries' terms, the weighted lines of the files a hit is in, the chunk-id
    ranks, the bucket counts once more for the count matrix (retrieval/ranking/cosine.py, which
    drops them again). The index keeps views into the record, and those pages are mapped again
    from the page cache as they are read (memory_pages.py `release_pages`); the rest — a large
    corpus's tens of megabytes — would otherwise stay counted in the run's resident set."""
    if record is not None:
        release_array(np.frombuffer(record, dtype=np.uint8))


_Walked = list[tuple[str, str]] | list[tuple[str, str | FileText]]
"""Walked (path, text) files, each text perhaps given up for its `FileText`."""


def _given_up(
    files: _Walked,
    sources: list[FileText],
    keep: set[int] | frozenset[int] = frozenset(),
) -> list[tuple[str, str | FileText]]:
    """The walked files with each text, but those at the positions in `keep`, given up for the
    `FileText` that reads it again; `files` is emptied (the caller's list is the last holder of
    the texts)."""
    lazy: list[tuple[str, str | FileText]] = [
        (path, text if i in keep else source)
        for i, ((path, text), source) in enumerate(zip(files, sources, strict=True))
    ]
    files.clear()
    return lazy


def _from_arrays(arrays: CorpusArrays, files: list[tuple[str, str | FileText]], skipped: int) -> Index:
    corpus = materialize(arrays, files)
    index = Index(
        corpus.chunks,
        corpus.file_imports,
        corpus.file_token_estimates,
        HASH_EMBEDDER,
        skipped,
        arrays.postings,
        HashEmbeddings.of([corpus.counts]),
        arrays.lines([path for path, _ in files]),
        files,
    )
    index.id_rank = arrays.id_rank
    index.chunks_by_file = _chunks_by_file(files, arrays.per_file.tolist())
    return index


def _chunks_by_file(
    files: Sequence[tuple[str, str | FileText]], sizes: list[int]
) -> Mapping[str, Sequence[int]]:
    """`Index.chunks_by_file` of files whose chunks come one file after the other, each file's
    positions as a `range` (a list would hold an int object a chunk: 40 bytes); two files walked
    under one lossily decoded path share its positions, one range when they are next to each other."""
    by_file: dict[str, Sequence[int]] = {}
    first = 0
    for (path, _), size in zip(files, sizes, strict=True):
        if size:
            here = range(first, first + size)
            before = by_file.get(path)
            if before is None:
                by_file[path] = here
            elif isinstance(before, range) and before.stop == first:
                by_file[path] = range(before.start, here.stop)
            else:
                by_file[path] = [*before, *here]
        first += size
    return by_file
