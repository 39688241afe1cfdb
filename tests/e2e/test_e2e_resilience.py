"""hvpa when the real control plane misbehaves: the leader dies (SIGKILL) or stops (SIGTERM),
etcd is compacted under a watch (410, re-list), the API server restarts, and other writers
race hvpa's writes to /scale and to the Hvpa's status (409, retry).
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator

import pytest
from e2e_audit import AuditEvent, AuditLog
from e2e_cluster import HVPA_USER, Cluster
from e2e_hvpa import LEASE_NAME, LEASE_NAMESPACE, HvpaController
from e2e_objects import deployment, hvpa_path, workload_path
from e2e_processes import wait_until

pytestmark = pytest.mark.e2e

LEASE_PATH = f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/{LEASE_NAME}"


def _fixed_replicas_hvpa(replicas: int) -> dict[str, object]:
    """An Hvpa whose answer needs no metrics: cluster-proportional with min = max."""
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": "web"},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "hpa": {"deploy": True, "template": {"spec": {"minReplicas": 1, "maxReplicas": 10}}},
            "clusterProportional": {
                "linear": {"nodesPerReplica": 1, "min": replicas, "max": replicas},
                "nodeSelector": {"type": "kwok"},
            },
        },
    }


def _replicas(cluster: Cluster, namespace: str) -> int:
    return int(cluster.admin.get(workload_path(namespace, "Deployment", "web"))["spec"]["replicas"])


def _scaled_to(cluster: Cluster, namespace: str, replicas: int) -> None:
    wait_until(
        lambda: _replicas(cluster, namespace) == replicas,
        timeout_seconds=90,
        what=f"{replicas} replicas",
    )


def _retarget(cluster: Cluster, namespace: str, replicas: int) -> None:
    cluster.admin.patch(
        hvpa_path(namespace, "web"),
        {"spec": {"clusterProportional": {"linear": {"min": replicas, "max": replicas}}}},
    )


@pytest.fixture
def fixed_target(cluster: Cluster, namespace: str) -> Iterator[None]:
    """A Deployment held at 2 replicas by an Hvpa; `_retarget` moves it."""
    cluster.admin.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=1, requests={"cpu": "10m"}),
    )
    cluster.admin.create(hvpa_path(namespace), _fixed_replicas_hvpa(2))
    _scaled_to(cluster, namespace, 2)
    yield


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_the_standby_takes_over_when_the_leader_goes(
    cluster: Cluster, namespace: str, fixed_target: None, how: signal.Signals
) -> None:
    leader = cluster.leader()
    assert leader is not None
    (standby,) = [c for c in cluster.running_controllers() if c is not leader]
    transitions = cluster.admin.get(LEASE_PATH)["spec"].get("leaseTransitions", 0)

    leader.process.signal(how)
    gone = time.monotonic()
    exit_code = leader.process.wait(timeout_seconds=60)
    wait_until(lambda: cluster.leader() is standby, timeout_seconds=60, what="the standby leads")
    took = time.monotonic() - gone
    if how == signal.SIGTERM:
        # A clean stop releases the Lease: the standby takes it at its next retry (2 s), not
        # after the 15 s lease duration.
        assert exit_code == 0
        assert took < 10, f"took {took:.1f} s"
    else:
        # Killed: the Lease runs out first (15 s from the last renewal, which was at most a
        # retry period, 2 s, before the kill), then the standby's next retry takes it.
        assert exit_code == -signal.SIGKILL
        assert 5 < took < 15 + 2 + 10, f"took {took:.1f} s"
    assert cluster.admin.get(LEASE_PATH)["spec"]["leaseTransitions"] == transitions + 1

    # The new leader acts.
    _retarget(cluster, namespace, 3)
    _scaled_to(cluster, namespace, 3)
    cluster.replace_controller(leader)


def test_a_watch_resumed_past_compaction_relists(cluster: Cluster, namespace: str) -> None:
    """HorizontalPodAutoscalers are served from etcd (their watch cache is off, see
    e2e_controlplane): resuming hvpa's watch from before a compaction gets etcd's 410."""
    api = cluster.admin
    hpas = f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers"
    hpa = {
        "metadata": {"name": "first"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "other"},
            "minReplicas": 1,
            "maxReplicas": 2,
        },
    }
    api.create(hpas, hpa)

    def informer(controller: HvpaController, resource: str) -> dict[str, object]:
        (found,) = [i for i in controller.informers() if i["resource"].startswith(resource)]
        return found

    controllers = cluster.running_controllers()
    wait_until(
        lambda: all(informer(c, "horizontalpodautoscalers")["size"] >= 1 for c in controllers),
        timeout_seconds=30,
        what="both controllers saw the HPA",
    )
    lists_before = {c.name: informer(c, "horizontalpodautoscalers")["lists"] for c in controllers}
    pod_lists_before = {c.name: informer(c, "pods")["lists"] for c in controllers}

    # Cut hvpa off (shorter than the leader's 10 s renew deadline), change an HPA while it is
    # away, and compact etcd past everything hvpa has seen.
    cluster.proxy.block()
    api.create(hpas, {**hpa, "metadata": {"name": "second"}})
    cluster.control_plane.advance_and_compact_etcd()
    cluster.proxy.unblock()

    wait_until(
        lambda: all(
            informer(c, "horizontalpodautoscalers")["lists"] > lists_before[c.name]
            for c in controllers
        ),
        timeout_seconds=60,
        what="both controllers re-listed the HPAs",
    )
    for controller in controllers:
        assert informer(controller, "horizontalpodautoscalers")["size"] >= 2
        expired = [
            r
            for r in controller.log_records()
            if r.get("msg") == "resourceVersion expired; re-listing"
            and str(r.get("reflector", "")).startswith("horizontalpodautoscalers")
        ]
        assert expired, f"{controller.name} logged no 410 for the HPAs"
        # Pods are served from the watch cache, which still had hvpa's resourceVersion:
        # their watch resumed without a list.
        assert informer(controller, "pods")["lists"] == pod_lists_before[controller.name]


def test_hvpa_rides_out_an_api_server_restart(
    cluster: Cluster, namespace: str, fixed_target: None
) -> None:
    cluster.control_plane.restart_apiserver()
    # A restart that outlasts the leader's renew deadline (10 s) costs it the Lease, and hvpa
    # exits to start over, as client-go's controllers do; its pod's kubelet would restart it.
    for controller in cluster.controllers:
        if controller.process.exit_code() not in (None, 1):
            pytest.fail(
                f"{controller.name} exited with {controller.process.exit_code()}: {controller.process.tail()}"
            )
    cluster.restart_exited_controllers()
    _retarget(cluster, namespace, 3)
    _scaled_to(cluster, namespace, 3)
    assert cluster.leader() is not None


def test_conflicting_writers_get_409s_and_hvpa_converges(
    cluster: Cluster, namespace: str, fixed_target: None
) -> None:
    """Another writer keeps resetting the target's /scale and touching the Hvpa; hvpa's writes
    carry the resourceVersion it last saw, so some meet 409, and it retries until it wins."""
    api = cluster.admin
    audit = AuditLog(cluster.control_plane.audit_log)
    since = audit.offset()
    scale = workload_path(namespace, "Deployment", "web") + "/scale"
    stop = threading.Event()

    def fight() -> None:
        round_ = 0
        while not stop.is_set():
            round_ += 1
            api.patch(scale, {"spec": {"replicas": 1}})
            api.patch(
                hvpa_path(namespace, "web"),
                {"metadata": {"annotations": {"e2e/round": str(round_)}}},
            )

    def hvpas_requests() -> list[AuditEvent]:
        return [e for e in audit.events(since) if e.user == HVPA_USER and e.namespace == namespace]

    def scale_writes() -> list[AuditEvent]:
        return [e for e in hvpas_requests() if e.subresource == "scale" and e.verb == "update"]

    def status_conflicts() -> list[AuditEvent]:
        return [
            e
            for e in hvpas_requests()
            if (e.resource, e.subresource, e.code) == ("hvpas", "status", 409)
        ]

    fighter = threading.Thread(target=fight, daemon=True)
    fighter.start()
    try:
        # A /scale write meets a 409 only if the other writer's change lands between hvpa's
        # read and its write, and the rewrite guard soon holds the axis (a write every 20, 40,
        # 80 s), so whether one of the few writes meets a conflict is luck. What makes the
        # conflict possible is the precondition each write carries: that is checked, from the
        # logged bodies, on every one; the status writes, many and quick, meet 409s every run.
        wait_until(
            lambda: len(scale_writes()) >= 2 and bool(status_conflicts()),
            timeout_seconds=90,
            what="two /scale writes of hvpa's and a 409 on its status write",
        )
    finally:
        stop.set()
        fighter.join(timeout=10)
    unconditional = [str(e) for e in scale_writes() if not e.request_version]
    assert not unconditional, f"/scale writes without a resourceVersion: {unconditional}"
    _scaled_to(cluster, namespace, 2)
