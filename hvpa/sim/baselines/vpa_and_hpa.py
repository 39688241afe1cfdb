"""The `VPAAndHPA` baseline: a native HPA and a native VPA on the same workload, independently.

This is what Gardener runs for a shoot's kube-apiserver since it retired
hvpa-controller (its `VPAAndHPA` autoscaling mode): an HPA on average
*usage* (AverageValue) of CPU and memory, whose per-pod targets sit under
the VPA's maxAllowed, and a VPA in updateMode Auto that resizes the pods by
evicting them. The two do not fight because an AverageValue target does not
move when the VPA changes the requests; the VPA grows pods first, and once
the average pod uses more than the HPA's target the HPA adds pods.

In `hvpa sim` (`--strategy VPAAndHPA`, or `--compare ...,VPAAndHPA`) the
baseline is built from the scenario's Hvpa, so it is compared on the same
policy as the strategies:

- the **HPA** is hvpa's own controller with only its horizontal axis
  (`vpa.deploy: false`): the same upstream HPA computation, on the Hvpa's
  metrics and behavior as they are (so AverageValue only where the Hvpa
  says so, as Gardener's kube-apiserver Hvpa does), writing `/scale` over
  HTTP as an HPA would;
- the **VPA** is a VerticalPodAutoscaler object in the cluster, updateMode
  Auto (eviction), or InPlaceOrRecreate where the Hvpa's resize mode
  resizes in place (`InPlaceOrRollout`, `InPlace`: the pair's nearest
  counterpart), with the Hvpa's container policies; the model's recommender
  (recommender.py) writes its recommendation, and the model's updater and
  admission controller (vpa_updater.py) apply it to the pods.

The two see each other only through the cluster, as in a real one.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any, Final

__all__ = [
    "VPA_AND_HPA",
    "resize_mode_of",
    "update_mode",
    "vpa_and_hpa_objects",
    "with_update_mode",
]

VPA_AND_HPA: Final = "VPAAndHPA"
# An Hvpa resize mode's counterpart for the VPA's updater: in place where hvpa resizes in
# place (InPlaceOrRecreate falls back to eviction as InPlaceOrRollout falls back to a rollout).
_UPDATE_MODES: Final = {"InPlaceOrRollout": "InPlaceOrRecreate", "InPlace": "InPlaceOrRecreate"}


def update_mode(resize_mode: str | None) -> str:
    """The VPA's updateMode for an Hvpa's `spec.vpa.resizeMode` (Rollout, or unset: Auto)."""
    return _UPDATE_MODES.get(resize_mode or "", "Auto")


def resize_mode_of(objects: Iterable[Mapping[str, Any]]) -> str:
    """How the baseline's VPA resizes, named as a resize mode: Rollout for Auto (eviction),
    else its updateMode (InPlaceOrRecreate)."""
    for obj in objects:
        if obj.get("kind") == "VerticalPodAutoscaler":
            mode = str(((obj.get("spec") or {}).get("updatePolicy") or {}).get("updateMode"))
            return "Rollout" if mode == "Auto" else mode
    return "Rollout"


def with_update_mode(vpa: Mapping[str, Any], resize_mode: str | None) -> dict[str, Any]:
    """The VPA object with the updateMode for `resize_mode` (a copy)."""
    changed = copy.deepcopy(dict(vpa))
    if changed.get("kind") == "VerticalPodAutoscaler":
        changed["spec"]["updatePolicy"] = {"updateMode": update_mode(resize_mode)}
    return changed


def vpa_and_hpa_objects(hvpa: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the Hvpa that acts as the HPA, the VPA object) for an Hvpa's policy.

    The Hvpa keeps its horizontal spec and loses its vertical axis
    (`vpa.deploy: false`, strategy HpaPreferred, which then only moves the
    count); the VPA targets the same workload in updateMode Auto with the
    Hvpa's container policies (minAllowed, maxAllowed, controlledValues,
    mode), in place where the Hvpa's resize mode is (update_mode). An Hvpa
    without those three fields raises ValueError."""
    as_hpa = copy.deepcopy(dict(hvpa))
    spec = as_hpa["spec"]
    if not {"targetRef", "hpa", "vpa"} <= set(spec):
        raise ValueError(
            f"{VPA_AND_HPA} is built from an Hvpa's spec.targetRef, spec.hpa and spec.vpa; "
            "this one has not all three (the three-stage form is not supported)"
        )
    for field in ("capacity", "mixed", "weightBasedScalingIntervals"):
        spec.pop(field, None)
    spec["strategy"] = "HpaPreferred"
    vpa_spec = spec.setdefault("vpa", {})
    template = copy.deepcopy((vpa_spec.get("template") or {}).get("spec") or {})
    vpa_spec["deploy"] = False
    # The HPA leaves pod sizes alone: hvpa resizing in place would undo the VPA's resizes.
    resize_mode = vpa_spec.pop("resizeMode", None)
    metadata = as_hpa["metadata"]
    vpa: dict[str, Any] = {
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": {"name": f"{metadata['name']}-vpa", "namespace": metadata.get("namespace")},
        "spec": {
            "targetRef": dict(spec["targetRef"]),
            "updatePolicy": {"updateMode": update_mode(resize_mode)},
        },
    }
    if template.get("resourcePolicy"):
        vpa["spec"]["resourcePolicy"] = template["resourcePolicy"]
    return as_hpa, vpa
