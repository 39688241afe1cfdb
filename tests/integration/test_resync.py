"""The periodic resync, in virtual time: every Hvpa is decided again once per sync
period, each at its own stable phase of the period rather than all at one instant
(which would put a whole backlog in front of any change that arrives meanwhile)."""

from __future__ import annotations

import asyncio
from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest

from hvpa.controller.manager import resync_phase
from hvpa.settings import ControllerSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

NAMES = [f"web-{index}" for index in range(6)]


async def _every_hvpa_decided_once(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> Any:
    """NAMES' workloads and Hvpas, a controller syncing every 15 s, each Hvpa decided once:
    the controller's observations."""
    for name in NAMES:
        cluster.deployment(
            name,
            replicas=1,
            requests={"cpu": "100m", "memory": "64Mi"},
            load=Load(cpu_millicores=50),
        )
        apiserver.objects.create("hvpas", hvpa_manifest(name, target=name))
    running = await start_controller(settings=ControllerSettings(sync_period_seconds=15))
    observations = running.manager.observations
    await eventually(lambda: len(observations) == len(NAMES), within=30)
    return observations


async def test_resyncs_are_spread_over_the_period(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    observations = await _every_hvpa_decided_once(apiserver, cluster, start_controller)
    decided = {name: observations.get(f"default/{name}").time for name in NAMES}

    await asyncio.sleep(45)  # three sync periods

    latest = {name: observations.get(f"default/{name}").time for name in NAMES}
    assert all(latest[name] > decided[name] for name in NAMES), "each decided again"
    # Queued all at once they would all be decided at one instant; by phase, over the period.
    assert max(latest.values()) - min(latest.values()) > 5, latest


async def test_the_first_resync_comes_within_a_period_of_the_first_decision(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """The first round of resyncs starts with the workers: were it a period later, an Hvpa
    of a late phase would wait up to two periods between its first and second decision."""
    observations = await _every_hvpa_decided_once(apiserver, cluster, start_controller)
    first = {name: observations.get(f"default/{name}").time for name in NAMES}

    await asyncio.sleep(15 + 1)  # a period, and a second for the queue

    latest = {name: observations.get(f"default/{name}").time for name in NAMES}
    assert all(latest[name] > first[name] for name in NAMES), (first, latest)


async def test_a_pending_retry_does_not_swallow_the_resync(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """A key waiting in the queue's delaying heap keeps only its sooner deadline: a resync
    handed to the heap while a retry was pending (a stale cache's, one second) was dropped,
    and the Hvpa went from that retry to the next round's phase, nearly two periods.
    The resync adds each key when its phase comes instead."""
    period = 15.0
    name = next(
        n for n in (f"web-{i}" for i in range(100)) if 0.4 < resync_phase(f"default/{n}") < 0.8
    )
    key = f"default/{name}"
    cluster.deployment(name, replicas=1, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(50))
    apiserver.objects.create("hvpas", hvpa_manifest(name, target=name))
    running = await start_controller(settings=ControllerSettings(sync_period_seconds=period))
    observations = running.manager.observations
    await eventually(lambda: observations.get(key).time > 0, within=30)
    workers_started = observations.get(key).time  # every key is queued as they start
    # Just before the second round, a retry due just after it: the round's resync of this
    # key, at phase * period into the round, must still come.
    await asyncio.sleep(workers_started + period - 0.1 - cluster.clock())
    running.manager.queue.add_after(key, 0.2)

    for _ in range(int(2 * period)):
        await asyncio.sleep(1.0)
        since = cluster.clock() - observations.get(key).time
        assert since <= period + 1.0, f"{key} undecided for {since:.1f} s"
