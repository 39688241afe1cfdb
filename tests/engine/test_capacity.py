"""The Capacity strategy's pure parts: the curve, the split between containers, demand, the plan.

The plan is read directly here (no scenario), so each band is pinned with
the numbers that reach it: the fewest replicas whose ceiling covers the
demand, overhead + demand / replicas per pod (memory beside a CPU target
with the band's slack), the joint hysteresis, the resize band, a vertical segment, the curve's end, and held axes.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from capacity_kit import CASES_HEADROOM
from hypothesis import given as hypothesis_given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from hvpa.api.defaults import CAPACITY_HEADROOM_PERCENT
from hvpa.engine.demand import (
    DemandHistory,
    DemandInput,
    ReplicaFloor,
    Sample,
    measure_demand,
    percentile,
    rise_begins,
    total_load,
)
from hvpa.engine.strategies import HorizontalInput
from hvpa.engine.strategies.capacity import (
    CapacityParams,
    CurvePoint,
    MoveLimits,
    Situation,
    ceiling,
    plan_capacity,
    pod_split,
    read_curve,
)
from hvpa.engine.vertical import ContainerTarget, round_request
from hvpa.records import NO_RESOURCES, ContainerMetrics, ContainerSpec, PodMetricsRecord, Resources

GI = 1024**3 * 1000  # milli-units of one GiB


def point(replicas: int, cpu: int | None = None, memory: int | None = None) -> CurvePoint:
    return CurvePoint(replicas, Resources(cpu=cpu, memory=memory))


LINEAR = (point(1, 1000), point(10, 10_000))
VERTICAL = (point(1, 1000), point(3, 1000), point(3, 4000), point(10, 4000))
# Issue 23's curve: one pod grows from 250m to 1 CPU, 1-CPU pods to 6, pods grow to 2 CPU at 10.
ISSUE_23 = (point(1, 250), point(1, 1000), point(6, 1000), point(10, 2000))


@pytest.mark.parametrize(
    ("curve", "replicas", "expected"),
    [
        pytest.param(LINEAR, 1, 1000, id="at-the-first-point"),
        pytest.param(LINEAR, 3, 3000, id="interpolated"),
        pytest.param((point(2, 1000), point(5, 2000)), 3, 1333, id="interpolated-rounds-down"),
        pytest.param((point(3, 1000), point(5, 2000)), 1, 1000, id="flat-before-the-first-point"),
        pytest.param(LINEAR, 12, 10_000, id="flat-after-the-last-point"),
        pytest.param(VERTICAL, 3, 4000, id="top-of-a-vertical-segment"),
        pytest.param(VERTICAL, 2, 1000, id="below-a-vertical-segment"),
        pytest.param((point(1, memory=GI),), 4, None, id="no-cpu-on-the-curve"),
    ],
)
def test_ceiling(curve: tuple[CurvePoint, ...], replicas: int, expected: int | None) -> None:
    assert ceiling(curve, "cpu", replicas) == expected


@pytest.mark.parametrize(
    ("amount", "shares", "unit", "expected"),
    [
        pytest.param(1000, {}, 1, {"a": 500, "b": 500}, id="even-without-shares"),
        pytest.param(1000, {"a": 3, "b": 1}, 1, {"a": 750, "b": 250}, id="by-share"),
        pytest.param(1001, {"a": 1, "b": 1}, 1, {"a": 501, "b": 500}, id="odd-milli-to-the-first"),
        pytest.param(
            5_000_500, {"a": 1, "b": 1}, 1000, {"a": 2_500_000, "b": 2_500_500}, id="whole-bytes"
        ),
    ],
)
def test_pod_split_adds_up(
    amount: int, shares: dict[str, int], unit: int, expected: dict[str, int]
) -> None:
    parts = pod_split(amount, ["a", "b"], shares, unit)
    assert parts == expected
    assert sum(parts.values()) == amount


@pytest.mark.parametrize(
    ("values", "percent", "expected"),
    [
        pytest.param([5, 1, 3], 100, 5, id="p100-is-the-max"),
        pytest.param(list(range(1, 11)), 90, 9, id="p90-of-ten"),
        pytest.param(list(range(1, 11)), 95, 10, id="p95-of-ten-rounds-up"),
        pytest.param([7], 50, 7, id="one-sample"),
    ],
)
def test_percentile_nearest_rank(values: list[int], percent: float, expected: int) -> None:
    assert percentile(values, percent) == expected


NOW = 10_000.0


def given(**changes: object) -> DemandInput:
    base: dict[str, object] = {
        "now": NOW,
        "replicas": 2,
        "sized": {"cpu": frozenset({"app"}), "memory": frozenset({"app"})},
        "pod_size": {"cpu": 1000, "memory": 2 * GI},
        "overhead": {"memory": GI},
        "percentile": 90,
        "window_seconds": 600,
        "down_window_seconds": 300,
        "utilization": {"cpu": 50},
        "headroom": Fraction(CASES_HEADROOM),
    }
    base.update(changes)
    return DemandInput(**base)  # type: ignore[arg-type]


def usage(time: float, cpu: int, memory: int = 0) -> Sample:
    return Sample(time, Resources(cpu=cpu, memory=memory))


@pytest.mark.parametrize(
    ("inputs", "history", "now_usage", "measured", "effective", "level"),
    [
        pytest.param(
            given(),
            DemandHistory(),
            usage(NOW, 800, 100 * 10**9 * 1000),
            {"cpu": 1600, "memory": 115 * 10**9 * 1000},
            {"cpu": 1600, "memory": 115 * 10**9 * 1000},
            {"cpu": 1600, "memory": 115 * 10**9 * 1000},
            id="load-over-target-utilization-or-headroom",
        ),
        pytest.param(
            given(headroom=Fraction(CAPACITY_HEADROOM_PERCENT)),
            DemandHistory(),
            usage(NOW, 800, 100 * 10**9 * 1000),
            # 100G of memory x (1 + the default 25%).
            {"cpu": 1600, "memory": 125 * 10**9 * 1000},
            {"cpu": 1600, "memory": 125 * 10**9 * 1000},
            {"cpu": 1600, "memory": 125 * 10**9 * 1000},
            id="the-default-headroom-is-25-percent",
        ),
        pytest.param(
            given(average_value=frozenset({"memory"}), headroom=Fraction(40)),
            DemandHistory(),
            usage(NOW, 800, 100 * 10**9 * 1000),
            # An averageValue target bounds what a pod carries: the VPA's 15% margin, not the
            # headroom of a resource without a target (100G x 1.15).
            {"cpu": 1600, "memory": 115 * 10**9 * 1000},
            {"cpu": 1600, "memory": 115 * 10**9 * 1000},
            {"cpu": 1600, "memory": 115 * 10**9 * 1000},
            id="beside-an-average-value-target-the-vpa-margin",
        ),
        pytest.param(
            given(),
            DemandHistory(usage=(usage(NOW - 60, 900), usage(NOW - 700, 5000))),
            usage(NOW, 800),
            {"cpu": 1600, "memory": 0},
            {"cpu": 1600, "memory": 0},
            {"cpu": 1800, "memory": 0},
            id="count-from-the-newest-reading-level-from-the-window-percentile",
        ),
        pytest.param(
            given(),
            DemandHistory(demands=(usage(NOW - 100, 4000), usage(NOW - 400, 9000))),
            usage(NOW, 800),
            {"cpu": 1600, "memory": 0},
            {"cpu": 4000, "memory": 0},
            {"cpu": 1600, "memory": 0},
            id="largest-demand-of-the-down-window",
        ),
        pytest.param(
            given(vpa_targets={"app": Resources(cpu=5000, memory=GI)}),
            DemandHistory(),
            None,
            {"cpu": 10_000, "memory": 0},
            {"cpu": 10_000, "memory": 0},
            {"cpu": 10_000, "memory": 0},
            id="new-hvpa-vpa-target-times-replicas",
        ),
        pytest.param(
            given(floors=(ReplicaFloor("Pods metric qps", 5),)),
            DemandHistory(),
            usage(NOW, 800, 2 * GI),
            {"cpu": 5000, "memory": 5 * GI},
            {"cpu": 5000, "memory": 5 * GI},
            {"cpu": 5000, "memory": 5 * GI},
            id="replica-metric-wants-pods-of-the-current-size",
        ),
        pytest.param(given(), DemandHistory(), None, {}, {}, {}, id="nothing-to-measure"),
    ],
)
def test_demand(
    inputs: DemandInput,
    history: DemandHistory,
    now_usage: Sample | None,
    measured: dict[str, int],
    effective: dict[str, int],
    level: dict[str, int],
) -> None:
    demand = measure_demand(inputs, history, now_usage)
    assert (demand.measured, demand.effective, demand.level) == (measured, effective, level)


def test_load_is_usage_less_the_overhead_of_every_pod_measured() -> None:
    """Three pods measured (one a surge pod of a rollout) carry three overheads, whatever the replicas."""
    pods = tuple(
        PodMetricsRecord(
            "shop",
            f"web-{index}",
            NOW - 20,
            15.0,
            (
                ContainerMetrics("app", Resources(cpu=400, memory=GI + GI // 2)),
                ContainerMetrics("log", Resources(cpu=900, memory=GI)),
            ),
        )
        for index in range(3)
    )
    sized = {"cpu": frozenset({"app"}), "memory": frozenset({"app"})}
    load = total_load(pods, sized, {"memory": GI}, NOW)
    assert load == Sample(NOW - 20, Resources(cpu=1200, memory=3 * GI // 2))


def test_demand_history_keeps_one_sample_per_reading_within_its_window() -> None:
    """The earlier demand in the window is larger than this one (6m CPU: 3m at 50%), so it stays."""
    history = DemandHistory(
        usage=(usage(NOW - 700, 1), usage(NOW - 30, 2), usage(NOW, 3)),
        demands=(usage(NOW - 400, 1), usage(NOW - 10, 20)),
    )
    kept = measure_demand(given(), history, usage(NOW, 3)).history
    assert [s.time for s in kept.usage] == [NOW - 30, NOW]
    assert [s.time for s in kept.demands] == [NOW - 10, NOW]


@pytest.mark.parametrize(
    ("earlier", "kept_times"),
    [
        pytest.param(
            (usage(NOW - 60, 5, 0), usage(NOW - 30, 6, 0)), [NOW - 30, NOW], id="smaller-dropped"
        ),
        pytest.param(
            (usage(NOW - 60, 6, 0), usage(NOW - 30, 6, 0)), [NOW - 30, NOW], id="equal-dropped"
        ),
        pytest.param(
            (usage(NOW - 60, 7, 0), usage(NOW - 30, 6, 0)),
            [NOW - 60, NOW - 30, NOW],
            id="larger-cpu-kept",
        ),
        pytest.param(
            (usage(NOW - 60, 5, 1), usage(NOW - 30, 6, 0)),
            [NOW - 60, NOW - 30, NOW],
            id="larger-memory-kept",
        ),
        pytest.param(
            (Sample(NOW - 60, Resources(cpu=1)), usage(NOW - 30, 6, 0)),
            [NOW - 30, NOW],
            id="a-missing-resource-is-no-larger",
        ),
        pytest.param(
            (usage(NOW - 90, 8, 8), usage(NOW - 60, 9, 0), usage(NOW - 30, 0, 9)),
            [NOW - 60, NOW - 30, NOW],
            id="covered-resource-by-resource-by-two-later-ones",
        ),
        pytest.param(
            (usage(NOW - 30, 5, 0),),
            [NOW - 30, NOW],
            # A decision within the same second replaces this one's demand, maybe with less.
            id="the-newest-demand-drops-nothing",
        ),
        pytest.param(
            (usage(NOW - 30, 10, 0), usage(NOW, 20, 0)),
            [NOW - 30, NOW],
            id="replaced-in-the-same-second-the-one-before-stays",
        ),
    ],
)
def test_the_down_window_keeps_only_demands_that_can_still_be_its_largest(
    earlier: tuple[Sample, ...], kept_times: list[float]
) -> None:
    """This decision's demand is cpu 6m (3m at the 50% target) and memory 0 (no memory usage);
    an earlier demand each of whose resources a later one matches (not the newest, which a
    decision within the same second replaces) can never again be the window's largest."""
    demand = measure_demand(given(), DemandHistory(demands=earlier), usage(NOW, 3))
    assert demand.effective["cpu"] == max([6, *(s.amounts.cpu or 0 for s in earlier)])
    assert [s.time for s in demand.history.demands] == kept_times


