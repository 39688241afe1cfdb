"""Horizontal scaling on CPU utilization against the real control plane: hvpa reads the
resource metrics API through the aggregation layer and writes /scale as its ServiceAccount;
kube-controller-manager makes the pods, kube-scheduler binds them, kwok makes them Ready.
"""

from __future__ import annotations

import pytest
from e2e_audit import AuditLog
from e2e_cluster import HVPA_USER, Cluster
from e2e_objects import deployment, events, hvpa, hvpa_path, ready_pods, statefulset, workload_path
from e2e_processes import wait_until

pytestmark = pytest.mark.e2e

MAKERS = {"Deployment": deployment, "StatefulSet": statefulset}


@pytest.mark.parametrize("kind", ["Deployment", "StatefulSet"])
def test_cpu_utilization_scales_out_then_back(cluster: Cluster, namespace: str, kind: str) -> None:
    api = cluster.admin
    audit = AuditLog(cluster.control_plane.audit_log)
    since = audit.offset()
    path = workload_path(namespace, kind, "web")
    api.create(
        workload_path(namespace, kind), MAKERS[kind]("web", replicas=1, requests={"cpu": "100m"})
    )
    wait_until(
        lambda: ready_pods(api, namespace, "web") == 1, timeout_seconds=60, what="1 pod Ready"
    )

    # 250m of load shared by the pods, 100m requested each, 50% target: 5 pods carry it at
    # exactly 50% (250 / (5 * 100m) = 50%). From 1 pod the scale-up limit (max(2x, 4)) allows
    # 4 first; then 62.5% on 4 pods asks for ceil(4 * 1.25) = 5.
    cluster.set_usage(namespace, {"totalCpuMillicores": 250, "memory": "32Mi"})
    api.create(hvpa_path(namespace), hvpa("web", target_kind=kind, max_replicas=8))
    wait_until(
        lambda: api.get(path)["spec"]["replicas"] == 5, timeout_seconds=90, what="5 replicas"
    )
    wait_until(
        lambda: ready_pods(api, namespace, "web") == 5, timeout_seconds=60, what="5 pods Ready"
    )

    # The load falls to 100m: 20% on 5 pods wants ceil(5 * 0.4) = 2, after the 10 s downscale
    # stabilization window the suite's controllers run with.
    cluster.set_usage(namespace, {"totalCpuMillicores": 100, "memory": "32Mi"})
    wait_until(
        lambda: api.get(path)["spec"]["replicas"] == 2, timeout_seconds=90, what="2 replicas"
    )

    rescales = [
        e["message"].split(";")[0] for e in events(api, namespace, reason="SuccessfulRescale")
    ]
    assert rescales[0] == "New size: 4 (was 1)"
    assert rescales[-1] == "New size: 2 (was 5)"
    status = api.get(hvpa_path(namespace, "web"))["status"]
    assert status["targetSelector"] == "app=web"
    plural = path.split("/")[-2]
    scale_writes = [
        e
        for e in audit.events(since)
        if e.user == HVPA_USER
        and e.resource == plural
        and e.subresource == "scale"
        and e.namespace == namespace
    ]
    assert scale_writes and all(e.verb == "update" for e in scale_writes)
    assert {e.code for e in scale_writes} <= {200, 409}
