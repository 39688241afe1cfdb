"""An Hvpa the CRD's schema and rules admit but hvpa cannot apply gets a condition and a Warning
Event on the real server, and its target is left alone.
"""

from __future__ import annotations

import pytest
from e2e_cluster import Cluster
from e2e_objects import condition, deployment, events, hvpa, hvpa_path, workload_path
from e2e_processes import wait_until

pytestmark = pytest.mark.e2e


def test_a_shrinking_capacity_curve_sets_invalid_spec_and_an_event(
    cluster: Cluster, namespace: str
) -> None:
    """The CRD's CEL rules refuse what they can express (minReplicas above maxReplicas is a
    422 at admission); a curve whose per-pod size shrinks as replicas grow passes them and
    is hvpa's to refuse."""
    api = cluster.admin
    api.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=2, requests={"cpu": "100m"}),
    )
    cluster.set_usage(namespace, {"cpu": "500m", "memory": "32Mi"})
    refused = api.request("POST", hvpa_path(namespace), hvpa("web", min_replicas=5, max_replicas=3))
    assert refused.status == 422, "the CRD's rules admitted minReplicas > maxReplicas"
    shrinking = hvpa("web", vpa=True)
    shrinking["spec"]["strategy"] = "Capacity"
    shrinking["spec"]["capacity"] = {
        "curve": [{"replicas": 1, "cpu": "400m"}, {"replicas": 3, "cpu": "100m"}]
    }
    api.create(hvpa_path(namespace), shrinking)

    def invalid() -> bool:
        found = condition(api.get(hvpa_path(namespace, "web")), "ScalingActive")
        return found is not None and found["status"] == "False" and found["reason"] == "InvalidSpec"

    wait_until(invalid, timeout_seconds=60, what="ScalingActive=False, InvalidSpec")
    found = condition(api.get(hvpa_path(namespace, "web")), "ScalingActive")
    assert found is not None
    assert "spec.capacity.curve[1].cpu" in found["message"]
    wait_until(
        lambda: bool(events(api, namespace, reason="InvalidSpec")),
        timeout_seconds=30,
        what="an InvalidSpec Event",
    )
    (event,) = events(api, namespace, reason="InvalidSpec")
    assert event["type"] == "Warning"
    assert event["involvedObject"]["kind"] == "Hvpa"
    # Changes nothing: the 500% utilization would otherwise have scaled it out.
    assert api.get(workload_path(namespace, "Deployment", "web"))["spec"]["replicas"] == 2
