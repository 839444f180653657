"""The in-memory index: chunks in index order plus everything ranking needs (§build).

The order of `chunks` is significant downstream (line weights, tie handling, graph expansion), so
it is kept exactly as building or loading made it. What ranking needs beyond the chunks (BM25
statistics, the cosine matrix, the import graph) is derived on first use.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from cce_relevance.reference import REFERENCE_PARAMS, RankingParams
from cce_relevance.retrieval.chunking.chunk import Chunk
from cce_relevance.retrieval.chunking.import_graph import ImportGraph
from cce_relevance.retrieval.chunking.line_weights import FileLineWeights
from cce_relevance.retrieval.corpus.walk import FileText, text_of
from cce_relevance.retrieval.embedding.buckets import HashEmbeddings
from cce_relevance.retrieval.embedding.embed import HASH_EMBEDDER
from cce_relevance.retrieval.file_indexing.chunk_columns import attach_rows, chunk_ids_of
from cce_relevance.retrieval.ranking.bm25 import BM25
from cce_relevance.retrieval.ranking.cosine import CosineIndex
from cce_relevance.retrieval.ranking.postings import Postings
from cce_relevance.retrieval.ranking.topk import id_ranks
from cce_relevance.strings import rust_line_count


@dataclass
class Index:
    """Chunks with embeddings, and the statistics derived from them on build or load."""

    chunks: Sequence[Chunk]
    """A list, or columns a chunk is made from when read (retrieval/file_indexing/chunk_columns.py)."""
    file_imports: dict[str, list[str]]
    file_token_estimates: dict[str, int]  # each file's token weight as estimated (§token-estimate)
    embedder: str = HASH_EMBEDDER
    walk_skipped: int = 0
    postings: Postings | None = field(default=None, repr=False, compare=False)
    """The chunks' BM25 postings when indexing counted terms (hash embedder); None otherwise
    (a loaded store, another embedder), and then BM25 tokenizes the contents itself."""
    embeddings: HashEmbeddings | None = field(default=None, repr=False, compare=False)
    """A hash-embedder build's embeddings, kept sparse: the chunks get theirs (`Chunk.embedding`,
    rows of `matrix`) only when `attach_embeddings` or `matrix` is called — ranking never needs
    the float64 matrix (chunks × 256 doubles) of a large corpus (retrieval/ranking/cosine.py).
    None otherwise: the chunks hold their embeddings."""
    weighted_lines: Mapping[str, FileLineWeights] | None = field(default=None, repr=False, compare=False)
    """The token weights of the lines of each file (retrieval/chunking/line_weights.py), by path, as
    indexing worked them out; None, or a path missing (two files of one path), when they are
    to be worked out from the chunks (evaluation/spans.py `LineWeights`)."""
    walked: Sequence[tuple[str, str | FileText]] | None = field(default=None, repr=False, compare=False)
    """The (path, text) files the index was made of, in walk order (from a corpus record, each
    text the `FileText` that reads it again); None for a loaded store or an index made of parts.
    Only `line_counts` reads them."""
    walk_excluded: tuple[str, ...] = field(default=(), compare=False)
    """The files the build's exclusion left out of the corpus (retrieval/corpus/exclusion.py)."""
    _bm25: dict[tuple[float, float], BM25] = field(default_factory=dict, repr=False)

    @cached_property
    def chunk_ids(self) -> Sequence[str]:
        return chunk_ids_of(self.chunks)

    @cached_property
    def id_rank(self) -> np.ndarray:
        """Each chunk's position in chunk-id order: how rankings break ties without comparing strings."""
        return id_ranks(self.chunk_ids)

    @cached_property
    def matrix(self) -> np.ndarray:
        """Embeddings as one row per chunk, zero-padded to a common width; column-major, because
        cosine ranking reads it one component (column) at a time (retrieval/ranking/cosine.py). Made
        from sparse hash embeddings, it gives each chunk its row as its embedding."""
        if self.embeddings is not None:
            matrix = self.embeddings.dense(np.float64)
            attach_rows(self.chunks, matrix)
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
        """The embeddings prepared for exact top-k cosine ranking (retrieval/ranking/cosine.py)."""
        if self.embeddings is not None:
            return CosineIndex.of_hash_embeddings(self.embeddings, self.id_rank, lambda: self.matrix)
        return CosineIndex(self.matrix, self.id_rank)

    @cached_property
    def lower_contents(self) -> LowerContents:
        """Each chunk's ASCII-lowercased content, made when first read: hybrid's keyword test
        reads a few dozen chunks per query, not the whole corpus."""
        return LowerContents(self.chunks)

    @cached_property
    def chunks_by_file(self) -> Mapping[str, Sequence[int]]:
        """Each file's chunk positions, ascending, by path (ranges, from a corpus record)."""
        by_file: dict[str, list[int]] = {}
        for i, c in enumerate(self.chunks):
            by_file.setdefault(c.file_path, []).append(i)
        return by_file

    @cached_property
    def rows_by_id(self) -> RowsById:
        """Each file's chunk positions in chunk-id order, as arrays made when a file is first
        asked for: graph expansion scores a neighbour file's chunks and keeps its best two."""
        return RowsById(self.chunks_by_file, self.id_rank)

    @cached_property
    def line_counts(self) -> Mapping[str, int] | None:
        """Each walked file's number of lines (Rust's `str::lines`), by path, worked out when first
        asked for a path; None when the walked files are not known (`walked`)."""
        return None if self.walked is None else LineCounts(self.walked)

    @cached_property
    def graph(self) -> ImportGraph:
        return ImportGraph(self.file_imports, sorted(self.chunks_by_file))

    def with_vectors(self, embedder: str, vectors: Sequence[np.ndarray]) -> Index:
        """This index ranked by cosine over other embeddings (`vectors`, one per chunk in chunk
        order; `embedder` names them): a backend variant's embedder. The chunks, BM25 statistics,
        import graph and everything else derived so far are shared, not copied; the chunks keep
        their own embeddings."""
        width = max((v.shape[0] for v in vectors), default=0)
        matrix = np.zeros((len(self.chunks), width), dtype=np.float64, order="F")
        for row, vector in enumerate(vectors):
            matrix[row, : vector.shape[0]] = vector
        view = replace(self, embedder=embedder, embeddings=None)
        derived = (
            "chunk_ids",
            "id_rank",
            "lower_contents",
            "chunks_by_file",
            "rows_by_id",
            "line_counts",
            "graph",
        )
        view.__dict__.update({name: self.__dict__[name] for name in derived if name in self.__dict__})
        view.__dict__["matrix"] = matrix  # the cached property's value: cosine ranks over it
        return view

    def bm25(self, params: RankingParams = REFERENCE_PARAMS) -> BM25:
        """BM25 statistics for the given k1/b, built on first use and kept."""
        key = (params.bm25_k1, params.bm25_b)
        if key not in self._bm25:
            p = self.postings
            self._bm25[key] = (
                BM25([c.content for c in self.chunks], self.chunk_ids, *key)
                if p is None
                else BM25.from_postings(
                    p.term_id, p.indptr, p.docs, p.tfs, p.doc_len, self.chunk_ids, *key, id_rank=self.id_rank
                )
            )
        return self._bm25[key]


