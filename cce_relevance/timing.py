"""How long a block of code took, on two clocks: the wall (the performance counter) and the CPU
time of this process and of the child processes it has waited for (git, worker processes).

Work shows as wall time well above CPU time when it waits (on a remote embedder, on a runner
shared with other jobs). The Action's log names both for each of its stages
(action/scoring/timings.py); an embedder counts the wall seconds of its calls
(retrieval/embedders/embedder.py). A block that raises is timed too.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple


class Clocks(NamedTuple):
    """Both clocks' readings, in seconds."""

    wall: float
    cpu: float

    @staticmethod
    def now() -> Clocks:
        return Clocks(time.perf_counter(), _cpu_seconds())

    def since(self) -> Clocks:
        """The seconds from these readings (`Clocks.now()` earlier) to now."""
        wall, cpu = Clocks.now()
        return Clocks(wall - self.wall, cpu - self.cpu)


@contextmanager
def timed(add: Callable[[Clocks], None]) -> Iterator[None]:
    """Run the body, then give `add` the seconds it took (also when it raises)."""
    started = Clocks.now()
    try:
        yield
    finally:
        add(started.since())


def _cpu_seconds() -> float:
    """CPU time of this process and of the children it has waited for, user and system."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
