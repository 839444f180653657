"""Ask numpy for ordinary memory pages in our own processes (the CLI and the Action).

numpy marks every large allocation for transparent huge pages (`madvise(MADV_HUGEPAGE)`). On
kernels that compact memory synchronously for such regions — `defrag` set to `madvise`, the
default of Ubuntu and of GitHub's runners — the first touch of a fresh embedding matrix of a
large corpus can stall for direct compaction, for a good part of a warm run (the measurement is
in docs/dev/performance.md). Our arrays are scanned column by
column, where huge pages save little, so the CLI and the Action turn the advice off, unless the
user chose otherwise through numpy's own `NUMPY_MADVISE_HUGEPAGE`. Library callers keep numpy's
setting: it is process-wide, and a library has no business changing it.

`give_back_freed_memory` is no setting: it hands the allocator's free pages back to the system
after a stage that freed much, which any caller gains from. `release_pages` and `release_array`
do the same for pages of a read-only file mapping (the index cache's corpus records) that a
stage has read and will not read again.
"""

from __future__ import annotations

import functools
import mmap
import os
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_VARIABLE = "NUMPY_MADVISE_HUGEPAGE"


def prefer_small_pages() -> None:
    """Turn numpy's huge-page advice off for this process, unless `NUMPY_MADVISE_HUGEPAGE` is set."""
    if _VARIABLE in os.environ:
        return
    os.environ[_VARIABLE] = "0"  # read by numpy when it is imported, and by our child processes
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # already imported: its setting is read; change it in place
        core = getattr(numpy, "_core", None) or getattr(numpy, "core", None)
        setter = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
        if setter is not None:
            setter(False)


def give_back_freed_memory() -> bool:
    """Return the C heap's free pages to the system (glibc's `malloc_trim`); False where the C
    library has none.

    glibc keeps what is freed for the next allocations of the process, but it never hands back
    pages in the middle of its heap on its own. A cold build frees a great deal there — the
    chunker's contents, each batch's scratch, the files' vocabularies, the corpus record's
    pieces — among objects that live on, and what comes after it allocates differently: about
    100 MB at 100k chunks stayed resident and unused (docs/dev/performance.md, "What a cold run
    holds"). Pages handed back and later reused are faulted in again, a few milliseconds a stage.
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes  # not needed at start-up

    try:
        return getattr(ctypes.CDLL(None), "malloc_trim", None)
    except OSError:
        return None


def release_pages(mapping: mmap.mmap, start: int, end: int) -> bool:
    """Drop from this process's resident memory the pages of `mapping` that lie wholly inside
    bytes `start:end` (the mapping's last page counts as whole); False when nothing was dropped:
    the mapping is not read-only, the range holds no whole page, or the system has no
    `MADV_DONTNEED`.

    A read-only file mapping's pages are clean copies of the page cache: `MADV_DONTNEED` only
    unmaps them, and a later read maps them again from the page cache (or reads the file), so
    the bytes never change — which is why a mapping that can be written to (or is private and
    copied on write) is left alone. Reading a large corpus record once — its checksum — otherwise
    leaves every page of it counted in the process's resident set until it is unmapped.
    """
    advise = getattr(mapping, "madvise", None)
    dontneed = getattr(mmap, "MADV_DONTNEED", None)
    if advise is None or dontneed is None or mapping.closed or not _read_only(mapping):
        return False
    size = len(mapping)
    page = mmap.PAGESIZE
    first = -(-max(start, 0) // page) * page
    last = size if end >= size else end // page * page
    if first >= last:
        return False
    advise(dontneed, first, last - first)
    return True


def read_in_blocks(array: np.ndarray, block_bytes: int = 4 << 20) -> Iterator[np.ndarray]:
    """A one-dimensional `array` as consecutive views of about `block_bytes`, each view's pages
    dropped once the caller has read it and asks for the next (`release_array`: only when the
    array is a view of a read-only mapping). A check that reads a mapped record's largest arrays
    whole then holds one block of them resident at a time, not the arrays."""
    step = max(1, block_bytes // max(array.itemsize, 1))
    for start in range(0, array.shape[0], step):
        block = array[start : start + step]
        yield block
        release_array(block)


def release_array(array: np.ndarray) -> bool:
    """`release_pages` over the bytes of `array` when it is a view of a read-only `mmap.mmap`
    (as a decoded corpus record's arrays are); False, touching nothing, for any other array —
    the pages of an array in ordinary memory would be zeros once dropped."""
    import numpy as np  # not needed at start-up

    owner: object = array
    while isinstance(owner, np.ndarray):
        owner = owner.base
    if isinstance(owner, memoryview):
        owner = owner.obj
    if not isinstance(owner, mmap.mmap) or owner.closed or array.size == 0:
        return False
    low = high = array.__array_interface__["data"][0]
    for length, stride in zip(array.shape, array.strides, strict=True):
        reach = (length - 1) * stride
        low, high = (low + reach, high) if reach < 0 else (low, high + reach)
    base = np.frombuffer(owner, dtype=np.uint8).__array_interface__["data"][0]
    return release_pages(owner, low - base, high + array.itemsize - base)


def _read_only(mapping: mmap.mmap) -> bool:
    with memoryview(mapping) as view:
        return view.readonly
