"""A child process a hostile test can always stop: a reader that blocks on a FIFO, or a git
stuck matching a pattern, must fail the test within its timeout instead of hanging the suite."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import pytest


class Finished(NamedTuple):
    code: int
    out: str
    err: str


def run_child(
    argv: Sequence[str],
    *,
    cwd: Path | str,
    timeout: float,
    blocked: str,
    env: Mapping[str, str] | None = None,
) -> Finished:
    """Run `argv` in `cwd` with no stdin, in a process group of its own; past `timeout` seconds
    the whole group is killed (nothing it started outlives the test) and the test fails with the
    message `blocked`."""
    child = subprocess.Popen(
        list(argv),
        cwd=cwd,
        env=None if env is None else dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        pytest.fail(blocked)
    return Finished(child.returncode, out, err)
