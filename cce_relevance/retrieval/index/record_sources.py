"""Every walked file's indexed record: from the index cache, from worker processes, or made here.

The three sources give identical records (a worker's and the cache's are the same bytes,
decoded the same way; one made here is what those bytes encode), so where a record came from
never shows in the index. Progress is reported per file, cached ones at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

from cce_relevance.retrieval.cache.index_cache import IndexCache, cache_context
from cce_relevance.retrieval.embedding.embed import HASH_EMBEDDER
from cce_relevance.retrieval.file_indexing.file import IndexedFile, index_files
from cce_relevance.retrieval.file_indexing.file_record import decode, encode
from cce_relevance.retrieval.file_indexing.workers import (
    BATCH_BYTES,
    FileJob,
    PoolUnavailable,
    choose_workers,
    records_in_workers,
)

FLUSH_BYTES = 64 << 20  # new records are stored whenever this many bytes of them are waiting

Progress = Callable[[int, int], None]
"""Called with (files done, files in all) as indexing advances, last with done == all."""


def indexed_files(
    files: Sequence[tuple[str, str]],
    job: FileJob,
    cache: IndexCache | None = None,
    keys: Sequence[bytes] = (),
    workers: int | None = None,
    progress: Progress | None = None,
) -> list[IndexedFile]:
    """The record of each (path, text) walked file, in order.

    `cache` is the open index cache (see `opened_cache`) and `keys` the files' keys in it;
    `workers` is the number of processes (None: see `workers.choose_workers`).
    """
    total = len(files)
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, total)

    advance(0)
    entries: list[IndexedFile | None] = [None] * total
    if cache is not None:
        found = cache.get_many(keys)
        for i, key in enumerate(keys):
            data = found.get(key)
            if data is not None:
                entries[i] = _decoded_or_none(data, *files[i])
        advance(sum(e is not None for e in entries))
    pending = [i for i, e in enumerate(entries) if e is None]
    fresh: dict[int, bytes] = {}
    fresh_bytes = 0

    def keep(i: int, data: bytes) -> None:
        """`data` to store under file i's key; stored a few tens of megabytes at a time, so a
        large corpus's records (hundreds of megabytes) are never all held at once."""
        nonlocal fresh_bytes
        fresh[i] = data
        fresh_bytes += len(data)
        if fresh_bytes >= FLUSH_BYTES and cache is not None:
            cache.put_many({keys[k]: d for k, d in fresh.items()})
            fresh.clear()
            fresh_bytes = 0

    count = choose_workers(workers, sum(len(files[i][1]) for i in pending))
    if count > 1 and pending:
        try:
            for i, made in records_in_workers(files, pending, job, count):
                if isinstance(made, bytes):
                    entries[i] = decode(made, *files[i])
                    if cache is not None:
                        keep(i, made)
                else:
                    entries[i] = made
                    if cache is not None:
                        keep(i, encode(made, files[i][1]))
                advance(1)
        except PoolUnavailable:
            pass  # what the workers did not return is indexed below
    for batch in _batches([i for i in pending if entries[i] is None], files):
        made_here = index_files([files[i] for i in batch], job.packs, job.protect_secrets, job.with_counts)
        for i, entry in zip(batch, made_here, strict=True):
            entries[i] = entry
            if cache is not None:
                keep(i, encode(entry, files[i][1]))
        advance(len(batch))
    if cache is not None:
        cache.put_many({keys[i]: data for i, data in fresh.items()})
    return [e for e in entries if e is not None]


@contextlib.contextmanager
def opened_cache(cache_dir: str | None, job: FileJob) -> Iterator[IndexCache | None]:
    """The index cache in `cache_dir` for this kind of job, closed afterwards; None when there is
    no directory, the job is not cached (only hash-embedder builds are) or it cannot be opened."""
    context = (
        cache_context(job.packs, job.protect_secrets, HASH_EMBEDDER)
        if cache_dir and job.with_counts
        else None
    )
    cache = IndexCache.open(cache_dir, context) if cache_dir and context is not None else None
    try:
        yield cache
    finally:
        if cache is not None:
            cache.close()


def file_keys(cache: IndexCache, files: Sequence[tuple[str, bytes]]) -> list[bytes]:
    """Each walked file's key in `cache`, from its path and the SHA-256 of its bytes."""
    return [cache.key(path, digest) for path, digest in files]


def _batches(positions: list[int], files: Sequence[tuple[str, str]]) -> Iterator[list[int]]:
    """`positions` in order, cut into runs of about BATCH_BYTES of text (the files of a batch
    are counted in one pass: retrieval/file_indexing/file.py `index_files`)."""
    batch: list[int] = []
    size = 0
    for i in positions:
        batch.append(i)
        size += len(files[i][1])
        if size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _decoded_or_none(data: bytes, path: str, text: str) -> IndexedFile | None:
    """A cached record, or None when it does not decode (it is then made again and replaced)."""
    try:
        return decode(data, path, text)
    except ValueError:
        return None
