"""The Capacity strategy on the real control plane: one decision moves both the replica count
(through /scale) and the pods' size (through the pod template, rolled out by the Deployment
controller) to the curve's point for the measured demand (docs/strategies.md).
"""

from __future__ import annotations

import pytest
from e2e_cluster import Cluster
from e2e_objects import CONTAINER, deployment, hvpa_path, workload_path
from e2e_processes import wait_until

pytestmark = pytest.mark.e2e

CAPACITY_HVPA = {
    "apiVersion": "autoscaling.k8s.io/v1alpha1",
    "kind": "Hvpa",
    "metadata": {"name": "web"},
    "spec": {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "strategy": "Capacity",
        "capacity": {
            # One pod grows from 100m to 400m (a vertical segment), then 400m pods are added.
            "curve": [
                {"replicas": 1, "cpu": "100m"},
                {"replicas": 1, "cpu": "400m"},
                {"replicas": 6, "cpu": "400m"},
            ],
            "scaleDownStabilizationSeconds": 10,
            "demandWindowSeconds": 30,
        },
        # The vertical axis acts through a child VPA (updateMode Off), as in the example; its
        # recommendation would only split a pod's size between containers.
        "vpa": {
            "deploy": True,
            "selector": {"matchLabels": {"role": "web-vpa"}},
            "template": {"metadata": {"labels": {"role": "web-vpa"}}},
        },
        "hpa": {
            "deploy": True,
            "template": {
                "spec": {
                    "minReplicas": 1,
                    "maxReplicas": 6,
                    "metrics": [
                        {
                            "type": "Resource",
                            "resource": {
                                "name": "cpu",
                                "target": {"type": "Utilization", "averageUtilization": 50},
                            },
                        }
                    ],
                }
            },
        },
    },
}


def _shape(cluster: Cluster, namespace: str) -> tuple[int, str]:
    spec = cluster.admin.get(workload_path(namespace, "Deployment", "web"))["spec"]
    (container,) = [c for c in spec["template"]["spec"]["containers"] if c["name"] == CONTAINER]
    return int(spec["replicas"]), str(container["resources"]["requests"]["cpu"])


def test_demand_moves_count_and_size_to_the_curve(cluster: Cluster, namespace: str) -> None:
    api = cluster.admin
    api.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=1, requests={"cpu": "100m"}),
    )
    # 600m of usage at a 50% target is a demand of 1200m. The fewest replicas whose pods,
    # at the curve's size for that count, cover it: 3 x 400m (2 x 400m = 800m falls short).
    cluster.set_usage(namespace, {"totalCpuMillicores": 600, "memory": "32Mi"})
    api.create(hvpa_path(namespace), CAPACITY_HVPA)
    try:
        wait_until(
            lambda: _shape(cluster, namespace) == (3, "400m"),
            timeout_seconds=120,
            what="3 replicas of 400m",
        )
    except TimeoutError as timeout:
        status = api.get(hvpa_path(namespace, "web")).get("status", {})
        raise AssertionError(
            f"{timeout}; now {_shape(cluster, namespace)}; status {status}"
        ) from None

    # The load falls to 100m: a demand of 200m, which one pod of 200m carries (the curve
    # allows up to 400m at one replica; the pod is sized to the demand, not the ceiling).
    cluster.set_usage(namespace, {"totalCpuMillicores": 100, "memory": "32Mi"})
    wait_until(
        lambda: _shape(cluster, namespace)[0] == 1,
        timeout_seconds=120,
        what="back to 1 replica",
    )
    status = api.get(hvpa_path(namespace, "web"))["status"]
    assert status.get("conditions"), status
