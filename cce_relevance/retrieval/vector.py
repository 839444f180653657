"""Cosine ranking over stored embeddings (pipeline.md §8.3, §10).

The reference sums `q[i] * c[i]` left to right over the components. Components where the query
is zero add exactly ±0.0 and never change a non-zero partial sum, so summing only over the
query's non-zero components, in component order, gives the same doubles; doing that column by
column with numpy keeps the sequential order per chunk while working on all chunks at once.
"""

from __future__ import annotations

import numpy as np

from cce_relevance.numeric import round_half_away


def cosine_all(query: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Sequential-order dot products of `query` with every row of `matrix` (exact, see above)."""
    n_rows = matrix.shape[0]
    scores = np.zeros(n_rows, dtype=np.float64)
    if query.size == 0 or n_rows == 0:
        return scores
    width = min(query.shape[0], matrix.shape[1])
    for i in np.flatnonzero(query[:width]):
        scores = scores + query[i] * matrix[:, i]
    return scores


def score_keys(scores: np.ndarray) -> list[int]:
    """`score_key` of each score; vectorised rounding would need care at ties, so do it exactly."""
    return [round_half_away(float(s) * 1000000.0) for s in scores]


def rank_by_cosine(query: np.ndarray, matrix: np.ndarray, chunk_ids: list[str]) -> list[tuple[int, float]]:
    """All chunks, zero and negative cosines included, by (key desc, chunk id asc)."""
    scores = cosine_all(query, matrix)
    keys = score_keys(scores)
    order = sorted(range(len(chunk_ids)), key=lambda d: (-keys[d], chunk_ids[d], d))
    return [(d, float(scores[d])) for d in order]
