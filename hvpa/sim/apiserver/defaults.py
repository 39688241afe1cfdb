"""Defaulting and canonical forms, applied to every object written, as the real server's
decoding does before any strategy runs.

Only what a controller can observe is defaulted: a Deployment written
without replicas reads back with 1, a template container gets its pull policy
and termination message fields, a Pod whose container has limits but no
requests reads back with requests equal to the limits, and quantities come
back canonical (`0.5` reads as `500m`, `1024Mi` as `1Gi`). A controller that
compares what it wrote with what it reads must cope with all of these.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from decimal import InvalidOperation
from functools import lru_cache
from typing import Any, Final

from hvpa.quantity import QuantityError, parse
from hvpa.sim.apiserver.crds import CRD_GROUP, default_crd
from hvpa.sim.apiserver.errors import BadRequest
from hvpa.sim.apiserver.resources import ResourceType

__all__ = ["apply_defaults", "has_defaults", "pod_qos_class", "prepare_create_status"]

_QUANTITY_MESSAGE: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def apply_defaults(rtype: ResourceType, obj: dict[str, Any]) -> None:
    """Default and canonicalize `obj` in place; 400 for a value that does not decode."""
    defaulter = _DEFAULTERS.get((rtype.group, rtype.plural))
    if defaulter is not None:
        defaulter(obj)


def has_defaults(rtype: ResourceType) -> bool:
    """Whether apply_defaults can change an object of this kind (False: it leaves it as is)."""
    return (rtype.group, rtype.plural) in _DEFAULTERS


def prepare_create_status(rtype: ResourceType, obj: dict[str, Any]) -> None:
    """What each strategy's PrepareForCreate does to status: users do not set status."""
    key = (rtype.group, rtype.plural)
    if key == ("", "pods"):
        obj["status"] = {"phase": "Pending", "qosClass": pod_qos_class(obj.get("spec") or {})}
    elif key == ("", "namespaces"):
        obj["status"] = {"phase": "Active"}
    elif key == ("", "nodes"):
        return  # the kubelet registers nodes with their status
    elif rtype.custom:
        if rtype.status:
            obj.pop("status", None)
    elif rtype.status:
        obj["status"] = {}


def pod_qos_class(spec: dict[str, Any]) -> str:
    """Guaranteed, Burstable or BestEffort, from the (already defaulted) containers."""
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    any_set = False
    guaranteed = True
    for container in containers:
        resources = container.get("resources") or {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        if requests or limits:
            any_set = True
        for name in ("cpu", "memory"):
            if name not in limits or requests.get(name, limits[name]) != limits[name]:
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _quantity(value: Any, path: str) -> str:
    try:
        return _canonical(value)
    except (QuantityError, InvalidOperation, TypeError) as error:
        raise BadRequest(f"{path}: {_QUANTITY_MESSAGE}") from error


# typed: 1.0 and True are equal keys, and a cached "1" must not let `true` through.
@lru_cache(maxsize=8192, typed=True)
def _canonical(value: str | int | float) -> str:
    return str(parse(value))


def _canonical_map(values: Any, path: str) -> Any:
    if not isinstance(values, dict):
        return values
    return {name: _quantity(value, f"{path}.{name}") for name, value in values.items()}


def _default_container(container: dict[str, Any], *, requests_from_limits: bool) -> None:
    container.setdefault("terminationMessagePath", "/dev/termination-log")
    container.setdefault("terminationMessagePolicy", "File")
    if "imagePullPolicy" not in container:
        image = str(container.get("image", ""))
        tag = image.rsplit("/", 1)[-1]
        latest = "@" not in tag and (":" not in tag or tag.endswith(":latest"))
        container["imagePullPolicy"] = "Always" if latest else "IfNotPresent"
    resources = container.setdefault("resources", {})
    if isinstance(resources, dict):
        for part in ("requests", "limits"):
            if part in resources:
                resources[part] = _canonical_map(resources[part], f"resources.{part}")
        if requests_from_limits and isinstance(resources.get("limits"), dict):
            requests = resources.setdefault("requests", {})
            for name, value in resources["limits"].items():
                requests.setdefault(name, value)
    for port in container.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")


def _default_pod_spec(spec: Any, *, pod: bool) -> None:
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    if pod:
        spec.setdefault("enableServiceLinks", True)
    for field in ("initContainers", "containers"):
        for container in spec.get(field) or []:
            if isinstance(container, dict):
                _default_container(container, requests_from_limits=pod)
    if "overhead" in spec:
        spec["overhead"] = _canonical_map(spec["overhead"], "spec.overhead")


def _default_template(obj: dict[str, Any]) -> dict[str, Any]:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        raise BadRequest("spec must be an object")
    template = spec.get("template")
    if isinstance(template, dict):
        _default_pod_spec(template.get("spec"), pod=False)
    return spec


def _default_pod(obj: dict[str, Any]) -> None:
    _default_pod_spec(obj.setdefault("spec", {}), pod=True)


def _default_deployment(obj: dict[str, Any]) -> None:
    spec = _default_template(obj)
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)


def _default_statefulset(obj: dict[str, Any]) -> None:
    spec = _default_template(obj)
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    update = spec.setdefault("updateStrategy", {})
    if isinstance(update, dict):
        update.setdefault("type", "RollingUpdate")
        if update["type"] == "RollingUpdate":
            rolling = update.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault(
        "persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"}
    )


def _default_replicaset(obj: dict[str, Any]) -> None:
    _default_template(obj).setdefault("replicas", 1)


def _default_namespace(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("finalizers", ["kubernetes"])


def _default_node(obj: dict[str, Any]) -> None:
    status = obj.get("status")
    if isinstance(status, dict):
        for part in ("capacity", "allocatable"):
            if part in status:
                status[part] = _canonical_map(status[part], f"status.{part}")


_SCALE_UP: Final[dict[str, Any]] = {
    "stabilizationWindowSeconds": 0,
    "selectPolicy": "Max",
    "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ],
}
_SCALE_DOWN: Final[dict[str, Any]] = {
    "stabilizationWindowSeconds": 300,
    "selectPolicy": "Max",
    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
}


def _default_hpa(obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    spec.setdefault("minReplicas", 1)
    if not spec.get("metrics"):
        spec["metrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 80},
                },
            }
        ]
    behavior = spec.get("behavior")
    if isinstance(behavior, dict):
        for name, rules in (("scaleUp", _SCALE_UP), ("scaleDown", _SCALE_DOWN)):
            given = behavior.setdefault(name, {})
            if isinstance(given, dict):
                for field, value in rules.items():
                    if given.get(field) is None:
                        given[field] = copy.deepcopy(value)


_DEFAULTERS: Final[dict[tuple[str, str], Callable[[dict[str, Any]], None]]] = {
    (CRD_GROUP, "customresourcedefinitions"): default_crd,
    ("", "pods"): _default_pod,
    ("", "nodes"): _default_node,
    ("", "namespaces"): _default_namespace,
    ("apps", "deployments"): _default_deployment,
    ("apps", "statefulsets"): _default_statefulset,
    ("apps", "replicasets"): _default_replicaset,
    ("autoscaling", "horizontalpodautoscalers"): _default_hpa,
}
