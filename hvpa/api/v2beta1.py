"""Gardener's autoscaling/v2beta1 metric shapes, converted to autoscaling/v2 when an Hvpa is read.

Gardener's Hvpa embeds v2beta1 MetricSpecs (`resource: {name,
targetAverageUtilization}`, `pods: {metricName, targetAverageValue}`...), and
its charts are written that way; hvpa's model holds only the v2 form. Each
metric source is read in whichever shape it is written in (a source that
mixes the two is a problem), converted as upstream's conversion does, and
every converted field remembers its v2beta1 path so problems name what the
user wrote.
"""

from __future__ import annotations

import difflib
from typing import Any, Final

from hvpa.api.autoscaling import CrossVersionObjectReference, Quantity
from hvpa.api.base import Int32, Model, plain
from hvpa.api.structure import Walk

__all__ = [
    "ContainerResourceMetricSourceV2beta1",
    "ExternalMetricSourceV2beta1",
    "MetricSpecV2beta1",
    "ObjectMetricSourceV2beta1",
    "PodsMetricSourceV2beta1",
    "ResourceMetricSourceV2beta1",
    "normalise_metric",
]


class ResourceMetricSourceV2beta1(Model, frozen=True, kw_only=True):
    name: str = ""
    """The resource: cpu or memory."""
    target_average_utilization: Int32 | None = None
    """autoscaling/v2beta1: target average utilization, percent of requests."""
    target_average_value: Quantity | None = None
    """autoscaling/v2beta1: target average value per pod."""


class ContainerResourceMetricSourceV2beta1(Model, frozen=True, kw_only=True):
    name: str = ""
    """The resource: cpu or memory."""
    container: str = ""
    """The container whose usage counts."""
    target_average_utilization: Int32 | None = None
    """autoscaling/v2beta1: target average utilization, percent of requests."""
    target_average_value: Quantity | None = None
    """autoscaling/v2beta1: target average value per pod."""


class PodsMetricSourceV2beta1(Model, frozen=True, kw_only=True):
    metric_name: str = ""
    """autoscaling/v2beta1: the metric's name."""
    target_average_value: Quantity | None = None
    """autoscaling/v2beta1: target average value per pod."""
    selector: dict[str, Any] | None = None
    """autoscaling/v2beta1: narrows the metric's series by label."""


class ObjectMetricSourceV2beta1(Model, frozen=True, kw_only=True):
    target: CrossVersionObjectReference | None = None
    """autoscaling/v2beta1: the object the metric describes."""
    metric_name: str = ""
    """autoscaling/v2beta1: the metric's name."""
    target_value: Quantity | None = None
    """autoscaling/v2beta1: the target value."""
    selector: dict[str, Any] | None = None
    """autoscaling/v2beta1: narrows the metric's series by label."""
    average_value: Quantity | None = None
    """autoscaling/v2beta1: the target average value per pod."""


class ExternalMetricSourceV2beta1(Model, frozen=True, kw_only=True):
    metric_name: str = ""
    """autoscaling/v2beta1: the metric's name."""
    metric_selector: dict[str, Any] | None = None
    """autoscaling/v2beta1: narrows the metric's series by label."""
    target_value: Quantity | None = None
    """autoscaling/v2beta1: the target value."""
    target_average_value: Quantity | None = None
    """autoscaling/v2beta1: the target average value per pod."""


class MetricSpecV2beta1(Model, frozen=True, kw_only=True):
    """Only for the CRD schema, which must admit both shapes of every metric."""

    type: str = ""
    resource: ResourceMetricSourceV2beta1 | None = None
    container_resource: ContainerResourceMetricSourceV2beta1 | None = None
    pods: PodsMetricSourceV2beta1 | None = None
    object: ObjectMetricSourceV2beta1 | None = None
    external: ExternalMetricSourceV2beta1 | None = None


