"""Ask numpy for ordinary memory pages in our own processes (the CLI and the Action).

numpy marks every large allocation for transparent huge pages (`madvise(MADV_HUGEPAGE)`). On
kernels that compact memory synchronously for such regions — `defrag` set to `madvise`, the
default of Ubuntu and of GitHub's runners — the first touch of a fresh embedding matrix of a
large corpus can stall for direct compaction, for a good part of a warm run (the measurement is
in docs/dev/performance.md). Our arrays are scanned column by
column, where huge pages save little, so the CLI and the Action turn the advice off, unless the
user chose otherwise through numpy's own `NUMPY_MADVISE_HUGEPAGE`. Library callers keep numpy's
setting: it is process-wide, and a library has no business changing it.
"""

from __future__ import annotations

import os
import sys

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
