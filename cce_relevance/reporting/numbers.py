"""Fixed six-decimal rendering with the reference's rounding (§number-format).

`%.6f` rounds the exact binary value and disagrees with the reference on about one number in
twenty; the reference rounds the double product |x|·1e6 half away from zero and saturates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from cce_relevance.numeric import round_half_away


def format6(x: float) -> str:
    """Unsigned-style six decimals: no negative zero, NaN as 0.000000, ±inf saturated."""
    s = round_half_away(abs(x) * 1000000.0)
    sign = "-" if x < 0 and s != 0 else ""
    return f"{sign}{s // 1000000}.{s % 1000000:06d}"


def signed6(x: float) -> str:
    """`format6` with a `+` for everything that is not printed negative."""
    text = format6(x)
    return text if text.startswith("-") else "+" + text


def format3(x: float) -> str:
    """Three decimals with the same rounding (half away from zero), for the pull request comment;
    a value that rounds to zero but is not zero keeps six decimals, so no change is hidden."""
    s = round_half_away(abs(x) * 1000.0)
    if s == 0 and format6(x) not in ("0.000000", "-0.000000"):
        return format6(x)
    sign = "-" if x < 0 and s != 0 else ""
    return f"{sign}{s // 1000}.{s % 1000:03d}"


def signed3(x: float) -> str:
    """`format3` with a `+` for everything that is not printed negative."""
    text = format3(x)
    return text if text.startswith("-") else "+" + text


class Digits(NamedTuple):
    """How many decimals a rendering shows: six in reports and JSON, three in the PR comment."""

    fixed: Callable[[float], str]
    signed: Callable[[float], str]


SIX = Digits(format6, signed6)
THREE = Digits(format3, signed3)
