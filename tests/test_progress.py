"""The indexing progress bar: what it draws, how often, and that it leaves nothing behind."""

from __future__ import annotations

import io

import pytest

from cce_relevance.progress import ProgressBar, progress_bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_draws_in_place_throttled_and_erases_at_the_end():
    now = [0.0]
    stream = io.StringIO()
    bar = ProgressBar(stream, clock=lambda: now[0])
    bar(0, 40)
    now[0] = 0.05
    bar(10, 40)  # within a tenth of a second of the last drawing: skipped
    now[0] = 2.0
    bar(20, 40)
    drawn = stream.getvalue()
    assert drawn == (
        "\rindexing [........................] 0/40 files"
        "\rindexing [############............] 20/40 files  10 files/s"
    )
    bar(40, 40)
    assert (
        stream.getvalue()
        == drawn + "\r" + " " * len("indexing [############............] 20/40 files  10 files/s") + "\r"
    )


def test_a_shorter_line_covers_the_longer_one_before_it():
    now = [0.0]
    stream = io.StringIO()
    bar = ProgressBar(stream, clock=lambda: now[0])
    now[0] = 0.001
    bar(9, 10)  # 9,000 files/s
    now[0] = 10.0
    bar(9, 10)  # 1 file/s: a shorter line, padded over the old one
    first, second = stream.getvalue().split("\r")[1:]
    assert len(second) == len(first) and second.rstrip().endswith("1 files/s")


def test_nothing_is_written_when_nothing_was_drawn():
    stream = io.StringIO()
    ProgressBar(stream)(0, 0)
    assert stream.getvalue() == ""


def test_only_on_a_terminal_outside_ci_and_without_json(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("CI", raising=False)
    assert progress_bar(io.StringIO()) is None
    assert isinstance(progress_bar(_Terminal()), ProgressBar)
    assert progress_bar(_Terminal(), quiet=True) is None
    monkeypatch.setenv("CI", "true")
    assert progress_bar(_Terminal()) is None
