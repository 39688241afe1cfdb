"""Helpers for the cluster model's tests: a model on a manual clock, workload manifests, stepping.

The API server is used in-process only (no HTTP, no controller): the model's
pieces are synchronous, so a test steps them and reads the objects back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hvpa.sim.apiserver import ApiServer
from hvpa.sim.cluster import Cluster, ClusterSettings, Tick
from hvpa.sim.pods import SimPod, WorkloadKey

EPOCH = 1_750_000_000.0
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
