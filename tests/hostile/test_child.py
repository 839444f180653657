"""The hostile suite's child runner (child.py): what a child prints and its exit code come back,
and a child that outlives its timeout fails the test with everything it started killed."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from tests.hostile.child import Finished, run_child


def test_a_child_that_finishes_gives_its_exit_code_and_output(tmp_path: Path) -> None:
    script = (
        "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3 if not sys.stdin.read() else 4)"
    )

    assert run_child([sys.executable, "-c", script], cwd=tmp_path, timeout=60, blocked="?") == Finished(
        3, "out\n", "err\n"
    )


def _alive(pid: int) -> bool:
    """Running or sleeping: a killed process that nobody has reaped yet (a zombie) is not."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_a_child_past_its_timeout_fails_the_test_and_its_whole_group_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"  # written well within the timeout: one interpreter start
    script = (
        "import subprocess, sys, time\n"
        "grandchild = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(grandchild.pid))\n"
        "time.sleep(300)\n"
    )

    started = time.monotonic()
    with pytest.raises(pytest.fail.Exception, match="^it blocked$"):
        run_child([sys.executable, "-c", script], cwd=tmp_path, timeout=5, blocked="it blocked")

    assert time.monotonic() - started < 60
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 10  # SIGKILL is delivered at once, the kernel's bookkeeping may lag
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)
