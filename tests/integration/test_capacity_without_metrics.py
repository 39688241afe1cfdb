"""A Capacity Hvpa whose pods never report usage (no metrics-server), in virtual time.

The VPA target is a new Hvpa's demand for one decision only: read again at
every resync, it counted the pods the last decision added, and a real API
server saw 2 -> 12 -> 18 -> 27 -> 30 replicas in about 100 ms, pods grown past
the curve (and a lower target spiralled down the same way). Here the target
stands still, the controller decides many times over, and after the first
decision neither the count nor the pods move: both axes hold with NoDemand.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from integration_cluster import MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest, recommend

from hvpa.aio import Tasks
from hvpa.quantity import parse_cpu_millis
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

# 1 x 250m growing to 1 CPU at one replica, then 1-CPU pods to 6, then pods growing to
# 2 CPU at 10: the curve of issue 23, where a runaway reached 10 x 2 CPU.
CURVE = [
    {"replicas": 1, "cpu": "250m", "memory": "1Gi"},
    {"replicas": 1, "cpu": "1", "memory": "1Gi"},
    {"replicas": 6, "cpu": "1", "memory": "1Gi"},
    {"replicas": 10, "cpu": "2", "memory": "1Gi"},
]
# Resyncs every 15 s by default: 300 s is some twenty decisions after the first.
WATCH_SECONDS = 300.0


class WithoutMetrics(MiniCluster):
    """The mini cluster without metrics-server: pods run, but no PodMetrics are published."""

    def _metrics(self, deployment: str, pods: list[str]) -> None:
        return None


@pytest.fixture
async def cluster(apiserver: ApiServer, clock: Callable[[], float]) -> AsyncIterator[MiniCluster]:
    async with Tasks(name="mini-cluster-without-metrics") as tasks:
        yield WithoutMetrics(apiserver, clock, tasks)


def capacity_hvpa() -> dict[str, Any]:
    return hvpa_manifest(
        vpa=True,
        max_replicas=30,
        strategy="Capacity",
        capacity={"curve": CURVE},
    )


def shape(cluster: MiniCluster) -> tuple[int, int]:
    """Replicas and the CPU request in millicores."""
    return cluster.replicas("web"), parse_cpu_millis(cluster.requests("web")["cpu"])


async def watch(cluster: MiniCluster, seconds: float) -> list[tuple[int, int]]:
    """The target's shape once a virtual second for `seconds`."""
    seen = []
    for _ in range(int(seconds)):
        seen.append(shape(cluster))
        await asyncio.sleep(1.0)
    return seen


def scaling_active(apiserver: ApiServer) -> tuple[str, str]:
    status = apiserver.objects.get("hvpas", "web").get("status") or {}
    found = [c for c in status.get("conditions") or () if c["type"] == "ScalingActive"]
    return (found[0]["status"], found[0]["reason"]) if found else ("", "")


async def test_a_stale_vpa_target_without_usage_moves_the_target_once(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment("web", replicas=2, requests={"cpu": "733m", "memory": "256Mi"})
    apiserver.objects.create("hvpas", capacity_hvpa())
    await start_controller()
    await eventually(
        lambda: bool(apiserver.objects.list("verticalpodautoscalers", namespace="default")),
        within=30,
    )
    # 2 pods whose VPA asks 2200m each: a demand of 4.4 cores, for one decision.
    recommend(apiserver, cpu="2200m", memory="256Mi")
    await eventually(lambda: shape(cluster) != (2, 733), within=60)
    first = shape(cluster)
    assert first[0] > 2

    seen = await watch(cluster, WATCH_SECONDS)
    assert set(seen) == {first}, "the count or the pods moved without a demand"
    assert scaling_active(apiserver) == ("False", "NoDemand")
    history = apiserver.objects.get("hvpas", "web")["status"]["history"]
    assert history["demandSince"]

    # A lower target spiralled down the same way: it is no evidence either.
    recommend(apiserver, cpu="100m", memory="256Mi")
    seen = await watch(cluster, WATCH_SECONDS)
    assert set(seen) == {first}, "a lower VPA target moved the target without a demand"
