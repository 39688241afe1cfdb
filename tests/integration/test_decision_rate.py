"""The decision rate when the API is slow, in virtual time: with one Hvpa per namespace, each
resync reads that Hvpa's PodMetrics (nothing to share), and a worker waits for the answer.
The workers, not the CPU, then bound how many Hvpas are decided per sync period:
`concurrency` / the read's latency. With the default workers every Hvpa is still decided
once per period when metrics-server takes two seconds to answer each read; with too few,
the resync keeps a backlog, and a change is still decided ahead of it.

Derivation of the numbers: 40 Hvpas x 2 s per read = 80 worker-seconds per 15 s period;
5 workers (the default before bench_envelope measured it) give 75, so some Hvpa waits
past its period; the default 20 give 300."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest

from hvpa.controller.turns import RECONCILES_PER_TURN
from hvpa.settings import ControllerSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

HVPAS = 40
PERIOD = 15.0
READ_SECONDS = 2.0  # each PodMetrics read (under the 10 s metrics timeout)


def _one_hvpa_per_namespace(apiserver: ApiServer, cluster: MiniCluster) -> list[str]:
    """HVPAS namespaces with a workload and its Hvpa each, every PodMetrics read slow."""
    keys = []
    for index in range(HVPAS):
        namespace = f"team-{index:02d}"
        apiserver.objects.create("namespaces", {"metadata": {"name": namespace}})
        team = MiniCluster(apiserver, cluster.clock, cluster.tasks, namespace=namespace)
        team.deployment(
            "web", replicas=1, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(50)
        )
        manifest = hvpa_manifest("web", target="web")
        manifest["metadata"]["namespace"] = namespace
        apiserver.objects.create("hvpas", manifest, namespace=namespace)
        keys.append(f"{namespace}/web")
    apiserver.faults.delay(READ_SECONDS, method="GET", path="/apis/metrics.k8s.io/")
    return keys


async def test_every_hvpa_is_decided_once_a_period_with_a_slow_metrics_api(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    keys = _one_hvpa_per_namespace(apiserver, cluster)
    settings = ControllerSettings(sync_period_seconds=PERIOD)
    running = await start_controller(settings=settings)
    observations = running.manager.observations
    await eventually(lambda: all(observations.get(k).time for k in keys), within=4 * PERIOD)

    # Every Hvpa, at every moment over three periods, decided within the last period
    # (and a read's latency: a decision is timed when its read has come back).
    for _ in range(int(3 * PERIOD)):
        await asyncio.sleep(1.0)
        now = cluster.clock()
        late = [k for k in keys if now - observations.get(k).time > PERIOD + READ_SECONDS]
        assert not late, f"{len(late)} of {HVPAS} Hvpas not decided in the last period"


async def test_a_change_is_decided_ahead_of_the_resync_backlog(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """Two workers for 80 worker-seconds a period: the resync always has keys waiting
    (about 30, 2 s each for a worker). A change to one Hvpa's target queues it ahead of
    them (the resync's keys are low priority), so it is decided once a worker is free and
    its read is back, within two reads, not after the backlog (about 30 s)."""
    keys = _one_hvpa_per_namespace(apiserver, cluster)
    running = await start_controller(
        settings=ControllerSettings(sync_period_seconds=PERIOD, concurrency=2)
    )
    observations = running.manager.observations
    await eventually(lambda: all(observations.get(k).time for k in keys), within=30 * PERIOD)
    await asyncio.sleep(PERIOD)
    queue = running.manager.queue
    assert len(queue) >= 10, "the resync keeps a backlog"

    waiting = list(queue._low)  # the low lane, in order
    key = waiting[-1]
    assert len(waiting) >= 10, "the key is behind at least ten of the resync's"
    namespace = key.split("/")[0]
    changed_at = cluster.clock()
    apiserver.objects.patch(
        "deployments",
        "web",
        {"metadata": {"annotations": {"touched": "yes"}}},
        namespace=namespace,
    )
    await eventually(lambda: observations.get(key).time > changed_at, within=2 * READ_SECONDS + 1)


async def test_a_turn_of_the_loop_begins_a_few_reconciles_whatever_the_workers(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """The queue hands a waiting key over without suspending, and the reconcile of a key
    whose Hvpa is gone never suspends: a worker that did not yield drained every such key
    in one turn of the loop, and workers that yielded after each ran one each, twenty a
    turn, while a watch event or a change's reconcile waited. A turn now begins at most
    RECONCILES_PER_TURN of them; the loop turns between."""
    running = await start_controller(settings=ControllerSettings(sync_period_seconds=PERIOD))
    queue = running.manager.queue
    await eventually(lambda: len(queue) == 0, within=PERIOD)
    ghosts = 200
    for index in range(ghosts):
        queue.add(f"default/gone-{index:03d}", low_priority=True)
    waiting: list[int] = []

    def each_turn() -> None:
        waiting.append(len(queue))
        if waiting[-1]:
            asyncio.get_running_loop().call_soon(each_turn)

    asyncio.get_running_loop().call_soon(each_turn)
    await eventually(lambda: len(queue) == 0, within=1)
    concurrency = running.manager.settings.concurrency
    assert concurrency > RECONCILES_PER_TURN
    # The first turn hands a key to each worker; from then on, each turn's reconciles
    # take the next keys.
    taken = [before - after for before, after in itertools.pairwise(waiting[1:])]
    assert max(taken) == RECONCILES_PER_TURN
    assert len(waiting) > (ghosts - concurrency) // RECONCILES_PER_TURN


async def test_a_changes_key_goes_ahead_of_the_resyncs_when_the_turns_are_full(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """Every worker holds room in a turn before it takes a key, so the key is chosen when
    the room comes: a change's key queued behind a full budget is begun in the next turns,
    not after every worker already waiting with a resync's key."""
    cluster.deployment("web", replicas=1, requests={"cpu": "100m"}, load=Load(50))
    apiserver.objects.create("hvpas", hvpa_manifest("web", target="web"))
    running = await start_controller(settings=ControllerSettings(sync_period_seconds=PERIOD))
    queue, observations = running.manager.queue, running.manager.observations
    await eventually(lambda: observations.get("default/web").time > 0, within=PERIOD)
    await eventually(lambda: len(queue) == 0 and queue.processing == 0, within=PERIOD)
    ghosts = 200
    for index in range(ghosts):
        queue.add(f"default/gone-{index:03d}", low_priority=True)
    await asyncio.sleep(0)  # a turn: the workers hold keys or room, the rest wait
    web = observations.get("default/web")
    decided = web.decision
    queue.add("default/web")
    waiting_then = len(queue)
    waiting_at_decision: list[int] = []

    def each_turn() -> None:
        if web.decision is not decided:
            waiting_at_decision.append(len(queue))
        elif len(queue):
            asyncio.get_running_loop().call_soon(each_turn)

    asyncio.get_running_loop().call_soon(each_turn)
    await eventually(lambda: bool(waiting_at_decision), within=1)
    (waiting_now,) = waiting_at_decision
    assert waiting_then - 1 - waiting_now <= 2 * RECONCILES_PER_TURN  # resync keys begun first
