"""The controller on a bad day, in virtual time: dropped watches, 410 Expired, 500s and
429s on reads and writes, and 409s on its writes. Whatever the server does, every
scaling lands exactly once (counted in the server's request log) and none is missed.

The 409s here are real conflicts: another writer changes the object while the
controller's watch of it is held up (the server's fault injection delays the watch),
so the controller writes from a stale cache, as it would against a busy API server.
A 409 is retried through the rate limiter and only once the watch has brought the
newer version: one write per version the cache shows, never a storm."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest, writes

from hvpa.sim.apiserver import ApiServer
from hvpa.sim.apiserver.faults import Delay

pytestmark = VIRTUAL_TIME


async def settled(apiserver: ApiServer, cluster: MiniCluster, start_controller: Any) -> Any:
    """A Deployment of 2 at its target utilization, its Hvpa decided once."""
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    running = await start_controller()
    await eventually(lambda: bool(apiserver.objects.get("hvpas", "web").get("status")), within=30)
    return running


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param("watches", id="dropped-watches"),
        pytest.param("expired", id="410-expired"),
        pytest.param("reads-500", id="500-on-reads"),
        pytest.param("reads-429", id="429-on-reads"),
        pytest.param("writes-500", id="500-on-scale-writes"),
        pytest.param("writes-429", id="429-on-scale-writes"),
        pytest.param("status-500", id="500-on-status-writes"),
    ],
)
async def test_faults_neither_miss_nor_repeat_a_scaling(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any, fault: str
) -> None:
    running = await settled(apiserver, cluster, start_controller)
    faults = apiserver.faults
    if fault == "watches":
        faults.close_watches()
    elif fault == "expired":
        faults.close_watches()
        faults.compact()
    elif fault == "reads-500":
        faults.fail(status=500, times=20, method="GET")
    elif fault == "reads-429":
        faults.fail(status=429, times=20, method="GET")
    elif fault == "writes-500":
        faults.fail(status=500, times=3, method="PUT", path="/scale$")
    elif fault == "writes-429":
        faults.fail(status=429, times=3, method="PUT", path="/scale$")
    elif fault == "status-500":
        faults.fail(status=500, times=3, method="PUT", path="/hvpas/web/status$")

    # 400m: 2 -> 4 (the scale-up limit) -> 8; each step must land once.
    cluster.loads["web"].cpu_millicores = 400
    await eventually(lambda: cluster.replicas("web") == 8, within=180)
    landed = writes(apiserver, resource="deployments", subresource="scale")
    assert [w.status for w in landed] == [200, 200]
    # Settled at 8: a minute later, nothing more has been written to the target.
    await asyncio.sleep(60)
    assert len(writes(apiserver, resource="deployments", subresource="scale")) == 2
    assert cluster.replicas("web") == 8
    assert running.manager.healthy()
    informers = {i["resource"]: i for i in running.manager.state()["informers"]}
    if fault in ("watches", "expired"):
        assert informers["deployments.apps"]["watches"] >= 2
    if fault == "expired":
        assert informers["deployments.apps"]["lists"] >= 2


async def stall_watch(apiserver: ApiServer, path: str, seconds: float) -> Delay:
    """End every watch and hold the next watch of `path` (a regex) for `seconds`: until
    then the controller's cache of that resource stays as it was."""
    delay = apiserver.faults.delay(seconds, method="GET", path=path)
    apiserver.faults.close_watches()
    await eventually(lambda: delay.hits >= 1, within=5, step=0.1)
    delay.remove()  # the held watch stays held; the ones after it go through
    return delay


def touch(apiserver: ApiServer, resource: str, name: str) -> None:
    """Another writer's change: a new resourceVersion the controller has not seen."""
    apiserver.objects.patch(
        resource, name, {"metadata": {"annotations": {"touched": "yes"}}}, namespace="default"
    )


async def test_conflict_on_scale_is_retried_and_lands_once(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    running = await settled(apiserver, cluster, start_controller)
    await stall_watch(apiserver, "/deployments$", seconds=20)
    touch(apiserver, "deployments.apps", "web")
    apiserver.clear_requests()
    # 200m over 2 pods: 100% of a 50% target wants 4, and 4 pods are at the target.
    cluster.loads["web"].cpu_millicores = 200
    await eventually(lambda: cluster.replicas("web") == 4, within=60)
    attempts = writes(apiserver, resource="deployments", subresource="scale", succeeded=False)
    assert [w.status for w in attempts] == [409, 200]
    requeues = running.sample(
        "controller_runtime_reconcile_total", {"controller": "hvpa", "result": "requeue"}
    )
    assert requeues == 1
    assert running.sample("workqueue_retries_total", {"name": "hvpa"}) == 1, "rate-limited"
    await asyncio.sleep(60)
    assert len(writes(apiserver, resource="deployments", subresource="scale")) == 1


async def test_conflict_on_status_is_retried(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    await settled(apiserver, cluster, start_controller)
    # Held past the next resync (15 s), so the status write meets the stale cache.
    await stall_watch(apiserver, "/hvpas$", seconds=30)
    touch(apiserver, "hvpas", "web")
    apiserver.clear_requests()
    cluster.loads["web"].cpu_millicores = 200
    await eventually(lambda: cluster.replicas("web") == 4, within=60)
    await eventually(
        lambda: apiserver.objects.get("hvpas", "web")["status"].get("replicas") == 4, within=30
    )
    statuses = [
        w.status for w in writes(apiserver, resource="hvpas", subresource="status", succeeded=False)
    ]
    assert statuses[:2] == [409, 200]
    assert len(writes(apiserver, resource="deployments", subresource="scale")) == 1


async def test_a_stale_cache_answered_409_makes_no_conflict_storm(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """30 s of a stale cached Hvpa while every status write answers 409 (the issue's storm:
    14,068 PUTs in 30 s). The bound is one write: the first meets the 409, which tells the
    reconciler the version it holds is stale, and it writes again only once the watch has
    brought a newer one (the expectation lasts 60 s, longer than the window)."""
    running = await settled(apiserver, cluster, start_controller)
    await stall_watch(apiserver, "/hvpas$", seconds=30)
    stalled_at = asyncio.get_running_loop().time()
    touch(apiserver, "hvpas", "web")
    apiserver.clear_requests()
    cluster.loads["web"].cpu_millicores = 200  # wants 4: a new status to write
    await asyncio.sleep(30 - (asyncio.get_running_loop().time() - stalled_at) - 0.5)
    in_window = writes(apiserver, resource="hvpas", subresource="status", succeeded=False)
    assert [w.status for w in in_window] == [409]
    assert cluster.replicas("web") == 4, "the target was scaled meanwhile"
    # The watch catches up: the status is written once more, and lands.
    await eventually(
        lambda: apiserver.objects.get("hvpas", "web")["status"].get("replicas") == 4, within=30
    )
    statuses = [
        w.status for w in writes(apiserver, resource="hvpas", subresource="status", succeeded=False)
    ]
    assert statuses == [409, 200]
    assert running.manager.healthy()
