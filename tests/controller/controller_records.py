"""Records the controller unit tests build their caches from (importable: conftest is not)."""

from __future__ import annotations

from typing import Any

import msgspec

from hvpa.controller.resources import (
    HpaRecord,
    HvpaRecord,
    HvpaWire,
    VpaObject,
    VpaObjectWire,
    hvpa_from_wire,
    vpa_object_from_wire,
)
from hvpa.records import NodeRecord, PodRecord, TargetRecord, decode_node, decode_pod, decode_target


def hvpa(
    name: str = "web",
    *,
    target: str = "web",
    kind: str = "Deployment",
    uid: str = "uid-web",
    generation: int = 1,
    created: str = "2025-01-01T00:00:00Z",
    **spec: Any,
) -> HvpaRecord:
    body = {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": uid,
            "resourceVersion": "1",
            "generation": generation,
            "creationTimestamp": created,
        },
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": kind, "name": target},
            "hpa": {"deploy": True, "template": {"spec": {"minReplicas": 1, "maxReplicas": 5}}},
            **spec,
        },
    }
    return hvpa_from_wire(msgspec.convert(body, HvpaWire))


def target(name: str = "web", kind: str = "Deployment", **labels: str) -> TargetRecord:
    labels = labels or {"app": name}
    return decode_target(
        {
            "apiVersion": "apps/v1",
            "kind": kind,
            "metadata": {
                "name": name,
                "namespace": "default",
                "uid": f"uid-{name}",
                "resourceVersion": "7",
            },
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {"spec": {"containers": [{"name": "app"}]}},
            },
        }
    )


def pod(name: str, **labels: str) -> PodRecord:
    return decode_pod(
        {
            "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"containers": [{"name": "app"}]},
            "status": {"phase": "Running"},
        }
    )


def node(name: str, ready: str = "True", unschedulable: bool = False, rv: str = "1") -> NodeRecord:
    return decode_node(
        {
            "metadata": {"name": name, "resourceVersion": rv},
            "spec": {"unschedulable": unschedulable},
            "status": {
                "conditions": [{"type": "Ready", "status": ready}],
                "allocatable": {"cpu": "2"},
            },
        }
    )


def vpa(
    name: str = "web-vpa",
    *,
    target: str = "web",
    owner: tuple[str, str] | None = ("web", "uid-web"),
    mode: str = "Off",
    labels: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
) -> VpaObject:
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "uid": f"uid-{name}",
        "resourceVersion": "3",
        "labels": labels or {},
    }
    if owner is not None:
        metadata["ownerReferences"] = [
            {
                "apiVersion": "autoscaling.k8s.io/v1alpha1",
                "kind": "Hvpa",
                "name": owner[0],
                "uid": owner[1],
                "controller": True,
            }
        ]
    body = {
        "metadata": metadata,
        "spec": spec
        or {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "updatePolicy": {"updateMode": mode},
        },
    }
    return vpa_object_from_wire(msgspec.convert(body, VpaObjectWire))


def hpa(name: str = "web-hpa", target: str = "web") -> HpaRecord:
    return HpaRecord("default", name, "Deployment", target, "2025-01-01T00:00:00Z")
