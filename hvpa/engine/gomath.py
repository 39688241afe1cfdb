"""Go's numeric conversions, where upstream's arithmetic depends on them, made to saturate.

The HPA computes usage ratios in float64 and converts back with `int32(...)`
and `int64(...)`; the integer parts use Go's truncating division. Python's
floats are the same IEEE doubles, so the ratios match bit for bit, but its
integer division floors and a float division by zero raises. `fdiv` and
`trunc_div` give Go's answers, so a boundary case (a ratio exactly at the
tolerance) comes out as it does upstream.

The conversions saturate: a value beyond the type's range becomes its
maximum (or minimum), and NaN becomes 0. Go leaves an out-of-range float
conversion implementation-defined (amd64 yields the minimum, so a huge
utilization turns into a large negative replica count and a scale-down);
upstream guards the places it found (replica counts capped at MaxInt32,
usage at MaxInt64) and hvpa applies the same saturation everywhere, so no
input, however large, reads as a wish to scale down. docs/engine.md lists
the places.
"""

from __future__ import annotations

import math
from typing import Final

__all__ = [
    "MAX_INT32",
    "MAX_INT64",
    "MIN_INT32",
    "MIN_INT64",
    "ceil_int32",
    "ceil_int64",
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


def _saturate(value: float | int, low: int, high: int) -> int:
    if isinstance(value, float):
        if math.isnan(value):
            return 0
        if math.isinf(value):
            return high if value > 0 else low
    whole = int(value)
    return max(low, min(high, whole))


def int32(value: float | int) -> int:
    """`int32(x)`: truncation toward zero, saturating at the int32 range (NaN is 0)."""
    return _saturate(value, MIN_INT32, MAX_INT32)


def int64(value: float | int) -> int:
    """`int64(x)`: truncation toward zero, saturating at the int64 range (NaN is 0)."""
    return _saturate(value, MIN_INT64, MAX_INT64)


def ceil_int32(value: float) -> int:
    """`int32(math.Ceil(f))`, saturating: a replica count from a ratio."""
    return int32(math.ceil(value)) if math.isfinite(value) else int32(value)


def ceil_int64(value: float) -> int:
    """`int64(math.Ceil(f))`, saturating: an average from a ratio."""
    return int64(math.ceil(value)) if math.isfinite(value) else int64(value)
