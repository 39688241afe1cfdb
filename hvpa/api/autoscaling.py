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
    """Kind of the referent, e.g. Deployment."""
    name: str = ""
    """Name of the referent, in the Hvpa's namespace."""
    api_version: str | None = None
    """API version of the referent, e.g. apps/v1."""


class MetricTarget(_Model):
    type: str = ""
    """Utilization, Value or AverageValue."""
    value: Quantity | None = None
    """The target value of the metric as a whole (a quantity)."""
    average_value: Quantity | None = None
    """The target value averaged over the pods (a quantity)."""
    average_utilization: Int32 | None = None
    """The target average, in percent of the pods' requests of the resource (Resource and
    ContainerResource metrics only).
    """


class MetricIdentifier(_Model):
    name: str = ""
    """The name of the metric, as the metrics API serves it."""
    # A metav1.LabelSelector as JSON; `hvpa.labels.LabelSelector.from_dict` reads it.
    selector: dict[str, Any] | None = None
    """Narrows the metric's series by label; absent: the metrics API's default."""


class ResourceMetricSource(_Model):
    name: str = ""
    """The resource: cpu or memory."""
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)
    """The target value of the resource."""


class ContainerResourceMetricSource(_Model):
    name: str = ""
    """The resource: cpu or memory."""
    container: str = ""
    """The container whose usage counts."""
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)
    """The target value of the resource."""


class PodsMetricSource(_Model):
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    """The metric, per pod."""
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)
    """The target average value per pod."""


class ObjectMetricSource(_Model):
    described_object: CrossVersionObjectReference = msgspec.field(
        default_factory=CrossVersionObjectReference
    )
    """The object the metric describes (e.g. an Ingress)."""
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    """The metric of that object."""
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)
    """The target value, or average value per pod."""


class ExternalMetricSource(_Model):
    metric: MetricIdentifier = msgspec.field(default_factory=MetricIdentifier)
    """The metric, from outside the cluster."""
    target: MetricTarget = msgspec.field(default_factory=MetricTarget)
    """The target value, or average value per pod."""


class MetricSpec(_Model):
    type: str = ""
    """Resource, ContainerResource, Pods, Object or External: which of the fields below is set."""
    resource: ResourceMetricSource | None = None
    """A resource (cpu, memory) of the target's pods, as the resource metrics API reports it."""
    container_resource: ContainerResourceMetricSource | None = None
    """A resource of one container of each pod."""
    pods: PodsMetricSource | None = None
    """A custom metric of each pod, averaged."""
    object: ObjectMetricSource | None = None
    """A custom metric of another object in the namespace."""
    external: ExternalMetricSource | None = None
    """A metric from outside the cluster (external metrics API)."""


class HPAScalingPolicy(_Model):
    type: str = ""
    """Pods (a number of replicas) or Percent (of the current replicas)."""
    value: Int32 = 0
    """How much the replica count may change within periodSeconds."""
    period_seconds: Int32 = 0
    """The window the change is measured over, 1 to 1800 seconds."""


class HPAScalingRules(_Model):
    stabilization_window_seconds: Int32 | None = None
    """Past recommendations within this many seconds (0 to 3600) are considered, so the count
    does not flap; default 0 up, 300 down.
    """
    select_policy: str | None = None
    """Max, Min or Disabled: which policy wins, or no change in this direction at all."""
    policies: Annotated[list[HPAScalingPolicy], msgspec.Meta(max_length=MAX_POLICIES)] | None = None
    """How fast the count may change; absent: upstream's defaults."""
    tolerance: Quantity | None = None
    """The ratio of usage to target within which nothing changes, e.g. "0.05"; default the
    controller's --tolerance (0.1).
    """


class HorizontalPodAutoscalerBehavior(_Model):
    scale_up: HPAScalingRules | None = None
    """Rules for growing the replica count."""
    scale_down: HPAScalingRules | None = None
    """Rules for shrinking the replica count."""
