"""Capacity in a closed loop through decide: each decision applied, its status passed on.

The workload's total usage is what the test sets; `capacity_kit.Workload`
spreads it over whatever pods the last decision left (to the millicore), a
minute later, as a controller with a metrics-server would see it. Only
CPU is sized here (the Hvpa's container policy controls CPU alone), so
every figure is the CPU curve's; the kit's HPA target is 50%, so the
demand is twice the usage.

- The stuck equilibrium of issue 23: curve 1 x 250m, 1 x 1000m, 6 x 1000m,
  10 x 2000m and a 3.7-core demand settled at 7 x 1110m or 7 x 1233m
  (today's pods do not fit under the ceiling at 4, so the band picked the
  smallest count where they did). Now every start rests at 4 pods within
  three decisions, from below and from above at the curve's 4 x 925m.
- Path independence in shape: after a ramp up and back down, and after a
  step up and back down, the workload is back at its starting count with
  pods within the band of their starting size (hypothesis, over curves,
  levels and peaks).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from capacity_kit import RISING_CURVE, Workload, capacity_hvpa
from hypothesis import given, settings
from hypothesis import strategies as st

from hvpa.engine.decision import Decision

# Issue 23's curve: one pod grows from 250m to 1 CPU, 1-CPU pods up to 6, then pods grow to
# 2 CPU at 10.
CURVE = [
    {"replicas": 1, "cpu": "250m", "memory": "4G"},
    {"replicas": 1, "cpu": "1", "memory": "4G"},
    {"replicas": 6, "cpu": "1", "memory": "4G"},
    {"replicas": 10, "cpu": "2", "memory": "4G"},
]
CPU_ONLY = [{"containerName": "*", "controlledResources": ["cpu"]}]
STEP_SECONDS = 60
# Pods added first, pods resized, the count settled (tests/engine/test_capacity_properties.py).
DECISIONS_TO_REST = 3
# The demand window (600 s) and the down window (300 s) both pass in 11 one-minute decisions.
WINDOWS_PASS = 11


def cpu_hvpa(curve: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    return capacity_hvpa(curve, policies=CPU_ONLY, **options)


def shape(decision: Decision) -> tuple[int, int]:
    return decision.desired_replicas, decision.containers[0].requests.cpu or 0


def run_loop(hvpa: dict[str, Any], workload: Workload, totals: list[int]) -> list[tuple[int, int]]:
    """The shapes after each decision, the total CPU usage following `totals`."""
    shapes = []
    for total in totals:
        workload = workload.with_total_cpu_usage(total)
        decision = workload.decide(hvpa)
        shapes.append(shape(decision))
        workload = workload.after(decision, STEP_SECONDS)
    return shapes


# 3.7 cores of demand: 1850m of usage at the kit's 50% target.
STUCK_USAGE = 1850


@pytest.mark.parametrize(
    ("start", "rests_at"),
    [
        pytest.param((10, 1110), (4, 925), id="from-10x1110m-was-stuck-at-7x1110m"),
        pytest.param((1, 1233), (4, 925), id="from-1x1233m-was-stuck-at-7x1233m"),
        pytest.param((1, 250), (4, 925), id="from-below"),
        pytest.param((10, 2000), (4, 925), id="from-above"),
        pytest.param((2, 500), (4, 925), id="pods-added-first-then-resized"),
        pytest.param((4, 925), (4, 925), id="a-target-at-the-answer-stays"),
        # 4 x 900m = 3.6 cores is within 10% of 3.7 (a CPU shortfall the band holds).
        pytest.param((4, 900), (4, 900), id="within-the-tolerance-stays"),
    ],
)
def test_a_demand_rests_at_the_curves_count_within_three_decisions(
    start: tuple[int, int], rests_at: tuple[int, int]
) -> None:
    workload = Workload(replicas=start[0], cpu=start[1])
    shapes = run_loop(cpu_hvpa(CURVE), workload, [STUCK_USAGE] * (DECISIONS_TO_REST + 3))
    assert set(shapes[DECISIONS_TO_REST - 1 :]) == {rests_at}, shapes


def test_2_2_cores_from_one_pod_of_733m_rest_at_3_pods() -> None:
    """3 x 733m is 1m short of 2.2 cores, a shortfall the band holds (the curve says 3 x 734m):
    the pods are added at their size and stay, with no rollout for a millicore."""
    workload = Workload(replicas=1, cpu=733)
    shapes = run_loop(cpu_hvpa(CURVE), workload, [1100] * 5)
    assert shapes == [(3, 733)] * 5


def excursion(base: int, peak: int, shape_name: str) -> list[int]:
    """Total usage per minute: settle at `base`, rise to `peak` (a 20-minute ramp or a step),
    hold it 20 minutes, come back down the same way, and settle again."""
    if shape_name == "ramp":
        up = [base + (peak - base) * step // 20 for step in range(1, 21)]
    else:
        up = [peak]
    return [base] * WINDOWS_PASS + up + [peak] * 20 + up[::-1] + [base] * (WINDOWS_PASS + 5)


@pytest.mark.parametrize("shape_name", ["ramp", "step"])
@pytest.mark.parametrize(
    ("curve", "base", "peak"),
    [
        pytest.param(RISING_CURVE, 300, 9000, id="rising-curve"),
        pytest.param(CURVE, 400, 4500, id="issue-23-curve"),
    ],
)
def test_after_a_ramp_or_a_step_it_returns_to_where_it_started(
    curve: list[dict[str, Any]], base: int, peak: int, shape_name: str
) -> None:
    totals = excursion(base, peak, shape_name)
    shapes = run_loop(cpu_hvpa(curve), Workload(replicas=1, cpu=1000), totals)
    start, end = shapes[WINDOWS_PASS - 1], shapes[-1]
    assert max(s[0] for s in shapes) > start[0], "the load never moved the count"
    assert end[0] == start[0], shapes
    assert abs(end[1] - start[1]) * 100 <= 30 * start[1], shapes


@st.composite
def curves(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A flat or rising CPU curve over 1..10 replicas, as the Hvpa writes it."""
    first = draw(st.integers(200, 2000))
    last = draw(st.integers(first, 4000))
    return [
        {"replicas": 1, "cpu": f"{first}m", "memory": "4G"},
        {"replicas": 10, "cpu": f"{last}m", "memory": "4G"},
    ]


