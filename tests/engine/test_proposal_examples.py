"""The HVPA proposal's three Weighted examples, replayed at rising load, have the shapes its pictures show.

A small driver stands in for the cluster: one CPU-bound container, total
usage `load` spread over the replicas, an HPA aiming at 50% utilization with
upstream's 10% tolerance, and a VPA whose target is the request that would
put the pods at that utilization. Each load step is one decision of the
Weighted strategy; the test then reads the "request vs replicas" curve off
the steps, stage by stage (proposal examples 1-3, with the three-stage form
written as weight intervals).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hvpa.engine.strategies import HorizontalInput, plan_scaling
from hvpa.engine.vertical import ContainerTarget
from hvpa.records import ContainerSpec, Resources

UTILIZATION = 0.5
TOLERANCE = 0.1
MIN_REPLICAS, MAX_REPLICAS = 1, 10


@dataclass(frozen=True)
class Interval:
    vpa_weight: int
    start_replica_count: int | None = None
    last_replica_count: int | None = None


@dataclass(frozen=True)
class Step:
    replicas_before: int
    request_before: int
    replicas_after: int
    request_after: int
    wants_more: bool

    @property
    def request_moved(self) -> int:
        return self.request_after - self.request_before


def replay(intervals: Sequence[Interval], loads: Sequence[float]) -> list[Step]:
    replicas, request = 1, 1000
    steps = []
    for load in loads:
        target = math.ceil(load / replicas / UTILIZATION)
        ratio = target / request
        unclamped = replicas if abs(ratio - 1) <= TOLERANCE else math.ceil(replicas * ratio)
        desired = max(MIN_REPLICAS, min(MAX_REPLICAS, unclamped))
        plan = plan_scaling(
            "Weighted",
            HorizontalInput(replicas, MIN_REPLICAS, MAX_REPLICAS, desired, unclamped),
            [ContainerSpec("app", requests=Resources(cpu=request))],
            [ContainerTarget("app", Resources(cpu=target), controlled=("cpu",))],
            intervals=intervals,
        )
        after = next((c.proposed for c in plan.changes), request)
        steps.append(Step(replicas, request, plan.replicas, after, unclamped > replicas))
        replicas, request = plan.replicas, after
    return steps


def ramp(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**index for index in range(count)]


def starting_in(steps: list[Step], low: int, high: int) -> list[Step]:
    return [s for s in steps if low <= s.replicas_before <= high]


def assert_flat(steps: list[Step]) -> None:
    """Replicas grow while the request stays: a horizontal segment of the picture."""
    assert steps
    assert all(s.request_moved == 0 for s in steps)
    assert steps[-1].replicas_after > steps[0].replicas_before


def assert_rising(steps: list[Step]) -> None:
    """Both grow across the stage: a rising segment."""
    assert steps
    assert steps[-1].request_after > steps[0].request_before
    assert steps[-1].replicas_after > steps[0].replicas_before


def assert_vertical(steps: list[Step], replicas: int) -> None:
    """The request grows at a fixed count: a vertical segment."""
    assert steps
    assert all(s.replicas_after == replicas and s.request_moved > 0 for s in steps)


def at_max(steps: list[Step]) -> list[Step]:
    return [s for s in steps if s.replicas_before == MAX_REPLICAS and s.wants_more]


def test_example_1_flat_rising_flat() -> None:
    # stageTwoStartReplicaCount 3, stageTwoStopReplicaCount 7, weights 0 / 0.4 / 0.
    intervals = [Interval(0, 1, 2), Interval(40, 3, 6), Interval(0, 7, 10)]
    steps = replay(intervals, ramp(500, 1.15, 40))
    assert_flat(starting_in(steps, 1, 2))
    assert_rising(starting_in(steps, 3, 6))
    assert_flat(starting_in(steps, 7, 9))
    assert_vertical(at_max(steps), MAX_REPLICAS)


def test_example_2_vertical_rising_flat() -> None:
    # stageTwoStartReplicaCount 1, stageTwoStopReplicaCount 4, weights 1 / 0.4 / 0: while the
    # HPA is content the pods grow at 1 replica; a jump it cannot absorb moves on to stage 2.
    intervals = [Interval(100, 1, 1), Interval(40, 2, 4), Interval(0, 5, 10)]
    slow = ramp(525, 1.05, 12)
    steps = replay(intervals, slow + ramp(slow[-1] * 1.3, 1.3, 15))
    at_one = [s for s in steps if s.replicas_before == 1 and not s.wants_more]
    assert_vertical(at_one, 1)
    leaving = next(s for s in steps if s.replicas_before == 1 and s.wants_more)
    assert leaving.replicas_after > 1 and leaving.request_moved > 0
    assert_rising(starting_in(steps, 2, 4))
    assert_flat(starting_in(steps, 5, 9))
    assert_vertical(at_max(steps), MAX_REPLICAS)


def test_example_3_flat_rising_then_vertical_at_max() -> None:
    # stageTwoStartReplicaCount 3, no stageTwoStopReplicaCount: stage 2 runs to maxReplicas.
    intervals = [Interval(0, 1, 2), Interval(40, 3, None)]
    steps = replay(intervals, ramp(500, 1.15, 40))
    assert_flat(starting_in(steps, 1, 2))
    assert_rising(starting_in(steps, 3, 9))
    assert_vertical(at_max(steps), MAX_REPLICAS)
    assert steps[-1].replicas_after == MAX_REPLICAS
