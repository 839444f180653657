"""How much of a memory mapping is resident, read from the kernel (/proc/self/smaps): what the
page-dropping tests measure, real pages and no stand-ins."""

from __future__ import annotations

import mmap
import sys

import numpy as np
import pytest

needs_smaps = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/smaps")


def address(mapping: mmap.mmap) -> int:
    """Where `mapping`'s first byte is in this process's memory."""
    return int(np.frombuffer(mapping, dtype=np.uint8).__array_interface__["data"][0])


def resident_kib(mapping: mmap.mmap) -> int:
    """The resident KiB of the mapping that holds `mapping`'s first byte (its `Rss:` line)."""
    where = address(mapping)
    inside = False
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as smaps:
        for line in smaps:
            head = line.split(maxsplit=1)[0]
            if "-" in head and not head.endswith(":"):  # a mapping's first line: "start-end perms ..."
                start, end = (int(bound, 16) for bound in head.split("-"))
                inside = start <= where < end
            elif inside and head == "Rss:":
                return int(line.split()[1])
    raise AssertionError("the mapping is not in /proc/self/smaps")


def mapping_of(array: np.ndarray) -> mmap.mmap:
    """The memory mapping `array` is a view of."""
    owner: object = array
    while isinstance(owner, np.ndarray):
        owner = owner.base
    assert isinstance(owner, memoryview) and isinstance(owner.obj, mmap.mmap), "not a view of a mapping"
    return owner.obj
