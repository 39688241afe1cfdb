"""Optional APIs missing from the cluster, in virtual time: without the
VerticalPodAutoscaler CRD (every request to it answers 404, as for a CRD that is
not installed) the controller still becomes ready and scales replicas; an Hvpa
that asks for a VPA holds its vertical axis with a condition, and the controller
never tries to create one."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest, writes

from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME


async def test_without_the_vpa_crd_replicas_still_scale(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    apiserver.faults.fail(status=404, times=10_000, path=r"/verticalpodautoscalers")
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest(vpa=True))
    running = await start_controller()  # waits for the caches: an unserved API must not block it
    vpa_informers = [
        i for i in running.manager.state()["informers"] if "verticalpodautoscalers" in i["resource"]
    ]
    assert vpa_informers and all(not i["served"] and i["synced"] for i in vpa_informers)

    cluster.loads["web"].cpu_millicores = 400
    await eventually(lambda: cluster.replicas("web") == 4, within=60)

    assert writes(apiserver, resource="verticalpodautoscalers", succeeded=False) == []
    conditions = {
        c["type"]: c for c in apiserver.objects.get("hvpas", "web")["status"]["conditions"]
    }
    vertical = conditions["VerticalScalingActive"]
    assert (vertical["status"], vertical["reason"]) == ("False", "NoVerticalPodAutoscaler")


async def test_the_missing_vpa_crd_is_warned_about_once_per_hvpa(
    apiserver: ApiServer,
    cluster: MiniCluster,
    start_controller: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every resync meets the missing CRD again; a warning per resync would bury the log."""
    apiserver.faults.fail(status=404, times=10_000, path=r"/verticalpodautoscalers")
    cluster.deployment("web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"})
    apiserver.objects.create("hvpas", hvpa_manifest(vpa=True))
    caplog.set_level(logging.DEBUG, logger="hvpa.controller.reconciler")
    await start_controller()
    cluster.loads["web"].cpu_millicores = 400  # rising load: several reconciles
    await eventually(lambda: cluster.replicas("web") == 4, within=60)
    about_the_crd = [r for r in caplog.records if "is not served" in r.getMessage()]
    assert len(about_the_crd) > 1
    assert [r.levelno for r in about_the_crd].count(logging.WARNING) == 1
