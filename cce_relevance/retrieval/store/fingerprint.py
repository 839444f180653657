"""The store's fingerprint: how it was built, and a checksum binding that record to its bytes.

§store-files says the reference writes `fingerprint.json` beside the store ("build
configuration + checksum of the store bytes") but not its layout, so this one is our own,
`cce-relevance.fingerprint/v1` (documented in docs/stores.md). Its job is to let a person or a
tool tell, without loading the store, which embedding space and chunking produced it and
whether the store file is still the one that was written. Only `index.json` is needed to
evaluate; nothing reads the fingerprint back when scoring.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence

from cce_relevance import __version__, schemas
from cce_relevance.reference import SPEC_VERSION
from cce_relevance.retrieval.chunking.packs import REFERENCE_PACKS
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.store.store import STORE_FILE
from cce_relevance.retrieval.tokens import ESTIMATOR_ID

FINGERPRINT_FILE = "fingerprint.json"


def fingerprint_path(store_path: str) -> str:
    """`fingerprint.json` beside `index.json`; `<name>.fingerprint.json` beside any other store name.

    The per-name form keeps two stores in one directory from overwriting each other's record.
    """
    directory, name = os.path.split(store_path)
    file_name = FINGERPRINT_FILE if name == STORE_FILE else f"{name}.{FINGERPRINT_FILE}"
    return os.path.join(directory, file_name)


def _embed_dim(index: Index) -> int:
    """The vector width: observed from the first non-empty embedding (Ollama's depends on the model)."""
    index.attach_embeddings()
    return next(
        (int(c.embedding.shape[0]) for c in index.chunks if c.embedding is not None and c.embedding.size), 0
    )


def dumps_fingerprint(
    index: Index,
    store_bytes: bytes,
    *,
    redaction: bool,
    model: str | None = None,
    languages: Sequence[str] = REFERENCE_PACKS.names,
) -> str:
    """The fingerprint document for `index` as persisted in `store_bytes` (sorted keys, one per line)."""
    document = {
        "schema": schemas.FINGERPRINT,
        "engine": f"cce-relevance {__version__}",
        "spec_version": SPEC_VERSION,
        "embedder": index.embedder,
        "model": model,
        "embed_dim": _embed_dim(index),
        "languages": sorted(languages),
        "redaction": redaction,
        "tokenizer": ESTIMATOR_ID,
        "files": len(index.file_token_estimates),
        "chunks": len(index.chunks),
        "store_bytes": len(store_bytes),
        "store_sha256": hashlib.sha256(store_bytes).hexdigest(),
    }
    return json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
