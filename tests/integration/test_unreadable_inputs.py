"""Quantities the API server stores but hvpa cannot use (1e38 and more, such as 1e51: see
hvpa.quantity), in virtual time: the controller never fails a reconcile over them.
An External metric answer of 1e51 fails that metric (`FailedGetExternalMetric`, naming the
value); a Deployment whose requests, or a VPA whose recommendation, holds one is not decided
(`ScalingActive=False, reason=UnreadableInput` naming the object and field). Either way the
status stops saying ScalingActive=True, a Warning Event says why, nothing is scaled, and once
the value is readable again the Hvpa scales as before."""

from __future__ import annotations

import asyncio
from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, events, eventually, hvpa_manifest, recommend

from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

HUGE = "1e51"  # the smallest power of ten the old parser crashed on (issue 14, item 4)


def scaling_active(server: ApiServer, name: str = "web") -> dict[str, Any]:
    status = server.objects.get("hvpas", name).get("status") or {}
    found = [c for c in status.get("conditions") or () if c["type"] == "ScalingActive"]
    return found[0] if found else {}


def reconcile_errors(running: Any) -> float:
    return running.sample("controller_runtime_reconcile_errors_total", {"controller": "hvpa"}) or 0


async def test_an_external_metric_of_1e51_fails_that_metric_not_the_reconcile(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment("web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"})
    external = {
        "type": "External",
        "external": {"metric": {"name": "queue"}, "target": {"type": "Value", "value": "10"}},
    }
    body = hvpa_manifest()
    body["spec"]["hpa"]["template"]["spec"]["metrics"] = [external]
    apiserver.objects.create("hvpas", body)
    apiserver.metrics.set_external_metric("default", "queue", "20")
    running = await start_controller()
    await eventually(lambda: cluster.replicas("web") == 4, within=60)
    assert scaling_active(apiserver)["status"] == "True"

    apiserver.metrics.set_external_metric("default", "queue", HUGE)
    await eventually(lambda: scaling_active(apiserver)["status"] == "False", within=60)
    condition = scaling_active(apiserver)
    assert condition["reason"] == "FailedGetExternalMetric"
    assert "queue" in condition["message"] and HUGE in condition["message"]
    assert "beyond the largest quantity" in condition["message"]
    (warning,) = events(apiserver, "FailedGetExternalMetric")
    assert warning["type"] == "Warning" and HUGE in warning["message"]
    await asyncio.sleep(60)
    assert cluster.replicas("web") == 4
    assert reconcile_errors(running) == 0

    apiserver.metrics.set_external_metric("default", "queue", "40")
    await eventually(lambda: cluster.replicas("web") == 8, within=60)
    assert scaling_active(apiserver)["status"] == "True"


async def test_requests_of_1e51_in_the_target_hold_it_with_a_condition(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("hvpas", hvpa_manifest())
    running = await start_controller()
    await eventually(lambda: scaling_active(apiserver).get("status") == "True", within=60)

    template = {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:1"}]}}}}
    template["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": HUGE, "memory": "64Mi"}
    }
    apiserver.objects.patch("deployments.apps", "web", template, namespace="default")
    await eventually(lambda: scaling_active(apiserver)["status"] == "False", within=60)
    condition = scaling_active(apiserver)
    assert condition["reason"] == "UnreadableInput"
    message = condition["message"]
    assert "Deployment default/web spec.template.spec.containers[app].resources.requests.cpu" in (
        message
    )
    assert HUGE in message
    # The pods the Deployment runs now hold the same request, and are named too.
    await eventually(lambda: "Pod default/web-" in scaling_active(apiserver)["message"], within=60)
    (warning,) = events(apiserver, "UnreadableInput")[:1]
    assert warning["type"] == "Warning" and "nothing is scaled" in warning["message"]
    cluster.loads["web"].cpu_millicores = 1000
    await asyncio.sleep(60)
    assert cluster.replicas("web") == 2
    assert reconcile_errors(running) == 0
    state = running.manager.state()["hvpas"]["items"]["default/web"]
    assert any(HUGE in line for line in state["inputs"]["unreadable"])

    template["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "100m", "memory": "64Mi"}
    }
    apiserver.objects.patch("deployments.apps", "web", template, namespace="default")
    await eventually(lambda: cluster.replicas("web") > 2, within=60)
    assert scaling_active(apiserver)["reason"] != "UnreadableInput"


async def test_a_vpa_recommendation_of_1e51_holds_the_hvpa_with_a_condition(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment("web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"})
    apiserver.objects.create("hvpas", hvpa_manifest(vpa=True, vpa_weight=100, hpa=False))
    running = await start_controller()
    await eventually(
        lambda: bool(apiserver.objects.list("verticalpodautoscalers", namespace="default")),
        within=60,
    )
    recommend(apiserver, cpu=HUGE, memory="256Mi")
    await eventually(lambda: scaling_active(apiserver).get("status") == "False", within=60)
    condition = scaling_active(apiserver)
    assert condition["reason"] == "UnreadableInput"
    assert (
        "VerticalPodAutoscaler default/web-vpa "
        "status.recommendation.containerRecommendations[app].target.cpu" in condition["message"]
    )
    await asyncio.sleep(60)
    assert cluster.requests("web") == {"cpu": "100m", "memory": "64Mi"}
    assert reconcile_errors(running) == 0

    recommend(apiserver, cpu="300m", memory="256Mi")
    await eventually(lambda: cluster.requests("web")["cpu"] == "300m", within=60)
    assert scaling_active(apiserver).get("reason") != "UnreadableInput"
