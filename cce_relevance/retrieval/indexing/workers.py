"""Indexing files in worker processes, for several cores.

Parsing holds the GIL, so threads cannot index in parallel; processes can. Each worker indexes
whole files (retrieval/indexing/file_record.py) and sends back their encoded records, the same bytes
the index cache stores, so the parent decodes them exactly as it decodes cached ones and the
index is identical to a one-process build. Files go out largest first, in batches, so that no
worker is left with one big file at the end.

Workers are forked on Linux (cheap: the grammars are already loaded) and spawned elsewhere,
where fork is unsafe or missing; everything sent to them pickles by reference to module-level
names, so both work. When no pool can be started (a daemonic process, no semaphores), the
caller indexes in its own process instead.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from cce_relevance.retrieval.chunking.packs import PackSet
from cce_relevance.retrieval.indexing.file import index_file
from cce_relevance.retrieval.indexing.file_record import encode

MAX_AUTO_WORKERS = 4  # beyond this the parent's serial share (walk, assembly) dominates
MIN_PARALLEL_BYTES = 1 << 20  # less text than this indexes faster than a pool starts
_BATCH_BYTES = 256 * 1024
_BATCH_FILES = 32
_START_METHOD = "fork" if sys.platform == "linux" else "spawn"


@dataclass(frozen=True)
class FileJob:
    """How every file of one build is indexed."""

    packs: PackSet
    protect_secrets: bool
    with_counts: bool  # the hash embedder: count buckets and BM25 terms while indexing

    def record(self, path: str, text: str) -> bytes:
        return encode(index_file(path, text, self.packs, self.protect_secrets, self.with_counts), text)


def available_cpus() -> int:
    """CPUs this process may run on (the affinity mask where there is one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def choose_workers(requested: int | None, pending_bytes: int) -> int:
    """`requested` when given; else one per available CPU up to MAX_AUTO_WORKERS, and one for
    less than MIN_PARALLEL_BYTES of text or inside a daemonic process (which may not fork)."""
    if requested is not None:
        return max(1, requested)
    if pending_bytes < MIN_PARALLEL_BYTES or multiprocessing.current_process().daemon:
        return 1
    return max(1, min(available_cpus(), MAX_AUTO_WORKERS))


class PoolUnavailable(Exception):
    """No worker pool could start, or it broke down: the files it did not return are indexed here."""


def records_in_workers(
    files: Sequence[tuple[str, str]], positions: Sequence[int], job: FileJob, workers: int
) -> Iterator[tuple[int, bytes]]:
    """(position, encoded record) of each `files[p]` for p in `positions`, from `workers` processes,
    as batches arrive (so the caller decodes while the workers still parse). Raises
    PoolUnavailable when no pool can run or one breaks; what was yielded before stands."""
    batches = _batches(files, positions)
    context = multiprocessing.get_context(_START_METHOD)
    try:
        pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_start, initargs=(job,))
    except (OSError, ValueError, ImportError) as exc:
        raise PoolUnavailable(str(exc)) from exc
    try:
        futures = [pool.submit(_index_batch, [(p, *files[p]) for p in batch]) for batch in batches]
        for future in as_completed(futures):
            yield from future.result()
    except (BrokenProcessPool, OSError) as exc:
        raise PoolUnavailable(str(exc)) from exc
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _batches(files: Sequence[tuple[str, str]], positions: Sequence[int]) -> list[list[int]]:
    """Positions grouped into batches of about _BATCH_BYTES (at most _BATCH_FILES), largest files first."""
    batches: list[list[int]] = []
    size = 0
    for p in sorted(positions, key=lambda p: (-len(files[p][1]), p)):
        if not batches or size >= _BATCH_BYTES or len(batches[-1]) >= _BATCH_FILES:
            batches.append([])
            size = 0
        batches[-1].append(p)
        size += len(files[p][1])
    return batches


_JOB: FileJob | None = None


def _start(job: FileJob) -> None:
    global _JOB
    _JOB = job


def _index_batch(batch: list[tuple[int, str, str]]) -> list[tuple[int, bytes]]:
    assert _JOB is not None
    return [(position, _JOB.record(path, text)) for position, path, text in batch]
