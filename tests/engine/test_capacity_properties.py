"""The Capacity claims as properties over random curves and demands (hypothesis).

- Path independence: outside the bands, the shape the curve gives for a
  demand is the same whether the workload comes from below (one tiny pod)
  or from above (max replicas of the curve's largest pods).
- Covering: the count is the fewest within min/max whose ceiling covers the
  demand, and those pods do cover it; no pod is above the curve there.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import assume, given
from hypothesis import strategies as st

from hvpa.engine.strategies import HorizontalInput
from hvpa.engine.strategies.capacity import (
    CapacityParams,
    CapacityPlan,
    CurvePoint,
    Shape,
    ceiling,
    plan_capacity,
)
from hvpa.engine.vertical import ContainerTarget
from hvpa.records import NO_RESOURCES, ContainerSpec, Resources

TOLERANCE = Fraction(10)


@st.composite
def curves(draw: st.DrawFn) -> tuple[int, int, tuple[CurvePoint, ...], int]:
    """min, max, a CPU curve within them (non-decreasing, vertical segments allowed), an overhead."""
    low = draw(st.integers(1, 4))
    high = draw(st.integers(low, 30))
    count = draw(st.integers(1, 5))
    replicas = sorted(draw(st.lists(st.integers(low, high), min_size=count, max_size=count)))
    amounts = sorted(draw(st.lists(st.integers(50, 16_000), min_size=count, max_size=count)))
    overhead = draw(st.integers(0, amounts[0] - 1))
    points = tuple(CurvePoint(r, Resources(cpu=a)) for r, a in zip(replicas, amounts, strict=True))
    return low, high, points, overhead


def read(
    curve: tuple[int, int, tuple[CurvePoint, ...], int], demand: int, replicas: int, cpu: int
) -> CapacityPlan:
    low, high, points, overhead = curve
    return plan_capacity(
        HorizontalInput(replicas, low, high),
        (ContainerSpec("app", Resources(cpu=cpu), NO_RESOURCES),),
        (ContainerTarget("app", NO_RESOURCES, controlled=("cpu",)),),
        {"cpu": demand},
        CapacityParams(points, {"cpu": overhead}, TOLERANCE),
    )


def applied(result: CapacityPlan, cpu: int) -> Shape:
    for change in result.plan.changes:
        cpu = change.proposed
    return Shape(result.plan.replicas, {"cpu": cpu})


def outside_bands(start: Shape, ideal: Shape) -> bool:
    size, total = start.sizes["cpu"], start.total("cpu")
    far = abs(ideal.sizes["cpu"] - size) * 100 > TOLERANCE * size
    return far and abs(ideal.total("cpu") - total) * 100 > TOLERANCE * total


@given(curves(), st.integers(0, 400_000))
def test_the_same_demand_gives_the_same_shape_from_below_and_from_above(
    curve: tuple[int, int, tuple[CurvePoint, ...], int], demand: int
) -> None:
    low, high, points, _ = curve
    top = ceiling(points, "cpu", high) or 0
    below, above = Shape(low, {"cpu": 1}), Shape(high, {"cpu": top})
    from_below = read(curve, demand, below.replicas, 1)
    from_above = read(curve, demand, above.replicas, top)
    assert from_below.ideal == from_above.ideal
    assume(outside_bands(below, from_below.ideal) and outside_bands(above, from_above.ideal))
    assert applied(from_below, 1) == applied(from_above, top) == from_below.ideal


@given(curves(), st.integers(0, 400_000), st.integers(1, 30), st.integers(1, 16_000))
def test_the_fewest_replicas_whose_ceiling_covers_the_demand(
    curve: tuple[int, int, tuple[CurvePoint, ...], int], demand: int, replicas: int, cpu: int
) -> None:
    low, high, points, overhead = curve
    ideal = read(curve, demand, replicas, cpu).ideal
    count, size = ideal.replicas, ideal.sizes["cpu"]
    assert low <= count <= high
    covered = high * ((ceiling(points, "cpu", high) or 0) - overhead) >= demand
    if covered:
        assert size <= (ceiling(points, "cpu", count) or 0), "above the curve"
        assert count * (size - overhead) >= demand, "does not cover the demand"
        if count > low:
            fewer = count - 1
            assert fewer * ((ceiling(points, "cpu", fewer) or 0) - overhead) < demand
    else:
        assert count == high
