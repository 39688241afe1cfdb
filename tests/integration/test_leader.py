"""Two controller instances with leader election, in virtual time and client-go's timings
(lease 15 s, renew deadline 10 s, retry 2 s with jitter 1.2): only the leader writes,
the standby keeps a warm cache and reports ready; when the leader dies without
releasing the lease, the standby takes over within the lease duration plus two jittered
retries and writes nothing the old leader already wrote; a leader stopped cleanly
releases the lease, so the standby takes over at its next retry.

Losing the lease stops the writing at the renew deadline: a write waiting in a 429's
Retry-After is never sent, the workers end there, and the other instance takes over;
`hvpa run` reports the loss in one log line, with the reason, and exits 1."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest, writes
from prometheus_client import CollectorRegistry

from hvpa.commands.run import run_controller
from hvpa.kube.leader import LeadershipLost
from hvpa.kube.settings import LeaderElectionSettings
from hvpa.settings import RunSettings, ServerSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

LEASE = LeaderElectionSettings(lease_name="hvpa", lease_namespace="kube-system")
# A standby polls every retry x (1 + jitter) at most: it sees the last renewal at most one
# poll late and takes over at most one poll after the lease ran out (client-go).
TAKEOVER = LEASE.lease_duration_seconds + 2 * LEASE.retry_period_seconds * (1 + LEASE.retry_jitter)


def rescale_events(server: ApiServer) -> list[tuple[str, str]]:
    return [
        (e["message"].split(";")[0], e["reportingInstance"])
        for e in server.objects.list("events", namespace="default")
        if e["reason"] == "SuccessfulRescale"
    ]


async def test_only_the_leader_writes_and_a_standby_takes_over(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    # The first dies without a word: no release, as a killed process.
    a = await start_controller(
        identity="a", leader_election=LeaderElectionSettings(release_on_cancel=False)
    )
    await eventually(lambda: a.manager.leading(), within=10)
    b = await start_controller(identity="b", leader_election=LEASE)
    assert b.manager.ready() and not b.manager.leading()
    assert a.sample("leader_election_master_status", {"name": "hvpa"}) == 1
    assert b.sample("leader_election_master_status", {"name": "hvpa"}) == 0

    cluster.loads["web"].cpu_millicores = 200  # wants 4
    await eventually(lambda: cluster.replicas("web") == 4, within=60)
    await asyncio.sleep(30)
    assert rescale_events(apiserver) == [("New size: 4 (was 2)", "a")]
    assert len(b.manager.observations) == 0  # the standby decides nothing

    a.task.cancel()
    killed = asyncio.get_running_loop().time()
    cluster.loads["web"].cpu_millicores = 400  # 4 pods at 100m: wants 8
    took = await eventually(lambda: b.manager.leading(), within=60, step=0.1)
    assert took <= TAKEOVER
    await eventually(lambda: cluster.replicas("web") == 8, within=60)
    assert asyncio.get_running_loop().time() - killed >= LEASE.lease_duration_seconds
    await asyncio.sleep(60)
    assert rescale_events(apiserver) == [("New size: 4 (was 2)", "a"), ("New size: 8 (was 4)", "b")]
    assert [w.status for w in writes(apiserver, resource="deployments", subresource="scale")] == [
        200,
        200,
    ]


async def test_a_stopped_leader_hands_over_at_once(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    a = await start_controller(identity="a", leader_election=LEASE)
    await eventually(lambda: a.manager.leading(), within=10)
    b = await start_controller(identity="b", leader_election=LEASE)
    a.manager.stop()
    await a.task
    lease = apiserver.objects.get("leases", "hvpa", namespace="kube-system")["spec"]
    assert lease.get("holderIdentity") in (None, "")
    took = await eventually(lambda: b.manager.leading(), within=30, step=0.1)
    assert took <= LEASE.retry_period_seconds * (1 + LEASE.retry_jitter) + 1


async def lose_the_lease(apiserver: ApiServer) -> None:
    """From now on every renewal fails (500), so the leader steps down at its renew deadline."""
    apiserver.faults.fail(status=500, times=10_000, method="PUT", path="/leases/hvpa$")


async def test_a_write_held_in_retry_after_never_lands_once_the_lease_is_lost(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    loop = asyncio.get_running_loop()
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    a = await start_controller(identity="a", leader_election=LEASE)
    await eventually(lambda: a.manager.leading(), within=10)
    b = await start_controller(identity="b", leader_election=LEASE)
    await eventually(lambda: bool(apiserver.objects.get("hvpas", "web").get("status")), within=30)

    # A's scale-up meets 429 with a Retry-After that outlasts its lease: the renewals fail
    # from now on, so A steps down 8 to 10 s from now, inside the 20 s wait (the issue: the
    # retry went out 13 s after "stopped leading", while B held the lease).
    held = apiserver.faults.fail(
        status=429, times=1, method="PUT", path="/scale$", retry_after_seconds=20
    )
    cluster.loads["web"].cpu_millicores = 200  # 2 -> 4
    await eventually(lambda: held.hits == 1, within=30, step=0.1)
    held_at = loop.time()
    await lose_the_lease(apiserver)
    await eventually(
        lambda: not a.manager.leading(), within=LEASE.renew_deadline_seconds + 0.1, step=0.1
    )
    # The workers stop at the deadline: A's run ends at once, not after the wait.
    with pytest.raises(LeadershipLost, match="not renewed within the 10 s renew deadline"):
        await asyncio.wait_for(a.task, timeout=1)
    apiserver.faults.clear()

    await eventually(lambda: b.manager.leading(), within=TAKEOVER, step=0.1)
    await eventually(lambda: cluster.replicas("web") == 4, within=60)
    await asyncio.sleep(max(0.0, held_at + 20 + 30 - loop.time()))  # well past A's Retry-After
    attempts = writes(apiserver, resource="deployments", subresource="scale", succeeded=False)
    assert [w.status for w in attempts] == [429, 200]
    assert rescale_events(apiserver) == [("New size: 4 (was 2)", "b")], (
        "the write that landed is B's"
    )


async def test_hvpa_run_reports_a_lost_lease_in_one_line_and_exits_1(
    apiserver: ApiServer, caplog: pytest.LogCaptureFixture
) -> None:
    loop = asyncio.get_running_loop()
    settings = RunSettings(
        kubeconfig=str(apiserver.kubeconfig_path),
        leader_elect=True,
        leader_election=LEASE,
        server=ServerSettings(metrics_bind_address="0", health_probe_bind_address="0"),
    )
    running = asyncio.create_task(
        run_controller(settings, clock=lambda: 1e9 + loop.time(), registry=CollectorRegistry())
    )
    await eventually(
        lambda: bool(
            apiserver.objects.list("leases", namespace="kube-system")
            and apiserver.objects.get("leases", "hvpa", namespace="kube-system")["spec"].get(
                "holderIdentity"
            )
        ),
        within=30,
    )
    caplog.clear()
    await lose_the_lease(apiserver)
    assert await asyncio.wait_for(running, timeout=30) == 1
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in loud] == ["leader lease lost; exiting"]
    (line,) = loud
    assert line.exc_info is None, "no traceback"
    assert line.__dict__["fields"]["error"].startswith("lease kube-system/hvpa lost by ")
    assert (
        "not renewed within the 10 s renew deadline (last update: 500"
        in (line.__dict__["fields"]["error"])
    )


async def test_no_conflict_storm_after_a_failover(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """The new leader's cache does not yet hold the old leader's last status writes (its
    watch of Hvpas is slow): each status it writes meets 409. The issue saw 167 PUTs in
    0.7 s; the bound is one per Hvpa until the watch brings the newer versions, since a
    409 marks the cached version stale and is retried through the rate limiter."""
    loop = asyncio.get_running_loop()
    names = ("web", "api", "db")
    for name in names:
        cluster.deployment(
            name,
            replicas=2,
            requests={"cpu": "100m", "memory": "64Mi"},
            load=Load(cpu_millicores=100),
        )
        apiserver.objects.create("hvpas", hvpa_manifest(name, target=name))
    a = await start_controller(
        identity="a", leader_election=LeaderElectionSettings(release_on_cancel=False)
    )
    await eventually(lambda: a.manager.leading(), within=10)
    b = await start_controller(identity="b", leader_election=LEASE)
    await eventually(
        lambda: all(apiserver.objects.get("hvpas", n).get("status") for n in names), within=30
    )

    # Both instances' Hvpa watches are held for 60 s; A scales every target meanwhile and
    # records it in each status, which B's cache will not show until the hold ends.
    stall = apiserver.faults.delay(60, method="GET", path="/hvpas$")
    apiserver.faults.close_watches()
    await eventually(lambda: stall.hits >= 2, within=5, step=0.1)
    stall.remove()
    stalled_at = loop.time()
    for name in names:
        cluster.loads[name].cpu_millicores = 200  # 2 -> 4
    await eventually(
        lambda: all(
            apiserver.objects.get("hvpas", n)["status"].get("replicas") == 4 for n in names
        ),
        within=30,
    )
    a.task.cancel()  # killed: the lease is not released
    await asyncio.sleep(0)
    apiserver.clear_requests()  # from here on, every write is B's
    await eventually(lambda: b.manager.leading(), within=TAKEOVER, step=0.1)
    took_over = loop.time()
    assert took_over + 5 < stalled_at + 60, "B's first seconds fall inside the hold"
    await asyncio.sleep(5)
    first_seconds = writes(apiserver, resource="hvpas", subresource="status", succeeded=False)
    assert len(first_seconds) <= len(names), [w.status for w in first_seconds]
    assert {w.status for w in first_seconds} <= {409}
    assert writes(apiserver, resource="deployments", subresource="scale") == []
    # Once the hold ends, B's cache catches up and nothing is left in conflict.
    await asyncio.sleep(stalled_at + 60 + 30 - loop.time())
    late = writes(apiserver, resource="hvpas", subresource="status", succeeded=False)
    assert [w.status for w in late[len(first_seconds) :]] == [200] * (
        len(late) - len(first_seconds)
    )
    assert b.manager.healthy()
