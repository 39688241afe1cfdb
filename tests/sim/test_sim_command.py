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
        pytest.param(["--trace", "wavy"], "unknown trace 'wavy'", id="trace"),
        pytest.param(["--duration", "soon"], "'soon' is not a duration", id="duration"),
        pytest.param(["--duration", "0s"], "--duration must be positive", id="zero-duration"),
        pytest.param(
            ["--compare", "--strategy", "Mixed"], "exclude each other", id="compare-strategy"
        ),
        pytest.param(["--compare", "--keep-running"], "cannot be combined", id="compare-keep"),
        pytest.param(["--nodes", "0"], "--nodes must be at least 1", id="nodes"),
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


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_builtin_scenarios_pair_a_valid_hvpa_with_its_target(name: str) -> None:
    scenario = builtin_scenario(name)
    spec = scenario.hvpa["spec"]
    ref = spec.get("targetRef") or spec["hpaSpec"]["scaleTargetRef"]
    assert (ref["kind"], ref["name"]) == (scenario.target[0], scenario.target[2])
    assert scenario.hvpa["metadata"].get("namespace", "default") == scenario.namespace
    assert scenario.main_container in scenario.loads
    assert scenario.with_strategy("Mixed").hvpa["spec"]["mixed"]["prefer"] == "Hpa"
    assert scenario.strategy == ("Capacity" if name == "capacity" else "Weighted")


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
