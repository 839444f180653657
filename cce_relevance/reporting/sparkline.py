"""A series of numbers as one line of Unicode block characters (`▁▂▃▄▅▆▇█`), for the trend line.

Each value maps to one of eight heights, scaled to the minimum and maximum of the values shown:
the lowest value is `▁`, the highest `█`, and the order of any two values is kept (a higher value
is never drawn lower). A series whose values are all equal has no scale: it is drawn at mid height
(`▄`) throughout, so a flat line reads as flat, not as "at the bottom". Because the scale is the
shown values' own range, a tiny change can fill the full height: the caller prints the range
beside the line.
"""

from __future__ import annotations

from collections.abc import Sequence

BLOCKS = "▁▂▃▄▅▆▇█"
FLAT = BLOCKS[3]


def sparkline(values: Sequence[float]) -> str:
    """One block per value, scaled to `min(values)`–`max(values)`; '' for no values."""
    if not values:
        return ""
    low, high = min(values), max(values)
    if high == low:
        return FLAT * len(values)
    top = len(BLOCKS) - 1
    return "".join(BLOCKS[min(top, int((v - low) / (high - low) * top + 0.5))] for v in values)
