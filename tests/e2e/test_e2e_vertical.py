"""Vertical scaling through a child VPA on the real control plane: hvpa creates the VPA (owned
by the Hvpa, blockOwnerDeletion set, which OwnerReferencesPermissionEnforcement checks against
`update` on hvpas/finalizers), the test writes the recommendation a VPA recommender would, and
hvpa patches the pod template, which kube-controller-manager rolls out.
"""

from __future__ import annotations

import pytest
from e2e_cluster import Cluster
from e2e_objects import (
    CONTAINER,
    deployment,
    events,
    hvpa,
    hvpa_path,
    recommend,
    vpa_path,
    workload_path,
)
from e2e_processes import wait_until

pytestmark = pytest.mark.e2e


def _requests(cluster: Cluster, namespace: str) -> dict[str, str]:
    spec = cluster.admin.get(workload_path(namespace, "Deployment", "web"))["spec"]
    (container,) = [c for c in spec["template"]["spec"]["containers"] if c["name"] == CONTAINER]
    return dict(container["resources"].get("requests", {}))


def test_vpa_recommendation_resizes_the_pods(cluster: Cluster, namespace: str) -> None:
    api = cluster.admin
    api.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}),
    )
    api.create(hvpa_path(namespace), hvpa("web", hpa=False, vpa=True, vpa_weight=100))

    wait_until(
        lambda: api.exists(vpa_path(namespace, "web-vpa")), timeout_seconds=60, what="child VPA"
    )
    vpa = api.get(vpa_path(namespace, "web-vpa"))
    owner_uid = api.get(hvpa_path(namespace, "web"))["metadata"]["uid"]
    (owner,) = vpa["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"], owner["blockOwnerDeletion"]) == (
        "Hvpa",
        owner_uid,
        True,
        True,
    )
    assert vpa["spec"]["updatePolicy"] == {"updateMode": "Off"}

    recommend(api, namespace, "web-vpa", cpu="300m", memory="256Mi")
    wait_until(
        lambda: _requests(cluster, namespace).get("cpu") == "300m",
        timeout_seconds=60,
        what="the pod template resized",
    )
    # Memory is written in whole MiB: 256Mi stays 256Mi (Gardener's rounding up to a multiple
    # of 1000 bytes would write 268436k; docs/gardener-compatibility.md point 20).
    assert _requests(cluster, namespace) == {"cpu": "300m", "memory": "256Mi"}
    (resize,) = events(api, namespace, reason="SuccessfulResize")
    assert f"container {CONTAINER}" in resize["message"]

    # kube-controller-manager rolls the new template out: a ReplicaSet at the new size with
    # both replicas.
    def rolled_out() -> bool:
        status = api.get(workload_path(namespace, "Deployment", "web"))["status"]
        return status.get("updatedReplicas") == 2 and status.get("replicas") == 2

    wait_until(rolled_out, timeout_seconds=90, what="the resize rolled out")

    # Deleting the Hvpa deletes its VPA through the garbage collector (ownerReferences).
    api.delete(hvpa_path(namespace, "web"))
    wait_until(
        lambda: not api.exists(vpa_path(namespace, "web-vpa")),
        timeout_seconds=60,
        what="the child VPA garbage-collected",
    )
