"""The shared block timer: both clocks move forward, and a block that raises is still timed."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from cce_relevance.timing import Clocks, timed


def test_a_block_is_timed_on_the_wall_and_with_the_cpu_of_its_children() -> None:
    taken: list[Clocks] = []
    with timed(taken.append):
        time.sleep(0.05)
        subprocess.run([sys.executable, "-c", "sum(range(3_000_000))"], check=True)
    (took,) = taken
    assert took.wall >= 0.05
    assert 0.0 < took.cpu  # the child's work is counted once it has been waited for
    assert took.cpu < took.wall + 1.0


def test_a_block_that_raises_is_timed_and_the_error_goes_on() -> None:
    taken: list[Clocks] = []
    with pytest.raises(KeyError), timed(taken.append):
        time.sleep(0.02)
        raise KeyError("x")
    assert len(taken) == 1 and taken[0].wall >= 0.02


def test_since_is_the_time_from_the_readings() -> None:
    started = Clocks.now()
    time.sleep(0.02)
    took = started.since()
    assert 0.02 <= took.wall < 5 and took.cpu >= 0.0
