"""The in-memory index: chunks in index order plus everything ranking needs (pipeline.md §3).

Building walks the corpus (sorted), redacts each file, chunks it, embeds every chunk with the
hash embedder and derives BM25 statistics and the import graph (the per-file work may run in
worker processes or come from the index cache; the index is the same). The order of `chunks` is
significant downstream (line weights, tie handling, graph expansion), so it is kept exactly.
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from cce_relevance.config import REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.bm25 import BM25
from cce_relevance.retrieval.chunk import Chunk
from cce_relevance.retrieval.corpus_record import (
    CorpusArrays,
    arrays_from_entries,
    corpus_parts,
    decode_corpus,
    materialize,
)
from cce_relevance.retrieval.corpus_splice import splice
from cce_relevance.retrieval.embed import HASH_DOCUMENTS, HASH_EMBEDDER, DocumentEmbedder
from cce_relevance.retrieval.graph import ImportGraph
from cce_relevance.retrieval.hash_counts import HashEmbeddings
from cce_relevance.retrieval.index_cache import IndexCache
from cce_relevance.retrieval.indexed_file import IndexedFile
from cce_relevance.retrieval.line_weights import WeightedLines, unique_paths
from cce_relevance.retrieval.packs import REFERENCE_PACKS, PackSet
from cce_relevance.retrieval.records import Progress, file_keys, indexed_files, opened_cache
from cce_relevance.retrieval.term_counts import Postings, corpus_postings
from cce_relevance.retrieval.topk import id_ranks
from cce_relevance.retrieval.vector import CosineIndex
from cce_relevance.retrieval.walk import walk
from cce_relevance.retrieval.workers import FileJob
from cce_relevance.strings import rust_line_count


@dataclass
class Index:
    """Chunks with embeddings, and the statistics derived from them on build or load."""

    chunks: list[Chunk]
    file_imports: dict[str, list[str]]
    file_tokens: dict[str, int]
    embedder: str = HASH_EMBEDDER
    walk_skipped: int = 0
    postings: Postings | None = field(default=None, repr=False, compare=False)
    """The chunks' BM25 postings when indexing counted terms (hash embedder); None otherwise
    (a loaded store, another embedder), and then BM25 tokenizes the contents itself."""
    embeddings: HashEmbeddings | None = field(default=None, repr=False, compare=False)
    """A hash-embedder build's embeddings, kept sparse: the chunks get theirs (`Chunk.embedding`,
    rows of `matrix`) only when `attach_embeddings` or `matrix` is called — ranking never needs
    the 147 MB float64 matrix of a large corpus (retrieval/vector.py). None otherwise: the
    chunks hold their embeddings."""
    weighted_lines: Mapping[str, WeightedLines] | None = field(default=None, repr=False, compare=False)
    """The token weights of the lines of each file (retrieval/line_weights.py), by path, as
    indexing worked them out; None, or a path missing (two files of one path), when they are
    to be worked out from the chunks (evaluation/spans.py `LineWeights`)."""
    walked: Sequence[tuple[str, str]] | None = field(default=None, repr=False, compare=False)
    """The (path, text) files the index was made of, in walk order; None for a loaded store or an
    index made of parts. Only `line_counts` reads them."""
    _bm25: dict[tuple[float, float], BM25] = field(default_factory=dict, repr=False)

    @cached_property
    def chunk_ids(self) -> list[str]:
        return [c.chunk_id for c in self.chunks]

    @cached_property
    def id_rank(self) -> np.ndarray:
        """Each chunk's position in chunk-id order: how rankings break ties without comparing strings."""
        return id_ranks(self.chunk_ids)

    @cached_property
    def matrix(self) -> np.ndarray:
        """Embeddings as one row per chunk, zero-padded to a common width; column-major, because
        cosine ranking reads it one component (column) at a time (retrieval/vector.py). Made
        from sparse hash embeddings, it gives each chunk its row as its embedding."""
        if self.embeddings is not None:
            matrix = self.embeddings.dense(np.float64)
            for c, row in zip(self.chunks, matrix, strict=True):
                c.embedding = row
            return matrix
        width = max((c.embedding.shape[0] for c in self.chunks if c.embedding is not None), default=0)
        m = np.zeros((len(self.chunks), width), dtype=np.float64, order="F")
        for row, c in enumerate(self.chunks):
            if c.embedding is not None and c.embedding.size:
                m[row, : c.embedding.shape[0]] = c.embedding
        return m

    def attach_embeddings(self) -> None:
        """Give every chunk its embedding, for what reads `Chunk.embedding` (a store being written)."""
        self.matrix  # noqa: B018 - made on first use, and it attaches the rows

    @cached_property
    def cosine(self) -> CosineIndex:
        """The embeddings prepared for exact top-k cosine ranking (retrieval/vector.py)."""
        if self.embeddings is not None:
            return CosineIndex.of_hash_embeddings(self.embeddings, self.id_rank, lambda: self.matrix)
        return CosineIndex(self.matrix, self.id_rank)

    @cached_property
    def lower_contents(self) -> LowerContents:
        """Each chunk's ASCII-lowercased content, made when first read: hybrid's keyword test
        reads a few dozen chunks per query, not the whole corpus."""
        return LowerContents(self.chunks)

    @cached_property
    def chunks_by_file(self) -> dict[str, list[int]]:
        by_file: dict[str, list[int]] = {}
        for i, c in enumerate(self.chunks):
            by_file.setdefault(c.file_path, []).append(i)
        return by_file

    @cached_property
    def line_counts(self) -> Mapping[str, int] | None:
        """Each walked file's number of lines (Rust's `str::lines`), by path, worked out when first
        asked for a path; None when the walked files are not known (`walked`)."""
        return None if self.walked is None else LineCounts(self.walked)

    @cached_property
    def graph(self) -> ImportGraph:
        return ImportGraph(self.file_imports, sorted(self.chunks_by_file))

    def bm25(self, params: RankingParams = REFERENCE_PARAMS) -> BM25:
        """BM25 statistics for the given k1/b, built on first use and kept."""
        key = (params.bm25_k1, params.bm25_b)
        if key not in self._bm25:
            p = self.postings
            self._bm25[key] = BM25([c.content for c in self.chunks], self.chunk_ids, *key) if p is None else \
                BM25.from_postings(p.term_id, p.indptr, p.docs, p.tfs, p.doc_len, self.chunk_ids, *key,
                                   id_rank=self.id_rank)
        return self._bm25[key]


