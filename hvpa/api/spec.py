"""`Hvpa.spec`: Gardener's hvpa-controller fields, plus hvpa's extensions.

Field names and JSON shapes are Gardener's `autoscaling.k8s.io/v1alpha1`
(hvpa-controller api/v1alpha1/hvpa_types.go), so its manifests keep their
meaning; `strategy`, `mixed`, `capacity`, `clusterProportional` and
`hpa.template.spec.behavior` are hvpa's (ENGINE.md §1, §4, §5). Optional
fields are None when the manifest leaves them out: the defaults live in
`hvpa.api.defaults`, applied as a separate step.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, get_args

import msgspec

from hvpa.api.autoscaling import (
    CrossVersionObjectReference,
    HorizontalPodAutoscalerBehavior,
    MetricSpec,
    Quantity,
)
from hvpa.api.base import Int64, Model, NonNegative, Positive, plain
from hvpa.api.proportional import ClusterProportionalSpec, parse_cluster_proportional
from hvpa.labels import LabelSelector

__all__ = [
    "STRATEGIES",
    "UPDATE_MODES",
    "CapacitySpec",
    "ChangeParams",
    "ClusterProportional",
    "ConfigMapReference",
    "ContainerResourcePolicy",
    "CurvePoint",
    "HpaSpec",
    "HpaTemplate",
    "HpaTemplateSpec",
    "HvpaSpec",
    "LabelSelectorRequirement",
    "LabelSelectorSpec",
    "LadderSpec",
    "LinearSpec",
    "MaintenanceTimeWindow",
    "MixedSpec",
    "PodResourcePolicy",
    "ResourceAmounts",
    "ScaleParams",
    "ScaleType",
    "UpdatePolicy",
    "VpaSpec",
    "VpaTemplate",
    "VpaTemplateSpec",
    "WeightBasedScalingInterval",
]

UpdateMode = Literal["Auto", "Off", "MaintenanceWindow"]
Strategy = Literal["Weighted", "HpaPreferred", "HpaBiased", "VpaBiased", "Mixed", "Capacity"]
UPDATE_MODES: Final[tuple[str, ...]] = get_args(UpdateMode)
STRATEGIES: Final[tuple[str, ...]] = get_args(Strategy)

ResourceList = dict[str, Quantity]
"""A corev1.ResourceList: resource name (`cpu`, `memory`) to quantity."""

WindowTime = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^([01][0-9]|2[0-3])[0-5][0-9][0-5][0-9][+-]([01][0-9]|2[0-3])[0-5][0-9]$",
        description='a time of day with its zone offset, HHMMSS+ZZZZ, e.g. "220000+0100"',
    ),
]
Weight = Annotated[int, msgspec.Meta(ge=0, le=100)]
# Upstream sets no bound on these lists; a bound is what lets the API server accept CEL rules
# over them (their cost is estimated from it). Each is far above what a workload needs.
MAX_METRICS: Final = 32
MAX_CURVE_POINTS: Final = 64
MAX_LADDER_STEPS: Final = 128
MAX_INTERVALS: Final = 32
LadderSteps = Annotated[tuple[tuple[Int64, Int64], ...], msgspec.Meta(max_length=MAX_LADDER_STEPS)]


class LabelSelectorRequirement(Model, frozen=True, kw_only=True):
    # A label key: an optional DNS subdomain prefix (253), a slash, a name (63).
    key: Annotated[str, msgspec.Meta(max_length=317)]
    operator: str
    values: tuple[str, ...] | None = None


class LabelSelectorSpec(Model, frozen=True, kw_only=True):
    """A metav1.LabelSelector as written; `parse()` gives the selector that matches labels."""

    match_labels: dict[str, str] | None = None
    match_expressions: tuple[LabelSelectorRequirement, ...] | None = None

    def parse(self) -> LabelSelector:
        """Raise `hvpa.labels.SelectorError` for a selector the API server would reject."""
        return LabelSelector.from_dict(plain(self))


class ChangeParams(Model, frozen=True, kw_only=True):
    """An absolute `value` (a quantity string) and/or a `percentage` of the current amount."""

    value: str | None = None
    percentage: NonNegative | None = None


class ScaleParams(Model, frozen=True, kw_only=True):
    cpu: ChangeParams | None = None
    memory: ChangeParams | None = None
    replicas: ChangeParams | None = None


class UpdatePolicy(Model, frozen=True, kw_only=True):
    update_mode: UpdateMode | None = None


class ScaleType(Model, frozen=True, kw_only=True):
    """The gates of one axis and direction: update mode, minimum change, stabilization."""

    update_policy: UpdatePolicy | None = None
    min_change: ScaleParams | None = None
    # A Go duration string ("3m", "90s").
    stabilization_duration: str | None = None


class HpaTemplateSpec(Model, frozen=True, kw_only=True):
    min_replicas: NonNegative | None = None
    max_replicas: Positive
    # autoscaling/v2 metrics; Gardener's autoscaling/v2beta1 shapes are converted on parse.
    metrics: Annotated[tuple[MetricSpec, ...], msgspec.Meta(max_length=MAX_METRICS)] = ()
    behavior: HorizontalPodAutoscalerBehavior | None = None


class HpaTemplate(Model, frozen=True, kw_only=True):
    # metav1.ObjectMeta, kept as written.
    metadata: dict[str, Any] | None = None
    spec: HpaTemplateSpec | None = None


class HpaSpec(Model, frozen=True, kw_only=True):
    selector: LabelSelectorSpec | None = None
    deploy: bool = False
    scale_up: ScaleType | None = None
    scale_down: ScaleType | None = None
    template: HpaTemplate = HpaTemplate()


class ContainerResourcePolicy(Model, frozen=True, kw_only=True):
    """A VPA container policy; `containerName: "*"` is the default for every other container."""

    container_name: str
    mode: Literal["Auto", "Off"] | None = None
    min_allowed: ResourceList | None = None
    max_allowed: ResourceList | None = None
    controlled_resources: (
        Annotated[tuple[Literal["cpu", "memory"], ...], msgspec.Meta(max_length=2)] | None
    ) = None
    controlled_values: Literal["RequestsAndLimits", "RequestsOnly"] | None = None


class PodResourcePolicy(Model, frozen=True, kw_only=True):
    container_policies: tuple[ContainerResourcePolicy, ...] = ()


class VpaTemplateSpec(Model, frozen=True, kw_only=True):
    resource_policy: PodResourcePolicy | None = None


class VpaTemplate(Model, frozen=True, kw_only=True):
    metadata: dict[str, Any] | None = None
    spec: VpaTemplateSpec | None = None


class VpaSpec(Model, frozen=True, kw_only=True):
    selector: LabelSelectorSpec | None = None
    deploy: bool = False
    scale_up: ScaleType | None = None
    scale_down: ScaleType | None = None
    template: VpaTemplate = VpaTemplate()
    limits_requests_gap_scale_params: ScaleParams | None = None


class WeightBasedScalingInterval(Model, frozen=True, kw_only=True):
    """The VPA weight (percent) between two replica counts; the first matching interval wins.

    A start or last count left out (or 0, as Gardener treats it) means the
    HPA's minReplicas or maxReplicas; `hvpa.api.defaults` fills them in.
    """

    vpa_weight: Weight = 0
    start_replica_count: NonNegative | None = None
    last_replica_count: NonNegative | None = None


class MaintenanceTimeWindow(Model, frozen=True, kw_only=True):
    begin: WindowTime
    end: WindowTime


class MixedSpec(Model, frozen=True, kw_only=True):
    """The proposal's Mixed mode: thresholds that make one axis's change worth applying."""

    replica_threshold: NonNegative | None = None
    cpu_threshold: Quantity | None = None
    memory_threshold: Quantity | None = None
    prefer: Literal["Hpa", "Vpa"] | None = None


class CurvePoint(Model, frozen=True, kw_only=True):
    """The largest per-pod request allowed at `replicas`; points are linearly interpolated."""

    replicas: Positive
    cpu: Quantity | None = None
    memory: Quantity | None = None


class ResourceAmounts(Model, frozen=True, kw_only=True):
    cpu: Quantity | None = None
    memory: Quantity | None = None


class CapacitySpec(Model, frozen=True, kw_only=True):
    """The `Capacity` strategy (ENGINE.md §5): one curve of per-pod size against replicas."""

    curve: Annotated[
        tuple[CurvePoint, ...], msgspec.Meta(min_length=1, max_length=MAX_CURVE_POINTS)
    ]
    base_resources_per_replica: ResourceAmounts | None = None
    # Percent of the current total capacity the decision must move by.
    tolerance: Annotated[float, msgspec.Meta(ge=0)] | None = None
    # Percent a pod's size may differ from the curve's size for the demand
    # before the pods are resized (a rolling update) rather than counted.
    resize_tolerance: Annotated[float, msgspec.Meta(ge=0, le=100)] | None = None
    # At most upstream HPA's longest stabilization window.
    scale_down_stabilization_seconds: Annotated[int, msgspec.Meta(ge=0, le=3600)] | None = None
    demand_percentile: Annotated[float, msgspec.Meta(gt=0, le=100)] | None = None
    # At most a day: the window's samples are kept in status.history.usage.
    demand_window_seconds: Annotated[int, msgspec.Meta(ge=1, le=86400)] | None = None


class LinearSpec(Model, frozen=True, kw_only=True):
    """cluster-proportional-autoscaler's `linear` parameters; its own rules check the values."""

    cores_per_replica: float | None = None
    nodes_per_replica: float | None = None
    # Go ints (int64) in cluster-proportional-autoscaler.
    min: Int64 | None = None
    max: Int64 | None = None
    prevent_single_point_failure: bool | None = None
    include_unschedulable_nodes: bool | None = None


