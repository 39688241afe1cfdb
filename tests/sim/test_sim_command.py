"""`hvpa sim`'s input checks and built-in scenarios, without running a simulation."""

from __future__ import annotations

from pathlib import Path

import pytest

from hvpa.api import parse_hvpa
from hvpa.cli import main
from hvpa.sim.scenarios import SCENARIO_NAMES, ScenarioError, builtin_scenario, scenario_from_file


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["--hvpa", "nope"], "unknown scenario 'nope'", id="scenario"),
        pytest.param(
            ["--strategy", "Capacityish"], "unknown strategy 'Capacityish'", id="strategy"
        ),
        pytest.param(
            ["--hvpa", "gardener-kube-apiserver", "--compare", "Capacity,VPAAndHPA,Nope"],
            "one of Weighted, HpaPreferred, HpaBiased, VpaBiased, Mixed, Capacity, VPAAndHPA",
            id="compare-baseline",
        ),
        pytest.param(
            ["--strategy", "VPAAndHPA"],
            "proposal-1: VPAAndHPA is built from an Hvpa's spec.targetRef",
            id="baseline-three-stage",
        ),
        pytest.param(["--trace", "wavy"], "unknown trace 'wavy'", id="trace"),
        pytest.param(["--duration", "soon"], "'soon' is not a duration", id="duration"),
        pytest.param(["--duration", "0s"], "--duration must be positive", id="zero-duration"),
        pytest.param(
            ["--compare", "--strategy", "Mixed"], "exclude each other", id="compare-strategy"
        ),
        pytest.param(["--compare", "--keep-running"], "cannot be combined", id="compare-keep"),
        pytest.param(["--nodes", "0"], "--nodes must be from 1 to 10000 (got 0)", id="nodes"),
        pytest.param(["--nodes", "1000000"], "--nodes must be from 1 to 10000", id="many-nodes"),
        # 31 days, at about 40 s a simulated day, is some twenty minutes: more would look hung
        pytest.param(
            ["--duration", "1000000h"],
            "--duration is 1000000h00m; a run is at most 744h00m (31 days",
            id="long-duration",
        ),
        pytest.param(["--vpa-half-life=-5m"], "vpa-half-life", id="half-life"),
        pytest.param(["--compare", ","], "--compare ',' names no strategy", id="compare-nothing"),
        pytest.param(
            ["--trace", "spike:width=-10m"], "width: '-10m' is negative", id="trace-input"
        ),
    ],
)
def test_unusable_input_exits_2_with_a_message(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sim", "-o", str(tmp_path), *args]) == 2
    assert message in capsys.readouterr().err


def test_a_malformed_csv_trace_exits_2_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "load.csv"
    trace.write_text("time,cpu,memory\n0,1,1Gi\n60,one,1Gi\n")
    assert main(["sim", "--trace", str(trace), "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"hvpa sim: {trace}:3: 'one' is not a CPU quantity\n"
    assert not (tmp_path / "report.json").exists()


def test_list_names_every_scenario_trace_and_strategy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "--list"]) == 0
    out = capsys.readouterr().out
    for name in (
        *SCENARIO_NAMES,
        "steady",
        "step",
        "ramp",
        "diurnal",
        "spike",
        "noisy",
        "FILE.csv",
    ):
        assert name in out
    assert "Weighted, HpaPreferred, HpaBiased, VpaBiased, Mixed, Capacity\n" in out
    assert "baselines (--strategy, --compare): VPAAndHPA\n" in out


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_builtin_scenarios_pair_a_valid_hvpa_with_its_target(name: str) -> None:
    scenario = builtin_scenario(name)
    spec = scenario.hvpa["spec"]
    ref = spec.get("targetRef") or spec["hpaSpec"]["scaleTargetRef"]
    assert (ref["kind"], ref["name"]) == (scenario.target[0], scenario.target[2])
    assert scenario.hvpa["metadata"].get("namespace", "default") == scenario.namespace
    assert scenario.main_container in scenario.loads
    assert scenario.with_strategy("Mixed").hvpa["spec"]["mixed"]["prefer"] == "Hpa"
    capacity = ("capacity", "gardener-kube-apiserver")
    assert scenario.strategy == ("Capacity" if name in capacity else "Weighted")


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_every_builtin_scenario_can_resize_in_place(name: str) -> None:
    """The three-stage form (proposal-1) has no spec.vpa: it is rewritten in the form it is read
    as, so the mode lands where the API reads it, and the run is labelled by it."""
    scenario = builtin_scenario(name)
    assert (scenario.resize_mode, scenario.label) == ("Rollout", scenario.strategy)
    in_place = scenario.with_resize_mode("InPlaceOrRollout")
    assert parse_hvpa(dict(in_place.hvpa)).spec.vpa.resize_mode == "InPlaceOrRollout"
    assert in_place.label == f"{scenario.strategy}+InPlaceOrRollout"
    assert parse_hvpa(dict(scenario.hvpa)).spec.vpa.resize_mode is None


def test_a_workload_is_derived_from_an_hvpa_alone(tmp_path: Path) -> None:
    path = tmp_path / "web.yaml"
    path.write_text(
        """
apiVersion: autoscaling.k8s.io/v1alpha1
kind: Hvpa
metadata: {name: web}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  hpa: {deploy: true, template: {spec: {minReplicas: 2, maxReplicas: 5}}}
  vpa:
    deploy: true
    template:
      spec:
        resourcePolicy:
          containerPolicies:
          - {containerName: app, minAllowed: {cpu: 100m, memory: 128Mi}}
          - {containerName: proxy}
"""
    )
    scenario = scenario_from_file(path)
    assert scenario.target == ("Deployment", "default", "web")
    assert scenario.workload["spec"]["replicas"] == 2
    containers = scenario.workload["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["app", "proxy"]
    assert containers[0]["resources"] == {
        "requests": {"cpu": "100m", "memory": str(128 * 2**20)},
        "limits": {"cpu": "200m", "memory": str(256 * 2**20)},
    }
    assert scenario.main_container == "app"
    assert scenario.peak.cpu_millicores == pytest.approx(0.6 * 5 * 100)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("kind: Deployment\n", "the first document must be an Hvpa", id="not-hvpa"),
        pytest.param(
            "apiVersion: autoscaling.k8s.io/v1alpha1\nkind: Hvpa\nmetadata: {name: x}\nspec: {}\n",
            "not a valid Hvpa",
            id="invalid-hvpa",
        ),
        pytest.param(
            "apiVersion: autoscaling.k8s.io/v1alpha1\nkind: Hvpa\nmetadata: {name: x}\n"
            "spec: {targetRef: {kind: Deployment, name: web}}\n---\n"
            "kind: Deployment\nmetadata: {name: api}\n",
            "but the Hvpa targets Deployment 'web'",
            id="wrong-workload",
        ),
        pytest.param("a: [", "not YAML", id="yaml"),
    ],
)
def test_unusable_hvpa_files_say_why(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(ScenarioError, match=message):
        scenario_from_file(path)


def test_without_matplotlib_the_plot_is_skipped_with_a_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse
    import sys

    from hvpa.commands import sim as command

    monkeypatch.setattr("hvpa.sim.plot.plot_available", lambda: False)
    command._plot({}, tmp_path / "plot.png", argparse.Namespace(no_plot=False), sys.stdout)
    assert capsys.readouterr().out == (
        "plot skipped: matplotlib is not installed (pip install 'hvpa[plot]')\n"
    )
    assert not (tmp_path / "plot.png").exists()


def test_a_csv_trace_longer_than_a_run_may_be_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "year.csv"
    trace.write_text("time,cpu,memory\n0,1,1Gi\n31536000,1,1Gi\n")  # 365 days in seconds
    assert main(["sim", "-o", str(tmp_path), "--trace", str(trace)]) == 2
    assert f"the trace {trace} is 8760h00m; a run is at most 744h00m" in capsys.readouterr().err


class FakeWall:
    """A wall clock the test moves: how long the run has taken."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_lines_without_a_terminal() -> None:
    """A line per tenth of the run, with simulated and wall time, once the run has lasted
    two seconds: a short run prints nothing, a long one shows it is alive."""
    import io

    from hvpa.commands.sim import _ProgressLines

    out, wall = io.StringIO(), FakeWall()
    progress = _ProgressLines(out, "Weighted", wall=wall)
    six_hours = 6 * 3600.0
    for minute in range(361):  # a call a simulated minute (the runner calls at every tick)
        wall.now = minute / 360 * 8.0  # the whole run takes 8 s of wall time
        progress(minute * 60.0, six_hours)
    lines = out.getvalue().splitlines()
    # the first 2 s end with the first quarter: the first line is there, then every tenth
    assert lines[0] == "hvpa sim: Weighted 25%: 1h30m of 6h00m simulated in 2.0 s"
    assert lines[-1] == "hvpa sim: Weighted 100%: 6h00m of 6h00m simulated in 8.0 s"
    assert [line.split()[3] for line in lines] == ["25%:"] + [f"{p}%:" for p in range(30, 101, 10)]

    quick, wall = io.StringIO(), FakeWall()
    progress = _ProgressLines(quick, "Weighted", wall=wall)
    for minute in range(361):
        wall.now = minute / 360 * 1.0  # a run of one second
        progress(minute * 60.0, six_hours)
    assert quick.getvalue() == ""


def test_compare_runs_a_baseline_once_and_each_strategy_per_resize_mode() -> None:
    import argparse

    from hvpa.commands.sim import COMPARED_MODES, _strategies

    args = argparse.Namespace(compare="Capacity,VPAAndHPA", strategy=None, resize_mode=None)
    assert _strategies(args) == [
        *(("Capacity", mode) for mode in COMPARED_MODES),
        ("VPAAndHPA", None),
    ]
