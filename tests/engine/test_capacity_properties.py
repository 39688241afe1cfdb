"""The Capacity claims as properties over random curves and demands (hypothesis).

Path independence with bands, stated precisely:
- The curve's point for a demand (`ideal`: the fewest replicas whose
  ceiling covers it, pods of overhead + their share) depends on the demand
  alone, never on where the workload stands.
- Outside the bands it is where the decision goes: when the curve's size
  is more than `resizeTolerance` (a percent of today's request) from
  today's pods, they move to the curve's point, whether they come from
  below (min replicas of tiny pods) or from above (max replicas of the
  curve's largest pods).
- Inside the resize band the pods keep their size: the decision holds
  (the pods cover the demand less `tolerance`, and every total is within
  `tolerance` of the curve's) or moves the count to the fewest pods of today's size that
  cover the demand under the curve (the curve's point when none do). So
  the same demand reached from two sides may end at two counts of two
  pod sizes, each with the same curve size within its band and each
  covering the demand under the curve.
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
RESIZE_TOLERANCE = Fraction(30)


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
        CapacityParams(points, {"cpu": overhead}, TOLERANCE, RESIZE_TOLERANCE),
    )


def applied(result: CapacityPlan, cpu: int) -> Shape:
    for change in result.plan.changes:
        cpu = change.proposed
    return Shape(result.plan.replicas, {"cpu": cpu})


def outside_band(start: Shape, ideal: Shape) -> bool:
    """The curve's size more than `resizeTolerance` (a percent of today's request) away."""
    size = start.sizes["cpu"]
    return abs(ideal.sizes["cpu"] - size) * 100 > RESIZE_TOLERANCE * size


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
    assume(outside_band(below, from_below.ideal) and outside_band(above, from_above.ideal))
    assert applied(from_below, 1) == applied(from_above, top) == from_below.ideal


@given(curves(), st.integers(1, 400_000), st.integers(1, 30), st.integers(-30, 30))
def test_inside_the_resize_band_pods_keep_their_size(
    curve: tuple[int, int, tuple[CurvePoint, ...], int], demand: int, replicas: int, off: int
) -> None:
    """Where the curve can cover the demand, within the band: hold a covering state, keep the size at the fewest covering count
    under the curve, or (no such count) go to the curve's point (its sizes at today's
    count first, when they grow while the count falls)."""
    low, high, points, overhead = curve
    ideal = read(curve, demand, replicas, 1).ideal
    size = ideal.sizes["cpu"] * (100 + off) // 100
    assume(size > overhead and low <= replicas <= high)
    assume(high * ((ceiling(points, "cpu", high) or 0) - overhead) >= demand)
    start = Shape(replicas, {"cpu": size})
    assume(not outside_band(start, ideal))
    result = applied(read(curve, demand, replicas, size), size)
    # CPU here has a utilization target: the hysteresis may hold a shortfall of `tolerance`.
    covered = replicas * (size - overhead) * (100 + TOLERANCE) >= demand * 100
    if result == start:
        assert covered or result == ideal, "a shortfall past the tolerance is held"
        return
    if result.sizes == start.sizes:
        count = result.replicas
        assert count * (size - overhead) >= demand, "does not cover the demand"
        assert size <= (ceiling(points, "cpu", count) or 0), "above the curve"
        fewer = count - 1
        assert (
            fewer < low
            or fewer * (size - overhead) < demand
            or size > (ceiling(points, "cpu", fewer) or 0)
        ), "not the fewest of today's size"
    else:
        assert result.sizes == ideal.sizes, "a resize goes to the curve's size"
        grows_first = ideal.replicas < replicas and ideal.sizes["cpu"] > size
        assert result.replicas == (replicas if grows_first else ideal.replicas), (
            "to the curve's count, or today's while pods grow first"
        )


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
