"""One function per metric type: upstream's computeStatusFor*Metric, with its reasons and messages.

Each reads its metric through the metrics client functions, runs the replica
calculator and returns a `MetricProposal`; a metric that cannot be computed
raises `MetricFailure` carrying the condition upstream would set
(ScalingActive=False with FailedGetResourceMetric, FailedGetPodsMetric...)
and the error it would log. Metric names in messages are upstream's
("cpu resource utilization (percentage of request)", "pods metric qps"...),
bugs included, so conditions read as an HPA's would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hvpa.api.autoscaling import MetricSpec, MetricTarget
from hvpa.engine.horizontal.replica_calculator import ReplicaCalculator, Tolerances
from hvpa.engine.metrics import (
    MetricError,
    MetricReading,
    MetricReadings,
    ObjectMetricQuery,
    get_external_metric,
    get_object_metric,
    get_raw_metric,
    get_resource_metric,
    query_for,
)
from hvpa.labels import LabelSelector, SelectorError
from hvpa.quantity import parse_milli

__all__ = [
    "MetricContext",
    "MetricFailure",
    "MetricProposal",
    "compute_replicas_for_metric",
    "describe_metric",
    "go_label_selector",
]


@dataclass(frozen=True, slots=True)
class MetricProposal:
    replicas: int
    metric_name: str
    utilization: int | None = None  # percent, Utilization targets
    average_value: int | None = None  # milli-units
    value: int | None = None  # milli-units


class MetricFailure(Exception):
    """A metric that could not be computed: the condition reason, its message's error, the logged error."""

    def __init__(self, reason: str, error: str, wrapped: str) -> None:
        super().__init__(wrapped)
        self.reason = reason
        self.error = error
        self.wrapped = wrapped


@dataclass(frozen=True, slots=True)
class MetricContext:
    """What every metric computation reads: the calculator, the scale, the readings."""

    calculator: ReplicaCalculator
    namespace: str
    pod_selector: LabelSelector
    spec_replicas: int
    status_replicas: int
    tolerances: Tolerances
    readings: MetricReadings


def go_label_selector(selector: Mapping[str, Any] | None) -> str:
    """A *metav1.LabelSelector as Go's %+v prints it (its generated String method)."""
    if selector is None:
        return "nil"
    labels = selector.get("matchLabels") or {}
    label_text = "".join(f"{key}: {labels[key]}," for key in sorted(labels))
    expressions = "".join(
        "LabelSelectorRequirement{"
        f"Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(str(v) for v in e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or []
    )
    return (
        "&LabelSelector{"
        f"MatchLabels:map[string]string{{{label_text}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},"
        "}"
    )


def _reading(metric: MetricSpec, context: MetricContext) -> MetricReading | None:
    query = query_for(metric, context.namespace, context.pod_selector)
    return None if query is None else context.readings.get(query)


def _milli(quantity: str | int | float | None) -> int | None:
    """A target's quantity in milli-units; the same few per spec, read at every decision,
    so through the cached reading (hvpa.quantity.parse_milli), not Decimal each time."""
    return None if quantity is None else parse_milli(quantity)


def _describe_target(target: MetricTarget) -> str:
    if target.average_utilization is not None:
        return f"{target.average_utilization}% average utilization"
    if target.average_value is not None:
        return f"average value {target.average_value}"
    if target.value is not None:
        return f"value {target.value}"
    return "no target"


def describe_metric(metric: MetricSpec) -> str:
    """A one-line description of a metric spec, for the explanation."""
    if metric.resource is not None and metric.type == "Resource":
        return f"Resource {metric.resource.name}, {_describe_target(metric.resource.target)}"
    if metric.container_resource is not None and metric.type == "ContainerResource":
        source = metric.container_resource
        return (
            f"ContainerResource {source.name} of container {source.container}, "
            f"{_describe_target(source.target)}"
        )
    if metric.pods is not None and metric.type == "Pods":
        return f"Pods {metric.pods.metric.name}, {_describe_target(metric.pods.target)}"
    if metric.object is not None and metric.type == "Object":
        described = metric.object.described_object
        return (
            f"Object {metric.object.metric.name} of {described.kind} {described.name}, "
            f"{_describe_target(metric.object.target)}"
        )
    if metric.external is not None and metric.type == "External":
        return f"External {metric.external.metric.name}, {_describe_target(metric.external.target)}"
    return f"{metric.type or 'untyped'} metric"


