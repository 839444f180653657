"""Reading the reference's persisted store, `index.json` (pipeline.md §14.2–§14.3).

Only chunks (with their embeddings), the import lists and the file token counts are persisted;
BM25 statistics and the import graph are recomputed on load, exactly as the reference does.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from cce_relevance.errors import CceError
from cce_relevance.retrieval.chunk import Chunk
from cce_relevance.retrieval.embed import HASH_EMBEDDER
from cce_relevance.retrieval.index import Index, index_from_parts

_REQUIRED_CHUNK_KEYS = ("chunk_id", "file_path", "start_line", "end_line", "chunk_type", "language", "content",
                        "token_count")


def _chunk(obj: Any, position: int) -> Chunk:
    if not isinstance(obj, dict):
        raise ValueError(f"chunk {position} is not an object")
    missing = [k for k in _REQUIRED_CHUNK_KEYS if k not in obj]
    if missing:
        raise ValueError(f"chunk {position} is missing {', '.join(missing)}")
    embedding = obj.get("embedding", [])
    if not isinstance(embedding, list) or not all(isinstance(x, (int, float)) for x in embedding):
        raise ValueError(f"chunk {position} has a non-numeric embedding")
    return Chunk(str(obj["chunk_id"]), str(obj["file_path"]), int(obj["start_line"]), int(obj["end_line"]),
                 str(obj["chunk_type"]), str(obj.get("kind", "")), str(obj["language"]), str(obj["content"]),
                 int(obj["token_count"]), np.asarray(embedding, dtype=np.float64))


def load_store(path: str) -> Index:
    """Load `index.json` written by the reference (or by us); errors are E15."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if not isinstance(data, dict) or not isinstance(data.get("chunks"), list):
            raise ValueError("expected an object with a \"chunks\" array")
        chunks = [_chunk(obj, i) for i, obj in enumerate(data["chunks"])]
        file_imports = data.get("file_imports", {}) or {}
        file_tokens = data.get("file_tokens", {}) or {}
        if not isinstance(file_imports, dict) or not isinstance(file_tokens, dict):
            raise ValueError("file_imports and file_tokens must be objects")
        embedder = data.get("embedder", HASH_EMBEDDER)
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        raise CceError(f"could not load store {path}: {_describe(exc)}") from None
    return index_from_parts(chunks, file_imports, file_tokens, str(embedder))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{os.strerror(exc.errno)} (os error {exc.errno})"
    return str(exc)
