"""The CLI and the Action turn numpy's huge-page advice off (cce_relevance/memory_pages.py),
unless the user set `NUMPY_MADVISE_HUGEPAGE`; each case runs in a fresh interpreter, because
the setting is process-wide. numpy's setter returns the setting it replaces, which is how the
child reports what numpy was left with. Pages of a read-only file mapping that are released
are measured leaving the resident set (/proc/self/smaps) and read back unchanged."""

from __future__ import annotations

import hashlib
import mmap
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cce_relevance.memory_pages import read_in_blocks, release_array, release_pages
from tests.resident import needs_smaps, resident_kib

SETTING = "import numpy; print(numpy._core.multiarray._set_madvise_hugepage(True))"


def run(code: str, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"} | env
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, check=True
    )
    return done.stdout.strip()


def test_numpy_advises_huge_pages_by_default():
    assert run(SETTING) == "True"  # what the other tests change


@pytest.mark.parametrize("numpy_first", [True, False])
def test_small_pages_before_or_after_numpy_is_imported(numpy_first):
    first = "import numpy; " if numpy_first else ""
    code = (
        f"{first}from cce_relevance.memory_pages import prefer_small_pages; prefer_small_pages(); {SETTING}"
    )
    assert run(code) == "False"


def test_the_users_choice_stands():
    code = f"from cce_relevance.memory_pages import prefer_small_pages; prefer_small_pages(); {SETTING}"
    assert run(code, NUMPY_MADVISE_HUGEPAGE="1") == "True"


def test_every_cli_command_asks_for_small_pages(tmp_path):
    (tmp_path / "a.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    code = (
        "import contextlib, io\nfrom cce_relevance.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main.main(args=['chunks', {str(tmp_path)!r}, '--no-cache'], standalone_mode=False)\n"
        f"{SETTING}"
    )
    assert run(code) == "False"


FREED_IN_THE_MIDDLE = """
from cce_relevance.memory_pages import give_back_freed_memory
def rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) // 1024
blocks = [bytes(100_000) for _ in range(2_000)]  # below glibc's mmap threshold: in the heap
kept = blocks[-1]  # the heap's top stays in use, so glibc cannot shrink it on its own
del blocks
before = rss()
given = give_back_freed_memory()
print(given, before - rss())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim, /proc")
def test_freed_memory_amid_live_memory_is_given_back():
    given, dropped = run(FREED_IN_THE_MIDDLE).split()
    if given == "False":
        pytest.skip("the C library has no malloc_trim")
    assert int(dropped) > 100  # MB of the 200 freed


def test_giving_back_twice_is_harmless():
    code = "from cce_relevance.memory_pages import give_back_freed_memory as g; print(g() == g())"
    assert run(code) == "True"


MIB = 1 << 20


def most_dropped_kib(size: int) -> int:
    """KiB at most dropped for a range of `size` bytes: a kernel that maps a file's large folios
    whole (2 MiB, by PMD) drops the whole of each one the range touches, at most one more a side."""
    return (size + 4 * MIB) // 1024


@pytest.fixture
def mapped(tmp_path):
    """A read-only mapping of an 8 MiB file (and one odd byte) of varied bytes, every page read."""
    data = np.random.default_rng(0).integers(0, 256, 8 * MIB + 1, dtype=np.uint8).tobytes()
    path = tmp_path / "record"
    path.write_bytes(data)
    with open(path, "rb") as f:
        mapping = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    assert hashlib.sha256(mapping).digest() == hashlib.sha256(data).digest()  # every page read
    yield mapping, data
    mapping.close()


@needs_smaps
def test_released_pages_leave_the_resident_set_and_read_back_the_same(mapped):
    mapping, data = mapped
    assert resident_kib(mapping) >= 8 * 1024
    assert release_pages(mapping, 0, len(mapping))
    assert resident_kib(mapping) == 0
    assert mapping[:] == data  # read again from the file's pages
    assert resident_kib(mapping) >= 8 * 1024


@needs_smaps
def test_only_whole_pages_inside_the_range_are_released(mapped):
    mapping, data = mapped
    before = resident_kib(mapping)
    assert release_pages(mapping, MIB + 1, 3 * MIB + 100)  # pages from MIB + PAGE to 3 MIB
    assert (2 * MIB - mmap.PAGESIZE) // 1024 <= before - resident_kib(mapping) <= most_dropped_kib(2 * MIB)
    assert not release_pages(mapping, MIB + 1, MIB + mmap.PAGESIZE)  # no whole page in it
    assert not release_pages(mapping, len(mapping), len(mapping) + 5)
    assert mapping[:] == data


@needs_smaps
def test_a_view_of_a_mapping_releases_the_pages_it_spans(mapped):
    mapping, data = mapped
    whole = np.frombuffer(mapping, dtype=np.uint8)
    view = whole[2 * MIB : 6 * MIB].view(np.int32).reshape(-1, 4)[::-3, 1:3]  # strided, reversed
    values = view.copy()
    before = resident_kib(mapping)
    assert release_array(view)
    assert 4 * 1024 - 8 <= before - resident_kib(mapping) <= most_dropped_kib(4 * MIB)  # the 4 MiB it spans
    assert np.array_equal(view, values) and mapping[:] == data


def test_arrays_not_of_a_read_only_mapping_are_left_alone(tmp_path):
    """Dropped pages of ordinary or copied-on-write memory would read back as zeros."""
    ordinary = np.arange(4 * MIB, dtype=np.int64)
    assert not release_array(ordinary) and not release_array(ordinary[MIB:])
    assert np.array_equal(ordinary, np.arange(4 * MIB))
    path = tmp_path / "copied"
    path.write_bytes(bytes(2 * MIB))
    with open(path, "rb") as f:
        private = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    written = np.frombuffer(private, dtype=np.uint8)
    written[:] = 7
    assert not release_array(written) and not release_pages(private, 0, len(private))
    assert bool((written == 7).all())
    del written
    private.close()
    assert not release_array(np.frombuffer(b"bytes are no mapping", dtype=np.uint8))


@needs_smaps
def test_reading_a_mapped_array_in_blocks_holds_one_block_resident_at_a_time(mapped):
    mapping, data = mapped
    assert release_pages(mapping, 0, len(mapping))
    whole = np.frombuffer(mapping, dtype=np.uint8, count=8 * MIB).view(np.int32)
    most = 0
    for block in read_in_blocks(whole, MIB):
        int(block.max())  # every page of the block read
        most = max(most, resident_kib(mapping))
    assert most <= most_dropped_kib(MIB) + 4 and resident_kib(mapping) <= most_dropped_kib(0)
    assert mapping[:] == data


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=300), st.integers(1, 64))
def test_blocks_are_the_array_in_order(values, block_bytes):
    array = np.array(values, dtype=np.int32)
    blocks = list(read_in_blocks(array, block_bytes))
    assert all(0 < block.shape[0] <= max(1, block_bytes // 4) for block in blocks)
    assert np.array_equal(np.concatenate(blocks) if blocks else array, array)
