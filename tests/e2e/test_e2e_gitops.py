"""hvpa beside a GitOps tool on the real control plane (issue 24, docs/gitops.md).

A second writer plays Argo CD with server-side sync: it re-applies the Deployment's manifest
from "git" (replicas 2) every few seconds, forced, as its own field manager. hvpa's /scale
writes are Updates named `hvpa`, so kube-apiserver's managedFields tell hvpa who put the
count back. hvpa writes twice, then holds the replica count (AbleToScale=False,
ConflictingFieldManager, naming the manager and the field) with a Warning Event; one probe
when the hold runs out is rewritten too and doubles the hold; the resume annotation lets it
write at once. The suite's controllers run with a 20 s rewrite window (E2E_HVPA_ARGS) so the
holds end in seconds; the rule is the same at the default hour.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from e2e_api import APPLY_PATCH
from e2e_audit import AuditLog
from e2e_cluster import HVPA_USER, Cluster
from e2e_hvpa import REWRITE_WINDOW_SECONDS
from e2e_objects import (
    condition,
    deployment,
    events,
    hvpa,
    hvpa_path,
    ready_pods,
    workload_path,
)
from e2e_processes import wait_until

pytestmark = pytest.mark.e2e

GITOPS_MANAGER = "argocd-controller"  # the manager Argo CD's server-side sync names
REAPPLY_SECONDS = 3.0  # far more often than a real tool: many rewrites in little wall time
RESUME_ANNOTATION = "autoscaling.k8s.io/hvpa-resume-writes"


class Reapplier:
    """The GitOps tool: a forced server-side apply of the manifest from git, on a schedule."""

    def __init__(self, cluster: Cluster, path: str, manifest: dict[str, Any]) -> None:
        self._api = cluster.admin
        self._path = path
        self._manifest = manifest
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="reapplier", daemon=True)
        self.applies = 0
        self.failures: list[str] = []

    def apply(self) -> None:
        response = self._api.request(
            "PATCH",
            self._path,
            self._manifest,
            params={"fieldManager": GITOPS_MANAGER, "force": True},
            content_type=APPLY_PATCH,
        )
        if response.status not in (200, 201):
            self.failures.append(f"{response.status} {response.body[:200]!r}")
        self.applies += 1

    def _run(self) -> None:
        while not self._stop.wait(REAPPLY_SECONDS):
            self.apply()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=30)


def _scale_writes(audit: AuditLog, since: int, namespace: str) -> int:
    """hvpa's successful writes of the Deployment's replica count (a 409 changed nothing)."""
    return sum(
        1
        for e in audit.events(since)
        if e.user == HVPA_USER
        and e.namespace == namespace
        and e.resource == "deployments"
        and e.verb in ("update", "patch")
        and e.code == 200
    )


def _able_to_scale(cluster: Cluster, namespace: str) -> dict[str, Any]:
    return condition(cluster.admin.get(hvpa_path(namespace, "web")), "AbleToScale") or {}


def _held(cluster: Cluster, namespace: str) -> bool:
    found = _able_to_scale(cluster, namespace)
    return found.get("status") == "False" and found.get("reason") == "ConflictingFieldManager"


def _rewrites(cluster: Cluster, namespace: str) -> list[dict[str, Any]]:
    status = cluster.admin.get(hvpa_path(namespace, "web")).get("status") or {}
    return list((status.get("history") or {}).get("rewrites") or [])


def _replicas_owners(cluster: Cluster, namespace: str) -> list[tuple[str, str, str]]:
    """(manager, operation, subresource) of every managedFields entry owning .spec.replicas."""
    obj = cluster.admin.get(workload_path(namespace, "Deployment", "web"))
    return [
        (e["manager"], e["operation"], e.get("subresource", ""))
        for e in obj["metadata"].get("managedFields") or []
        if "f:replicas" in (e.get("fieldsV1") or {}).get("f:spec", {})
    ]


def test_a_gitops_tool_reapplying_gets_bounded_writes_then_a_hold(
    cluster: Cluster, namespace: str
) -> None:
    api = cluster.admin
    audit = AuditLog(cluster.control_plane.audit_log)
    since = audit.offset()
    path = workload_path(namespace, "Deployment", "web")
    git = deployment("web", replicas=2, requests={"cpu": "100m"})
    reapplier = Reapplier(cluster, path, git)
    reapplier.apply()  # the first sync creates the Deployment
    wait_until(
        lambda: ready_pods(api, namespace, "web") == 2, timeout_seconds=60, what="2 pods Ready"
    )
    # 200m over 2 pods of 100m is 100% of the 50% target: hvpa wants 4, and at 4 pods (50%
    # each) it stays there, so each re-apply of 2 is a rewrite of hvpa's 4.
    cluster.set_usage(namespace, {"totalCpuMillicores": 200, "memory": "32Mi"})
    api.create(hvpa_path(namespace), hvpa("web", max_replicas=8))
    reapplier.start()
    try:
        # Two writes, each put back: the second rewrite within the window holds the axis.
        wait_until(lambda: _held(cluster, namespace), timeout_seconds=90, what="replicas held")
        assert _scale_writes(audit, since, namespace) == 2
        message = _able_to_scale(cluster, namespace)["message"]
        assert (
            f'field manager "{GITOPS_MANAGER}" rewrote .spec.replicas of Deployment '
            f"{namespace}/web" in message
        ), message
        assert "hvpa had set 4" in message, message
        assert (GITOPS_MANAGER, "Apply", "") in _replicas_owners(cluster, namespace)
        warnings = events(api, namespace, reason="ConflictingFieldManager")
        assert [e["type"] for e in warnings] == ["Warning"], warnings
        assert warnings[0]["involvedObject"]["kind"] == "Hvpa"
        assert GITOPS_MANAGER in warnings[0]["message"]

        # The hold runs out after one window: hvpa probes with one write, which the tool puts
        # back at its next sync; that third rewrite in a row holds for twice the window.
        wait_until(
            lambda: (
                [r["count"] for r in _rewrites(cluster, namespace)] == [3]
                and _held(cluster, namespace)
            ),
            timeout_seconds=REWRITE_WINDOW_SECONDS + 60,
            what="the probe after the first hold rewritten, held again",
        )
        assert _scale_writes(audit, since, namespace) == 3
        (rewrite,) = _rewrites(cluster, namespace)
        assert (rewrite["manager"], rewrite["field"]) == (GITOPS_MANAGER, ".spec.replicas")
        # Without the guard hvpa would have written after every re-apply.
        assert reapplier.applies >= 5, reapplier.applies
    finally:
        reapplier.stop()
    assert not reapplier.failures, reapplier.failures

    # The user settles it (the field left to hvpa in the tool) and says so: writes resume at
    # once, and hvpa's Update through /scale owns the count.
    now = datetime.fromtimestamp(time.time(), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    api.patch(hvpa_path(namespace, "web"), {"metadata": {"annotations": {RESUME_ANNOTATION: now}}})
    wait_until(
        lambda: api.get(path)["spec"]["replicas"] == 4, timeout_seconds=60, what="4 replicas"
    )
    wait_until(lambda: not _held(cluster, namespace), timeout_seconds=60, what="the hold lifted")
    assert _scale_writes(audit, since, namespace) == 4
    assert _replicas_owners(cluster, namespace) == [("hvpa", "Update", "scale")]
