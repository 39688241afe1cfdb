"""Helpers for the cluster model's tests: a model on a manual clock, workload manifests, stepping;
and the six-hour runs the comparison tests share.

The API server is used in-process only (no HTTP, no controller): the model's
pieces are synchronous, so a test steps them and reads the objects back.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Final

from hvpa.sim.apiserver import ApiServer
from hvpa.sim.cluster import Cluster, ClusterSettings, Tick
from hvpa.sim.pods import SimPod, WorkloadKey
from hvpa.sim.runner import RunOptions, simulate
from hvpa.sim.scenarios import builtin_scenario
from hvpa.sim.traces import parse_trace

EPOCH = 1_750_000_000.0
# The comparisons' runs: the six hours and the seed docs/strategies.md's tables are made with.
SIX_HOURS: Final = 6 * 3600
COMPARISON_SEED: Final = 1
GIB = 2**30
MIB = 2**20


class ManualClock:
    def __init__(self) -> None:
        self.now = EPOCH

    def __call__(self) -> float:
        return self.now


@dataclass
class Model:
    server: ApiServer
    clock: ManualClock
    cluster: Cluster

    def step(self, seconds: float | None = None) -> Tick:
        """One tick of the cluster, then the clock moves on by a tick."""
        tick = self.cluster.step()
        self.clock.now += seconds if seconds is not None else self.cluster.settings.tick_seconds
        return tick

    def run(self, seconds: float) -> list[Tick]:
        ticks = []
        end = self.clock.now + seconds
        while self.clock.now < end:
            ticks.append(self.step())
        return ticks

    def pods(self, key: WorkloadKey) -> list[SimPod]:
        return self.cluster.pods.of(key)

    def status(self, resource: str, name: str) -> dict[str, Any]:
        return dict(self.server.objects.get(resource, name).get("status") or {})


def model(*, kubernetes_version: str = "v1.32.0", **settings: Any) -> Model:
    clock = ManualClock()
    server = ApiServer(seed=1, clock=clock, kubernetes_version=kubernetes_version)
    cluster = Cluster(server, settings=ClusterSettings(**settings), clock=clock)
    return Model(server, clock, cluster)


def container(
    name: str = "app",
    *,
    cpu: str = "500m",
    memory: str = "256Mi",
    limit_cpu: str | None = "1",
    limit_memory: str | None = "512Mi",
) -> dict[str, Any]:
    limits = {k: v for k, v in (("cpu", limit_cpu), ("memory", limit_memory)) if v is not None}
    return {
        "name": name,
        "image": "app:1",
        "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": limits},
    }


def workload(
    kind: str,
    name: str = "web",
    *,
    replicas: int,
    containers: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": containers or [container()]},
            },
            **spec,
        },
    }


def resize(m: Model, resource: str, name: str, *, cpu: str) -> None:
    """Change the template's CPU request, as hvpa's applier does (a new revision)."""
    m.server.objects.patch(
        resource,
        name,
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [{"name": "app", "resources": {"requests": {"cpu": cpu}}}]
                    }
                }
            }
        },
        patch_type="strategic",
    )


@functools.cache
def six_hour_summary(
    scenario_name: str, strategy: str, trace: str, resize_mode: str | None = None
) -> dict[str, Any]:
    """The report's summary of one six-hour run of a built-in scenario (seed 1), with
    `strategy` and, unless None, `resize_mode`.

    Each run takes from seconds to a minute, and several tests ask for the same
    one, so a run is made once per process (the first test that asks pays) and
    shared by every later test in it. Under xdist each worker is its own process:
    tests/conftest.py schedules a comparison module's tests by trace, so the tests
    that share a run share a worker. The summary returned is the cached one; a
    test reads it and never changes it.
    """
    scenario = builtin_scenario(scenario_name).with_strategy(strategy)
    if resize_mode is not None:
        scenario = scenario.with_resize_mode(resize_mode)
    report = simulate(
        RunOptions(
            scenario=scenario,
            trace=parse_trace(
                trace, duration_seconds=SIX_HOURS, peak=scenario.peak, seed=COMPARISON_SEED
            ),
            duration_seconds=SIX_HOURS,
            seed=COMPARISON_SEED,
        )
    )
    summary: dict[str, Any] = report["summary"]
    return summary
