"""Indexing files in several processes, for several cores.

Parsing holds the GIL, so threads cannot index in parallel; processes can. N processes are this
one and N - 1 workers. Each worker indexes whole files (retrieval/file_indexing/file_record.py) and
sends back their encoded records, the same bytes the index cache stores, so the parent decodes
them exactly as it decodes cached ones and the index is identical to a one-process build. The
parent indexes files too, between receiving batches: its share is neither encoded, sent nor
decoded, and no third process competes for two cores. Batches are cut largest files first;
workers take them from the large end, the parent from the small end, so that both run out of
work at about the same time and no one is left with one big file at the end.

Workers are forked on Linux (cheap: the grammars are already loaded, and the walked files are
inherited, so a batch is sent as positions) and spawned elsewhere, where fork is unsafe or
missing (the files are then sent to each worker once); everything sent to them pickles by
reference to module-level names, so both work. When no pool can be started (a daemonic
process, no semaphores), the caller indexes in its own process instead.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from cce_relevance.retrieval.chunking.packs import PackSet
from cce_relevance.retrieval.file_indexing.file import IndexedFile, index_files
from cce_relevance.retrieval.file_indexing.file_record import encode

MAX_AUTO_WORKERS = 4  # beyond this the parent's serial share (walk, assembly) dominates
MIN_PARALLEL_BYTES = 1 << 20  # less text than this indexes faster than a pool starts
BATCH_BYTES = 256 * 1024  # text per batch: a worker's share at a time, and counted in one pass
_BATCH_FILES = 32
_START_METHOD = "fork" if sys.platform == "linux" else "spawn"


@dataclass(frozen=True)
class FileJob:
    """How every file of one build is indexed."""

    packs: PackSet
    protect_secrets: bool
    with_counts: bool  # the hash embedder: count buckets and BM25 terms while indexing


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
) -> Iterator[tuple[int, IndexedFile | bytes]]:
    """(position, entry) of each `files[p]` for p in `positions`, indexed by `workers` processes
    (this one and `workers - 1` others) as batches are done: an encoded record from a worker, an
    `IndexedFile` made here. Raises PoolUnavailable when no pool can run or one breaks; what was
    yielded before stands."""
    batches = deque(_batches(files, positions))

    def here(batch: list[int]) -> Iterator[tuple[int, IndexedFile]]:
        made = index_files([files[p] for p in batch], job.packs, job.protect_secrets, job.with_counts)
        return zip(batch, made, strict=True)

    if len(batches) < 2:  # one batch: nothing to share, and no process to start
        for batch in batches:
            yield from here(batch)
        return
    context = multiprocessing.get_context(_START_METHOD)
    others = max(1, workers - 1)
    try:
        pool = ProcessPoolExecutor(
            others, mp_context=context, initializer=_start, initargs=(job, list(files))
        )
    except (OSError, ValueError, ImportError) as exc:
        raise PoolUnavailable(str(exc)) from exc
    try:
        running: set[Future[list[tuple[int, bytes]]]] = set()
        while batches or running:
            while batches and len(running) < 2 * others:  # one batch waiting for each worker
                running.add(pool.submit(_index_batch, batches.popleft()))
            finished = {future for future in running if future.done()}
            if not finished and not batches:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                running.discard(future)
                yield from future.result()
            if batches:
                yield from here(batches.pop())
    except (BrokenProcessPool, OSError) as exc:
        raise PoolUnavailable(str(exc)) from exc
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _batches(files: Sequence[tuple[str, str]], positions: Sequence[int]) -> list[list[int]]:
    """Positions grouped into batches of about BATCH_BYTES (at most _BATCH_FILES), largest files first."""
    batches: list[list[int]] = []
    size = 0
    for p in sorted(positions, key=lambda p: (-len(files[p][1]), p)):
        if not batches or size >= BATCH_BYTES or len(batches[-1]) >= _BATCH_FILES:
            batches.append([])
            size = 0
        batches[-1].append(p)
        size += len(files[p][1])
    return batches


_JOB: FileJob | None = None
_FILES: list[tuple[str, str]] = []


def _start(job: FileJob, files: list[tuple[str, str]]) -> None:
    global _JOB, _FILES
    _JOB, _FILES = job, files


def _index_batch(batch: list[int]) -> list[tuple[int, bytes]]:
    assert _JOB is not None
    items = [_FILES[p] for p in batch]
    entries = index_files(items, _JOB.packs, _JOB.protect_secrets, _JOB.with_counts)
    return [(p, encode(entry, text)) for p, (_, text), entry in zip(batch, items, entries, strict=True)]