class LowerContents:
    """`ascii_lower` of the chunks' contents by chunk position, each made once, on first use; a
    content that lowercasing leaves unchanged is given back itself (no copy is kept)."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self._chunks = chunks
        self._made: dict[int, str] = {}

    def __getitem__(self, position: int) -> str:
        lower = self._made.get(position)
        if lower is None:
            content = self._chunks[position].content
            lower = fast_ascii_lower(content)
            self._made[position] = lower = content if lower == content else lower
        return lower


class LineCounts(Mapping[str, int]):
    """How many lines each walked file has, counted for a path when first asked. Of two files
    walked under one (lossily decoded) path, the later one counts, as in a dict made in walk order."""

    def __init__(self, files: Sequence[tuple[str, str]]) -> None:
        self._texts = dict(files)
        self._counts: dict[str, int] = {}

    def __getitem__(self, path: str) -> int:
        count = self._counts.get(path)
        if count is None:
            text = self._texts[path]
            count = self._counts[path] = rust_line_count(text)
        return count

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)


def fast_ascii_lower(text: str) -> str:
    """`tokens.ascii_lower`, without its per-character translation of non-ASCII text (which costs
    about 30 ns a character): `bytes.lower` folds only A–Z, and UTF-8 with surrogates passed
    through gives back every string it encodes."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


@dataclass(frozen=True)
class BuildOptions:
    """How the front doors want corpora indexed (`build_index`'s keyword arguments, gathered)."""

    cache: str | None = None
    workers: int | None = None
    progress: Progress | None = None


DEFAULT_BUILD = BuildOptions()
"""No cache, worker processes when it pays, no progress: what a plain library call gets."""


def build_index(root: str | os.PathLike, protect_secrets: bool = True,
                embedder: DocumentEmbedder = HASH_DOCUMENTS, languages: PackSet = REFERENCE_PACKS, *,
                cache: str | None = None, workers: int | None = None, progress: Progress | None = None) -> Index:
    """Walk, redact, chunk and embed a corpus directory, in the reference's order.

    `languages` are the packs that chunk (retrieval/languages.py `enabled_packs`); the default is
    the reference's six, which keeps every default output byte-identical to the reference. Files
    are indexed one by one (retrieval/records.py), and with the hash embedder all embeddings are
    made at once from the files' bucket counts and kept sparse (`Index.embeddings`: chunks get
    theirs when `attach_embeddings` is called), and BM25's postings are merged from the files'
    term counts (retrieval/term_counts.py).

    None of the rest changes the index: `cache` is the index cache's directory (None: no cache;
    retrieval/index_cache.py: files' records, and whole corpora kept as assembled or spliced
    with the files that changed — retrieval/corpus_record.py, corpus_splice.py), `workers` the
    number of processes (None: one per CPU up to 4, one for a small corpus; retrieval/workers.py),
    and `progress` is called with (files done, files in all) as files are indexed.
    """
    with _collector_paused():
        return _build(root, protect_secrets, embedder, languages, cache, workers, progress)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building: an index is a million or so objects that
    live on and hold no reference cycles, and the collector's full passes over that growing heap
    cost a tenth of a warm build while finding nothing to free."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _build(root: str | os.PathLike, protect_secrets: bool, embedder: DocumentEmbedder, languages: PackSet,
           cache: str | None, workers: int | None, progress: Progress | None) -> Index:
    walked = walk(root, protect_secrets=protect_secrets)
    files = [(f.path, f.text) for f in walked.files]
    job = FileJob(languages, protect_secrets, embedder is HASH_DOCUMENTS)
    with opened_cache(cache, job) as store:
        if store is None:
            return _assembled(files, indexed_files(files, job, None, [], workers, progress), embedder, walked.skipped)
        return _cached_build(store, files, job, workers, progress, walked.skipped)


