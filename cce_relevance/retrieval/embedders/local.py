"""The two embedders that were there before the others, behind the same interface: the hash
embedder (a variant over a store built with another embedder) and an Ollama server (a variant
over a hash-embedded corpus; `index --embedder ollama` keeps its own path, retrieval/embedding/ollama.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cce_relevance.errors import CceError
from cce_relevance.reference import EMBED_BATCH_SIZE
from cce_relevance.retrieval.embedders.embedder import Embedder
from cce_relevance.retrieval.embedders.spec import EmbedderSpec
from cce_relevance.retrieval.embedding.embed import hash_embed
from cce_relevance.retrieval.embedding.ollama import MAX_INPUT_CHARS, OllamaClient, OllamaError


class HashEmbedder(Embedder):
    """The reference's hash embedding of each text (§hash-embedder), made here: no call to count."""

    @property
    def identity(self) -> str:
        return "hash"

    def cut(self, text: str) -> str:
        return text

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        return [hash_embed(t) for t in texts]


class OllamaEmbedder(Embedder):
    """The Ollama server of `CCE_OLLAMA_URL` and `CCE_OLLAMA_MODEL`, its vectors as returned."""

    def __init__(self, spec: EmbedderSpec, client: OllamaClient | None = None) -> None:
        super().__init__(spec)
        self._client = client if client is not None else OllamaClient.from_env()

    @property
    def identity(self) -> str:
        return f"ollama {self._client.model} raw"

    def cut(self, text: str) -> str:
        return text[:MAX_INPUT_CHARS]

    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        try:
            for first in range(0, len(texts), EMBED_BATCH_SIZE):
                batch = texts[first : first + EMBED_BATCH_SIZE]
                with self.timed(len(batch)):
                    out.extend(self._client.embed(batch))
        except OllamaError as exc:
            raise CceError(f"embedder {self.spec.name!r}: {exc}") from None
        return out