@settings(max_examples=25, deadline=None)
@given(
    curves(),
    st.integers(100, 2000),
    st.integers(2, 8),
    st.sampled_from(["ramp", "step"]),
)
def test_return_to_the_start_after_any_excursion(
    curve: list[dict[str, Any]], base: int, factor: int, shape_name: str
) -> None:
    """Back at the starting count, pods within the 30% band of their starting size."""
    first_cpu = int(curve[0]["cpu"].removesuffix("m"))
    totals = excursion(base, base * factor, shape_name)
    hvpa = cpu_hvpa(curve, maximum=10)
    shapes = run_loop(hvpa, Workload(replicas=1, cpu=first_cpu), totals)
    start, end = shapes[WINDOWS_PASS - 1], shapes[-1]
    assert end[0] == start[0], shapes
    assert abs(end[1] - start[1]) * 100 <= 30 * start[1], shapes


def test_a_settled_level_is_the_same_shape_from_a_ramp_and_from_a_step() -> None:
    """The same demand reached by a ramp and by a step, once settled, rests at the same count."""
    ramp = run_loop(cpu_hvpa(CURVE), Workload(replicas=1, cpu=1000), excursion(400, 4500, "ramp"))
    step = run_loop(cpu_hvpa(CURVE), Workload(replicas=1, cpu=1000), excursion(400, 4500, "step"))
    top_ramp, top_step = ramp[WINDOWS_PASS + 20 + 19], step[WINDOWS_PASS + 1 + 19]
    assert top_ramp[0] == top_step[0], (top_ramp, top_step)


def test_the_kit_keeps_the_total_usage_to_the_millicore() -> None:
    workload = replace(Workload(replicas=3), cpu_usage=0).with_total_cpu_usage(1850)
    assert workload.total_cpu_usage == 1850
    assert workload.decide(cpu_hvpa(CURVE)).explanation  # the scenario is valid
