"""The size a new pod gets at admission, when an Hvpa sizes its workload in place.

In the in-place resize modes the template keeps its old size (patching it
would replace every pod), so a pod created later (a scale-up, a node drain,
a crash) would start at the template's size. hvpa's mutating webhook
(hvpa.server.webhook) asks `pod_patch` for the JSONPatch that gives it the
size the Hvpa decided instead, read from `status.podResources` in the cache:

- the pod's workload is the target whose selector selects the pod's labels in
  its namespace (as the VPA's admission controller matches pods to VPAs);
- of the Hvpas of that target, the oldest one acts (as the conflict guard
  has it: the newer one holds), and only when it is valid, sizes in place
  (`spec.vpa.resizeMode` InPlaceOrRollout or InPlace) and has decided a size;
- each container the size names (a restartable init container too) gets the
  decided cpu and memory requests and limits, its other resources kept.

Anything else (no Hvpa, Rollout mode, no decided size yet, a pod already
at the size) gives no patch: the webhook then allows the pod unchanged. It
never refuses a pod: sizing is an optimisation, and a pod that starts at the
template's size is resized in place right after.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hvpa.controller.cache import Cache
from hvpa.controller.resources import HvpaRecord
from hvpa.engine.guards import writer_from_hvpa
from hvpa.engine.inplace import IN_PLACE_MODES
from hvpa.records import RecordError, decode_pod

__all__ = ["PodSizing", "pod_patch"]


@dataclass(frozen=True, slots=True)
class PodSizing:
    """The JSONPatch for a new pod, and the Hvpa whose size it applies."""

    hvpa: str
    operations: tuple[dict[str, Any], ...]


def pod_patch(cache: Cache, pod: Mapping[str, Any], namespace: str) -> PodSizing | None:
    """The patch that sizes `pod` (as the AdmissionReview carries it) at its Hvpa's size, if any."""
    body = {**pod, "metadata": {**(pod.get("metadata") or {}), "namespace": namespace}}
    try:
        record = decode_pod(body)
    except RecordError:
        return None
    hvpa = _sizing_hvpa(cache, record.namespace, cache.targets_selecting(record))
    if hvpa is None or hvpa.hvpa is None or hvpa.hvpa.status is None:
        return None
    sized = hvpa.hvpa.status.pod_resources
    if sized is None:
        return None
    sizes = {c.name: (dict(c.requests or {}), dict(c.limits or {})) for c in sized.containers}
    operations = tuple(_operations(body.get("spec") or {}, sizes))
    return PodSizing(hvpa.key, operations) if operations else None


def _sizing_hvpa(cache: Cache, namespace: str, targets: Sequence[Any]) -> HvpaRecord | None:
    candidates: list[HvpaRecord] = []
    for target in targets:
        candidates.extend(cache.hvpas_targeting((namespace, target.kind, target.name)))
    aged = [
        (writer_from_hvpa(h.hvpa).age_key(), h, h.hvpa)
        for h in candidates
        if h.hvpa is not None and not h.deleting
    ]
    if not aged:
        return None
    _, record, hvpa = min(aged, key=lambda a: a[0])
    return record if hvpa.spec.vpa.resize_mode in IN_PLACE_MODES else None


def _operations(
    spec: Mapping[str, Any], sizes: Mapping[str, tuple[dict[str, Any], dict[str, Any]]]
) -> list[dict[str, Any]]:
    operations: list[dict[str, Any]] = []
    for field in ("containers", "initContainers"):
        for index, container in enumerate(spec.get(field) or ()):
            name = container.get("name") if isinstance(container, Mapping) else None
            if not isinstance(name, str) or name not in sizes:
                continue
            if field == "initContainers" and container.get("restartPolicy") != "Always":
                continue
            requests, limits = sizes[name]
            current = container.get("resources") or {}
            wanted = _resized(current, requests, limits)
            if wanted != current:
                operations.append(
                    {"op": "add", "path": f"/spec/{field}/{index}/resources", "value": wanted}
                )
    return operations


def _resized(
    current: Mapping[str, Any], requests: Mapping[str, Any], limits: Mapping[str, Any]
) -> dict[str, Any]:
    """The container's resources with cpu and memory at the decided size, the rest kept."""
    resized = dict(current)
    for part, sized in (("requests", requests), ("limits", limits)):
        amounts = {
            name: value
            for name, value in (current.get(part) or {}).items()
            if name not in ("cpu", "memory")
        }
        amounts.update({name: str(value) for name, value in sized.items()})
        if amounts:
            resized[part] = amounts
        else:
            resized.pop(part, None)
    return resized
