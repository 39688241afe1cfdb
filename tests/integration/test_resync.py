"""The periodic resync, in virtual time: every Hvpa is decided again once per sync
period, each at its own stable phase of the period rather than all at one instant
(which would put a whole backlog in front of any change that arrives meanwhile)."""

from __future__ import annotations

import asyncio
from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest

from hvpa.settings import ControllerSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

NAMES = [f"web-{index}" for index in range(6)]


async def test_resyncs_are_spread_over_the_period(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
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
    decided = {name: observations.get(f"default/{name}").time for name in NAMES}

    await asyncio.sleep(45)  # three sync periods

    latest = {name: observations.get(f"default/{name}").time for name in NAMES}
    assert all(latest[name] > decided[name] for name in NAMES), "each decided again"
    # Queued all at once they would all be decided at one instant; by phase, over the period.
    assert max(latest.values()) - min(latest.values()) > 5, latest
