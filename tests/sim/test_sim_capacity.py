"""The Capacity strategy in `hvpa sim`: the strategy option, the derived curve, and a whole run.

The run is the path-independence claim as the simulator sees it: under a
load ramp or a step up and back down, the target returns to the shape it
settled on at the start: the same replicas, and pods within the resize
band (30%) of the size it started with (the curve's size for that load).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hvpa.api import parse_hvpa
from hvpa.cli import main
from hvpa.sim.curveplot import curve_points, path_points
from hvpa.sim.plot import plot_available
from hvpa.sim.runner import RunOptions, simulate
from hvpa.sim.scenarios import STRATEGIES, builtin_scenario, default_capacity
from hvpa.sim.traces import parse_trace


def test_capacity_is_a_strategy_of_the_simulator() -> None:
    assert STRATEGIES[-1] == "Capacity"


@pytest.mark.parametrize(
    ("name", "strategy", "intervals"),
    [
        pytest.param("capacity", "Weighted", [{"vpaWeight": 50}], id="no-weights-gets-50-50"),
        pytest.param("proposal-1", "Weighted", None, id="three-stage-weights-kept"),
        pytest.param("capacity", "HpaPreferred", None, id="other-strategies-get-no-weights"),
    ],
)
def test_weighted_without_weights_is_gardeners_50_50(
    name: str, strategy: str, intervals: list[dict[str, int]] | None
) -> None:
    spec = builtin_scenario(name).with_strategy(strategy).hvpa["spec"]
    assert spec.get("weightBasedScalingIntervals") == intervals


def test_a_curve_is_derived_from_the_workload_when_the_hvpa_has_none() -> None:
    """proposal-1: 250m/400Mi pods may grow to their 500m/800Mi limits at 1 replica, then 10 of them."""
    scenario = builtin_scenario("proposal-1")
    assert default_capacity(scenario) == {
        "curve": [
            {"replicas": 1, "cpu": "250m", "memory": str(400 * 2**20)},
            {"replicas": 1, "cpu": "500m", "memory": str(800 * 2**20)},
            {"replicas": 10, "cpu": "500m", "memory": str(800 * 2**20)},
        ],
        "baseResourcesPerReplica": {"cpu": "20m", "memory": str(64 * 2**20)},
    }
    hvpa = parse_hvpa(dict(scenario.with_strategy("Capacity").hvpa))
    assert hvpa.spec.strategy == "Capacity"
    assert hvpa.spec.capacity is not None


@pytest.mark.parametrize("name", ["kube-apiserver", "coredns", "capacity"])
def test_every_builtin_scenario_takes_the_capacity_strategy(name: str) -> None:
    hvpa = parse_hvpa(dict(builtin_scenario(name).with_strategy("Capacity").hvpa))
    assert hvpa.spec.capacity is not None


@pytest.mark.slow
@pytest.mark.parametrize("trace", ["ramp", "step"])
def test_a_ramp_or_a_step_up_and_back_down_returns_to_where_it_started(trace: str) -> None:
    scenario = builtin_scenario("capacity")
    duration = 4 * 3600
    report = simulate(
        RunOptions(
            scenario=scenario,
            trace=parse_trace(trace, duration_seconds=duration, peak=scenario.peak, seed=1),
            duration_seconds=duration,
            seed=1,
        )
    )
    series = report["series"]
    settled, last = series[10], series[-1]
    assert report["summary"]["replicas"]["max"] > settled["replicas"]
    assert last["replicas"] == settled["replicas"]
    for column in ("podRequestCpuCores", "podRequestMemoryBytes"):
        assert settled[column] == pytest.approx(last[column], rel=0.3), column


@pytest.mark.parametrize(
    ("capacity", "resource", "expected"),
    [
        pytest.param(
            {"curve": [{"replicas": 2, "cpu": "250m"}, {"replicas": 2, "cpu": "1"}]},
            "cpu",
            [(1.0, 0.25), (2.0, 0.25), (2.0, 1.0), (20.0, 1.0)],
            id="flat-out-to-min-and-max",
        ),
        pytest.param(
            {"curve": [{"replicas": 1, "memory": "1Gi"}, {"replicas": 20, "memory": "2Gi"}]},
            "memory",
            [(1.0, 1.0), (20.0, 2.0)],
            id="memory-in-gib",
        ),
        pytest.param({"curve": [{"replicas": 1, "cpu": "1"}]}, "memory", [], id="no-memory"),
        pytest.param(None, "cpu", [], id="no-curve"),
    ],
)
def test_curve_points(
    capacity: dict[str, Any] | None, resource: str, expected: list[tuple[float, float]]
) -> None:
    assert curve_points(capacity, resource, 1, 20) == expected


def test_the_path_is_one_point_per_change() -> None:
    series = [
        {"time": 0, "replicas": 2, "podRequestCpuCores": 0.25},
        {"time": 60, "replicas": 2, "podRequestCpuCores": 0.25},
        {"time": 120, "replicas": 3, "podRequestCpuCores": 0.25},
        {"time": 180, "replicas": 3, "podRequestCpuCores": None},
        {"time": 240, "replicas": 3, "podRequestCpuCores": 0.5},
    ]
    assert path_points(series, "podRequestCpuCores", 1.0) == [
        (2.0, 0.25, 0.0),
        (3.0, 0.25, 120 / 3600),
        (3.0, 0.5, 240 / 3600),
    ]


@pytest.mark.slow
@pytest.mark.skipif(
    not plot_available() and os.environ.get("CI") != "true",
    reason="matplotlib is not installed (a dev dependency: in CI its absence fails)",
)
def test_the_curve_option_draws_one_picture_per_strategy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sim", "--hvpa", "capacity", "--duration", "10m", "--no-plot", "--curve"]
    compare = ["--compare", "Capacity,Weighted", "--resize-mode", "Rollout"]
    assert main([*args, *compare, "-o", str(tmp_path)]) == 0
    assert "curve: " in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.glob("curve*.png")) == [
        "curve-Capacity.png",
        "curve-Weighted.png",
    ]