class LowerContents:
    """`ascii_lower` of the chunks' contents by chunk position, each made once, on first use; a
    content that lowercasing leaves unchanged is given back itself (no copy is kept). The
    content is read without being kept in its chunk (`Chunk.passing_content`): the keyword test
    lowercases a sixth of a large corpus's chunks over a thousand queries, and keeping both
    the contents and their lowercased copies would hold the text of those chunks twice."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        self._chunks = chunks
        self._made: dict[int, str] = {}

    def __getitem__(self, position: int) -> str:
        lower = self._made.get(position)
        if lower is None:
            content = self._chunks[position].passing_content()
            lower = fast_ascii_lower(content)
            self._made[position] = lower = content if lower == content else lower
        return lower


class RowsById:
    """A file's chunk positions sorted by id rank (duplicate ids in index order), as an int64
    array, by path; each made once, on first use."""

    def __init__(self, by_file: Mapping[str, Sequence[int]], id_rank: np.ndarray) -> None:
        self._by_file, self._id_rank = by_file, id_rank
        self._made: dict[str, np.ndarray] = {}

    def __getitem__(self, path: str) -> np.ndarray:
        rows = self._made.get(path)
        if rows is None:
            rows = np.array(self._by_file[path], dtype=np.int64)
            self._made[path] = rows = rows[np.argsort(self._id_rank[rows], kind="stable")]
        return rows


class LineCounts(Mapping[str, int]):
    """How many lines each walked file has, counted for a path when first asked. Of two files
    walked under one (lossily decoded) path, the later one counts, as in a dict made in walk order."""

    def __init__(self, files: Sequence[tuple[str, str | FileText]]) -> None:
        self._texts = dict(files)
        self._counts: dict[str, int] = {}

    def __getitem__(self, path: str) -> int:
        count = self._counts.get(path)
        if count is None:
            count = self._counts[path] = rust_line_count(text_of(self._texts[path]))
        return count

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)


def fast_ascii_lower(text: str) -> str:
    """`tokens.ascii_lower`, without its per-character translation of non-ASCII text (a Python
    step per character): `bytes.lower` folds only A–Z, and UTF-8 with surrogates passed through
    gives back every string it encodes."""
    if text.isascii():
        return text.lower()
    return text.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


def index_from_parts(
    chunks: Sequence[Chunk],
    file_imports: Mapping[str, Sequence[str]],
    file_tokens: Mapping[str, int],
    embedder: str,
) -> Index:
    """An index from already-made chunks (a loaded store); BM25 and the graph are recomputed."""
    return Index(list(chunks), {k: list(v) for k, v in file_imports.items()}, dict(file_tokens), embedder)
