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
after a stage that freed much, which any caller gains from.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable

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
