"""How long each stage of the check took, for the log: one line a maintainer (or bench/action.py)
can read to see where a slow pull request check spends its time.

First `commits` (the repository trusted, the two commits resolved, history fetched if need be).
The sides' stages are named `<side> <stage>` and add up when a stage runs more than once (several
fixture sets): `materialise` (the commit's tree made and removed), `index` (the fixture sets read
and their corpus indexed), `score` (the queries run through the backends, the report made) and
`validate` (the anchors checked); then `report` (statistics, Markdown, files, outputs). The
figures go to the log only, never into a report or an output: those must be the same bytes on
every run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager

TIMINGS_PREFIX = "cce-relevance timings: "


class Stopwatch:
    """Seconds per stage, in the order the stages first ran."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the body as (part of) stage `name`; a body that raises is timed too."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start)

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def line(self) -> str:
        """The log line: the prefix, then the stages as a JSON object of seconds (milliseconds kept)."""
        return TIMINGS_PREFIX + json.dumps({name: round(s, 3) for name, s in self.seconds.items()})
