"""Two controller instances with leader election, in virtual time and client-go's timings
(lease 15 s, renew deadline 10 s, retry 2 s with jitter 1.2): only the leader writes,
the standby keeps a warm cache and reports ready; when the leader dies without
releasing the lease, the standby takes over within the lease duration plus two jittered
retries and writes nothing the old leader already wrote; a leader stopped cleanly
releases the lease, so the standby takes over at its next retry."""

from __future__ import annotations

import asyncio
from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest, writes

from hvpa.kube.settings import LeaderElectionSettings
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
