"""How long each stage of the check took, for the log: one line a maintainer (or bench/action.py)
can read to see where a slow pull request check spends its time.

First `commits` (the repository found, the two commits resolved, history fetched if need be, the
cache directory prepared).
The sides' stages are named `<side> <stage>` and add up when a stage runs more than once (several
fixture sets): `materialise` (the commit's tracked files checked out, git.py `CommitFiles`),
`index` (the fixture sets read and their corpus indexed), `score` (the queries run through the
backends, the report made), `validate` (the anchors checked) and `hits` (each query's first hits
named by symbol, for the comment, which parses the files they lie in); `base load` replaces
the base side's stages when a side saved by an earlier run is reused, and `head save` is a push
run saving its head side for later runs (saved/base_reuse.py); then `report` (statistics, Markdown,
files, outputs). Each has its wall time and its CPU time (this process's
and that of the processes it waited for: git, worker processes), so a runner shared with other
jobs shows as wall time well above CPU time.
The figures go to the log only, never into a report or an output: those must be the same bytes
on every run.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from functools import partial

from cce_relevance.timing import Clocks, timed

TIMINGS_PREFIX = "cce-relevance timings (seconds, wall/CPU): "


class Stopwatch:
    """Wall and CPU seconds per stage, in the order the stages first ran."""

    def __init__(self) -> None:
        self.seconds: dict[str, tuple[float, float]] = {}

    def stage(self, name: str) -> AbstractContextManager[None]:
        """Time the body as (part of) stage `name`; a body that raises is timed too."""
        return timed(partial(self._add, name))

    @staticmethod
    def start() -> Clocks:
        """The clocks now, for `stop`: for a stage that is not one block of code."""
        return Clocks.now()

    def stop(self, name: str, started: Clocks) -> None:
        """Add the time since `started` (from `start`) to stage `name`."""
        self._add(name, started.since())

    def _add(self, name: str, took: Clocks) -> None:
        wall, cpu = self.seconds.get(name, (0.0, 0.0))
        self.seconds[name] = (wall + took.wall, cpu + took.cpu)

    def line(self) -> str:
        """The log line: the prefix, then `stage wall/CPU` for each stage, comma-separated."""
        return TIMINGS_PREFIX + ", ".join(
            f"{name} {wall:.3f}/{cpu:.3f}" for name, (wall, cpu) in self.seconds.items()
        )


def parse_line(line: str) -> dict[str, tuple[float, float]]:
    """The stages of a `Stopwatch.line`, as (wall, CPU) seconds by name, in order."""
    stages = {}
    for item in line.removeprefix(TIMINGS_PREFIX).split(", "):
        name, _, figures = item.rpartition(" ")
        wall, _, cpu = figures.partition("/")
        stages[name] = (float(wall), float(cpu))
    return stages
