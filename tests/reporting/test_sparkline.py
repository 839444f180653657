"""The trend line's sparkline: one block per value, the range mapped onto eight heights, order kept."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.reporting.sparkline import BLOCKS, FLAT, sparkline

means = st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=1, max_size=40)


@given(means)
def test_one_block_per_value_lowest_at_the_bottom_highest_at_the_top(values: list[float]) -> None:
    line = sparkline(values)
    assert len(line) == len(values) and set(line) <= set(BLOCKS)
    if min(values) == max(values):
        assert line == FLAT * len(values)
    else:
        assert line[values.index(min(values))] == BLOCKS[0]
        assert line[values.index(max(values))] == BLOCKS[-1]


@given(means)
def test_a_higher_value_is_never_drawn_lower(values: list[float]) -> None:
    line = sparkline(values)
    for a, x in zip(values, line, strict=True):
        for b, y in zip(values, line, strict=True):
            if a < b:
                assert BLOCKS.index(x) <= BLOCKS.index(y)


@given(means, st.floats(min_value=0.01, max_value=100.0), st.floats(min_value=-1.0, max_value=1.0))
def test_the_drawing_depends_on_the_shape_not_the_scale(
    values: list[float], scale: float, shift: float
) -> None:
    moved = [v * scale + shift for v in values]
    if len(set(moved)) == len(set(values)):  # no two values merged by rounding
        line, other = sparkline(values), sparkline(moved)
        assert all(abs(BLOCKS.index(x) - BLOCKS.index(y)) <= 1 for x, y in zip(line, other, strict=True))


def test_examples() -> None:
    assert sparkline([]) == ""
    assert sparkline([0.5]) == "▄"
    assert sparkline([0.3, 0.3, 0.3]) == "▄▄▄"
    assert sparkline([0.0, 1.0]) == "▁█"
    assert sparkline([0.0, 1 / 7, 2 / 7, 3 / 7, 4 / 7, 5 / 7, 6 / 7, 1.0]) == BLOCKS
    assert sparkline([0.412, 0.431, 0.420]) == "▁█▄"  # (0.420 - 0.412) / 0.019 · 7 = 2.9
