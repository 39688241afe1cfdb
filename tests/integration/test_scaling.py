"""The controller against the in-repo API server, in virtual time: a load rise scales the
target out (and, with a VPA recommendation, up) as its Hvpa says, and back when it falls;
each change is one write through /scale or one resources patch, with an Event; the
child VPA is created with updateMode Off and owned by the Hvpa; the Hvpa status records
the decision."""

from __future__ import annotations

import asyncio
from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import (
    VIRTUAL_TIME,
    events,
    eventually,
    hvpa_manifest,
    recommend,
    writes,
)

from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

MI = 1024 * 1024


async def test_load_rise_scales_out_and_back(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    await start_controller()
    await eventually(lambda: bool(apiserver.objects.get("hvpas", "web").get("status")), within=30)
    assert cluster.replicas("web") == 2

    # 400m over 2 pods of 100m: 200% of a 50% target wants 8; the scale-up limit allows 4 first.
    cluster.loads["web"].cpu_millicores = 400
    await eventually(lambda: cluster.replicas("web") == 4, within=60)
    await eventually(lambda: cluster.replicas("web") == 8, within=60)
    scale_writes = writes(apiserver, resource="deployments", subresource="scale")
    assert [w.method for w in scale_writes] == ["PUT", "PUT"]

    # The load falls: down to 2 only after the 300 s downscale stabilization window.
    cluster.loads["web"].cpu_millicores = 100
    waited = await eventually(lambda: cluster.replicas("web") == 2, within=600, step=5)
    assert waited >= 250
    assert len(writes(apiserver, resource="deployments", subresource="scale")) == 3
    assert [e["message"].split(";")[0] for e in events(apiserver, "SuccessfulRescale")] == [
        "New size: 4 (was 2)",
        "New size: 8 (was 4)",
        "New size: 2 (was 8)",
    ]
    status = apiserver.objects.get("hvpas", "web")["status"]
    assert status["replicas"] == 2
    assert status["targetSelector"] == "app=web"
    assert status["lastScaling"]["hpaStatus"] == {"currentReplicas": 8, "desiredReplicas": 2}


async def test_vpa_recommendation_scales_up(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment(
        "web",
        replicas=2,
        requests={"cpu": "100m", "memory": "64Mi"},
        limits={"cpu": "200m", "memory": "128Mi"},
        load=Load(cpu_millicores=100),
    )
    apiserver.objects.create("hvpas", hvpa_manifest(vpa=True, vpa_weight=100, hpa=False))
    running = await start_controller()
    await eventually(
        lambda: bool(apiserver.objects.list("verticalpodautoscalers", namespace="default")),
        within=30,
    )
    (vpa,) = apiserver.objects.list("verticalpodautoscalers", namespace="default")
    hvpa = apiserver.objects.get("hvpas", "web")
    assert vpa["metadata"]["name"] == "web-vpa"
    assert vpa["metadata"]["labels"] == {"role": "web-vpa"}
    assert vpa["spec"]["updatePolicy"] == {"updateMode": "Off"}
    assert vpa["spec"]["targetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "web",
    }
    (owner,) = vpa["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["uid"], owner["controller"]) == (
        "Hvpa",
        "web",
        hvpa["metadata"]["uid"],
        True,
    )

    recommend(apiserver, cpu="300m", memory="256Mi")
    await eventually(lambda: cluster.requests("web").get("cpu") == "300m", within=60)
    # Written in whole MiB: the target as it is (Gardener's rounding to 1000 bytes would
    # have written 268436k).
    assert cluster.requests("web") == {"cpu": "300m", "memory": "256Mi"}
    assert len(writes(apiserver, resource="deployments")) == 1
    assert len(writes(apiserver, resource="verticalpodautoscalers")) == 1  # the create
    (resize,) = events(apiserver, "SuccessfulResize")
    assert resize["message"] == (
        "container app: requests cpu 300m, memory 256Mi, limits cpu 600m, memory 512Mi"
    )
    assert (
        running.sample(
            "hvpa_scalings_total",
            {"namespace": "default", "name": "web", "axis": "vertical", "direction": "up"},
        )
        == 1
    )

    # A small fall is held back by the default minimum change (200m, 200M): one Event
    # for the new block, however long it lasts.
    recommend(apiserver, cpu="120m", memory="100Mi")
    await asyncio.sleep(120)
    assert cluster.requests("web")["cpu"] == "300m"
    (blocked,) = events(apiserver, "ScalingBlocked")
    assert blocked["message"].startswith("vertical scale-down blocked by MinChange")
    assert blocked["count"] == 1
    # A large one goes through: the pods shrink back, as one more patch.
    recommend(apiserver, cpu="50m", memory="32Mi")
    await eventually(lambda: cluster.requests("web").get("cpu") == "50m", within=600, step=5)
    assert len(writes(apiserver, resource="deployments")) == 2
    assert (
        running.sample(
            "hvpa_scalings_total",
            {"namespace": "default", "name": "web", "axis": "vertical", "direction": "down"},
        )
        == 1
    )


def add_node(server: ApiServer, name: str) -> None:
    server.objects.create(
        "nodes",
        {
            "metadata": {"name": name},
            "status": {
                "conditions": [{"type": "Ready", "status": "True"}],
                "allocatable": {"cpu": "4", "memory": "16Gi"},
            },
        },
        keep_status=True,
    )


async def test_cluster_proportional_follows_nodes_and_its_config_map(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    for index in range(3):
        add_node(apiserver, f"node-{index}")
    cluster.deployment("dns", replicas=1, requests={"cpu": "50m"})
    apiserver.objects.create(
        "hvpas",
        {
            "apiVersion": "autoscaling.k8s.io/v1alpha1",
            "kind": "Hvpa",
            "metadata": {"name": "dns", "namespace": "default"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "dns"},
                "hpa": {"deploy": True},
                "clusterProportional": {"configMapRef": {"name": "dns-params"}},
            },
        },
    )
    running = await start_controller()
    await asyncio.sleep(20)
    assert cluster.replicas("dns") == 1  # no ConfigMap yet: nothing to go by
    (watch,) = running.manager.config_maps.informers
    assert watch.reflector.name == "configmaps/default"

    params = {"metadata": {"name": "dns-params"}, "data": {"linear": '{"nodesPerReplica": 1}'}}
    apiserver.objects.create("configmaps", params, namespace="default")
    await eventually(lambda: cluster.replicas("dns") == 3, within=30)
    add_node(apiserver, "node-3")
    await eventually(lambda: cluster.replicas("dns") == 4, within=30)
    apiserver.objects.patch(
        "configmaps",
        "dns-params",
        {"data": {"linear": '{"nodesPerReplica": 2}'}},
        namespace="default",
    )
    await eventually(lambda: cluster.replicas("dns") == 2, within=30)
    # Only the named ConfigMap is ever listed or watched.
    listed = {
        r.query.get("fieldSelector")
        for r in apiserver.requests
        if r.resource == "configmaps" and r.method == "GET"
    }
    assert listed == {"metadata.name=dns-params"}
