"""The simulator's cluster model for the in-place resize tests: a kubelet that resizes pods.

The integration tests' MiniCluster replaces pods on every template change
and never resizes one; resizing in place needs the model's kubelet (admits a
resize when the node has room, Deferred, Infeasible, restarts a container
whose resizePolicy says so). `ModelCluster` steps the model's `Cluster` on the
test's virtual clock; its recommender is off (the tests write the VPA's
recommendation themselves, `integration_helpers.recommend`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from integration_helpers import hvpa_manifest

from hvpa.aio import Tasks
from hvpa.sim.apiserver import ApiServer
from hvpa.sim.cluster import Cluster, ClusterSettings
from hvpa.sim.pods import SimPod
from hvpa.sim.recommender import RecommenderSettings

WORKLOAD = ("Deployment", "default", "web")
# No recommendation from the model within any test: a day between rounds.
_NO_RECOMMENDER = RecommenderSettings(interval_seconds=86_400.0)


@dataclass
class ModelCluster:
    server: ApiServer
    cluster: Cluster
    tasks: Tasks
    tick_seconds: float

    async def run(self) -> None:
        while True:
            await self.cluster.advance()
            await asyncio.sleep(self.tick_seconds)

    def pods(self) -> list[SimPod]:
        return [p for p in self.cluster.pods.of(WORKLOAD) if not p.deleting]

    def pod_objects(self) -> list[dict[str, Any]]:
        return self.server.objects.list("pods", namespace="default", label_selector="app=web")

    def template_requests(self) -> dict[str, str]:
        obj = self.server.objects.get("deployments", "web", namespace="default")
        requests: dict[str, str] = obj["spec"]["template"]["spec"]["containers"][0]["resources"][
            "requests"
        ]
        return requests


def model_cluster(
    server: ApiServer,
    clock: Callable[[], float],
    tasks: Tasks,
    *,
    nodes: int = 2,
    tick_seconds: float = 1.0,
    **settings: Any,
) -> ModelCluster:
    cluster = Cluster(
        server,
        settings=ClusterSettings(
            tick_seconds=tick_seconds,
            nodes=nodes,
            readiness_delay_seconds=5.0,
            recommender=_NO_RECOMMENDER,
            **settings,
        ),
        clock=clock,
    )
    return ModelCluster(server, cluster, tasks, tick_seconds)


def workload(
    *,
    replicas: int,
    cpu: str = "500m",
    memory: str = "256Mi",
    limit_cpu: str = "1",
    limit_memory: str = "512Mi",
    memory_policy: str | None = None,
    max_unavailable: int | str = 1,
) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": "app",
        "image": "app:1",
        "resources": {
            "requests": {"cpu": cpu, "memory": memory},
            "limits": {"cpu": limit_cpu, "memory": limit_memory},
        },
    }
    if memory_policy is not None:
        container["resizePolicy"] = [
            {"resourceName": "cpu", "restartPolicy": "NotRequired"},
            {"resourceName": "memory", "restartPolicy": memory_policy},
        ]
    labels = {"app": "web"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": 1, "maxUnavailable": max_unavailable},
            },
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
        },
    }


def in_place_hvpa(mode: str = "InPlaceOrRollout") -> dict[str, Any]:
    """A vertical-only Hvpa (weight 100) that resizes `web` in `mode`."""
    body = hvpa_manifest(hpa=False, vpa=True, vpa_weight=100)
    body["spec"]["vpa"]["resizeMode"] = mode
    return body


def condition(server: ApiServer, kind: str) -> tuple[str, str, str] | None:
    status = server.objects.get("hvpas", "web", namespace="default").get("status") or {}
    found = next((c for c in status.get("conditions") or () if c["type"] == kind), None)
    return None if found is None else (found["status"], found["reason"], found["message"])


def pod_resources(server: ApiServer) -> dict[str, Any] | None:
    status = server.objects.get("hvpas", "web", namespace="default").get("status") or {}
    sized: dict[str, Any] | None = status.get("podResources")
    return sized
