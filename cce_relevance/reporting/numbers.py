"""Fixed six-decimal rendering with the reference's rounding (§number-format).

`%.6f` rounds the exact binary value and disagrees with the reference on about one number in
twenty; the reference rounds the double product |x|·1e6 half away from zero and saturates.
"""

from __future__ import annotations

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
