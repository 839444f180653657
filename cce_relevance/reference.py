"""The reference implementation's ranking and indexing constants, in one frozen place.

Values are those of the Rust CCE `src/config.rs` (§constants). `RankingParams` gathers the
ones a backend variant may override; the defaults reproduce the reference byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

EMBED_DIM = 256
MAX_FILE_SIZE = 2_097_152
DEFAULT_TOP_K = 10
SPEC_VERSION = "1.0"
CONFORMANCE_SPEC_VERSION = "2.0"
EMBED_BATCH_SIZE = 64
HASH_EMBEDDER = "hash"  # the embedder names a persisted store records (§store-format)
OLLAMA_EMBEDDER = "ollama"
BUILTIN_BACKENDS = ("bm25", "vector", "hybrid")  # the reference's backends, in its order


def listed(names: tuple[str, ...], last: str = "") -> str:
    """`a, b, c`, or with `last` ("or") `a, b, or c`: names as the reference's messages list them."""
    if not last or len(names) < 2:
        return ", ".join(names)
    return f"{', '.join(names[:-1])}, {last} {names[-1]}"


ALWAYS_PRUNED_DIRS = frozenset(
    {".git", ".cce", "node_modules", ".venv", "venv", "__pycache__", "dist", "build"}
)


@dataclass(frozen=True)
class RankingParams:
    """Every constant that shapes a ranking; the defaults are the reference's."""

    rrf_k: float = 60.0
    confidence_weight: float = 0.5
    fts_boost_code_lookup: float = 1.5
    max_chunks_per_file: int = 3
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    candidate_multiplier: int = 3
    w_vector: float = 0.5
    w_keyword: float = 0.4
    w_recency: float = 0.1
    path_penalty: float = 0.8
    path_penalty_markers: tuple[str, ...] = ("tests/", "test_", "docs/", "spec", "plan")
    graph_enabled: bool = True
    graph_max_bonus_files: int = 2
    graph_bonus_chunk_scale: float = 0.85


REFERENCE_PARAMS = RankingParams()
