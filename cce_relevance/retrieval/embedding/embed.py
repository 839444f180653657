"""Embedders: the deterministic feature-hashing embedder (§hash-embedder), and the index-time
embedder interface the Ollama client (retrieval/embedding/ollama.py) also fills.

Each token adds ±1 to one of 256 buckets chosen by its FNV-1a-64 hash; the vector is then
L2-normalised by *dividing* by its norm. The bucket counts are small integers, so the sum of
squares is exact in any order and the result is bit-reproducible; numpy's element-wise
division is the same IEEE operation as the reference's per-component division.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from cce_relevance.reference import EMBED_DIM
from cce_relevance.reference import HASH_EMBEDDER as HASH_EMBEDDER
from cce_relevance.retrieval.tokens import tokenize

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
_MASK64 = 0xFFFFFFFFFFFFFFFF


def fnv1a64(data: bytes) -> int:
    """FNV-1a, 64-bit: xor the byte in, then multiply by the prime modulo 2^64."""
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & _MASK64
    return h


@lru_cache(maxsize=1 << 20)
def token_bucket(token: str) -> tuple[int, float]:
    """(bucket, sign) of one token; memoised because corpora repeat a small vocabulary."""
    h = fnv1a64(token.encode("ascii"))
    return h % EMBED_DIM, (-1.0 if h >> 63 else 1.0)


def hash_embed(text: str) -> np.ndarray:
    """The 256-dimensional hash embedding of `text` (all zeros when it has no token)."""
    v = np.zeros(EMBED_DIM, dtype=np.float64)
    for tok in tokenize(text):
        bucket, sign = token_bucket(tok)
        v[bucket] += sign
    s = 0.0
    for x in v[np.flatnonzero(v)]:
        s += float(x) * float(x)
    if s > 0.0:
        v = v / np.sqrt(s)
    return v


@dataclass(frozen=True)
class DocumentEmbedder:
    """How an index build embeds its chunk texts; `name` is what the store records (§store-format)."""

    name: str
    embed_all: Callable[[Sequence[str]], list[np.ndarray]]


HASH_DOCUMENTS = DocumentEmbedder(HASH_EMBEDDER, lambda texts: [hash_embed(t) for t in texts])