@pytest.mark.parametrize(
    ("loads", "expected"),
    [
        # CPU loads in millicores, one reading every 15 s, the newest last; tolerance 10%.
        pytest.param([4000, 4000, 9300], {"cpu"}, id="the-first-reading-of-a-rise"),
        pytest.param([4000, 9300], {"cpu"}, id="the-first-reading-after-one-earlier"),
        pytest.param([4000, 9300, 20_000], set(), id="the-second-reading-holds-only-the-new-rate"),
        pytest.param([4000, 4000, 4400], set(), id="a-rise-within-the-tolerance"),
        pytest.param([4000, 4000, 3000], set(), id="a-fall"),
        pytest.param([4000], set(), id="one-reading"),
    ],
)
def test_a_rise_begins_at_its_first_reading(loads: list[int], expected: set[str]) -> None:
    samples = [usage(NOW - 15 * (len(loads) - i - 1), cpu) for i, cpu in enumerate(loads)]
    assert rise_begins(list(reversed(samples)), Fraction(10)) == frozenset(expected)


def test_a_memory_jump_is_read_whole_at_once() -> None:
    """Memory is the working set at the window's end, not a rate: its jump begins no wait."""
    samples = [usage(NOW - 30, 4000, GI), usage(NOW - 15, 4000, GI), usage(NOW, 4000, 5 * GI)]
    assert rise_begins(samples, Fraction(10)) == frozenset()


