"""The statistics a comparison can report, by name: what `--stats` and the Action accept.

Kept apart from full_stats.py, which needs numpy, so that the command line can offer these
choices without importing the statistics themselves (start-up, docs/dev/performance.md).
"""

from __future__ import annotations

from typing import Literal

StatsLevel = Literal["reference", "full"]
STATS_LEVELS: tuple[StatsLevel, ...] = ("reference", "full")
