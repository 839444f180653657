"""Numeric primitives that decide byte-identical output (§numbers, §number-format).

Every room rounds through here so that ranking keys and rendered numbers agree with the
reference to the last digit: round half *away from zero*, on the IEEE double product, with
Rust's saturating float-to-int conversion.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

I64_MAX = 9223372036854775807
I64_MIN = -9223372036854775808


def round_half_away(y: float) -> int:
    """Nearest integer with ties away from zero, saturating to i64 like Rust's `as i64`.

    `floor(y + 0.5)` is wrong for 0.49999999999999994, and Python's `round()` is
    half-to-even, so the tie test is done on the exact difference `y - floor(y)`.
    """
    if math.isnan(y):
        return 0
    if math.isinf(y):
        return I64_MAX if y > 0 else I64_MIN
    a = abs(y)
    r = math.floor(a)
    if a - r >= 0.5:
        r += 1
    r = int(r)
    if y < 0:
        r = -r
    if r > I64_MAX:
        return I64_MAX
    if r < I64_MIN:
        return I64_MIN
    return r


def score_key(x: float) -> int:
    """The integer every ranking comparison uses: `round_half_away(x * 1e6)`."""
    return round_half_away(x * 1000000.0)


def seq_sum(values: Iterable[float]) -> float:
    """Left-to-right float sum; Python 3.12's `sum()` is compensated and must not be used."""
    total = 0.0
    for v in values:
        total += v
    return total


def is_finite_number(value: object) -> bool:
    """An int or a float that is a finite double; never a bool (JSON and TOML keep them apart).

    Integers too large for a double count as not finite rather than raising OverflowError.
    """
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False