POLICY = ContainerTarget("app", NO_RESOURCES)
NO_LIMITS = MoveLimits()


def plan(
    demand: dict[str, int],
    *,
    replicas: int = 1,
    cpu: int = 1000,
    memory: int = GI,
    curve: tuple[CurvePoint, ...] = LINEAR,
    overhead: dict[str, int] | None = None,
    policy: ContainerTarget = POLICY,
    fixed: frozenset[str] = frozenset(),
    held_count: bool = False,
    high: int = 10,
    spare: frozenset[str] = frozenset(),
    limits: MoveLimits = NO_LIMITS,
    **options: Any,
) -> tuple[int, dict[str, int]]:
    container = ContainerSpec("app", Resources(cpu=cpu, memory=memory), NO_RESOURCES)
    params = CapacityParams(
        curve, overhead or {}, Fraction(10), Fraction(30), Fraction(CASES_HEADROOM)
    )
    # A held count is an Hvpa whose horizontal axis is off (hpa.deploy false), as decide
    # passes it.
    reading = read_curve(
        HorizontalInput(replicas, 1, high, enabled=not held_count),
        (container,),
        (policy,),
        demand,
        params,
        fixed=fixed,
        spare=spare,
    )
    result = plan_capacity(reading, Situation(**options), limits).plan
    sizes = {"cpu": cpu, "memory": memory}
    for change in result.changes:
        sizes[change.resource] = change.proposed
    return result.replicas, sizes


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        pytest.param(
            {"demand": {"cpu": 5000, "memory": 0}, "overhead": {"memory": GI}},
            (3, {"cpu": 1667, "memory": GI}),
            id="multiplicative-example-3x1667m-not-9-cores",
        ),
        pytest.param(
            {"demand": {"cpu": 950}, "replicas": 1, "cpu": 1000},
            (1, {"cpu": 1000, "memory": GI}),
            id="a-surplus-within-tolerance-holds",
        ),
        pytest.param(
            # 3 x 700m = 2100m is 3.7% short of 2180m: held, as an HPA holds a usage ratio.
            {
                "demand": {"cpu": 2180},
                "replicas": 3,
                "cpu": 700,
                "curve": (point(1, 1000), point(10, 1000)),
            },
            (3, {"cpu": 700, "memory": GI}),
            id="a-shortfall-within-tolerance-is-held-with-a-utilization-target",
        ),
        pytest.param(
            {
                "demand": {"cpu": 2100},
                "replicas": 3,
                "cpu": 690,
                "curve": (point(1, 1000), point(10, 1000)),
                "spare": frozenset({"cpu"}),
            },
            (3, {"cpu": 700, "memory": GI}),
            id="without-a-utilization-target-no-shortfall-is-held",
        ),
        pytest.param(
            # 2 x 1000m is 9% short of 2180m, but the curve's count is 3 (2 x 1 CPU < 2180m).
            {"demand": {"cpu": 2180}, "replicas": 2, "curve": (point(1, 1000), point(10, 1000))},
            (3, {"cpu": 727, "memory": GI}),
            id="fewer-pods-than-the-curves-count-are-not-held",
        ),
        pytest.param(
            {"demand": {"cpu": 2250}, "replicas": 2, "curve": (point(1, 1000), point(10, 1000))},
            (3, {"cpu": 750, "memory": GI}),
            id="a-shortfall-past-tolerance-goes-to-the-curves-point",
        ),
        pytest.param(
            # 3 x 1000m for 2.7 cores is 11% over: more than the tolerance, so the pods resize.
            {"demand": {"cpu": 2700}, "replicas": 3, "curve": (point(1, 1000), point(10, 1000))},
            (3, {"cpu": 900, "memory": GI}),
            id="at-the-curves-count-a-surplus-past-tolerance-resizes",
        ),
        pytest.param(
            {
                "demand": {"cpu": 3000},
                "replicas": 6,
                "cpu": 500,
                "curve": (point(1, 1000), point(10, 1000)),
            },
            (6, {"cpu": 1000, "memory": GI}),
            id="more-pods-than-the-curves-count-go-back-to-it-growing-first",
        ),
        pytest.param(
            # Issue 23: 10 x 1110m for 3.7 cores settled at 7 x 1110m, where 1110m first fits.
            {"demand": {"cpu": 3700}, "replicas": 10, "cpu": 1110, "curve": ISSUE_23},
            (4, {"cpu": 925, "memory": GI}),
            id="pods-above-the-curve-at-its-count-resize-not-a-larger-count",
        ),
        pytest.param(
            {
                "demand": {"cpu": 3700},
                "replicas": 1,
                "cpu": 1233,
                "curve": ISSUE_23,
                "serving": True,
            },
            (4, {"cpu": 925, "memory": GI}),
            id="pods-that-fit-nowhere-near-are-not-added-first",
        ),
        pytest.param(
            # 3 x 733m is 1m short of 2.2 cores: a shortfall the band holds, at the curve's count.
            {"demand": {"cpu": 2200}, "replicas": 1, "cpu": 733, "curve": ISSUE_23},
            (3, {"cpu": 733, "memory": GI}),
            id="todays-size-at-the-curves-count-within-tolerance",
        ),
        pytest.param(
            {
                "demand": {"cpu": 3000, "memory": 3 * GI},
                "cpu": 100,
                "memory": GI // 10,
                "curve": (point(1, 1000, 4 * GI), point(10, 1000, 4 * GI)),
                "spare": frozenset({"memory"}),
            },
            (3, {"cpu": 1000, "memory": 1_181_117_000_000}),
            id="memory-beside-a-cpu-target-carries-the-band-slack-1GiB-x-1.1",
        ),
        pytest.param(
            {
                "demand": {"cpu": 3000, "memory": 3 * GI},
                "cpu": 100,
                "memory": GI // 10,
                "curve": (point(1, 1000, 1100 * GI // 1000), point(10, 1000, 1100 * GI // 1000)),
                "spare": frozenset({"memory"}),
            },
            (3, {"cpu": 1000, "memory": 1100 * GI // 1000}),
            id="the-band-slack-stays-under-the-curve",
        ),
        pytest.param(
            {
                "demand": {"cpu": 3000, "memory": 3 * GI},
                "cpu": 100,
                "memory": GI // 10,
                "curve": (point(1, 1000, 4 * GI), point(10, 1000, 4 * GI)),
                "spare": frozenset({"cpu", "memory"}),
            },
            (3, {"cpu": 1000, "memory": 1_073_742_000_000}),
            id="without-a-utilization-target-no-band-slack",
        ),
        pytest.param(
            {
                "demand": {"cpu": 4000, "memory": 4 * GI},
                "cpu": 100,
                "memory": GI // 10,
                "curve": (point(1, 1000, 4 * GI), point(10, 1000, 4 * GI)),
                "spare": frozenset({"memory"}),
            },
            (4, {"cpu": 1000, "memory": 1_181_117_000_000}),
            id="beside-a-cpu-target-the-slack-not-a-share-with-one-pod-out",
        ),
        pytest.param(
            {"demand": {"cpu": 3450}, "cpu": 100, "curve": (point(1, 1000), point(10, 1000))},
            (4, {"cpu": 863, "memory": GI}),
            id="fewest-pods-of-their-share",
        ),
        pytest.param(
            {
                "demand": {"cpu": 3450},
                "cpu": 100,
                "curve": (point(1, 1000), point(10, 1000)),
                "spare": frozenset({"cpu"}),
            },
            (4, {"cpu": 1000, "memory": GI}),
            id="from-four-pods-three-carry-the-load-without-headroom",
        ),
        pytest.param(
            {
                "demand": {"cpu": 3000},
                "replicas": 2,
                "cpu": 500,
                "curve": (point(1, 1000), point(10, 1000)),
            },
            (3, {"cpu": 1000, "memory": GI}),
            id="out-of-the-band-straight-to-the-curve",
        ),
        pytest.param(
            {
                "demand": {"cpu": 3000},
                "replicas": 2,
                "cpu": 500,
                "curve": (point(1, 1000), point(10, 1000)),
                "serving": True,
            },
            # 3 cores: 6 x 500m cover it, but a rollout takes 25% of 6 (1) down: 7 pods.
            (7, {"cpu": 500, "memory": GI}),
            id="serving-pods-that-fall-short-add-pods-first",
        ),
        pytest.param(
            {
                "demand": {"cpu": 3000},
                "replicas": 2,
                "cpu": 500,
                "curve": (point(1, 1000), point(10, 1000)),
                "level": {"cpu": 1100},
            },
            (6, {"cpu": 500, "memory": GI}),
            id="a-rise-the-level-has-not-caught-up-with-adds-pods",
        ),
        pytest.param(
            {
                "demand": {"cpu": 3000},
                "replicas": 2,
                "cpu": 500,
                "curve": (point(1, 1000), point(10, 1000)),
                "capped": frozenset({"cpu"}),
            },
            (6, {"cpu": 500, "memory": GI}),
            id="throttled-readings-resize-nothing",
        ),
        pytest.param(
            {
                "demand": {"cpu": 1000},
                "replicas": 8,
                "cpu": 500,
                "curve": (point(1, 1000), point(10, 1000)),
            },
            (8, {"cpu": 1000, "memory": GI}),
            id="pods-grow-at-todays-count-before-it-falls",
        ),
        pytest.param(
            {
                "demand": {"cpu": 1000},
                "replicas": 8,
                "cpu": 500,
                "curve": (point(1, 1000), point(10, 1000)),
                "falling": True,
            },
            (2, {"cpu": 500, "memory": GI}),
            id="a-falling-demand-moves-the-count-only",
        ),
        pytest.param(
            {"demand": {"cpu": 4600}, "replicas": 4, "curve": (point(1, 1000), point(10, 1000))},
            (5, {"cpu": 1000, "memory": GI}),
            id="resize-band-keeps-pod-size-while-count-moves",
        ),
        pytest.param(
            {"demand": {"cpu": 3000}, "replicas": 3, "curve": VERTICAL},
            (3, {"cpu": 1000, "memory": GI}),
            id="vertical-segment-holds-within-tolerance",
        ),
        pytest.param(
            {"demand": {"cpu": 6000}, "replicas": 3, "curve": VERTICAL},
            (3, {"cpu": 2000, "memory": GI}),
            id="vertical-segment-grows-pods-at-the-count",
        ),
        pytest.param(
            {
                "demand": {"cpu": 150_000},
                "replicas": 10,
                "cpu": 10_000,
                "policy": ContainerTarget("app", NO_RESOURCES, max_allowed=Resources(cpu=16_000)),
            },
            (10, {"cpu": 15_000, "memory": GI}),
            id="past-the-end-max-replicas-pods-up-to-max-allowed",
        ),
        pytest.param(
            {"demand": {"cpu": 150_000}, "replicas": 10, "cpu": 9000},
            (10, {"cpu": 10_000, "memory": GI}),
            id="past-the-end-without-max-allowed-stays-on-the-curve",
        ),
        pytest.param(
            {
                "demand": {"cpu": 5000},
                "policy": ContainerTarget("app", NO_RESOURCES, max_allowed=Resources(cpu=1000)),
            },
            (5, {"cpu": 1000, "memory": GI}),
            id="max-allowed-below-the-curve-adds-replicas",
        ),
        pytest.param(
            {
                "demand": {"cpu": 100},
                "replicas": 3,
                "cpu": 3000,
                "policy": ContainerTarget("app", NO_RESOURCES, min_allowed=Resources(cpu=500)),
            },
            (1, {"cpu": 500, "memory": GI}),
            id="never-below-min-allowed",
        ),
        pytest.param(
            {"demand": {"cpu": 12_000}, "replicas": 11, "curve": (point(1, 1000), point(10, 1000))},
            (10, {"cpu": 1000, "memory": GI}),
            id="no-hysteresis-holds-a-count-above-max-replicas",
        ),
        pytest.param(
            {"demand": {"cpu": 5000}, "fixed": frozenset({"cpu"})},
            (5, {"cpu": 1000, "memory": GI}),
            id="pods-held-count-covers-the-demand",
        ),
        pytest.param(
            {"demand": {"cpu": 5000}, "held_count": True},
            (1, {"cpu": 1000, "memory": GI}),
            id="count-held-pods-stay-within-the-curve-at-that-count",
        ),
        pytest.param(
            {"demand": {"cpu": 5000}, "held_count": True, "replicas": 4, "cpu": 500},
            (4, {"cpu": 1250, "memory": GI}),
            id="count-held-pods-take-the-demand",
        ),
    ],
)
def test_plan(kwargs: dict[str, Any], expected: tuple[int, dict[str, int]]) -> None:
    assert plan(**kwargs) == expected


@pytest.mark.parametrize(
    ("start", "steps"),
    [
        pytest.param({"replicas": 1, "cpu": 100}, 1, id="from-below"),
        pytest.param({"replicas": 10, "cpu": 10_000}, 1, id="from-above"),
        pytest.param({"replicas": 7, "cpu": 300}, 2, id="from-many-small-pods-grow-then-shrink-the-count"),
    ],
)  # fmt: skip
def test_same_demand_same_decision_from_any_side(start: dict[str, int], steps: int) -> None:
    """Outside the bands the same demand settles at the curve's point from any side; a
    resize that grows pods while the count falls takes two decisions (pods first)."""
    state = (start["replicas"], {"cpu": start["cpu"], "memory": GI})
    for _ in range(steps):
        state = plan({"cpu": 20_000}, replicas=state[0], cpu=state[1]["cpu"])
    assert state == (5, {"cpu": 4000, "memory": GI})
    assert plan({"cpu": 20_000}, replicas=state[0], cpu=state[1]["cpu"]) == state


HELD = (("UpdatePolicy", "hpa.scaleUp.updatePolicy.updateMode is Off"),)


@pytest.mark.parametrize(
    ("limits", "expected", "blocked"),
    [
        pytest.param(
            MoveLimits(count_up=HELD),
            (1, {"cpu": 1000, "memory": GI}),
            [("horizontal", "up", "UpdatePolicy")],
            id="a-held-count-reads-the-curve-at-todays-count",
        ),
        pytest.param(
            MoveLimits(size_up={"cpu": HELD}),
            (5, {"cpu": 1000, "memory": GI}),
            [("vertical", "up", "UpdatePolicy")],
            id="held-pods-the-count-covers-the-demand-with-them",
        ),
        pytest.param(
            MoveLimits(count_down=HELD, size_down={"cpu": HELD}),
            (3, {"cpu": 1667, "memory": GI}),
            [],
            id="limits-the-move-does-not-meet-report-nothing",
        ),
    ],
)
def test_the_gates_limits_hold_one_axis_and_the_other_follows(
    limits: MoveLimits, expected: tuple[int, dict[str, int]], blocked: list[tuple[str, str, str]]
) -> None:
    """The multiplicative example (1 x 1 core, 5 cores of demand: 3 x 1667m) under held axes."""
    container = ContainerSpec("app", Resources(cpu=1000, memory=GI), NO_RESOURCES)
    params = CapacityParams(
        LINEAR, {"memory": GI}, Fraction(10), Fraction(30), Fraction(CAPACITY_HEADROOM_PERCENT)
    )
    reading = read_curve(
        HorizontalInput(1, 1, 10), (container,), (POLICY,), {"cpu": 5000, "memory": 0}, params
    )
    result = plan_capacity(reading, Situation(), limits).plan
    sizes = {"cpu": 1000, "memory": GI}
    for change in result.changes:
        sizes[change.resource] = change.proposed
    assert (result.replicas, sizes) == expected
    assert [(b.axis, b.direction, b.reason) for b in result.blocked] == blocked


def test_a_count_short_only_with_one_pod_out_says_so() -> None:
    # 4 x 1 CPU covers 3.9 CPU, but without a utilization target one pod out leaves
    # 3 x 1 CPU, which with the default 15% headroom carries 3.45 < 3.9: 5 replicas.
    container = ContainerSpec("app", Resources(cpu=1000, memory=GI), NO_RESOURCES)
    params = CapacityParams(
        (point(1, 1000), point(10, 1000)), {}, Fraction(10), Fraction(30), Fraction(CASES_HEADROOM)
    )
    reading = read_curve(
        HorizontalInput(4, 1, 10),
        (container,),
        (POLICY,),
        {"cpu": 3900},
        params,
        spare=frozenset({"cpu"}),
    )
    planned = plan_capacity(reading, Situation(), NO_LIMITS).plan
    assert planned.replicas == 5
    text = "\n".join(planned.explanation)
    assert "curve: 4 replicas are too few: cpu (one pod out): 3 x (1 - 0) x 115% < 3.9" in text


@hypothesis_settings(max_examples=150, deadline=None)
@hypothesis_given(
    st.lists(
        st.tuples(
            st.integers(0, 40),
            st.integers(0, 40),
            st.sampled_from([0.25, 1, 15, 60]),
            st.sampled_from([60, 300]),
        ),
        max_size=40,
    )
)
def test_a_pruned_down_window_holds_what_every_demand_would(
    readings: list[tuple[int, int, float, int]],
) -> None:
    """Decisions some seconds apart (two within a second too), each with its down window (an
    edit may change it): the held demand of each is the largest of its own and the earlier
    ones its window holds, kept one per second (the later decision of a second replacing the
    earlier's) and dropped once a window has left them behind, as the history did when it
    kept them all."""
    history = DemandHistory()
    every: dict[float, Sample] = {}
    now = NOW + 0.5
    for cpu, memory, gap, window_seconds in readings:
        now += gap
        inputs = given(now=now, down_window_seconds=window_seconds)
        demand = measure_demand(inputs, history, usage(now, cpu, memory))
        every = {t: s for t, s in every.items() if now - t < window_seconds}
        assert demand.effective == {
            "cpu": max([demand.measured["cpu"], *(s.amounts.cpu or 0 for s in every.values())]),
            "memory": max(
                [demand.measured["memory"], *(s.amounts.memory or 0 for s in every.values())]
            ),
        }
        second = float(int(now))
        every[second] = Sample(
            second, Resources(cpu=demand.measured["cpu"], memory=demand.measured["memory"])
        )
        history = demand.history


MI = 1024**2 * 1000  # milli-units of one MiB
# Gardener's kube-apiserver curve (the gardener-kube-apiserver scenario): pods grow at 2 replicas
# from 250m / 500Mi to the HPA's AverageValue targets, 6 CPU / 24G, then pods of that size up to 6.
GARDENER = (
    point(2, 250, 500 * MI),
    point(2, 6000, 24 * 10**9 * 1000),
    point(6, 6000, 24 * 10**9 * 1000),
)
# The step trace's jump as two decisions read it (hvpa sim, seed 1, in place, 5410 s and 5425 s):
# the load goes from 4 to 20 cores and 8 to about 40Gi inside a 15 s metrics window. Memory (the
# working set at the window's end) reads all of it at once; CPU (the window's average) part of it.
# Demand is the load x 1.15 (the VPA's margin beside an AverageValue target): before, 4 cores and
# 8Gi; the two readings' demands are rebuilt from the pods the curve gave for them in the run
# (3 x 3679m and 3 x 16002Mi, a CPU load of 9.6 cores; then 4 x 5850m and 4 x 12077Mi, 20.3
# cores), rounded to whole amounts here: 3 x 3680m, 48300Mi / 4 = 12075Mi.
BEFORE = {"cpu": 4600, "memory": 9420 * MI}
FIRST_READING = {"cpu": 11_040, "memory": 48_006 * MI}
SECOND_READING = {"cpu": 23_400, "memory": 48_300 * MI}


def test_the_first_reading_of_a_rise_moves_the_count_and_the_next_one_sizes_the_pods() -> None:
    """Sized on the rise's first reading, memory went 5011Mi -> 16002Mi -> 12077Mi in 15 s.

    The first reading's CPU is part of the rise, so its count (3) is a floor
    of the next one's (4), and memory sized for 3 pods would shrink at 4.
    With the resize waiting for the second reading each size moves once.
    """
    moving = {"level": BEFORE, "level_low": BEFORE, "serving": True}
    first = plan(
        FIRST_READING,
        replicas=2,
        cpu=2400,
        memory=5011 * MI,
        curve=GARDENER,
        high=6,
        partial=frozenset({"cpu"}),
        **moving,
    )
    assert first == (3, {"cpu": 2400, "memory": 5011 * MI})
    replicas, sizes = first
    second = plan(SECOND_READING, replicas=replicas, curve=GARDENER, high=6, **sizes, **moving)
    # 23.4 cores need 4 pods of at most 6 CPU: 5850m and 48300Mi / 4 = 12075Mi each.
    assert second == (4, {"cpu": 5850, "memory": round_request("memory", 12_075 * MI)})


def test_without_a_partial_reading_the_jump_is_sized_at_once() -> None:
    """The same first reading, read as whole (nothing says it is a rate's first): the pods go
    to the curve at once, as before; what waits is only a partial reading."""
    moving = {"level": BEFORE, "level_low": BEFORE, "serving": True}
    assert plan(
        FIRST_READING, replicas=2, cpu=2400, memory=5011 * MI, curve=GARDENER, high=6, **moving
    ) == (3, {"cpu": 3680, "memory": round_request("memory", 16_002 * MI)})
