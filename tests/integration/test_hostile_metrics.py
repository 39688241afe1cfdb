"""A hostile Hvpa against the running controller: metric names built to climb out of their
path segment never reach another API (the request log holds every path the controller
sent), and a metrics answer past its bound is a failed reading with a condition on the
Hvpa, while the controller goes on deciding the others."""

from __future__ import annotations

import asyncio
from typing import Any, Final

from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, eventually, hvpa_manifest

from hvpa.settings import ControllerSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

# The names: one climbed to /api/v1/pods, one opened a watch that tied up a worker.
CLIMB: Final = "../../../../../../../api/v1/pods"
WATCH: Final = "x?watch=true&timeoutSeconds=300&"
METRICS_APIS: Final = (
    "/apis/metrics.k8s.io/v1beta1/namespaces/default/",
    "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/",
    "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/",
)


def pods_metric(name: str) -> dict[str, Any]:
    return {
        "type": "Pods",
        "pods": {
            "metric": {"name": name},
            "target": {"type": "AverageValue", "averageValue": "10"},
        },
    }


def hostile(name: str) -> dict[str, Any]:
    manifest = hvpa_manifest(name, target="web")
    metrics = manifest["spec"]["hpa"]["template"]["spec"]["metrics"]
    metrics += [
        pods_metric(CLIMB),
        pods_metric(WATCH),
        {
            "type": "Object",
            "object": {
                "describedObject": {"apiVersion": "v1", "kind": "Pod/../../..", "name": ".."},
                "metric": {"name": "rps"},
                "target": {"type": "Value", "value": "1"},
            },
        },
    ]
    return manifest


async def test_no_request_leaves_the_metrics_apis(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment("web", replicas=2, requests={"cpu": "100m"}, load=Load(cpu_millicores=50))
    apiserver.objects.create("hvpas", hostile("web"))
    await start_controller()
    await asyncio.sleep(40)  # a few syncs
    metric_reads = [
        r.raw_path for r in apiserver.requests if "metrics.k8s.io" in r.path and r.method == "GET"
    ]
    assert metric_reads  # the CPU metric at least was read
    for path in metric_reads:
        assert path.startswith(METRICS_APIS), path
        assert "/../" not in path and "?" not in path
    # The climb would have listed pods by the metric's label selector; the informers list
    # pods by none.
    pod_reads = [r for r in apiserver.requests if r.resource == "pods" and r.api_group == ""]
    assert pod_reads and all("labelSelector" not in r.query for r in pod_reads)


async def test_an_oversized_answer_is_a_condition(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment("web", replicas=3, requests={"cpu": "100m"}, load=Load(cpu_millicores=300))
    apiserver.objects.create("hvpas", hvpa_manifest("web", target="web"))
    # Three PodMetrics are some 1,000 bytes: past this bound, under the default.
    await start_controller(settings=ControllerSettings(metrics_max_response_bytes=500))

    def condition() -> dict[str, Any] | None:
        status = apiserver.objects.get("hvpas", "web", namespace="default").get("status") or {}
        found = [c for c in status.get("conditions", []) if c["type"] == "ScalingActive"]
        return found[0] if found else None

    await eventually(lambda: condition() is not None, within=60)
    active = condition()
    assert active is not None
    assert (active["status"], active["reason"]) == ("False", "FailedGetResourceMetric")
    assert "larger than 500 bytes" in active["message"]
    assert cluster.replicas("web") == 3  # nothing decided on a reading that was not read
