"""The ReplicaSets of the model's Deployments: one per pod template, as a cluster shows them.

A real Deployment controller keeps each revision of its pod template in a
ReplicaSet named `<deployment>-<pod-template-hash>` and owned by the
Deployment; the pods are the ReplicaSet's. The model's workload controller
(workloads.py) decides which pods exist; this module keeps the ReplicaSet
objects that account for them, so `kubectl get rs` (DESIRED, CURRENT,
READY) and a pod's `ownerReferences` read as on a cluster:

- labels: the template's plus `pod-template-hash`; the selector: the
  Deployment's plus `pod-template-hash`; the template: the Deployment's
  with that label;
- annotations `deployment.kubernetes.io/revision` (the newest template has
  the highest; a template rolled back to takes the next number),
  `desired-replicas` and `max-replicas`;
- spec.replicas: the pods of that revision the rollout keeps; status:
  replicas, fullyLabeledReplicas, readyReplicas, availableReplicas (no
  minReadySeconds: ready is available), observedGeneration;
- old ReplicaSets scaled to zero are kept up to the Deployment's
  revisionHistoryLimit (default 10), oldest deleted first; the ReplicaSets
  of a deleted Deployment go with it (the garbage collector's work).

A ReplicaSet's uid is derived from its Deployment's and its hash rather than
drawn by the server (`Objects.create(uid=...)`), so adding ReplicaSets does
not shift the seeded uids and pod names of a run. What is left out: the
Deployment's own revision annotation (writing it would wake the controller
watching the Deployment on every rollout, which the runs' figures are not
measured with), ReplicaSet conditions, and collision counts.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from hvpa.sim.apiserver import NotFound, Objects

__all__ = ["ReplicaSets", "RevisionCount", "replica_set_name"]

TEMPLATE_HASH_LABEL: Final = "pod-template-hash"
REVISION: Final = "deployment.kubernetes.io/revision"
DESIRED: Final = "deployment.kubernetes.io/desired-replicas"
MAX: Final = "deployment.kubernetes.io/max-replicas"
_DEFAULT_HISTORY: Final = 10


@dataclass(frozen=True, slots=True)
class RevisionCount:
    """The pods of one revision: kept (not terminating), and ready among those."""

    replicas: int
    ready: int


def replica_set_name(deployment: str, template_hash: str) -> str:
    return f"{deployment}-{template_hash}"


class ReplicaSets:
    """Reads every ReplicaSet once per sync (`load`), then keeps them per Deployment.

    The objects read are the server's shared decoded copies (`Objects.list_shared`: most
    ReplicaSets have not changed since the last tick, and are not decoded again), so they
    are never changed here: a write's result replaces the object in its Deployment's list.
    """

    def __init__(self, objects: Objects) -> None:
        self._objects = objects
        self._owned: dict[str, list[dict[str, Any]]] = {}

    def load(self) -> None:
        """Read the ReplicaSets, by the uid of the Deployment owning them (once per sync)."""
        self._owned = {}
        for rs in self._objects.list_shared("replicasets"):
            owner = _controller(rs)
            if owner is not None and owner.get("kind") == "Deployment":
                self._owned.setdefault(str(owner["uid"]), []).append(rs)

    def ensure(self, deployment: Mapping[str, Any], template_hash: str) -> tuple[str, str]:
        """The (name, uid) of the ReplicaSet of the current template, made if it is new,
        and made the newest revision if the template went back to it."""
        metadata = deployment["metadata"]
        name = replica_set_name(metadata["name"], template_hash)
        owned = self._owned.setdefault(str(metadata["uid"]), [])
        newest = max((_revision(rs) for rs in owned), default=0)
        index = next((i for i, rs in enumerate(owned) if rs["metadata"]["name"] == name), None)
        if index is None:
            created = self._objects.create(
                "replicasets",
                _manifest(deployment, template_hash, name, newest + 1),
                namespace=metadata["namespace"],
                uid=str(uuid.uuid5(uuid.UUID(metadata["uid"]), template_hash)),
            )
            owned.append(created)
            return name, str(created["metadata"]["uid"])
        current = owned[index]
        if _revision(current) < newest:
            updated = self._objects.patch(
                "replicasets",
                name,
                {"metadata": {"annotations": {REVISION: str(newest + 1)}}},
                namespace=metadata["namespace"],
            )
            current = owned[index] = {**current, "metadata": updated["metadata"]}
        return name, str(current["metadata"]["uid"])

    def sync(
        self,
        deployment: Mapping[str, Any],
        counts: Mapping[str, RevisionCount],
        *,
        desired: int,
        surge: int,
    ) -> None:
        """Each ReplicaSet's replicas and status from its revision's pods; old empty ones
        beyond the revision history limit deleted."""
        metadata = deployment["metadata"]
        namespace = metadata["namespace"]
        owned = self._owned.get(str(metadata["uid"]), [])
        annotations = {DESIRED: str(desired), MAX: str(desired + surge)}
        for index, rs in enumerate(owned):
            template_hash = rs["metadata"]["labels"].get(TEMPLATE_HASH_LABEL, "")
            count = counts.get(template_hash, RevisionCount(0, 0))
            rs = owned[index] = self._scale(rs, count, annotations, namespace)
            self._write_status(rs, count, namespace)
        history = int(deployment["spec"].get("revisionHistoryLimit", _DEFAULT_HISTORY))
        empty = [
            rs
            for rs in owned
            if not counts.get(rs["metadata"]["labels"].get(TEMPLATE_HASH_LABEL, ""))
        ]
        empty.sort(key=_revision)
        for rs in empty[: max(len(empty) - history, 0)]:
            self._delete(rs, namespace)
            owned.remove(rs)

    def collect(self, live_deployment_uids: Iterable[str]) -> None:
        """Delete the ReplicaSets whose Deployment is gone."""
        live = set(live_deployment_uids)
        for owner_uid, owned in self._owned.items():
            if owner_uid not in live:
                for rs in owned:
                    self._delete(rs, rs["metadata"]["namespace"])

    # ------------------------------------------------------------------ writes

    def _scale(
        self,
        rs: dict[str, Any],
        count: RevisionCount,
        annotations: dict[str, str],
        namespace: str,
    ) -> dict[str, Any]:
        """`rs` with the revision's replicas and the Deployment's annotations: itself if it has
        them, else a new object with the metadata and spec the patch stored (the status it
        was read with, which the status write that follows compares)."""
        current = rs["metadata"].get("annotations") or {}
        if rs["spec"].get("replicas") == count.replicas and all(
            current.get(k) == v for k, v in annotations.items()
        ):
            return rs
        patch = {"metadata": {"annotations": annotations}, "spec": {"replicas": count.replicas}}
        try:
            updated = self._objects.patch(
                "replicasets", rs["metadata"]["name"], patch, namespace=namespace
            )
        except NotFound:
            return rs
        return {**rs, "metadata": updated["metadata"], "spec": updated["spec"]}

    def _write_status(self, rs: dict[str, Any], count: RevisionCount, namespace: str) -> None:
        status = {
            "replicas": count.replicas,
            "fullyLabeledReplicas": count.replicas,
            "readyReplicas": count.ready,
            "availableReplicas": count.ready,
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        if (rs.get("status") or {}) == status:
            return
        try:
            self._objects.patch(
                "replicasets",
                rs["metadata"]["name"],
                {"status": status},
                namespace=namespace,
                subresource="status",
            )
        except NotFound:
            return

    def _delete(self, rs: Mapping[str, Any], namespace: str) -> None:
        try:
            self._objects.delete("replicasets", rs["metadata"]["name"], namespace=namespace)
        except NotFound:
            return


def _manifest(
    deployment: Mapping[str, Any], template_hash: str, name: str, revision: int
) -> dict[str, Any]:
    metadata, spec = deployment["metadata"], deployment["spec"]
    template = dict(spec.get("template") or {})
    template_meta = dict(template.get("metadata") or {})
    labels = {**(template_meta.get("labels") or {}), TEMPLATE_HASH_LABEL: template_hash}
    template["metadata"] = {**template_meta, "labels": labels}
    selector = dict(spec.get("selector") or {})
    selector["matchLabels"] = {
        **(selector.get("matchLabels") or {}),
        TEMPLATE_HASH_LABEL: template_hash,
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": name,
            "namespace": metadata["namespace"],
            "labels": labels,
            "annotations": {REVISION: str(revision)},
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "name": metadata["name"],
                    "uid": metadata["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {"replicas": 0, "selector": selector, "template": template},
    }


def _controller(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    for owner in obj["metadata"].get("ownerReferences") or []:
        if owner.get("controller"):
            return dict(owner)
    return None


def _revision(rs: Mapping[str, Any]) -> int:
    text = (rs["metadata"].get("annotations") or {}).get(REVISION, "0")
    return int(text) if str(text).isdigit() else 0
