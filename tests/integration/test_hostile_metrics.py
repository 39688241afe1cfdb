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


def pods_metric(name: str) -> dict[str, Any]:
    return {
        "type": "Pods",
        "pods": {
            "metric": {"name": name},
            "target": {"type": "AverageValue", "averageValue": "10"},
        },
    }


def with_metrics(name: str, *metrics: dict[str, Any]) -> dict[str, Any]:
    manifest = hvpa_manifest(name, target="web")
    manifest["spec"]["hpa"]["template"]["spec"]["metrics"] += list(metrics)
    return manifest


async def test_no_request_leaves_the_metrics_apis(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """Names validation lets through (`?`, `#`) stay in their segment; names it refuses
    (`/`, `..`) make the Hvpa invalid and are never requested: validation and the reader
    each hold on their own (tests/controller/test_metricsapi.py: the reader alone)."""
    cluster.deployment("web", replicas=2, requests={"cpu": "100m"}, load=Load(cpu_millicores=50))
    apiserver.objects.create("hvpas", with_metrics("web", pods_metric(WATCH), pods_metric("a#b")))
    # The CRD refuses it too: stored as an Hvpa written before its rule would be.
    apiserver.objects.create("hvpas", with_metrics("climb", pods_metric(CLIMB)), validate=False)
    await start_controller()
    await asyncio.sleep(40)  # a few syncs
    metric_reads = {
        r.raw_path for r in apiserver.requests if "metrics.k8s.io" in r.path and r.method == "GET"
    }
    pods_metrics = "/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/"
    assert metric_reads == {
        "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods",
        # `=` and `&` need no encoding inside a path; the `?` and `#` do, and are.
        pods_metrics + "x%3Fwatch=true&timeoutSeconds=300&",
        pods_metrics + "a%23b",
    }
    assert not [
        r for r in apiserver.requests if "timeoutSeconds" in r.query and "metrics" in r.path
    ]
    # The climb would have listed pods by the metric's label selector; the informers list
    # pods by none.
    pod_reads = [r for r in apiserver.requests if r.resource == "pods" and r.api_group == ""]
    assert pod_reads and all("labelSelector" not in r.query for r in pod_reads)
    climb = apiserver.objects.get("hvpas", "climb", namespace="default")
    reasons = {c["type"]: c["reason"] for c in climb["status"]["conditions"]}
    assert reasons["ScalingActive"] == "InvalidSpec"


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
