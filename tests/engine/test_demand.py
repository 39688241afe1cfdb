"""Demand arithmetic (hvpa/engine/demand.py) held to its exact definitions."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from hvpa.engine.demand import _with_margin

# Loads up to 10**18 milli-units (a petabyte of memory); margins as a spec writes a percent:
# a decimal with up to three places, negative ones included (the arithmetic must not care).
LOADS = st.integers(min_value=0, max_value=10**18)
MARGINS = st.decimals(min_value=-99, max_value=1000, places=3).map(lambda d: Fraction(str(d)))


@given(LOADS, MARGINS)
def test_the_margin_in_integers_is_the_exact_ceiling(load: int, margin: Fraction) -> None:
    assert _with_margin(load, margin) == math.ceil(load * (100 + margin) / 100)


def test_the_margin_rounds_up_to_the_next_milli_unit() -> None:
    # 1001 x 1.15 = 1151.15: up to 1152; 1000 x 1.15 is exactly 1150.
    assert (_with_margin(1001, Fraction(15)), _with_margin(1000, Fraction(15))) == (1152, 1150)
