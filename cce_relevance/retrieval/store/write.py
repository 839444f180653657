"""Writing a store and its fingerprint together: both files or neither, so a store never sits
beside another store's fingerprint (retrieval/store/fingerprint.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cce_relevance.atomic_files import OutputSet, writes_in_place
from cce_relevance.retrieval.index.model import Index
from cce_relevance.retrieval.store.fingerprint import dumps_fingerprint, fingerprint_path
from cce_relevance.retrieval.store.store import dumps_store


@dataclass(frozen=True)
class StoreWritten:
    """What `write_store` wrote: the store, its fingerprint (None for a store written to a device
    or pipe, which has no file to describe), and what the store holds."""

    path: str
    fingerprint: str | None
    embedder: str
    files: int
    chunks: int
    size: int

    @staticmethod
    def files_of(path: str) -> list[str]:
        """The files a store written to `path` makes: the store and its fingerprint (which the
        next index of the directory holding them leaves out)."""
        return [path, fingerprint_path(path)]


def write_store(
    path: str, index: Index, *, redaction: bool, model: str | None, languages: Sequence[str]
) -> StoreWritten:
    """Write `index` as the reference's store at `path`, with our fingerprint beside it."""
    data = dumps_store(index).encode("utf-8")
    fingerprint = None if writes_in_place(path) else fingerprint_path(path)
    with OutputSet() as outputs:
        outputs.stage(path, data)
        if fingerprint is not None:
            outputs.stage(
                fingerprint,
                dumps_fingerprint(index, data, redaction=redaction, model=model, languages=languages),
            )
        outputs.commit()
    return StoreWritten(
        path, fingerprint, index.embedder, len(index.file_token_estimates), len(index.chunks), len(data)
    )
