"""The series the alerts of manifests/monitoring/ read, from the running controller: an
OOMKill answered by more memory counts once in hvpa_oomkill_scale_ups_total (0 until
then, so `increase()` sees the first), and not again while the pods run the new size."""

from __future__ import annotations

import asyncio
from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest, recommend

from hvpa.records import format_time
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

APP = {"namespace": "default", "name": "web", "container": "app"}


def oomkilled(server: ApiServer, clock: Any) -> None:
    """The kubelet's report of the container's last run ending in an OOMKill, on one pod."""
    pod = server.objects.list("pods", namespace="default", label_selector="app=web")[0]
    server.objects.patch(
        "pods",
        pod["metadata"]["name"],
        {
            "status": {
                "containerStatuses": [
                    {
                        "name": "app",
                        "lastState": {
                            "terminated": {
                                "reason": "OOMKilled",
                                "finishedAt": format_time(clock()),
                            }
                        },
                    }
                ]
            }
        },
        namespace="default",
        subresource="status",
    )


async def test_an_oomkill_answered_counts_once(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any, clock: Any
) -> None:
    cluster.deployment(
        "web",
        replicas=2,
        requests={"cpu": "100m", "memory": "64Mi"},
        limits={"memory": "64Mi"},
        load=Load(cpu_millicores=100),
    )
    apiserver.objects.create("hvpas", hvpa_manifest(vpa=True, vpa_weight=100, hpa=False))
    running = await start_controller()
    await eventually(
        lambda: any(
            v["metadata"]["name"] == "web-vpa"
            for v in apiserver.objects.list("verticalpodautoscalers", namespace="default")
        ),
        within=60,
    )
    # The recommendation is the current size: only the OOMKill guard moves memory.
    recommend(apiserver, cpu="100m", memory="64Mi")
    await asyncio.sleep(30)
    assert cluster.requests("web")["memory"] == "64Mi"
    assert running.sample("hvpa_oomkill_scale_ups_total", APP) == 0

    oomkilled(apiserver, clock)
    await eventually(lambda: cluster.requests("web")["memory"] != "64Mi", within=60)
    assert running.sample("hvpa_oomkill_scale_ups_total", APP) == 1
    await asyncio.sleep(60)  # four more sync periods: the OOMKill is already answered
    assert running.sample("hvpa_oomkill_scale_ups_total", APP) == 1
