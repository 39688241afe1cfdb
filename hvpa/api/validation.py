"""The rules an Hvpa's values must follow beyond its structure: cross-field checks, formats, references.

Structure (types, enums, bounds, unknown and required fields) is checked by
`hvpa.api.structure` from the type definitions; this module holds what a
schema cannot say, and reports with upstream's messages where upstream has a
rule (HPA metrics and behavior: kubernetes pkg/apis/autoscaling/validation;
selectors; cluster-proportional-autoscaler's parameters). Values under a
field that could not be read are not checked again (`Findings.add`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from hvpa.api import references
from hvpa.api.autoscaling import (
    POLICY_TYPES,
    SELECT_POLICIES,
    TARGET_TYPES,
    ContainerResourceMetricSource,
    CrossVersionObjectReference,
    ExternalMetricSource,
    HorizontalPodAutoscalerBehavior,
    HPAScalingRules,
    MetricIdentifier,
    MetricSpec,
    MetricTarget,
    ObjectMetricSource,
    PodsMetricSource,
    ResourceMetricSource,
)
from hvpa.api.base import plain
from hvpa.api.problems import Findings, show
from hvpa.api.proportional import ProportionalError, parse_cluster_proportional
from hvpa.api.resource import API_VERSION, KIND, Hvpa
from hvpa.api.spec import (
    CapacitySpec,
    ChangeParams,
    ClusterProportional,
    ContainerResourcePolicy,
    HpaTemplateSpec,
    HvpaSpec,
    LabelSelectorSpec,
    MixedSpec,
    ScaleParams,
    ScaleType,
)
from hvpa.durations import DurationError, parse_duration
from hvpa.labels import LabelSelector, SelectorError
from hvpa.quantity import is_quantity
from hvpa.quantity import parse as parse_quantity

__all__ = ["TARGET_KINDS", "validate"]

TARGET_KINDS: Final = ("Deployment", "StatefulSet", "ReplicaSet")
TARGET_API_VERSION: Final = "apps/v1"
VPA_RESOURCES: Final = ("cpu", "memory")
MAX_STABILIZATION_WINDOW_SECONDS: Final = 3600
MAX_PERIOD_SECONDS: Final = 1800

_SOURCE_FIELDS: Final = {
    "Resource": "resource",
    "ContainerResource": "containerResource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
}
# Target types the calculator can use for each metric type.
_TARGETS_BY_METRIC: Final = {
    "Resource": ("Utilization", "AverageValue"),
    "ContainerResource": ("Utilization", "AverageValue"),
    "Pods": ("AverageValue",),
    "Object": ("Value", "AverageValue"),
    "External": ("Value", "AverageValue"),
}


def validate(hvpa: Hvpa, findings: Findings) -> None:
    if hvpa.api_version != API_VERSION:
        findings.add("apiVersion", f"must be {API_VERSION} (got {show(hvpa.api_version)})")
    if hvpa.kind != KIND:
        findings.add("kind", f"must be {KIND} (got {show(hvpa.kind)})")
    _spec(hvpa.spec, "spec", findings)


def _spec(spec: HvpaSpec, path: str, findings: Findings) -> None:
    _target_ref(spec.target_ref, f"{path}.targetRef", findings)
    template_spec = spec.hpa.template.spec
    template_path = f"{path}.hpa.template.spec"
    if template_spec is None:
        if spec.hpa.deploy and spec.cluster_proportional is None:
            findings.add(
                template_path,
                "required when spec.hpa.deploy is true (it holds minReplicas and maxReplicas)",
            )
        if spec.strategy == "Capacity":
            findings.add(
                template_path,
                "required by strategy Capacity (it holds minReplicas and maxReplicas)",
            )
    else:
        _hpa_template_spec(template_spec, template_path, findings)
    for axis in ("hpa", "vpa"):
        part = spec.hpa if axis == "hpa" else spec.vpa
        _selector(part.selector, part.template.metadata, f"{path}.{axis}", findings)
        _scale_type(part.scale_up, f"{path}.{axis}.scaleUp", findings)
        _scale_type(part.scale_down, f"{path}.{axis}.scaleDown", findings)
    _scale_params(
        spec.vpa.limits_requests_gap_scale_params,
        f"{path}.vpa.limitsRequestsGapScaleParams",
        findings,
    )
    resource_policy = spec.vpa.template.spec.resource_policy if spec.vpa.template.spec else None
    if resource_policy is not None:
        _container_policies(
            resource_policy.container_policies,
            f"{path}.vpa.template.spec.resourcePolicy.containerPolicies",
            findings,
        )
    for index, interval in enumerate(spec.weight_based_scaling_intervals):
        start, last = interval.start_replica_count, interval.last_replica_count
        if start and last and last < start:
            findings.add(
                f"{path}.weightBasedScalingIntervals[{index}].lastReplicaCount",
                f"must be >= startReplicaCount ({start})",
            )
    if spec.strategy == "Mixed" and spec.mixed is None:
        findings.add(f"{path}.mixed", "required when strategy is Mixed")
    if spec.strategy == "Capacity" and spec.capacity is None:
        findings.add(f"{path}.capacity", "required when strategy is Capacity")
    if spec.mixed is not None:
        _mixed(spec.mixed, f"{path}.mixed", findings)
    if spec.capacity is not None:
        _capacity(spec.capacity, template_spec, f"{path}.capacity", findings)
    if spec.cluster_proportional is not None:
        _cluster_proportional(spec.cluster_proportional, f"{path}.clusterProportional", findings)


def _target_ref(ref: CrossVersionObjectReference, path: str, findings: Findings) -> None:
    if not ref.kind:
        findings.add(f"{path}.kind", "required")
    elif ref.kind not in TARGET_KINDS:
        findings.add(
            f"{path}.kind", f"must be one of {', '.join(TARGET_KINDS)} (got {show(ref.kind)})"
        )
    if ref.api_version not in (None, "", TARGET_API_VERSION):
        findings.add(
            f"{path}.apiVersion", f"must be {TARGET_API_VERSION} (got {show(ref.api_version)})"
        )
    if not ref.name:
        findings.add(f"{path}.name", "required")
    else:
        _path_segment(ref.name, f"{path}.name", findings)


def _described_object(ref: CrossVersionObjectReference, path: str, findings: Findings) -> None:
    """Upstream's ValidateCrossVersionObjectReference, plus the apiVersion it leaves unchecked.

    Kind, name and apiVersion all end up in the custom metrics API's request
    path, so each must be something a path can carry unchanged.
    """
    for field, value in (("kind", ref.kind), ("name", ref.name)):
        if not value:
            findings.add(f"{path}.{field}", "required")
        else:
            _path_segment(value, f"{path}.{field}", findings)
    if ref.api_version and not references.is_api_version(ref.api_version):
        findings.add(f"{path}.apiVersion", references.API_VERSION_MESSAGE)


def _path_segment(name: str, path: str, findings: Findings) -> None:
    for message in references.path_segment_problems(name):
        findings.add(path, message)


def _hpa_template_spec(spec: HpaTemplateSpec, path: str, findings: Findings) -> None:
    min_replicas = 1 if spec.min_replicas is None else spec.min_replicas
    scales_to_zero = any(metric.type in ("Object", "External") for metric in spec.metrics)
    if min_replicas == 0 and not scales_to_zero:
        findings.add(
            f"{path}.minReplicas",
            "must be >= 1 unless an Object or External metric is set (scaling to zero needs one)",
        )
    if spec.max_replicas < min_replicas:
        findings.add(f"{path}.maxReplicas", f"must be >= minReplicas ({min_replicas})")
    for index, metric in enumerate(spec.metrics):
        _metric(metric, f"{path}.metrics[{index}]", findings)
    if spec.behavior is not None:
        _behavior(spec.behavior, f"{path}.behavior", findings)


def _metric(metric: MetricSpec, path: str, findings: Findings) -> None:
    present = [
        field for field in _SOURCE_FIELDS.values() if getattr(metric, _attr(field)) is not None
    ]
    expected = _SOURCE_FIELDS.get(metric.type)
    if not metric.type:
        findings.add(f"{path}.type", "must specify a metric source type")
    # A type hvpa does not know is not an invalid spec: as upstream's HPA controller, the
    # engine answers it with ScalingActive=False, InvalidMetricSourceType, and holds a
    # scale-down while it is there (docs/engine.md, "Metrics that cannot be read").
    if expected is not None and expected not in present:
        findings.add(f"{path}.{expected}", "must populate information for the given metric source")
    checked = expected if expected in present else (present[0] if present else None)
    for field in present:
        if field != checked:
            findings.add(f"{path}.{field}", "must populate the given metric source only")
    # Which target types make sense depends on the source actually given.
    metric_type = next((kind for kind, field in _SOURCE_FIELDS.items() if field == checked), None)
    where = f"{path}.{checked}"
    if checked == "resource" and metric.resource is not None:
        _resource_source(metric.resource, where, metric_type, findings)
    elif checked == "containerResource" and metric.container_resource is not None:
        _resource_source(metric.container_resource, where, metric_type, findings)
    elif checked == "pods" and metric.pods is not None:
        _pods_source(metric.pods, where, metric_type, findings)
    elif checked == "object" and metric.object is not None:
        _object_source(metric.object, where, metric_type, findings)
    elif checked == "external" and metric.external is not None:
        _external_source(metric.external, where, metric_type, findings)


def _attr(field: str) -> str:
    return "container_resource" if field == "containerResource" else field


def _resource_source(
    source: ResourceMetricSource | ContainerResourceMetricSource,
    path: str,
    metric_type: str | None,
    findings: Findings,
) -> None:
    if not source.name:
        findings.add(f"{path}.name", "must specify a resource name")
    if isinstance(source, ContainerResourceMetricSource) and not source.container:
        findings.add(f"{path}.container", "must specify a container")
    target = source.target
    _metric_target(target, f"{path}.target", metric_type, findings)
    if not findings.clean(f"{path}.target"):
        return  # an unreadable value is missing here only because it could not be read
    if target.average_utilization is None and target.average_value is None:
        findings.add(
            f"{path}.target.averageUtilization",
            "must set either a target raw value or a target utilization",
        )
    if target.average_utilization is not None and target.average_value is not None:
        findings.add(
            f"{path}.target.averageValue",
            "may not set both a target raw value and a target utilization",
        )


def _pods_source(
    source: PodsMetricSource, path: str, metric_type: str | None, findings: Findings
) -> None:
    _metric_identifier(source.metric, f"{path}.metric", findings)
    _metric_target(source.target, f"{path}.target", metric_type, findings)
    if source.target.average_value is None and findings.clean(f"{path}.target"):
        findings.add(f"{path}.target.averageValue", "must specify a positive target averageValue")


def _object_source(
    source: ObjectMetricSource, path: str, metric_type: str | None, findings: Findings
) -> None:
    _described_object(source.described_object, f"{path}.describedObject", findings)
    _metric_identifier(source.metric, f"{path}.metric", findings)
    _metric_target(source.target, f"{path}.target", metric_type, findings)
    unread = not findings.clean(f"{path}.target")
    if source.target.value is None and source.target.average_value is None and not unread:
        findings.add(
            f"{path}.target.averageValue", "must set either a target value or averageValue"
        )


def _external_source(
    source: ExternalMetricSource, path: str, metric_type: str | None, findings: Findings
) -> None:
    _metric_identifier(source.metric, f"{path}.metric", findings)
    _metric_target(source.target, f"{path}.target", metric_type, findings)
    unread = not findings.clean(f"{path}.target")
    if source.target.value is None and source.target.average_value is None and not unread:
        findings.add(
            f"{path}.target.averageValue",
            "must set either a target value for metric or a per-pod target",
        )
    if source.target.value is not None and source.target.average_value is not None:
        findings.add(
            f"{path}.target.value",
            "may not set both a target value for metric and a per-pod target",
        )


def _metric_identifier(metric: MetricIdentifier, path: str, findings: Findings) -> None:
    if not metric.name:
        findings.add(f"{path}.name", "must specify a metric name")
    else:
        _path_segment(metric.name, f"{path}.name", findings)
    if metric.selector is not None:
        _label_selector(metric.selector, f"{path}.selector", findings)


def _metric_target(
    target: MetricTarget, path: str, metric_type: str | None, findings: Findings
) -> None:
    if not target.type:
        findings.add(f"{path}.type", "must specify a metric target type")
    elif target.type not in TARGET_TYPES:
        findings.add(f"{path}.type", "must be either Utilization, Value, or AverageValue")
    elif metric_type is not None and target.type not in _TARGETS_BY_METRIC[metric_type]:
        allowed = " or ".join(_TARGETS_BY_METRIC[metric_type])
        findings.add(
            f"{path}.type", f"must be {allowed} for a {metric_type} metric (got {target.type})"
        )
    else:
        field, value = {
            "Utilization": ("averageUtilization", target.average_utilization),
            "Value": ("value", target.value),
            "AverageValue": ("averageValue", target.average_value),
        }[target.type]
        others = (target.average_utilization, target.value, target.average_value)
        if value is None and any(other is not None for other in others):
            findings.add(f"{path}.{field}", f"required by target type {target.type}")
    for field, quantity in (("value", target.value), ("averageValue", target.average_value)):
        if quantity is not None and not _positive(quantity):
            findings.add(f"{path}.{field}", "must be positive")
    if target.average_utilization is not None and target.average_utilization < 1:
        findings.add(f"{path}.averageUtilization", "must be greater than 0")


def _behavior(behavior: HorizontalPodAutoscalerBehavior, path: str, findings: Findings) -> None:
    for name, rules in (("scaleUp", behavior.scale_up), ("scaleDown", behavior.scale_down)):
        if rules is not None:
            _scaling_rules(rules, f"{path}.{name}", findings)


def _scaling_rules(rules: HPAScalingRules, path: str, findings: Findings) -> None:
    window = rules.stabilization_window_seconds
    if window is not None and window < 0:
        findings.add(f"{path}.stabilizationWindowSeconds", "must be greater than or equal to zero")
    if window is not None and window > MAX_STABILIZATION_WINDOW_SECONDS:
        findings.add(
            f"{path}.stabilizationWindowSeconds",
            f"must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}",
        )
    if rules.select_policy is not None and rules.select_policy not in SELECT_POLICIES:
        findings.add(
            f"{path}.selectPolicy",
            f"must be one of {', '.join(SELECT_POLICIES)} (got {show(rules.select_policy)})",
        )
    if rules.policies is not None and not rules.policies:
        findings.add(f"{path}.policies", "must specify at least one Policy")
    for index, policy in enumerate(rules.policies or ()):
        where = f"{path}.policies[{index}]"
        if policy.type not in POLICY_TYPES:
            findings.add(
                f"{where}.type",
                f"must be one of {', '.join(POLICY_TYPES)} (got {show(policy.type)})",
            )
        if policy.value <= 0:
            findings.add(f"{where}.value", "must be greater than zero")
        if policy.period_seconds <= 0:
            findings.add(f"{where}.periodSeconds", "must be greater than zero")
        if policy.period_seconds > MAX_PERIOD_SECONDS:
            findings.add(
                f"{where}.periodSeconds", f"must be less than or equal to {MAX_PERIOD_SECONDS}"
            )
    if rules.tolerance is not None and _negative(rules.tolerance):
        findings.add(f"{path}.tolerance", "must be greater than or equal to 0")


def _selector(
    selector: LabelSelectorSpec | None,
    metadata: Mapping[str, Any] | None,
    path: str,
    findings: Findings,
) -> None:
    labels = _string_map(metadata, "labels", f"{path}.template.metadata", findings)
    _string_map(metadata, "annotations", f"{path}.template.metadata", findings)
    if selector is None:
        return
    parsed = _label_selector(plain(selector), f"{path}.selector", findings)
    if parsed is not None and parsed.empty:
        # Gardener refused it too: it would select every object in the namespace.
        findings.add(
            f"{path}.selector", "must not be empty (leave it out to use the template's labels)"
        )
    elif parsed is not None and labels and not parsed.matches(labels):
        findings.add(
            f"{path}.template.metadata.labels", "`selector` does not match template `labels`"
        )


def _label_selector(raw: Mapping[str, Any], path: str, findings: Findings) -> LabelSelector | None:
    try:
        return LabelSelector.from_dict(raw)
    except SelectorError as error:
        findings.add(path, str(error))
        return None


def _string_map(
    metadata: Mapping[str, Any] | None, key: str, path: str, findings: Findings
) -> dict[str, str]:
    value = (metadata or {}).get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        findings.add(f"{path}.{key}", "must be a map of strings to strings")
        return {}
    return dict(value)


def _scale_type(scale: ScaleType | None, path: str, findings: Findings) -> None:
    if scale is None:
        return
    duration = scale.stabilization_duration
    if duration is not None:
        try:
            seconds = parse_duration(duration)
        except DurationError:
            findings.add(
                f"{path}.stabilizationDuration",
                f'must be a Go duration such as "3m" or "90s" (got {show(duration)})',
            )
        else:
            if seconds < 0:
                findings.add(f"{path}.stabilizationDuration", "must not be negative")
    _scale_params(scale.min_change, f"{path}.minChange", findings)


def _scale_params(params: ScaleParams | None, path: str, findings: Findings) -> None:
    if params is None:
        return
    for name, change in (
        ("cpu", params.cpu),
        ("memory", params.memory),
        ("replicas", params.replicas),
    ):
        if change is not None:
            _change_params(change, f"{path}.{name}", findings)


def _change_params(change: ChangeParams, path: str, findings: Findings) -> None:
    if change.value is None:
        return
    if not is_quantity(change.value):
        findings.add(
            f"{path}.value",
            f'must be a quantity such as "100m" or "1Gi" (got {show(change.value)})',
        )
    elif _negative(change.value):
        findings.add(f"{path}.value", "must not be negative")


def _container_policies(
    policies: tuple[ContainerResourcePolicy, ...], path: str, findings: Findings
) -> None:
    seen: set[str] = set()
    for index, policy in enumerate(policies):
        where = f"{path}[{index}]"
        if not policy.container_name:
            findings.add(f"{where}.containerName", "must not be empty")
        elif policy.container_name in seen:
            findings.add(
                f"{where}.containerName",
                f"duplicate policy for container {show(policy.container_name)}",
            )
        seen.add(policy.container_name)
        bounds = {"minAllowed": policy.min_allowed or {}, "maxAllowed": policy.max_allowed or {}}
        for field, resources in bounds.items():
            for resource, quantity in resources.items():
                if resource not in VPA_RESOURCES:
                    findings.add(
                        f"{where}.{field}.{resource}",
                        "must be cpu or memory: the VPA recommends only these",
                    )
                elif _negative(quantity):
                    findings.add(f"{where}.{field}.{resource}", "must not be negative")
        for resource in VPA_RESOURCES:
            low, high = bounds["minAllowed"].get(resource), bounds["maxAllowed"].get(resource)
            if low is not None and high is not None and parse_quantity(high) < parse_quantity(low):
                findings.add(
                    f"{where}.maxAllowed.{resource}", f"must be >= minAllowed.{resource} ({low})"
                )


def _mixed(mixed: MixedSpec, path: str, findings: Findings) -> None:
    for field, quantity in (
        ("cpuThreshold", mixed.cpu_threshold),
        ("memoryThreshold", mixed.memory_threshold),
    ):
        if quantity is not None and _negative(quantity):
            findings.add(f"{path}.{field}", "must not be negative")


def _capacity(
    capacity: CapacitySpec, bounds: HpaTemplateSpec | None, path: str, findings: Findings
) -> None:
    """The curve must describe per-pod size growing with replicas, within reach of min/max."""
    curve = capacity.curve
    low = 1 if bounds is None or bounds.min_replicas is None else bounds.min_replicas
    high = bounds.max_replicas if bounds is not None else None
    resources = [r for r in ("cpu", "memory") if any(getattr(p, r) is not None for p in curve)]
    if curve and not resources:
        findings.add(f"{path}.curve", "must give cpu or memory (or both) at its points")
    for resource in resources:
        for index, point in enumerate(curve):
            if getattr(point, resource) is None:
                findings.add(
                    f"{path}.curve[{index}].{resource}",
                    f"required: other points give {resource}, so every point must",
                )
    previous = None
    for index, point in enumerate(curve):
        where = f"{path}.curve[{index}]"
        if high is not None and not low <= point.replicas <= high:
            findings.add(
                f"{where}.replicas",
                f"must be within minReplicas..maxReplicas ({low}..{high}); "
                "a point outside them can never be reached",
            )
        for resource in resources:
            value = getattr(point, resource)
            if value is not None and not _positive(value):
                findings.add(
                    f"{where}.{resource}",
                    "must be positive: it is the largest per-pod request here",
                )
        if previous is not None:
            before, before_index = previous
            if point.replicas < before.replicas:
                findings.add(
                    f"{where}.replicas",
                    f"must be >= curve[{before_index}].replicas ({before.replicas}): "
                    "points are listed by replica count (equal counts make a vertical segment)",
                )
            for resource in resources:
                now, then = getattr(point, resource), getattr(before, resource)
                if (
                    now is not None
                    and then is not None
                    and parse_quantity(now) < parse_quantity(then)
                ):
                    findings.add(
                        f"{where}.{resource}",
                        f"must be >= curve[{before_index}].{resource} ({then}): "
                        "per-pod size must not shrink as replicas grow (flat and vertical segments are allowed)",
                    )
        previous = (point, index)
    base = capacity.base_resources_per_replica
    for resource in ("cpu", "memory"):
        overhead = getattr(base, resource) if base is not None else None
        if overhead is None:
            continue
        where = f"{path}.baseResourcesPerReplica.{resource}"
        if _negative(overhead):
            findings.add(where, "must not be negative")
            continue
        ceilings = [getattr(p, resource) for p in curve if getattr(p, resource) is not None]
        if ceilings and not parse_quantity(overhead) < min(parse_quantity(c) for c in ceilings):
            findings.add(
                where,
                f"must be below the curve's smallest {resource} ({min(ceilings, key=parse_quantity)}): "
                "a pod needs room for load beyond its fixed overhead",
            )


def _cluster_proportional(spec: ClusterProportional, path: str, findings: Findings) -> None:
    """cluster-proportional-autoscaler's own checks, reported at the parameter they name.

    A ConfigMap is read from the Hvpa's own namespace only: naming another
    would let whoever may create an Hvpa read any ConfigMap in the cluster
    with the controller's rights.
    """
    ref = spec.config_map_ref
    if ref is not None and ref.namespace is not None:
        findings.add(f"{path}.configMapRef.namespace", references.CONFIG_MAP_NAMESPACE_MESSAGE)
    raw = plain(spec)
    try:
        parse_cluster_proportional(raw)
    except ProportionalError as error:
        findings.add(f"{path}.{error.field}" if error.field else path, error.problem)


def _positive(quantity: str | int | float) -> bool:
    return parse_quantity(quantity).value > 0


def _negative(quantity: str | int | float) -> bool:
    return parse_quantity(quantity).value < 0