def compute_replicas_for_metric(metric: MetricSpec, context: MetricContext) -> MetricProposal:
    """computeReplicasForMetric: dispatch on the metric type."""
    if metric.type == "Resource" and metric.resource is not None:
        return compute_status_for_resource_metric(metric, context)
    if metric.type == "ContainerResource" and metric.container_resource is not None:
        return compute_status_for_container_resource_metric(metric, context)
    if metric.type == "Pods" and metric.pods is not None:
        return compute_status_for_pods_metric(metric, context)
    if metric.type == "Object" and metric.object is not None:
        return compute_status_for_object_metric(metric, context)
    if metric.type == "External" and metric.external is not None:
        return compute_status_for_external_metric(metric, context)
    message = f"unknown metric source type {metric.type!r}".replace("'", '"')
    raise MetricFailure("InvalidMetricSourceType", message, message)


def _resource_generic(
    context: MetricContext,
    target: MetricTarget,
    resource: str,
    container: str,
    metric: MetricSpec,
    container_metric: bool,
) -> MetricProposal:
    """computeStatusForResourceMetricGeneric: AverageValue (raw) or Utilization."""
    calculator = context.calculator
    reading = _reading(metric, context)
    average_value = _milli(target.average_value)
    if average_value is not None:
        try:
            try:
                pod_metrics = get_resource_metric(reading, resource, container)
            except MetricError as error:
                raise MetricError(
                    f"unable to get metrics for resource {resource}: {error}"
                ) from error
            replicas, usage = calculator.get_raw_resource_replicas(
                context.spec_replicas, average_value, resource, context.tolerances, pod_metrics
            )
        except MetricError as error:
            raise MetricError(f"failed to get {resource} usage: {error}") from error
        return MetricProposal(replicas, f"{resource} resource", average_value=usage)
    if target.average_utilization is None:
        raise MetricError(
            "invalid resource metric source: neither an average utilization target nor an "
            "average value (usage) target was set"
        )
    try:
        try:
            pod_metrics = get_resource_metric(reading, resource, container)
        except MetricError as error:
            raise MetricError(f"unable to get metrics for resource {resource}: {error}") from error
        replicas, utilization, raw = calculator.get_resource_replicas(
            context.spec_replicas,
            target.average_utilization,
            resource,
            context.tolerances,
            container,
            pod_metrics,
        )
    except MetricError as error:
        raise MetricError(f"failed to get {resource} utilization: {error}") from error
    kind = "container resource" if container_metric else "resource"
    return MetricProposal(
        replicas,
        f"{resource} {kind} utilization (percentage of request)",
        utilization=utilization,
        average_value=raw,
    )


def compute_status_for_resource_metric(
    metric: MetricSpec, context: MetricContext
) -> MetricProposal:
    assert metric.resource is not None
    source = metric.resource
    try:
        return _resource_generic(context, source.target, source.name, "", metric, False)
    except MetricError as error:
        raise MetricFailure(
            "FailedGetResourceMetric",
            error.message,
            f"failed to get {source.name} resource metric value: {error.message}",
        ) from error


def compute_status_for_container_resource_metric(
    metric: MetricSpec, context: MetricContext
) -> MetricProposal:
    assert metric.container_resource is not None
    source = metric.container_resource
    try:
        return _resource_generic(
            context, source.target, source.name, source.container, metric, True
        )
    except MetricError as error:
        raise MetricFailure(
            "FailedGetContainerResourceMetric",
            error.message,
            f"failed to get {source.container} container metric value: {error.message}",
        ) from error


def _selector_of(raw: Mapping[str, Any] | None, reason: str, wrap: str) -> None:
    """LabelSelectorAsSelector on a metric's selector: a bad one fails the metric."""
    if raw is None:
        return
    try:
        LabelSelector.from_dict(raw)
    except SelectorError as error:
        raise MetricFailure(reason, str(error), f"{wrap}: {error}") from error


