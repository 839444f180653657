"""The CLI and the Action turn numpy's huge-page advice off (cce_relevance/memory_pages.py),
unless the user set `NUMPY_MADVISE_HUGEPAGE`; each case runs in a fresh interpreter, because
the setting is process-wide. numpy's setter returns the setting it replaces, which is how the
child reports what numpy was left with."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

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