_SOURCES: Final[dict[str, type[Model]]] = {
    "resource": ResourceMetricSourceV2beta1,
    "containerResource": ContainerResourceMetricSourceV2beta1,
    "pods": PodsMetricSourceV2beta1,
    "object": ObjectMetricSourceV2beta1,
    "external": ExternalMetricSourceV2beta1,
}
# Keys only a v2beta1 source has, and keys only a v2 source has; `target` is either (see _is_v2beta1).
_V2BETA1_KEYS: Final = {
    "resource": {"targetAverageUtilization", "targetAverageValue"},
    "containerResource": {"targetAverageUtilization", "targetAverageValue"},
    "pods": {"metricName", "targetAverageValue", "selector"},
    "object": {"metricName", "targetValue", "averageValue", "selector"},
    "external": {"metricName", "metricSelector", "targetValue", "targetAverageValue"},
}
_V2_KEYS: Final = {
    "resource": set[str](),
    "containerResource": set[str](),
    "pods": {"metric"},
    "object": {"describedObject", "metric"},
    "external": {"metric"},
}
# v2 field (under the source) -> the v2beta1 field it came from.
_ALIASES: Final = {
    "resource": {
        "target": "",
        "target.averageUtilization": "targetAverageUtilization",
        "target.averageValue": "targetAverageValue",
    },
    "containerResource": {
        "target": "",
        "target.averageUtilization": "targetAverageUtilization",
        "target.averageValue": "targetAverageValue",
    },
    "pods": {
        "metric": "",
        "metric.name": "metricName",
        "metric.selector": "selector",
        "target": "",
        "target.averageValue": "targetAverageValue",
    },
    "object": {
        "describedObject": "target",
        "metric": "",
        "metric.name": "metricName",
        "metric.selector": "selector",
        "target": "",
        "target.value": "targetValue",
        "target.averageValue": "averageValue",
    },
    "external": {
        "metric": "",
        "metric.name": "metricName",
        "metric.selector": "metricSelector",
        "target": "",
        "target.value": "targetValue",
        "target.averageValue": "targetAverageValue",
    },
}


def _is_v2beta1(source: str, raw: dict[str, Any]) -> bool | None:
    """True for v2beta1, False for v2, None when it mixes both."""
    old = set(raw) & _V2BETA1_KEYS[source]
    new = set(raw) & _V2_KEYS[source]
    # A misspelt v2beta1 key still says which shape its author meant.
    unknown = set(raw) - old - new - {"target", "name", "container"}
    old |= {
        key for key in unknown if difflib.get_close_matches(key, _V2BETA1_KEYS[source], cutoff=0.75)
    }
    if "target" in raw:
        target = raw["target"]
        old_target = isinstance(target, dict) and bool(set(target) & {"kind", "name", "apiVersion"})
        (old if source == "object" and old_target else new).add("target")
    if old and new:
        return None
    return bool(old)


def normalise_metric(raw: dict[str, Any], path: str, walk: Walk) -> dict[str, Any]:
    """A MetricSpec's raw form with every v2beta1 source rewritten as v2."""
    out = dict(raw)
    for source, struct in _SOURCES.items():
        given = raw.get(source)
        if not isinstance(given, dict):
            continue
        where = f"{path}.{source}"
        shape = _is_v2beta1(source, given)
        if shape is None:
            walk.findings.structural(
                where,
                "mixes autoscaling/v2 fields (metric, target, describedObject) with autoscaling/v2beta1 "
                "fields (metricName, targetAverageValue, ...); write one or the other",
            )
            del out[source]
            continue
        if not shape:
            continue
        old = plain(walk.read(given, struct, where))
        out[source] = _CONVERT[source](old)
        for new_field, old_field in _ALIASES[source].items():
            walk.findings.alias(
                f"{where}.{new_field}", f"{where}.{old_field}" if old_field else where
            )
    return out


def _target(kind: str, **values: Any) -> dict[str, Any]:
    return {"type": kind, **{key: value for key, value in values.items() if value is not None}}


def _resource(old: dict[str, Any]) -> dict[str, Any]:
    utilization, value = old.get("targetAverageUtilization"), old.get("targetAverageValue")
    out: dict[str, Any] = {key: old[key] for key in ("name", "container") if key in old}
    kind = "AverageValue" if utilization is None and value is not None else "Utilization"
    out["target"] = _target(kind, averageUtilization=utilization, averageValue=value)
    return out


def _metric(name: Any, selector: Any) -> dict[str, Any]:
    return {"name": name or "", **({"selector": selector} if selector is not None else {})}


def _pods(old: dict[str, Any]) -> dict[str, Any]:
    return {
        "metric": _metric(old.get("metricName"), old.get("selector")),
        "target": _target("AverageValue", averageValue=old.get("targetAverageValue")),
    }


def _object(old: dict[str, Any]) -> dict[str, Any]:
    average = old.get("averageValue")
    out = {
        "metric": _metric(old.get("metricName"), old.get("selector")),
        "target": _target(
            "AverageValue" if average is not None else "Value",
            value=old.get("targetValue"),
            averageValue=average,
        ),
    }
    if "target" in old:
        out["describedObject"] = old["target"]
    return out


def _external(old: dict[str, Any]) -> dict[str, Any]:
    value = old.get("targetValue")
    return {
        "metric": _metric(old.get("metricName"), old.get("metricSelector")),
        "target": _target(
            "Value" if value is not None else "AverageValue",
            value=value,
            averageValue=old.get("targetAverageValue"),
        ),
    }


_CONVERT: Final = {
    "resource": _resource,
    "containerResource": _resource,
    "pods": _pods,
    "object": _object,
    "external": _external,
}
