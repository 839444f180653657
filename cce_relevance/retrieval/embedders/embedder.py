"""The one interface every chosen embedder fills, and what using it cost.

An embedder turns texts into vectors, one per text, each independent of the texts embedded with
it (so a cached vector is the one a fresh call would give), and counts its work in `usage`: the
calls it made (requests, or batches through a local model), the texts it embedded, the tokens an
endpoint reported, and the seconds it took. Cache hits are counted by the cache's user
(service.py), which never calls the embedder for them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, fields, replace
from functools import partial

import numpy as np

from cce_relevance import timing
from cce_relevance.retrieval.embedders.spec import EmbedderSpec


@dataclass
class EmbedderUsage:
    """Counters of one embedder's work; `tokens` stays None until an endpoint reports some."""

    calls: int = 0
    texts: int = 0
    tokens: int | None = None
    cache_hits: int = 0
    seconds: float = 0.0

    def since(self, earlier: EmbedderUsage) -> EmbedderUsage:
        """The work done after `earlier` (a `snapshot` of these counters) was taken."""
        tokens = None if self.tokens is None else self.tokens - (earlier.tokens or 0)
        return EmbedderUsage(
            self.calls - earlier.calls,
            self.texts - earlier.texts,
            tokens,
            self.cache_hits - earlier.cache_hits,
            self.seconds - earlier.seconds,
        )

    def snapshot(self) -> EmbedderUsage:
        return replace(self)

    def count_call(self, texts: int, took: timing.Clocks) -> None:
        """One call of `texts` texts that took `took` (its wall seconds count)."""
        self.calls += 1
        self.texts += texts
        self.seconds += took.wall

    def add_tokens(self, count: int) -> None:
        self.tokens = (self.tokens or 0) + count

    @property
    def idle(self) -> bool:
        """Nothing was embedded or looked up."""
        return all(not getattr(self, f.name) for f in fields(self))


class Embedder(ABC):
    """A chosen embedder (spec.py), ready to embed; `identity` says which vectors it makes, for
    the cache's key: the kind, model and width, and what else would change a vector."""

    def __init__(self, spec: EmbedderSpec) -> None:
        self.spec = spec
        self.usage = EmbedderUsage()

    @property
    @abstractmethod
    def identity(self) -> str: ...

    @abstractmethod
    def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One vector per text, in order (texts already cut by `cut`); an error is a `CceError`
        naming the embedder, and nothing is returned half."""

    def cut(self, text: str) -> str:
        """The part of `text` that is embedded (and keyed in the cache)."""
        return text[: self.spec.max_input_chars]

    def timed(self, texts: int) -> AbstractContextManager[None]:
        """Count one call of `texts` texts and the seconds it takes."""
        return timing.timed(partial(self.usage.count_call, texts))

    def close(self) -> None:  # noqa: B027 - most embedders hold nothing to release
        """Release what the embedder holds (a session); it is not used afterwards."""


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Each row divided by its Euclidean norm in float64, then rounded to float32 (a zero row
    stays zero): the vectors ranked by cosine as dot products, in the width the cache keeps."""
    rows = np.asarray(vectors, dtype=np.float64)
    norms = np.sqrt((rows * rows).sum(axis=1))
    return (rows / np.where(norms == 0.0, 1.0, norms)[:, None]).astype(np.float32)