def _cached_build(store: IndexCache, files: list[tuple[str, str]], job: FileJob, workers: int | None,
                  progress: Progress | None, skipped: int) -> Index:
    """With the index cache (hash embedder): the corpus as kept when no file changed; else the
    last corpus spliced with the records of the files that changed, when they are at most half;
    else assembled from every file's record. Whatever is made is kept for the next run."""
    keys = file_keys(store, files)
    corpus_key = store.corpus_key(keys)
    kept = _decoded(store.get_corpus(corpus_key))
    if kept is not None and kept.keys == keys:
        if progress is not None:
            progress(0, len(files))
            progress(len(files), len(files))
        return _from_arrays(kept, files, skipped)
    base = _decoded(store.latest_corpus())
    known = set(base.keys) if base is not None else set()
    changed = [i for i, key in enumerate(keys) if key not in known]
    if base is not None and 2 * len(changed) <= len(files):
        unchanged = len(files) - len(changed)
        shifted = None if progress is None else lambda done, _: progress(unchanged + done, len(files))
        fresh = indexed_files([files[i] for i in changed], job, store, [keys[i] for i in changed], workers, shifted)
        try:
            arrays = splice(base, keys, files, dict(zip(changed, fresh, strict=True)))
        except ValueError:
            arrays = None  # assembled from every file's record below
        if arrays is not None:
            store.put_corpus(corpus_key, corpus_parts(arrays))
            return _from_arrays(arrays, files, skipped)
    entries = indexed_files(files, job, store, keys, workers, progress)
    index = _assembled(files, entries, HASH_DOCUMENTS, skipped)
    if index.postings is not None:
        store.put_corpus(corpus_key, corpus_parts(arrays_from_entries(keys, files, entries, index.postings,
                                                                      index.id_rank)))
    return index


def _assembled(files: list[tuple[str, str]], entries: list[IndexedFile], embedder: DocumentEmbedder,
               skipped: int) -> Index:
    """The index of the files whose records are `entries`."""
    chunks = [c for entry in entries for c in entry.chunks]
    file_imports = {path: entry.imports for (path, _), entry in zip(files, entries, strict=True) if entry.imports}
    file_tokens = {path: entry.tokens for (path, _), entry in zip(files, entries, strict=True)}
    lines = unique_paths((path, entry.lines) for (path, _), entry in zip(files, entries, strict=True))
    if embedder is not HASH_DOCUMENTS:
        for c, vector in zip(chunks, embedder.embed_all([c.content for c in chunks]), strict=True):
            c.embedding = vector
        return Index(chunks, file_imports, file_tokens, embedder.name, skipped, weighted_lines=lines, walked=files)
    terms = [entry.terms for entry in entries if entry.terms is not None]
    postings = corpus_postings(terms) if len(terms) == len(entries) else None
    return Index(chunks, file_imports, file_tokens, embedder.name, skipped, postings,
                 HashEmbeddings.of([entry.counts for entry in entries if entry.counts is not None]), lines, files)


def _decoded(data: memoryview | None) -> CorpusArrays | None:
    """A kept corpus's arrays, or None when there is none or it does not decode (it is then
    made again and replaced)."""
    if data is None:
        return None
    try:
        return decode_corpus(data)
    except ValueError:
        return None


def _from_arrays(arrays: CorpusArrays, files: list[tuple[str, str]], skipped: int) -> Index:
    corpus = materialize(arrays, files)
    index = Index(corpus.chunks, corpus.file_imports, corpus.file_tokens, HASH_EMBEDDER, skipped, arrays.postings,
                  HashEmbeddings.of([corpus.counts]), arrays.lines([path for path, _ in files]), files)
    index.id_rank = arrays.id_rank
    index.chunks_by_file = _chunks_by_file(files, arrays.per_file.tolist())
    return index


def _chunks_by_file(files: list[tuple[str, str]], sizes: list[int]) -> dict[str, list[int]]:
    """`Index.chunks_by_file` of files whose chunks come one file after the other (two files
    walked under one lossily decoded path are next to each other, and share its list)."""
    by_file: dict[str, list[int]] = {}
    first = 0
    for (path, _), size in zip(files, sizes, strict=True):
        if size:
            by_file.setdefault(path, []).extend(range(first, first + size))
        first += size
    return by_file


def index_from_parts(chunks: Sequence[Chunk], file_imports: Mapping[str, Sequence[str]],
                     file_tokens: Mapping[str, int], embedder: str) -> Index:
    """An index from already-made chunks (a loaded store); BM25 and the graph are recomputed."""
    return Index(list(chunks), {k: list(v) for k, v in file_imports.items()}, dict(file_tokens), embedder)

