"""A progress bar on stderr while a corpus is indexed, for people watching a terminal.

Only a terminal gets one: not a pipe or file (logs stay clean), not CI (`CI` set: its logs are
files even when they look like terminals), and not a run that prints JSON (whoever reads that
is a program). It redraws one line in place at most every tenth of a second and erases it when
indexing is done, so nothing of it remains above the command's own output.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TextIO

_WIDTH = 24
_INTERVAL = 0.1


class ProgressBar:
    """`bar(done, total)`: draws `indexing [#####.....] 812/1790 files  1,234 files/s`."""

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._clock = clock
        self._started = clock()
        self._drawn_at: float | None = None
        self._length = 0

    def __call__(self, done: int, total: int) -> None:
        now = self._clock()
        if done >= total:
            self._erase()
            return
        if self._drawn_at is not None and now - self._drawn_at < _INTERVAL:
            return
        filled = _WIDTH * done // total
        elapsed = now - self._started
        rate = f"  {done / elapsed:,.0f} files/s" if elapsed > 0 and done else ""
        line = f"indexing [{'#' * filled}{'.' * (_WIDTH - filled)}] {done}/{total} files{rate}"
        self._write("\r" + line.ljust(self._length))
        self._length = len(line)
        self._drawn_at = now

    def _erase(self) -> None:
        if self._drawn_at is not None:
            self._write("\r" + " " * self._length + "\r")
            self._drawn_at = None

    def _write(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()


def progress_bar(stream: TextIO, *, quiet: bool = False) -> ProgressBar | None:
    """A bar on `stream` when it is a terminal, `CI` is unset and the output is not `quiet` (JSON)."""
    if quiet or os.environ.get("CI") or not stream.isatty():
        return None
    return ProgressBar(stream)
