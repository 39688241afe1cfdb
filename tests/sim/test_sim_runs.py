"""Whole simulations: the real controller over HTTP against the cluster model, in virtual time.

They assert on the report: under a load ramp the target scales out and up and back down; a
spike's OOMKills are all answered by more memory; a seed gives one report; and the command's
inputs and outputs (--compare, CSV traces, malformed input, report.json, plot.png).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hvpa.cli import main
from hvpa.sim.runner import RunOptions, simulate
from hvpa.sim.scenarios import STRATEGIES, builtin_scenario
from hvpa.sim.traces import parse_trace

pytestmark = pytest.mark.slow


def run(
    trace: str, minutes: float, *, seed: int = 1, scenario: str = "proposal-1"
) -> dict[str, Any]:
    chosen = builtin_scenario(scenario)
    duration = minutes * 60
    return simulate(
        RunOptions(
            scenario=chosen,
            trace=parse_trace(trace, duration_seconds=duration, peak=chosen.peak, seed=seed),
            duration_seconds=duration,
            seed=seed,
        )
    )


def test_the_target_scales_out_and_up_under_load_and_back_down_after_it() -> None:
    report = run("ramp:start=5%,top=30%,fall=50%,end=65%", 90)
    summary, series = report["summary"], report["series"]
    first, last = series[0], series[-1]
    peak_allocated = max(row["allocatedCpuCores"] for row in series)
    assert summary["replicas"]["max"] > first["replicas"]
    assert summary["podRequests"]["max"]["cpu"] > first["podRequestCpuCores"]
    assert summary["replicas"]["final"] < summary["replicas"]["max"]
    assert last["allocatedCpuCores"] < peak_allocated / 2
    assert summary["rollouts"] >= 1 and summary["replicaChanges"] >= 2
    assert summary["oomKills"] == summary["oomKillsAnswered"]
    assert report["scenario"]["strategy"] == "Weighted"
    assert {c["type"]: c["status"] for c in report["hvpaStatus"]["conditions"]}[
        "ScalingActive"
    ] == "True"


def test_every_oomkill_of_a_spike_is_answered_by_more_memory() -> None:
    # Memory jumps to 1.5 x the scenario's peak at once: more than the pods' limits hold,
    # faster than any controller reacts, so pods are OOMKilled whatever the resync timing.
    summary = run("spike:at=20m,width=10m,memory=6Gi", 60)["summary"]
    assert summary["oomKills"] > 0
    assert summary["oomKillsAnswered"] == summary["oomKills"]
    assert summary["podRequests"]["max"]["memory"] > summary["podRequests"]["min"]["memory"]


def test_the_same_seed_gives_the_same_report() -> None:
    first = run("noisy", 30, seed=5)
    assert run("noisy", 30, seed=5) == first
    assert run("noisy", 30, seed=6)["series"] != first["series"]


def test_compare_runs_every_strategy_over_one_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "sim",
            "--compare",
            "--resize-mode",
            "Rollout",
            "--trace",
            "spike:at=5m,width=5m",
            "--duration",
            "20m",
            "-o",
            str(tmp_path),
            "--no-plot",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    table = out[out.index("strategy ") :].splitlines()
    assert [line.split()[0] for line in table[1 : 1 + len(STRATEGIES)]] == list(STRATEGIES)
    assert "under-prov min" in table[0] and "rollouts" in table[0]
    report = json.loads((tmp_path / "report.json").read_text())
    assert [entry["strategy"] for entry in report["compare"]] == list(STRATEGIES)
    assert set(report["runs"]) == set(STRATEGIES)
    assert report["runs"]["HpaBiased"]["scenario"]["strategy"] == "HpaBiased"


def test_compare_runs_each_strategy_rolled_out_and_resized_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --resize-mode a comparison runs each strategy in Rollout and InPlaceOrRollout;
    in place, the sizes reach the pods by resizes, which the table counts apart from rollouts."""
    args = ["sim", "--compare", "Weighted", "--trace", "ramp", "--duration", "1h"]
    assert main([*args, "-o", str(tmp_path), "--no-plot"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("strategy ") :].splitlines()
    assert "in-place resizes" in table[0] and "pod restarts" in table[0]
    assert [line.split()[0] for line in table[1:3]] == ["Weighted", "Weighted+InPlaceOrRollout"]
    report = json.loads((tmp_path / "report.json").read_text())
    rolled, in_place = (report["runs"][label]["summary"] for label in table_labels(table))
    assert rolled["rollouts"] > 0 and rolled["inPlaceResizes"] == 0
    assert in_place["inPlaceResizes"] > 0 and in_place["podRestarts"] == 0
    assert in_place["rollouts"] < rolled["rollouts"]


def table_labels(table: list[str]) -> list[str]:
    return [line.split()[0] for line in table[1:3]]


def test_a_csv_trace_drives_a_run_and_the_report_and_plot_are_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "load.csv"
    trace.write_text("time,cpu,memory\n0,500m,1Gi\n290,3,2Gi\n310,3,2Gi\n600,500m,1Gi\n")
    out_dir = tmp_path / "out"
    assert main(["sim", "--trace", str(trace), "--strategy", "HpaBiased", "-o", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert "utilization (demand/allocated)" in out and "OOMKills" in out
    report = json.loads((out_dir / "report.json").read_text())
    assert report["scenario"]["trace"] == "load.csv"
    assert report["scenario"]["durationSeconds"] == 600
    assert report["summary"]["demand"]["cpu"]["peak"] == 3.0
    assert (out_dir / "plot.png").read_bytes()[:4] == b"\x89PNG"


def test_an_hvpa_file_with_its_workload_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "hvpa.yaml"
    manifest.write_text(
        """
apiVersion: autoscaling.k8s.io/v1alpha1
kind: Hvpa
metadata: {name: db, namespace: data}
spec:
  targetRef: {apiVersion: apps/v1, kind: StatefulSet, name: db}
  hpa:
    deploy: true
    template:
      spec:
        minReplicas: 1
        maxReplicas: 3
        metrics:
        - type: Resource
          resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: db:1
        resources: {requests: {cpu: 500m, memory: 1Gi}, limits: {memory: 2Gi}}
"""
    )
    code = main(
        [
            "sim",
            "--hvpa",
            str(manifest),
            "--trace",
            "step:at=5m",
            "--duration",
            "30m",
            "-o",
            str(tmp_path),
            "--no-plot",
        ]
    )
    assert code == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["scenario"]["target"] == "StatefulSet data/db"
    assert report["summary"]["replicas"]["max"] > 1


def test_keep_running_serves_the_cluster_and_the_controller_in_real_time(tmp_path: Path) -> None:
    import asyncio

    import aiohttp

    seen: dict[str, Any] = {}
    probes: list[asyncio.Task[None]] = []

    async def probe(endpoints: Any, main: asyncio.Task[Any]) -> None:
        try:
            async with aiohttp.ClientSession() as session:
                async with session.get(endpoints.metrics) as response:
                    seen["metrics"] = await response.text()
                async with session.get(endpoints.debug_state) as response:
                    seen["state"] = await response.json()
                token = "hvpa-sim-token"
                async with session.get(
                    f"{endpoints.api_server}/api/v1/namespaces/default/pods",
                    headers={"Authorization": f"Bearer {token}"},
                ) as response:
                    seen["pods"] = await response.json()
            seen["kubeconfig"] = endpoints.kubeconfig.read_text()
        finally:
            main.cancel()

    def serving(endpoints: Any) -> None:
        main = asyncio.current_task()
        assert main is not None
        probes.append(asyncio.get_running_loop().create_task(probe(endpoints, main)))

    chosen = builtin_scenario("proposal-1")
    reports: list[dict[str, Any]] = []
    with pytest.raises(asyncio.CancelledError):
        simulate(
            RunOptions(
                scenario=chosen,
                trace=parse_trace(
                    "steady:high=30%", duration_seconds=600, peak=chosen.peak, seed=1
                ),
                duration_seconds=600,
                kubeconfig_path=tmp_path / "kubeconfig",
            ),
            on_report=reports.append,
            keep_running=True,
            on_serving=serving,
        )
    assert len(reports) == 1
    assert 'hvpa_current_replicas{name="hvpa-sample",namespace="default"}' in seen["metrics"]
    assert list(seen["state"]["hvpas"]["items"]) == ["default/hvpa-sample"]
    assert seen["pods"]["items"]
    assert "server: http://127.0.0.1:" in seen["kubeconfig"]