def compute_status_for_pods_metric(metric: MetricSpec, context: MetricContext) -> MetricProposal:
    assert metric.pods is not None
    source = metric.pods
    reason = "FailedGetPodsMetric"
    _selector_of(source.metric.selector, reason, "failed to get pods metric value")
    target = _milli(source.target.average_value)
    try:
        if target is None:
            raise MetricError("invalid pods metric source: an average value target must be set")
        try:
            pod_metrics = get_raw_metric(_reading(metric, context))
        except MetricError as error:
            raise MetricError(f"unable to get metric {source.metric.name}: {error}") from error
        replicas, usage = context.calculator.get_metric_replicas(
            context.spec_replicas, target, context.tolerances, pod_metrics
        )
    except MetricError as error:
        raise MetricFailure(
            reason, error.message, f"failed to get pods metric value: {error.message}"
        ) from error
    return MetricProposal(replicas, f"pods metric {source.metric.name}", average_value=usage)


def compute_status_for_object_metric(metric: MetricSpec, context: MetricContext) -> MetricProposal:
    assert metric.object is not None
    source = metric.object
    reason = "FailedGetObjectMetric"
    outer = "failed to get object metric value"
    _selector_of(source.metric.selector, reason, outer)
    query = query_for(metric, context.namespace, context.pod_selector)
    assert isinstance(query, ObjectMetricQuery)
    described = source.described_object

    def read() -> int:
        try:
            return get_object_metric(context.readings.get(query), query)
        except MetricError as error:
            # Upstream's format string puts its arguments in this order.
            raise MetricError(
                f"unable to get metric {source.metric.name}: {described.kind} on "
                f"{context.namespace} {described.name}/{error}"
            ) from error

    calculator = context.calculator
    value = _milli(source.target.value)
    average_value = _milli(source.target.average_value)
    if source.target.type == "Value" and value is not None:
        try:
            usage = read()
            replicas = calculator.get_object_metric_replicas(
                context.spec_replicas, value, usage, context.tolerances
            )
        except MetricError as error:
            raise MetricFailure(reason, error.message, f"{outer}: {error.message}") from error
        return MetricProposal(
            replicas, f"{described.kind} metric {source.metric.name}", value=usage
        )
    if source.target.type == "AverageValue" and average_value is not None:
        try:
            replicas, usage = calculator.get_object_per_pod_metric_replicas(
                context.status_replicas, average_value, read(), context.tolerances
            )
        except MetricError as error:
            raise MetricFailure(
                reason,
                error.message,
                f"{outer}: failed to get {source.metric.name} object metric: {error.message}",
            ) from error
        selector = go_label_selector(source.metric.selector)
        return MetricProposal(
            replicas, f"external metric {source.metric.name}({selector})", average_value=usage
        )
    message = (
        "invalid object metric source: neither a value target nor an average value target was set"
    )
    raise MetricFailure(reason, message, f"{outer}: {message}")


def compute_status_for_external_metric(
    metric: MetricSpec, context: MetricContext
) -> MetricProposal:
    assert metric.external is not None
    source = metric.external
    reason = "FailedGetExternalMetric"
    name = source.metric.name
    selector_text = go_label_selector(source.metric.selector)
    if source.metric.selector is not None:
        try:
            LabelSelector.from_dict(source.metric.selector)
        except SelectorError as error:
            raise MetricFailure(
                reason, str(error), f"failed to get {name} external metric value: {error}"
            ) from error

    def read() -> list[int]:
        try:
            return get_external_metric(_reading(metric, context))
        except MetricError as error:
            raise MetricError(
                f"unable to get external metric {context.namespace}/{name}/{selector_text}: {error}"
            ) from error

    calculator = context.calculator
    outer = f"failed to get {name} external metric value"
    average_value = _milli(source.target.average_value)
    value = _milli(source.target.value)
    if average_value is not None:
        try:
            replicas, usage = calculator.get_external_per_pod_metric_replicas(
                context.status_replicas, average_value, read(), context.tolerances
            )
        except MetricError as error:
            raise MetricFailure(
                reason,
                error.message,
                f"{outer}: failed to get {name} external metric: {error.message}",
            ) from error
        return MetricProposal(
            replicas, f"external metric {name}({selector_text})", average_value=usage
        )
    if value is not None:
        try:
            replicas, usage = calculator.get_external_metric_replicas(
                context.spec_replicas, value, read(), context.tolerances
            )
        except MetricError as error:
            raise MetricFailure(
                reason,
                error.message,
                f"{outer}: failed to get external metric {name}: {error.message}",
            ) from error
        return MetricProposal(replicas, f"external metric {name}({selector_text})", value=usage)
    message = (
        "invalid external metric source: neither a value target nor an average value target was set"
    )
    raise MetricFailure(reason, message, f"{outer}: {message}")
