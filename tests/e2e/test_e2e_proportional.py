"""Cluster-proportional scaling from real Node objects: hvpa's node informer, as its
ServiceAccount, counts the nodes and cores its selector picks that are Ready and not cordoned.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from e2e_cluster import Cluster
from e2e_controlplane import KWOK_NODE_ANNOTATION
from e2e_objects import deployment, hvpa_path, workload_path
from e2e_processes import wait_until

pytestmark = pytest.mark.e2e


@pytest.fixture
def pool(cluster: Cluster, namespace: str) -> Iterator[list[str]]:
    """Names of the nodes the test creates; deleted afterwards (nodes outlive namespaces)."""
    created: list[str] = []
    yield created
    for name in created:
        cluster.admin.delete(f"/api/v1/nodes/{name}")


def _add_node(cluster: Cluster, pool: list[str], namespace: str, index: int) -> None:
    name = f"{namespace}-{index}"
    cluster.admin.create(
        "/api/v1/nodes",
        {
            # kwok's too, so they turn Ready (CPA counts only Ready, uncordoned nodes as
            # schedulable); tainted, so no other test's pods land on them.
            "metadata": {
                "name": name,
                "labels": {"e2e-pool": namespace},
                "annotations": dict([KWOK_NODE_ANNOTATION]),
            },
            "spec": {"taints": [{"key": "e2e-pool", "value": namespace, "effect": "NoSchedule"}]},
            "status": {
                "capacity": {"cpu": "4", "memory": "16Gi"},
                "allocatable": {"cpu": "4", "memory": "16Gi"},
            },
        },
    )
    pool.append(name)


def test_replicas_follow_the_selected_nodes(
    cluster: Cluster, namespace: str, pool: list[str]
) -> None:
    api = cluster.admin
    api.create(
        workload_path(namespace, "Deployment"),
        deployment("dns", replicas=1, requests={"cpu": "10m"}),
    )
    for index in range(3):
        _add_node(cluster, pool, namespace, index)
    api.create(
        hvpa_path(namespace),
        {
            "apiVersion": "autoscaling.k8s.io/v1alpha1",
            "kind": "Hvpa",
            "metadata": {"name": "dns"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "dns"},
                "hpa": {
                    "deploy": True,
                    "template": {"spec": {"minReplicas": 1, "maxReplicas": 10}},
                },
                "clusterProportional": {
                    # One replica per 2 nodes or per 4 cores, whichever asks for more: 3 nodes
                    # of 4 cores are 12 cores -> 3 replicas by cores, 2 by nodes.
                    "linear": {"coresPerReplica": 4, "nodesPerReplica": 2, "min": 1, "max": 10},
                    "nodeSelector": {"e2e-pool": namespace},
                },
            },
        },
    )
    path = workload_path(namespace, "Deployment", "dns")
    try:
        wait_until(
            lambda: api.get(path)["spec"]["replicas"] == 3, timeout_seconds=60, what="3 replicas"
        )
    except TimeoutError as timeout:
        status = api.get(hvpa_path(namespace, "dns")).get("status", {})
        raise AssertionError(f"{timeout}; status {status}") from None

    # A fourth node: 16 cores -> 4.
    _add_node(cluster, pool, namespace, 3)
    wait_until(
        lambda: api.get(path)["spec"]["replicas"] == 4, timeout_seconds=60, what="4 replicas"
    )

    # Cordoned nodes do not count (includeUnschedulableNodes defaults to false): 2 schedulable
    # nodes, 8 cores -> 2.
    for name in pool[:2]:
        api.patch(f"/api/v1/nodes/{name}", {"spec": {"unschedulable": True}})
    wait_until(
        lambda: api.get(path)["spec"]["replicas"] == 2, timeout_seconds=60, what="2 replicas"
    )
