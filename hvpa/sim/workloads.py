"""The workload controller of the model: Deployments and StatefulSets make and replace their pods.

hvpa changes a workload in two ways, through `/scale` (spec.replicas) and by
patching the pod template's resources; the pods themselves never change
(their spec is immutable), so a new size reaches the pods only by a rollout,
as in a real cluster. Each `sync` reads every Deployment and StatefulSet
from the API server and converges its pods one step, then writes the status
fields hvpa's rollout gate reads (`kubectl rollout status` reads the same):

Deployment (kube-controller-manager's deployment + replicaset controllers;
a pod's revision is its `pod-template-hash`, and each revision's pods
belong to a ReplicaSet object kept as a cluster shows it, replicasets.py):
- no old pods: scale the current revision to spec.replicas at once;
- RollingUpdate: create new pods while the total stays within replicas +
  maxSurge (a percentage rounds up); delete old pods, unready ones first,
  while the available pods stay at or above replicas - maxUnavailable (rounds
  down; both 0 means maxUnavailable 1), as `reconcileOldReplicaSets` does;
- Recreate: delete every old pod, create the new ones once they are gone;
- scale-down deletes the pods a ReplicaSet would pick first: unscheduled,
  pending, unready, ready for the shortest time, most restarts, newest;
- status: observedGeneration, replicas (non-terminating pods),
  updatedReplicas, readyReplicas, availableReplicas (minReadySeconds 0:
  ready), unavailableReplicas, conditions Available and Progressing.

StatefulSet (OrderedReady, or Parallel; RollingUpdate with partition, or OnDelete):
- pods `<name>-<ordinal>`; OrderedReady creates ordinal i only when every
  lower one is running and ready, and deletes the highest ordinal first,
  one at a time;
- a rolling update deletes the highest-ordinal pod (at or above the
  partition) whose revision is not the update revision, one at a time, only
  while every pod is running and ready; it comes back at the new revision;
- status: observedGeneration, replicas (created pods), readyReplicas,
  availableReplicas, currentReplicas, updatedReplicas, currentRevision (set
  to updateRevision once every pod runs it and is ready), updateRevision.

What can go wrong: a pod the scheduler cannot place stays Pending and counts
as unavailable, so a rolling update with maxUnavailable 0 waits for room, as
it would in a real cluster. A workload whose pod creates are still waiting
for admission (mutating webhooks, `Pods.pending`) is left alone until they
are done, as the ReplicaSet controller waits for its expectations.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import orjson

from hvpa.records import format_time
from hvpa.sim.apiserver import NotFound, Objects
from hvpa.sim.pods import Pods, SimPod, WorkloadKey
from hvpa.sim.replicasets import ReplicaSets, RevisionCount

__all__ = ["WorkloadChange", "WorkloadController", "resolve_rolling_bounds", "template_hash"]

# Kubernetes' SafeEncodeString alphabet: no vowels, no look-alikes.
_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"
TEMPLATE_HASH_LABEL: Final = "pod-template-hash"
REVISION_LABEL: Final = "controller-revision-hash"
ORDINAL_LABEL: Final = "apps.kubernetes.io/pod-index"


def template_hash(template: Any) -> str:
    """A short, stable name for a pod template: equal templates, equal hashes."""
    digest = hashlib.sha256(orjson.dumps(template, option=orjson.OPT_SORT_KEYS)).digest()
    number = int.from_bytes(digest[:8], "big")
    chars = []
    for _ in range(10):
        number, index = divmod(number, len(_ALPHABET))
        chars.append(_ALPHABET[index])
    return "".join(chars)


def _scaled(value: Any, total: int, *, round_up: bool) -> int:
    """An IntOrString of rollingUpdate: a count, or a percentage of `total`."""
    if isinstance(value, str) and value.endswith("%"):
        share = float(value[:-1]) * total / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(value)


def resolve_rolling_bounds(rolling: Any, replicas: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) as the deployment controller resolves them."""
    rolling = rolling or {}
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, round_up=True)
    unavailable = _scaled(rolling.get("maxUnavailable", "25%"), replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, min(unavailable, replicas)


@dataclass(frozen=True, slots=True)
class WorkloadChange:
    """What the controller saw change in a workload's spec (for the report's counts)."""

    workload: WorkloadKey
    time: float
    replicas: tuple[int, int] | None = None  # (before, after)
    template: tuple[dict[str, Any], dict[str, Any]] | None = None  # (before, after)


def _deletion_rank(pod: SimPod) -> tuple[Any, ...]:
    """controller.ActivePods order: the pod to delete first sorts first."""
    return (
        pod.node is not None,
        pod.phase == "Running",
        pod.ready,
        -(pod.ready_since or 0.0),
        -sum(c.restart_count for c in pod.containers),
        -pod.created_at,
        pod.name,
    )


def _revision_counts(pods: list[SimPod]) -> dict[str, RevisionCount]:
    """The pods each revision keeps (not terminating), and how many of them are ready.
    Counted in plain lists, one RevisionCount per revision at the end (not one per pod)."""
    tallies: dict[str, list[int]] = {}
    for pod in pods:
        if pod.deleting:
            continue
        tally = tallies.get(pod.revision)
        if tally is None:
            tally = tallies[pod.revision] = [0, 0]
        tally[0] += 1
        if pod.ready:
            tally[1] += 1
    return {revision: RevisionCount(kept, ready) for revision, (kept, ready) in tallies.items()}


def _running_and_ready(pod: SimPod) -> bool:
    return pod.phase == "Running" and pod.ready and not pod.deleting


class WorkloadController:
    """Converges the pods of every Deployment and StatefulSet, one step per `sync`.

    The workloads it reads are the server's shared decoded copies (`Objects.list_shared`),
    so nothing here changes them: a pod's manifest takes new dicts for what it sets, and
    the templates kept for `spec_of` and `changes` are only read.
    """

    def __init__(self, objects: Objects, pods: Pods, *, clock: Callable[[], float]) -> None:
        self._objects = objects
        self._pods = pods
        self._clock = clock
        self._seen: dict[WorkloadKey, tuple[int, dict[str, Any]]] = {}
        # Per workload, the template hash of the version last synced: ((uid, resourceVersion),
        # hash). A stored version never changes, so its template's hash does not either.
        self._hashes: dict[WorkloadKey, tuple[tuple[str, str], str]] = {}
        self._replica_sets = ReplicaSets(objects)
        self.changes: list[WorkloadChange] = []

    def spec_of(self, workload: WorkloadKey) -> tuple[int, dict[str, Any]] | None:
        """The workload's (replicas, template) as the last sync saw them."""
        return self._seen.get(workload)

    def sync(self) -> None:
        """Converge every workload one step; delete the pods of workloads that are gone, as the
        garbage collector would (their ownerReferences name a deleted owner)."""
        live: set[WorkloadKey] = set()
        deployments = self._objects.list_shared("deployments")
        self._replica_sets.load()
        for obj in deployments:
            live.add(self._sync_deployment(obj))
        for obj in self._objects.list_shared("statefulsets"):
            live.add(self._sync_statefulset(obj))
        for pod in self._pods:
            if pod.workload not in live:
                self._pods.delete(pod)
        for gone in self._hashes.keys() - live:
            del self._hashes[gone]
        self._replica_sets.collect(obj["metadata"]["uid"] for obj in deployments)

    # ------------------------------------------------------------------ common

    def _template_hash(self, key: WorkloadKey, obj: dict[str, Any]) -> str:
        """template_hash of `obj`'s template, hashed again only when the object's stored
        version (uid and resourceVersion) moved: every workload is read at every tick, and
        serializing and hashing its template each time was most of what a quiet tick did."""
        metadata = obj["metadata"]
        version = (str(metadata.get("uid")), str(metadata.get("resourceVersion")))
        known = self._hashes.get(key)
        if known is not None and known[0] == version:
            return known[1]
        hashed = template_hash(obj["spec"].get("template") or {})
        self._hashes[key] = (version, hashed)
        return hashed

    def _observe(self, key: WorkloadKey, spec: dict[str, Any]) -> None:
        replicas, template = int(spec.get("replicas", 1)), spec.get("template") or {}
        seen = self._seen.get(key)
        self._seen[key] = (replicas, template)
        if seen is None:
            return
        before_replicas, before_template = seen
        if before_replicas != replicas or before_template != template:
            self.changes.append(
                WorkloadChange(
                    key,
                    self._clock(),
                    replicas=(before_replicas, replicas) if before_replicas != replicas else None,
                    template=(before_template, template) if before_template != template else None,
                )
            )

    def _manifest(
        self,
        obj: dict[str, Any],
        labels: dict[str, str],
        name: dict[str, str],
        owner: tuple[str, str, str] | None = None,
    ) -> dict[str, Any]:
        """A pod of `obj`'s template; `owner` (kind, name, uid) when it is not `obj`."""
        metadata = obj["metadata"]
        kind, owner_name, owner_uid = owner or (obj["kind"], metadata["name"], metadata["uid"])
        template = obj["spec"].get("template") or {}
        template_meta = template.get("metadata") or {}
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                **name,
                "namespace": metadata["namespace"],
                "labels": {**(template_meta.get("labels") or {}), **labels},
                "annotations": dict(template_meta.get("annotations") or {}),
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": kind,
                        "name": owner_name,
                        "uid": owner_uid,
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": dict(template.get("spec") or {}),
        }

    def _write_status(self, kind: str, obj: dict[str, Any], status: dict[str, Any]) -> None:
        current = obj.get("status") or {}
        if all(current.get(k) == v for k, v in status.items()) and set(current) <= set(status):
            return
        try:
            self._objects.patch(
                kind,
                obj["metadata"]["name"],
                {"status": {**{k: None for k in current if k not in status}, **status}},
                namespace=obj["metadata"]["namespace"],
                subresource="status",
            )
        except NotFound:
            return

    def _conditions(
        self, obj: dict[str, Any], wanted: list[tuple[str, str, str]]
    ) -> list[dict[str, Any]]:
        """Conditions (type, status, reason) keeping lastTransitionTime while status holds."""
        before = {c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or ()}
        result = []
        for kind, status, reason in wanted:
            old = before.get(kind)
            same = old is not None and old.get("status") == status
            # The clock is formatted only for a transition: most ticks have none.
            since = old.get("lastTransitionTime") if old and same else format_time(self._clock())
            result.append(
                {"type": kind, "status": status, "reason": reason, "lastTransitionTime": since}
            )
        return result

    # ------------------------------------------------------------------ Deployment

    def _sync_deployment(self, obj: dict[str, Any]) -> WorkloadKey:
        metadata, spec = obj["metadata"], obj["spec"]
        key: WorkloadKey = ("Deployment", metadata["namespace"], metadata["name"])
        self._observe(key, spec)
        if self._pods.pending(key):
            return key
        desired = int(spec.get("replicas", 1))
        revision = self._template_hash(key, obj)
        pods = self._pods.of(key)
        active = [p for p in pods if not p.deleting]
        new = [p for p in active if p.revision == revision]
        old = [p for p in active if p.revision != revision]
        strategy = spec.get("strategy") or {}
        surge, unavailable = resolve_rolling_bounds(strategy.get("rollingUpdate"), desired)
        replica_set = self._replica_sets.ensure(obj, revision)

        def create(count: int) -> None:
            labels = {TEMPLATE_HASH_LABEL: revision}
            for _ in range(count):
                manifest = self._manifest(
                    obj,
                    labels,
                    {"generateName": f"{replica_set[0]}-"},
                    ("ReplicaSet", *replica_set),
                )
                created = self._pods.create(manifest, workload=key, revision=revision)
                if created is not None:
                    new.append(created)

        def delete(candidates: list[SimPod], count: int) -> int:
            if count <= 0:
                return 0
            victims = sorted(candidates, key=_deletion_rank)[:count]
            for pod in victims:
                self._pods.delete(pod)
            return len(victims)

        if strategy.get("type") == "Recreate":
            if old:
                delete(old, len(old))
            elif not any(p.deleting and p.revision != revision for p in pods):
                if len(new) < desired:
                    create(desired - len(new))
                delete(new, len(new) - desired)
        elif not old:
            if len(new) < desired:
                create(desired - len(new))
            delete(new, len(new) - desired)
        else:
            # Scale the new revision up within replicas + maxSurge, trimming a surplus.
            room = desired + surge - len(active)
            if room > 0 and len(new) < desired:
                create(min(room, desired - len(new)))
            delete(new, len(new) - desired)
            # Scale the old revisions down while enough pods stay available.
            min_available = desired - unavailable
            total = len(old) + len(new)
            new_unavailable = sum(1 for p in new if not p.ready)
            budget = total - min_available - new_unavailable
            if budget > 0:
                unhealthy = [p for p in old if not p.ready]
                deleted = delete(unhealthy, min(budget, len(unhealthy)))
                old = [p for p in old if not p.deleting]
                available = sum(1 for p in (*old, *new) if p.ready)
                if available > min_available:
                    delete(old, min(available - min_available, budget - deleted))
                old = [p for p in old if not p.deleting]
            # More pods than replicas + maxSurge (a scale-down mid-rollout): old go first.
            excess = len(old) + len(new) - (desired + surge)
            if excess > 0:
                delete(old, excess)

        self._deployment_status(obj, key, revision, desired, unavailable)
        self._replica_sets.sync(
            obj, _revision_counts(self._pods.of(key)), desired=desired, surge=surge
        )
        return key

    def _deployment_status(
        self, obj: dict[str, Any], key: WorkloadKey, revision: str, desired: int, unavailable: int
    ) -> None:
        active = [p for p in self._pods.of(key) if not p.deleting]
        updated = sum(1 for p in active if p.revision == revision)
        ready = sum(1 for p in active if p.ready)
        complete = updated == desired == len(active) and ready >= desired
        status: dict[str, Any] = {
            "observedGeneration": obj["metadata"].get("generation", 1),
            "replicas": len(active),
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "unavailableReplicas": max(desired - ready, 0),
            "conditions": self._conditions(
                obj,
                [
                    (
                        "Available",
                        "True" if ready >= desired - unavailable else "False",
                        "MinimumReplicasAvailable"
                        if ready >= desired - unavailable
                        else "MinimumReplicasUnavailable",
                    ),
                    (
                        "Progressing",
                        "True",
                        "NewReplicaSetAvailable" if complete else "ReplicaSetUpdated",
                    ),
                ],
            ),
        }
        self._write_status("deployments", obj, status)

    # ------------------------------------------------------------------ StatefulSet

    def _sync_statefulset(self, obj: dict[str, Any]) -> WorkloadKey:
        metadata, spec = obj["metadata"], obj["spec"]
        name = metadata["name"]
        key: WorkloadKey = ("StatefulSet", metadata["namespace"], name)
        self._observe(key, spec)
        if self._pods.pending(key):
            return key
        desired = int(spec.get("replicas", 1))
        update_revision = f"{name}-{self._template_hash(key, obj)}"
        status = obj.get("status") or {}
        current_revision = str(status.get("currentRevision") or update_revision)
        ordered = spec.get("podManagementPolicy", "OrderedReady") != "Parallel"
        update = spec.get("updateStrategy") or {}
        partition = int((update.get("rollingUpdate") or {}).get("partition", 0))
        by_ordinal = {p.ordinal: p for p in self._pods.of(key) if p.ordinal is not None}

        # Create missing ordinals (in order, each waiting for the ones below under OrderedReady).
        for ordinal in range(desired):
            pod = by_ordinal.get(ordinal)
            if pod is None:
                revision = current_revision if ordinal < partition else update_revision
                manifest = self._manifest(
                    obj,
                    {REVISION_LABEL: revision, ORDINAL_LABEL: str(ordinal)},
                    {"name": f"{name}-{ordinal}"},
                )
                manifest["spec"] = {**manifest["spec"], "hostname": f"{name}-{ordinal}"}
                created = self._pods.create(
                    manifest, workload=key, revision=revision, ordinal=ordinal
                )
                if created is not None:
                    by_ordinal[ordinal] = created
                if created is None or ordered:
                    break
            elif ordered and not _running_and_ready(pod):
                break
        else:
            condemned = sorted((o for o in by_ordinal if o >= desired), reverse=True)
            if condemned:
                if not (ordered and any(by_ordinal[o].deleting for o in condemned)):
                    for ordinal in condemned[:1] if ordered else condemned:
                        self._pods.delete(by_ordinal[ordinal])
            elif update.get("type", "RollingUpdate") == "RollingUpdate" and all(
                _running_and_ready(p) for p in by_ordinal.values()
            ):
                stale = [
                    o
                    for o, p in by_ordinal.items()
                    if o >= partition and p.revision != update_revision
                ]
                if stale:
                    self._pods.delete(by_ordinal[max(stale)])
        self._statefulset_status(obj, key, desired, current_revision, update_revision)
        return key

    def _statefulset_status(
        self,
        obj: dict[str, Any],
        key: WorkloadKey,
        desired: int,
        current_revision: str,
        update_revision: str,
    ) -> None:
        pods = self._pods.of(key)
        live = [p for p in pods if not p.deleting]
        ready = sum(1 for p in pods if _running_and_ready(p))
        updated = sum(1 for p in live if p.revision == update_revision)
        if updated == desired and ready == desired == len(pods):
            current_revision = update_revision
        current = sum(1 for p in live if p.revision == current_revision)
        status: dict[str, Any] = {
            "observedGeneration": obj["metadata"].get("generation", 1),
            "replicas": len(pods),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "currentReplicas": current,
            "updatedReplicas": updated,
            "currentRevision": current_revision,
            "updateRevision": update_revision,
            "collisionCount": 0,
        }
        self._write_status("statefulsets", obj, status)
