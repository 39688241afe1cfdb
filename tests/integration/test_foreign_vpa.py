"""A VerticalPodAutoscaler named `<hvpa>-vpa` that the Hvpa does not own, in virtual time: hvpa
never takes it over, and says so where a person looks (the condition, a Warning Event, `hvpa
explain`), with what to do: delete or rename it. Once it is gone, hvpa creates its own."""

from __future__ import annotations

from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import VIRTUAL_TIME, events, eventually, hvpa_manifest, writes

from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

SOMEONE_ELSES = {
    "apiVersion": "autoscaling.k8s.io/v1",
    "kind": "VerticalPodAutoscaler",
    "metadata": {"name": "web-vpa", "namespace": "default"},
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "updatePolicy": {"updateMode": "Off"},
    },
}


def vertical_condition(apiserver: ApiServer) -> dict[str, Any] | None:
    status = apiserver.objects.get("hvpas", "web").get("status") or {}
    found = [c for c in status.get("conditions") or () if c["type"] == "VerticalScalingActive"]
    return found[0] if found else None


async def test_a_vpa_of_its_name_that_is_not_its_own_is_named_with_the_fix(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    cluster.deployment(
        "web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}, load=Load(cpu_millicores=100)
    )
    apiserver.objects.create("verticalpodautoscalers", SOMEONE_ELSES)
    apiserver.objects.create("hvpas", hvpa_manifest(vpa=True, vpa_weight=100, hpa=False))
    await start_controller()

    def held() -> bool:
        condition = vertical_condition(apiserver)
        return condition is not None and condition["reason"] == "VerticalPodAutoscalerNotOwned"

    await eventually(held, within=60)
    condition = vertical_condition(apiserver)
    assert condition is not None and condition["status"] == "False"
    message = condition["message"]
    assert message.startswith("VerticalPodAutoscaler default/web-vpa (no controller owns it)")
    assert "delete or rename that VPA and hvpa creates its own" in message
    (warning,) = events(apiserver, "VerticalPodAutoscalerNotOwned")
    assert (warning["type"], warning["message"]) == ("Warning", message)
    # not taken over: never written by hvpa
    assert writes(apiserver, resource="verticalpodautoscalers") == []
    assert (
        "ownerReferences"
        not in apiserver.objects.get("verticalpodautoscalers", "web-vpa")["metadata"]
    )

    apiserver.objects.delete("verticalpodautoscalers", "web-vpa", namespace="default")

    def owned() -> bool:
        vpa = next(
            iter(apiserver.objects.list("verticalpodautoscalers", namespace="default")), None
        )
        return vpa is not None and bool(vpa["metadata"].get("ownerReferences"))

    await eventually(owned, within=60)
