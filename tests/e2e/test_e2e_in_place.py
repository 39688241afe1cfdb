"""Vertical scaling in place on the real control plane (issue 18): spec.vpa.resizeMode
InPlaceOrRollout.

- the resize: kube-apiserver v1.37.2 accepts hvpa's PATCHes of `pods/{name}/resize` (as the
  hvpa ServiceAccount, with the shipped RBAC: `patch` on pods/resize); each pod asks for the
  new size, no pod is replaced, and the template keeps its size (no rollout). kwok does not
  act on a resize, so the test plays the kubelet: it reports the new size in each pod's
  `status.containerStatuses[].resources`, as the kubelet does once it applied it, and hvpa
  counts the pods at size;
- admission: a pod made later (the Deployment scaled by hand) is sized by hvpa's mutating
  webhook, which kube-apiserver reaches through the Service reference hvpa registers
  (routed to loopback, see Cluster.route_webhook) and trusts through the caBundle hvpa
  writes: the pod is created at the decided size (generation 1, never resized) while the
  template still says the old one.

Every request hvpa made (the resizes, the webhook configuration and its Secret) is checked
for 403s by the suite's autouse fixture: least privilege proven on a real authorizer.
"""

from __future__ import annotations

import base64
import socket
import ssl
from typing import Any

import pytest
from e2e_api import STRATEGIC_PATCH
from e2e_audit import AuditLog
from e2e_cluster import HVPA_USER, WEBHOOK_SERVICE, Cluster
from e2e_hvpa import LEASE_NAMESPACE
from e2e_objects import (
    CONTAINER,
    condition,
    deployment,
    hvpa,
    hvpa_path,
    ready_pods,
    recommend,
    vpa_path,
    workload_path,
)
from e2e_processes import wait_until

pytestmark = pytest.mark.e2e

# The decided size: the recommendation, memory written in whole MiB (256Mi stays 256Mi;
# Gardener's rounding to whole thousands of bytes would make it 268436k,
# docs/gardener-compatibility.md point 20).
SIZED = {"cpu": "300m", "memory": "256Mi"}


def _pods(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    listed = cluster.admin.get(
        f"/api/v1/namespaces/{namespace}/pods", params={"labelSelector": "app=web"}
    )
    return [p for p in listed["items"] if not p["metadata"].get("deletionTimestamp")]


def _requests(pod: dict[str, Any]) -> dict[str, str]:
    (container,) = [c for c in pod["spec"]["containers"] if c["name"] == CONTAINER]
    return dict(container["resources"].get("requests", {}))


def _template_requests(cluster: Cluster, namespace: str) -> dict[str, str]:
    spec = cluster.admin.get(workload_path(namespace, "Deployment", "web"))["spec"]
    (container,) = [c for c in spec["template"]["spec"]["containers"] if c["name"] == CONTAINER]
    return dict(container["resources"].get("requests", {}))


def _report_applied(cluster: Cluster, namespace: str, pod: dict[str, Any]) -> None:
    """What the kubelet writes once it resized the pod's containers: their resources."""
    statuses = [
        {"name": c["name"], "resources": c.get("resources") or {}}
        for c in pod["spec"]["containers"]
    ]
    cluster.admin.patch(
        f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}/status",
        {"status": {"containerStatuses": statuses}},
        content_type=STRATEGIC_PATCH,
    )


def _pod_resources(cluster: Cluster, namespace: str) -> dict[str, Any]:
    status = cluster.admin.get(hvpa_path(namespace, "web")).get("status") or {}
    return dict(status.get("podResources") or {})


def _webhook(cluster: Cluster, namespace: str) -> dict[str, Any] | None:
    """The webhook hvpa registered for the namespace's Hvpa `web`, once it has a caBundle."""
    configuration = cluster.admin.get(
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/hvpa"
    )
    for webhook in configuration.get("webhooks") or []:
        if webhook["name"].startswith(f"{namespace}.web.") and webhook["clientConfig"].get(
            "caBundle"
        ):
            return dict(webhook)
    return None


def _trusted(cluster: Cluster, namespace: str) -> bool:
    """Every running replica's webhook listener presents a certificate for the Service's name
    that the registered caBundle verifies, as kube-apiserver checks it."""
    webhook = _webhook(cluster, namespace)
    if webhook is None:
        return False
    bundle = base64.b64decode(webhook["clientConfig"]["caBundle"]).decode()
    context = ssl.create_default_context(cadata=bundle)
    for controller in cluster.running_controllers():
        with (
            socket.create_connection(("127.0.0.1", controller.webhook_port), timeout=5) as raw,
            context.wrap_socket(raw, server_hostname=f"{WEBHOOK_SERVICE}.{LEASE_NAMESPACE}.svc"),
        ):
            pass
    return True


