"""The knobs a comparison turns (hvpa/sim/knobs.py) and `hvpa sim --set/--sweep`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from hvpa.cli import main
from hvpa.sim.knobs import KnobError, apply_knobs, parse_setting, parse_sweep
from hvpa.sim.runner import RunOptions
from hvpa.sim.scenarios import builtin_scenario
from hvpa.sim.traces import parse_trace


def options(strategy: str = "Capacity") -> RunOptions:
    scenario = builtin_scenario("capacity").with_strategy(strategy)
    return RunOptions(
        scenario=scenario,
        trace=parse_trace("steady", duration_seconds=600, peak=scenario.peak, seed=1),
        duration_seconds=600,
    )


def hpa_spec(run: RunOptions) -> dict[str, Any]:
    spec: dict[str, Any] = run.scenario.hvpa["spec"]["hpa"]["template"]["spec"]
    return spec


def test_each_knob_sets_what_it_names() -> None:
    run = apply_knobs(
        options(),
        [
            ("sync-period", "60s"),
            ("vpa-margin", "30"),
            ("vpa-half-life", "30m"),
            ("hpa-target", "85"),
            ("max-replicas", "20"),
            ("tolerance", "15"),
            ("resize-tolerance", "40"),
        ],
    )
    assert run.controller.sync_period_seconds == 60
    assert run.vpa_margin == pytest.approx(0.30)
    assert run.half_life_seconds == 1800
    assert hpa_spec(run)["metrics"][0]["resource"]["target"] == {
        "type": "Utilization",
        "averageUtilization": 85,
    }
    assert hpa_spec(run)["maxReplicas"] == 20
    capacity = run.scenario.hvpa["spec"]["capacity"]
    assert (capacity["tolerance"], capacity["resizeTolerance"]) == (15, 40)


def test_a_knob_leaves_the_original_scenario_alone() -> None:
    before = options()
    apply_knobs(before, [("hpa-target", "50")])
    assert hpa_spec(before)["metrics"][0]["resource"]["target"]["averageUtilization"] == 70


def test_capacity_knobs_change_only_spec_capacity_which_other_strategies_do_not_read() -> None:
    before = options("Weighted")
    after = apply_knobs(before, [("tolerance", "20")])
    assert after.scenario.hvpa["spec"]["capacity"]["tolerance"] == 20
    assert {k: v for k, v in after.scenario.hvpa["spec"].items() if k != "capacity"} == {
        k: v for k, v in before.scenario.hvpa["spec"].items() if k != "capacity"
    }


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("speed=2", "unknown knob 'speed'", id="unknown"),
        pytest.param("hpa-target", "is not KNOB=VALUE", id="no-value"),
        pytest.param("hpa-target=0", "not within 1..100", id="out-of-range"),
        pytest.param("sync-period=soon", "soon", id="not-a-duration"),
    ],
)
def test_bad_knobs_are_errors_that_name_them(text: str, message: str) -> None:
    with pytest.raises(KnobError, match=message):
        name, value = parse_setting(text)
        apply_knobs(options(), [(name, value)])


def test_a_sweep_is_one_knob_and_its_values() -> None:
    assert parse_sweep("hpa-target=50, 70,85") == ("hpa-target", ("50", "70", "85"))


def test_sim_sweep_prints_one_table_per_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sim", "--hvpa", "capacity", "--duration", "5m", "--no-plot", "-o", str(tmp_path)]
    assert main([*args, "--strategy", "Capacity", "--sweep", "hpa-target=50,85"]) == 0
    out = capsys.readouterr().out
    assert "\nhpa-target=50\nstrategy" in out
    assert "\nhpa-target=85\nstrategy" in out
    report = orjson.loads((tmp_path / "report.json").read_bytes())
    assert [v["settings"] for v in report["sweep"]] == [
        {"hpa-target": "50"},
        {"hpa-target": "85"},
    ]


def test_sim_rejects_a_bad_knob_before_running(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--hvpa", "capacity", "--set", "speed=2"]) == 2
    assert "unknown knob 'speed'" in capsys.readouterr().err


def test_max_replicas_cuts_the_capacity_curve_there() -> None:
    """The example's curve runs to 30 replicas; at maxReplicas 20 its last point moves to 20
    (validation refuses a point no count can reach: the run would scale nothing)."""
    run = apply_knobs(options(), [("max-replicas", "20")])
    curve = run.scenario.hvpa["spec"]["capacity"]["curve"]
    assert [point["replicas"] for point in curve] == [2, 2, 20]


def test_a_knob_that_makes_the_hvpa_invalid_is_an_error() -> None:
    with pytest.raises(KnobError, match="maxReplicas"):
        apply_knobs(options(), [("max-replicas", "1")])