class LadderSpec(Model, frozen=True, kw_only=True):
    """cluster-proportional-autoscaler's `ladder`: [count, replicas] steps."""

    cores_to_replicas: LadderSteps | None = None
    nodes_to_replicas: LadderSteps | None = None
    include_unschedulable_nodes: bool | None = None


class ConfigMapReference(Model, frozen=True, kw_only=True):
    name: str
    namespace: str | None = None


class ClusterProportional(Model, frozen=True, kw_only=True):
    """`spec.clusterProportional` as written; `params()` gives the form the engine computes with."""

    linear: LinearSpec | None = None
    ladder: LadderSpec | None = None
    config_map_ref: ConfigMapReference | None = None
    node_selector: dict[str, str] | None = None

    def params(self) -> ClusterProportionalSpec:
        """Checked by cluster-proportional-autoscaler's rules; raises ProportionalError if they fail."""
        return parse_cluster_proportional(plain(self))


class HvpaSpec(Model, frozen=True, kw_only=True):
    target_ref: CrossVersionObjectReference
    # The target's replica count as the scale subresource sees it.
    replicas: NonNegative | None = None
    hpa: HpaSpec = HpaSpec()
    vpa: VpaSpec = VpaSpec()
    weight_based_scaling_intervals: Annotated[
        tuple[WeightBasedScalingInterval, ...], msgspec.Meta(max_length=MAX_INTERVALS)
    ] = ()
    maintenance_time_window: MaintenanceTimeWindow | None = None
    strategy: Strategy | None = None
    mixed: MixedSpec | None = None
    capacity: CapacitySpec | None = None
    cluster_proportional: ClusterProportional | None = None
