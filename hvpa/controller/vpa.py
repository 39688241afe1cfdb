"""The child VPA an Hvpa with `vpa.deploy: true` owns: its desired shape, and whether one matches.

The VPA exists only to produce a recommendation, so its updateMode is always
`Off` (its updater must never evict pods that hvpa sizes). It is named
`<hvpa>-vpa` - a fixed name, so a create retried after a lost response finds
the first one (AlreadyExists) instead of making a second - labelled with
`vpa.template.metadata.labels` (which `vpa.selector` must select; validation
checks that), and controlled by the Hvpa through an ownerReference, so the
garbage collector deletes it with the Hvpa. It is found again by that
ownership and the selector (`Cache.owned_vpa`).

Only the fields hvpa sets are compared and written back: targetRef,
updatePolicy, resourcePolicy, labels and the owner reference; defaults a VPA
admission controller adds (recommenders...) are left alone.
"""

from __future__ import annotations

from typing import Any

from hvpa.api import API_VERSION as HVPA_API_VERSION
from hvpa.api import KIND as HVPA_KIND
from hvpa.api.base import plain
from hvpa.api.resource import Hvpa
from hvpa.controller.resources import OWNED_VPAS, VpaObject

__all__ = ["VPA_API_VERSION", "owner_reference", "vpa_body", "vpa_changes", "vpa_name"]

VPA_API_VERSION = OWNED_VPAS.api_version


def vpa_name(hvpa: Hvpa) -> str:
    return f"{hvpa.name}-vpa"


def _spec(hvpa: Hvpa, target_api_version: str) -> dict[str, Any]:
    ref = hvpa.spec.target_ref
    spec: dict[str, Any] = {
        "targetRef": {
            "apiVersion": ref.api_version or target_api_version,
            "kind": ref.kind,
            "name": ref.name,
        },
        "updatePolicy": {"updateMode": "Off"},
    }
    template = hvpa.spec.vpa.template.spec
    if template is not None and template.resource_policy is not None:
        spec["resourcePolicy"] = plain(template.resource_policy)
    return spec


def _labels(hvpa: Hvpa) -> dict[str, str]:
    metadata = hvpa.spec.vpa.template.metadata or {}
    labels = metadata.get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()}


def owner_reference(hvpa: Hvpa, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": HVPA_API_VERSION,
        "kind": HVPA_KIND,
        "name": hvpa.name,
        "uid": uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def vpa_body(hvpa: Hvpa, uid: str, target_api_version: str) -> dict[str, Any]:
    """The VPA to create for an Hvpa (uid: the Hvpa's)."""
    metadata: dict[str, Any] = {
        "name": vpa_name(hvpa),
        "namespace": hvpa.namespace,
        "ownerReferences": [owner_reference(hvpa, uid)],
    }
    labels = _labels(hvpa)
    if labels:
        metadata["labels"] = labels
    return {
        "apiVersion": VPA_API_VERSION,
        "kind": OWNED_VPAS.kind,
        "metadata": metadata,
        "spec": _spec(hvpa, target_api_version),
    }


def vpa_changes(hvpa: Hvpa, existing: VpaObject, target_api_version: str) -> dict[str, Any] | None:
    """A JSON merge patch that brings `existing` to the template, or None when it matches.

    The patch carries the VPA's resourceVersion as a precondition: a VPA
    changed since the cache saw it answers 409 and is reconciled again.
    """
    spec = _spec(hvpa, target_api_version)
    spec_patch: dict[str, Any] = {
        key: value for key, value in spec.items() if existing.spec.get(key) != value
    }
    if "resourcePolicy" not in spec and existing.spec.get("resourcePolicy") is not None:
        spec_patch["resourcePolicy"] = None
    labels = _labels(hvpa)
    label_patch = {k: v for k, v in labels.items() if existing.labels.get(k) != v}
    if not spec_patch and not label_patch:
        return None
    metadata: dict[str, Any] = {"resourceVersion": existing.resource_version}
    if label_patch:
        metadata["labels"] = label_patch
    patch: dict[str, Any] = {"metadata": metadata}
    if spec_patch:
        patch["spec"] = spec_patch
    return patch