def test_pods_are_resized_in_place_and_new_pods_sized_at_admission(
    cluster: Cluster, namespace: str
) -> None:
    assert cluster.webhook_proxy is not None, cluster.webhook_route_problem
    api = cluster.admin
    audit = AuditLog(cluster.control_plane.audit_log)
    since = audit.offset()
    api.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=2, requests={"cpu": "100m", "memory": "64Mi"}),
    )
    wait_until(
        lambda: ready_pods(api, namespace, "web") == 2, timeout_seconds=60, what="2 pods Ready"
    )
    before = {p["metadata"]["uid"] for p in _pods(cluster, namespace)}
    body = hvpa("web", hpa=False, vpa=True, vpa_weight=100)
    body["spec"]["vpa"]["resizeMode"] = "InPlaceOrRollout"
    api.create(hvpa_path(namespace), body)
    wait_until(
        lambda: api.exists(vpa_path(namespace, "web-vpa")), timeout_seconds=60, what="child VPA"
    )
    recommend(api, namespace, "web-vpa", cpu="300m", memory="256Mi")

    # The real server took hvpa's resizes: both running pods ask for the new size.
    wait_until(
        lambda: [_requests(p) for p in _pods(cluster, namespace)] == [SIZED, SIZED],
        timeout_seconds=90,
        what="both pods resized through pods/resize",
    )
    pods = _pods(cluster, namespace)
    assert {p["metadata"]["uid"] for p in pods} == before, "no pod replaced"
    assert _template_requests(cluster, namespace) == {"cpu": "100m", "memory": "64Mi"}
    resizes = [
        e
        for e in audit.events(since)
        if e.user == HVPA_USER
        and e.namespace == namespace
        and e.resource == "pods"
        and e.subresource == "resize"
    ]
    assert {(e.verb, e.code) for e in resizes} == {("patch", 200)}, resizes
    assert sorted({e.name for e in resizes}) == sorted(p["metadata"]["name"] for p in pods)
    template_writes = [
        e
        for e in audit.events(since)
        if e.user == HVPA_USER
        and e.namespace == namespace
        and e.resource == "deployments"
        and e.verb in ("update", "patch")
    ]
    assert template_writes == [], "in place: no rollout"

    # The kubelet's part: each pod reports the size it now runs with.
    for pod in pods:
        _report_applied(cluster, namespace, pod)
    wait_until(
        lambda: _pod_resources(cluster, namespace).get("atSize") == 2,
        timeout_seconds=60,
        what="hvpa counting both pods at size",
    )
    resizing = condition(api.get(hvpa_path(namespace, "web")), "ResizingInPlace") or {}
    assert (resizing.get("status"), resizing.get("reason")) == ("True", "AtSize"), resizing

    # A third pod, made by the ReplicaSet after a scale by hand: kube-apiserver calls hvpa's
    # webhook, and the pod starts at the decided size while the template keeps the old one.
    # The leader registers the webhook and rotates the certificate on its refresh period
    # (30 s; a new CA is trusted one period before it signs), and each replica loads the
    # certificate on its own: wait until the API server would trust every replica.
    wait_until(
        lambda: _webhook(cluster, namespace) is not None,
        timeout_seconds=120,
        what="hvpa's webhook registered for the Hvpa",
    )
    webhook = _webhook(cluster, namespace)
    assert webhook is not None
    assert webhook["clientConfig"]["service"]["name"] == WEBHOOK_SERVICE
    assert webhook["failurePolicy"] == "Ignore"
    wait_until(
        lambda: _trusted(cluster, namespace),
        timeout_seconds=120,
        what="every hvpa replica serving a certificate the caBundle verifies",
    )
    scale = workload_path(namespace, "Deployment", "web") + "/scale"
    api.patch(scale, {"spec": {"replicas": 3}})
    wait_until(lambda: len(_pods(cluster, namespace)) == 3, timeout_seconds=60, what="a third pod")
    (new,) = [p for p in _pods(cluster, namespace) if p["metadata"]["uid"] not in before]
    assert _requests(new) == SIZED
    assert new["metadata"].get("generation", 1) == 1, "sized at admission, not resized after"
    assert _template_requests(cluster, namespace) == {"cpu": "100m", "memory": "64Mi"}
    assert not [
        e
        for e in audit.events(since)
        if e.user == HVPA_USER and e.subresource == "resize" and e.name == new["metadata"]["name"]
    ]
