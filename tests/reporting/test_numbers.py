"""format6 / signed6 (§number-format): the reference's rounding, not printf's."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

from hypothesis import given
from hypothesis import strategies as st

from cce_relevance.reporting.numbers import format6, signed6


def test_spec_examples() -> None:
    assert format6(0.1234565) == "0.123457"  # 0.1234565 * 1e6 is exactly 123456.5 in doubles
    assert "%.6f" % 0.1234565 == "0.123456"  # noqa: UP031  # ...which printf rounds the other way
    assert format6(-0.0000001) == "0.000000"
    assert format6(-0.0) == "0.000000"
    assert format6(math.nan) == "0.000000"
    assert format6(math.inf) == "9223372036854.775807"
    assert format6(-math.inf) == "-9223372036854.775807"
    assert format6(1.0) == "1.000000"
    assert format6(-2.5e-6) == "-0.000003"


def test_signed() -> None:
    assert signed6(0.0) == "+0.000000"
    assert signed6(-0.0) == "+0.000000"
    assert signed6(-1e-9) == "+0.000000"
    assert signed6(0.5) == "+0.500000"
    assert signed6(-0.5) == "-0.500000"


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False))
def test_matches_decimal_half_up_on_the_double_product(x: float) -> None:
    product = abs(x) * 1000000.0  # the IEEE double product, as the reference computes it
    s = int(Decimal(product).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    sign = "-" if x < 0 and s != 0 else ""
    assert format6(x) == f"{sign}{s // 10**6}.{s % 10**6:06d}"
    assert signed6(x) == (format6(x) if format6(x).startswith("-") else "+" + format6(x))
