"""Capacity without usage samples: the VPA target is a new Hvpa's demand for one decision only.

Read at every decision, "VPA target x today's replicas" counted the pods the
last decision added, so each scale-up fed the next (issue 23: one pod of
733m whose VPA asks 2200m went to 3, 7, 9, then 10 pods of up to 2 CPU, 20
cores for a 2.2-core need). The history records when the Hvpa first had a
demand (`status.history.demandSince`); afterwards, without usage samples,
both axes hold with NoDemand.

The chains pass each decision's status, replicas and requests on to the next
decision, as the controller does: through `hvpa recommend` with scenario
files, and through decide over random curves and targets (hypothesis).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest
from capacity_kit import Workload, capacity_hvpa
from decide_kit import condition, run
from hypothesis import given, settings
from hypothesis import strategies as st

from hvpa.cli import main
from hvpa.quantity import format_milli, parse_milli

# The curve of issue 23: 1 x 250m growing to 1 CPU at one replica, 1-CPU pods to 6, then
# pods growing to 2 CPU at 10.
CURVE = [
    {"replicas": 1, "cpu": "250m", "memory": "2G"},
    {"replicas": 1, "cpu": "1", "memory": "2G"},
    {"replicas": 6, "cpu": "1", "memory": "2G"},
    {"replicas": 10, "cpu": "2", "memory": "2G"},
]
ONE_POD = Workload(replicas=1, cpu=733, memory=500_000_000_000)
DECISIONS = 5


def without_usage(workload: Workload, vpa_cpu: str, hvpa: dict[str, Any]) -> dict[str, Any]:
    """The scenario with the VPA target given and no PodMetrics at all (no metrics-server)."""
    raw = workload.raw(hvpa, vpa_target={"cpu": vpa_cpu, "memory": "500M"})
    raw["podMetrics"] = []
    return raw


def recommend(path: Path, raw: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> Any:
    path.write_bytes(orjson.dumps(raw))
    assert main(["recommend", "-f", str(path)]) == 0
    return orjson.loads(capsys.readouterr().out)


def next_workload(workload: Workload, output: dict[str, Any]) -> Workload:
    """The target once `hvpa recommend`'s decision is applied, a minute later."""
    requests = output["containers"][0]["requests"]
    return replace(
        workload,
        replicas=output["replicas"]["desired"],
        cpu=parse_milli(requests["cpu"]),
        memory=parse_milli(requests["memory"]),
        now=workload.now + 60,
        status=output["status"],
    )


@pytest.mark.parametrize(
    ("vpa_cpu", "later_cpu"),
    [
        pytest.param("2200m", "2200m", id="a-target-that-stands-still"),
        pytest.param("5500m", "5500m", id="a-larger-one"),
        pytest.param("2200m", "300m", id="a-target-that-falls-later"),
    ],
)
def test_through_recommend_a_stale_vpa_target_moves_the_target_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], vpa_cpu: str, later_cpu: str
) -> None:
    hvpa = capacity_hvpa(CURVE)
    workload = ONE_POD
    shapes = []
    reasons = []
    for step in range(DECISIONS):
        target = vpa_cpu if step == 0 else later_cpu
        output = recommend(tmp_path / f"{step}.json", without_usage(workload, target, hvpa), capsys)
        workload = next_workload(workload, output)
        shapes.append((workload.replicas, workload.cpu))
        (active,) = (c for c in output["conditions"] if c["type"] == "ScalingActive")
        reasons.append(active["reason"])
    assert shapes[0] != (ONE_POD.replicas, ONE_POD.cpu), "the bootstrap decision moves"
    assert set(shapes[1:]) == {shapes[0]}, shapes
    assert reasons == ["DemandFromVpaTarget"] + ["NoDemand"] * (DECISIONS - 1)
    assert workload.status is not None
    assert workload.status["history"]["demandSince"] == "2026-11-21T12:00:00Z"


def test_the_hold_says_why_the_vpa_target_is_not_read_again() -> None:
    hvpa = capacity_hvpa(CURVE)
    first = run(without_usage(ONE_POD, "2200m", hvpa))
    second = run(without_usage(ONE_POD.after(first, 60), "2200m", hvpa))
    assert condition(second, "AbleToScale") == ("False", "NoDemand")
    assert condition(second, "VerticalScalingActive") == ("False", "NoDemand")
    (active,) = (c for c in second.conditions if c.type == "ScalingActive")
    assert "has had a demand since 2026-11-21T12:00:00Z" in active.message


def test_an_hvpa_that_measured_usage_once_never_bootstraps_from_the_vpa_target() -> None:
    """Usage first, then none (metrics-server gone for longer than the demand window): the
    Hvpa is not new, so its VPA target (which may remember fewer, busier pods) is not read."""
    hvpa = capacity_hvpa(CURVE)
    measured = ONE_POD.decide(hvpa, vpa_target={"cpu": "2200m", "memory": "500M"})
    assert condition(measured, "ScalingActive") == ("True", "DemandMeasured")
    later = ONE_POD.after(measured, 3600)
    held = run(without_usage(later, "2200m", hvpa))
    assert condition(held, "ScalingActive") == ("False", "NoDemand")
    assert (held.desired_replicas, held.containers[0].requests.cpu) == (later.replicas, later.cpu)


@st.composite
def curves(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A CPU curve within 1..10 replicas: non-decreasing points, vertical segments allowed."""
    count = draw(st.integers(1, 4))
    replicas = sorted(draw(st.lists(st.integers(1, 10), min_size=count, max_size=count)))
    cpus = sorted(draw(st.lists(st.integers(100, 4000), min_size=count, max_size=count)))
    return [
        {"replicas": r, "cpu": format_milli(c), "memory": "2G"}
        for r, c in zip(replicas, cpus, strict=True)
    ]


@settings(max_examples=60, deadline=None)
@given(
    curves(),
    st.integers(1, 10),
    st.integers(50, 4000),
    st.integers(10, 20_000),
    st.integers(10, 20_000),
)
def test_without_usage_nothing_moves_after_the_first_decision(
    curve: list[dict[str, Any]], replicas: int, cpu: int, vpa_cpu: int, later_cpu: int
) -> None:
    """Whatever the curve, the start and the VPA target (which may change after the
    first decision), the count and the pods move at most once."""
    hvpa = capacity_hvpa(curve)
    workload = replace(ONE_POD, replicas=replicas, cpu=cpu)
    shapes = []
    for step in range(4):
        target = format_milli(vpa_cpu if step == 0 else later_cpu)
        decision = run(without_usage(workload, target, hvpa))
        workload = workload.after(decision, 60)
        shapes.append((workload.replicas, workload.cpu))
    assert set(shapes[1:]) == {shapes[0]}, shapes
