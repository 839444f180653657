"""A run's chosen embedders: each opened once, its vectors through the cache, its re-embedded
index made once for every backend that names it.

`RunEmbedders.service(spec)` gives the embedder of a spec (spec.py) as the run uses it: chunk
texts embedded through the on-disk cache (vector_cache.py) with identical texts embedded once,
query vectors kept for the run (vector and hybrid over one embedder embed a query once), and
`index(base)`: the base index's chunks ranked by cosine over this embedder's vectors.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cce_relevance.reference import OLLAMA_EMBEDDER
from cce_relevance.retrieval.embedders.embedder import Embedder, EmbedderUsage
from cce_relevance.retrieval.embedders.local import HashEmbedder, OllamaEmbedder
from cce_relevance.retrieval.embedders.openai import OpenAIEmbedder
from cce_relevance.retrieval.embedders.spec import OPENAI, WORDLLAMA, EmbedderSpec
from cce_relevance.retrieval.embedders.vector_cache import VectorCache
from cce_relevance.retrieval.embedders.wordllama import WordLlamaEmbedder
from cce_relevance.retrieval.embedding.embed import DocumentEmbedder
from cce_relevance.retrieval.index.model import Index


def open_embedder(spec: EmbedderSpec) -> Embedder:
    """The embedder `spec` describes (not yet called: a model loads, a session connects, on first use)."""
    if spec.kind == WORDLLAMA:
        return WordLlamaEmbedder(spec)
    if spec.kind == OPENAI:
        return OpenAIEmbedder(spec)
    if spec.kind == OLLAMA_EMBEDDER:
        return OllamaEmbedder(spec)
    return HashEmbedder(spec)


class EmbeddingService:
    """One embedder as a run uses it (see the module docstring)."""

    def __init__(self, embedder: Embedder, cache: VectorCache | None) -> None:
        self.embedder = embedder
        self.cache = cache if not isinstance(embedder, HashEmbedder) else None  # hashing is cheaper
        self._queries: dict[str, np.ndarray] = {}
        self._indexes: dict[int, tuple[Index, Index]] = {}

    @property
    def spec(self) -> EmbedderSpec:
        return self.embedder.spec

    @property
    def usage(self) -> EmbedderUsage:
        return self.embedder.usage

    def embed_all(self, texts: Sequence[str]) -> list[np.ndarray]:
        """A vector per text: from the cache where it has one, else embedded (each distinct text
        once) and kept there."""
        embedder = self.embedder
        cut = [embedder.cut(t) for t in texts]
        distinct = list(dict.fromkeys(cut))
        identity = embedder.identity
        found = self.cache.get_many(identity, distinct) if self.cache is not None else {}
        self.usage.cache_hits += len(found)
        missing = [t for t in distinct if t not in found]
        if missing:
            made = dict(zip(missing, embedder.embed(missing), strict=True))
            if self.cache is not None:
                self.cache.put_many(identity, made)
            found.update(made)
        return [found[t] for t in cut]

    def embed_queries(self, queries: Sequence[str]) -> None:
        """Embed now, in batches, the queries a run will search (the empty query has the empty vector)."""
        new = [q for q in dict.fromkeys(queries) if q and q not in self._queries]
        for query, vector in zip(new, self.embed_all(new), strict=True):
            self._keep(query, vector)

    def embed_query(self, query: str) -> np.ndarray:
        """The query's vector, embedded once per run."""
        vector = self._queries.get(query)
        if vector is None:
            vector = self._keep(query, self.embed_all([query])[0] if query else np.zeros(0))
        return vector

    def _keep(self, query: str, vector: np.ndarray) -> np.ndarray:
        kept = np.array(vector, dtype=np.float64)
        kept.flags.writeable = False
        self._queries[query] = kept
        return kept

    def index(self, base: Index) -> Index:
        """`base`'s chunks with this embedder's vectors (made once per base index)."""
        made = self._indexes.get(id(base))
        if made is None or made[0] is not base:
            vectors = self.embed_all([c.content for c in base.chunks])
            made = (base, base.with_vectors(self.spec.name, vectors))
            self._indexes[id(base)] = made
        return made[1]

    def documents(self) -> DocumentEmbedder:
        """This embedder as an index build's chunk embedder (`index --embedder`), the store
        recording its name."""
        return DocumentEmbedder(self.spec.name, self.embed_all)


class RunEmbedders:
    """The embedders of one run, each opened on first use and closed with the run; the cache in
    `cache_dir` (None: none)."""

    def __init__(self, cache_dir: str | None) -> None:
        self._cache_dir = cache_dir
        self._cache: VectorCache | None = None
        self._services: dict[EmbedderSpec, EmbeddingService] = {}

    def service(self, spec: EmbedderSpec) -> EmbeddingService:
        service = self._services.get(spec)
        if service is None:
            if self._cache is None:
                self._cache = VectorCache.open(self._cache_dir)
            service = self._services[spec] = EmbeddingService(open_embedder(spec), self._cache)
        return service

    def close(self) -> None:
        for service in self._services.values():
            service.embedder.close()
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> RunEmbedders:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
