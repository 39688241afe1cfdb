"""The autoscaling/v2 shapes an Hvpa embeds in `spec.hpa.template.spec`: metrics and behavior.

These mirror upstream `k8s.io/api/autoscaling/v2` field for field, so an
HPA's `spec.metrics` and `spec.behavior` can be pasted into an Hvpa as they
are. Gardener's manifests use the older autoscaling/v2beta1 metric shape
(`targetAverageUtilization`, `metricName`...); `hvpa.api` converts those
to these types when it parses an Hvpa.

Quantities are kept as the strings they were written as (parse then
serialise is stable); `hvpa.quantity` turns them into exact numbers where
they are used.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

import msgspec

from hvpa.api.base import Int32

__all__ = [
    "ContainerResourceMetricSource",
    "CrossVersionObjectReference",
    "ExternalMetricSource",
    "HPAScalingPolicy",
    "HPAScalingRules",
    "HorizontalPodAutoscalerBehavior",
    "MetricIdentifier",
    "MetricSpec",
    "MetricTarget",
    "ObjectMetricSource",
    "PodsMetricSource",
    "ResourceMetricSource",
]

METRIC_TYPES: Final = ("Resource", "ContainerResource", "Pods", "Object", "External")
TARGET_TYPES: Final = ("Utilization", "Value", "AverageValue")
POLICY_TYPES: Final = ("Pods", "Percent")
SELECT_POLICIES: Final = ("Max", "Min", "Disabled")
# Upstream sets no bound; a handful is usual, and CEL cost estimates need one.
MAX_POLICIES: Final = 16

Quantity = str | int | float
"""A quantity as written in a manifest: `"100m"`, `"1Gi"`, or a bare number."""


class _Model(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=True):
    """Base of the API structs: camelCase on the wire, unset fields omitted, typos rejected."""


class CrossVersionObjectReference(_Model):
    kind: str = ""
    name: str = ""
    api_version: str | None = None


class MetricTarget(_Model):
    type: str = ""
    value: Quantity | None = None
    average_value: Quantity | None = None
    average_utilization: Int32 | None = None


class MetricIdentifier(_Model):
    name: str = ""
    # A metav1.LabelSelector as JSON; `hvpa.labels.LabelSelector.from_dict` reads it.
    selector: dict[str, Any] | None = None


class ResourceMetricSource(_Model):
    name: str = ""
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)


class ContainerResourceMetricSource(_Model):
    name: str = ""
    container: str = ""
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)


class PodsMetricSource(_Model):
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)


class ObjectMetricSource(_Model):
    described_object: CrossVersionObjectReference = msgspec.field(
        default_factory=CrossVersionObjectReference
    )
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)


class ExternalMetricSource(_Model):
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)


class MetricSpec(_Model):
    type: str = ""
    resource: ResourceMetricSource | None = None
    container_resource: ContainerResourceMetricSource | None = None
    pods: PodsMetricSource | None = None
    object: ObjectMetricSource | None = None
    external: ExternalMetricSource | None = None


class HPAScalingPolicy(_Model):
    type: str = ""
    value: Int32 = 0
    period_seconds: Int32 = 0


class HPAScalingRules(_Model):
    stabilization_window_seconds: Int32 | None = None
    select_policy: str | None = None
    policies: Annotated[list[HPAScalingPolicy], msgspec.Meta(max_length=MAX_POLICIES)] | None = None
    # Per-direction tolerance (upstream HPAConfigurableTolerance), a quantity such as "0.05".
    tolerance: Quantity | None = None


class HorizontalPodAutoscalerBehavior(_Model):
    scale_up: HPAScalingRules | None = None
    scale_down: HPAScalingRules | None = None
