"""Go's numeric conversions, where upstream's arithmetic depends on them.

The HPA computes usage ratios in float64 and converts back with `int32(...)`
and `int64(...)`; the integer parts use Go's truncating division. Python's
floats are the same IEEE doubles, so the ratios match bit for bit, but its
integer division floors and a float division by zero raises. These helpers
give Go's answers, so a boundary case (a ratio exactly at the tolerance, an
overflowing external metric) comes out as it does upstream.
"""

from __future__ import annotations

import math
from typing import Final

__all__ = [
    "MAX_INT32",
    "MAX_INT64",
    "MIN_INT32",
    "MIN_INT64",
    "fdiv",
    "int32",
    "int64",
    "trunc_div",
]

MAX_INT32: Final = 2**31 - 1
MIN_INT32: Final = -(2**31)
MAX_INT64: Final = 2**63 - 1
MIN_INT64: Final = -(2**63)


def fdiv(numerator: float, denominator: float) -> float:
    """float64 division: x/0 is ±Inf, 0/0 is NaN, as in Go."""
    if denominator == 0:
        if numerator == 0 or math.isnan(numerator):
            return math.nan
        return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)
    return numerator / denominator


def trunc_div(numerator: int, denominator: int) -> int:
    """Go's integer division, which truncates toward zero."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient


def _convert(value: float, low: int, high: int) -> int:
    # amd64 yields the "integer indefinite" value (the minimum) for NaN and
    # out-of-range conversions.
    if math.isnan(value) or math.isinf(value):
        return low
    whole = int(value)
    return whole if low <= whole <= high else low


def int32(value: float) -> int:
    """`int32(f)`: truncation toward zero."""
    return _convert(value, MIN_INT32, MAX_INT32)


def int64(value: float) -> int:
    """`int64(f)`: truncation toward zero."""
    return _convert(value, MIN_INT64, MAX_INT64)
