"""`Hvpa.spec`: Gardener's hvpa-controller fields, plus hvpa's extensions.

Field names and JSON shapes are Gardener's `autoscaling.k8s.io/v1alpha1`
(hvpa-controller api/v1alpha1/hvpa_types.go), so its manifests keep their
meaning; `strategy`, `mixed`, `capacity`, `clusterProportional`, `vpa.resizeMode` and
`hpa.template.spec.behavior` are hvpa's (docs/engine.md, docs/strategies.md,
docs/in-place.md). Optional fields are None when the manifest leaves them out:
the defaults live in `hvpa.api.defaults`, applied as a separate step.
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
from hvpa.api.maintenance import WINDOW_TIME_PATTERN
from hvpa.api.proportional import ClusterProportionalSpec, parse_cluster_proportional
from hvpa.labels import LabelSelector

__all__ = [
    "RESIZE_MODES",
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
# How a new pod size reaches the pods: `Rollout` patches the template (every pod is replaced);
# the in-place modes resize running pods through pods/resize and size new ones at admission
# (docs/in-place.md). The VPA names its equivalent `updateMode: InPlaceOrRecreate`.
ResizeMode = Literal["Rollout", "InPlaceOrRollout", "InPlace"]
UPDATE_MODES: Final[tuple[str, ...]] = get_args(UpdateMode)
STRATEGIES: Final[tuple[str, ...]] = get_args(Strategy)
RESIZE_MODES: Final[tuple[str, ...]] = get_args(ResizeMode)

ResourceList = dict[str, Quantity]
"""A corev1.ResourceList: resource name (`cpu`, `memory`) to quantity."""

WindowTime = Annotated[
    str,
    msgspec.Meta(
        pattern=WINDOW_TIME_PATTERN,
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
    """The label key."""
    operator: str
    """In, NotIn, Exists or DoesNotExist."""
    values: tuple[str, ...] | None = None
    """The values for In and NotIn; empty for Exists and DoesNotExist."""


class LabelSelectorSpec(Model, frozen=True, kw_only=True):
    """A metav1.LabelSelector as written; `parse()` gives the selector that matches labels."""

    match_labels: dict[str, str] | None = None
    """Labels a selected object must carry, each with exactly this value."""
    match_expressions: tuple[LabelSelectorRequirement, ...] | None = None
    """Further requirements, all of which must hold."""

    def parse(self) -> LabelSelector:
        """Raise `hvpa.labels.SelectorError` for a selector the API server would reject."""
        return LabelSelector.from_dict(plain(self))


class ChangeParams(Model, frozen=True, kw_only=True):
    """An absolute `value` (a quantity string) and/or a `percentage` of the current amount."""

    value: str | None = None
    """An absolute amount (a quantity such as "100m" or "200M", or replicas)."""
    percentage: NonNegative | None = None
    """A percentage of the current amount."""


class ScaleParams(Model, frozen=True, kw_only=True):
    cpu: ChangeParams | None = None
    """For CPU requests."""
    memory: ChangeParams | None = None
    """For memory requests."""
    replicas: ChangeParams | None = None
    """For the replica count."""


class UpdatePolicy(Model, frozen=True, kw_only=True):
    update_mode: UpdateMode | None = None
    """Auto (apply), Off (never apply) or MaintenanceWindow (apply only inside
    spec.maintenanceTimeWindow); default Auto.
    """


class ScaleType(Model, frozen=True, kw_only=True):
    """The gates of one axis and direction: update mode, minimum change, stabilization."""

    update_policy: UpdatePolicy | None = None
    """Whether changes in this direction are applied."""
    min_change: ScaleParams | None = None
    """Smaller changes than this are not applied (a starving container is scaled up anyway)."""
    stabilization_duration: str | None = None
    """A Go duration ("3m", "90s"): no change in this direction sooner than this after the last
    one.
    """


class HpaTemplateSpec(Model, frozen=True, kw_only=True):
    min_replicas: NonNegative | None = None
    """The fewest replicas; default 1. 0 only with an Object or External metric."""
    max_replicas: Positive
    """The most replicas."""
    metrics: Annotated[tuple[MetricSpec, ...], msgspec.Meta(max_length=MAX_METRICS)] = ()
    """What the replica count follows, as in an autoscaling/v2 HorizontalPodAutoscaler
    (Gardener's autoscaling/v2beta1 form is accepted too); the largest count any metric asks
    for wins. Default: 80% average CPU utilization.
    """
    behavior: HorizontalPodAutoscalerBehavior | None = None
    """Stabilization windows and rate limits, as in an autoscaling/v2 HorizontalPodAutoscaler."""


class HpaTemplate(Model, frozen=True, kw_only=True):
    # metav1.ObjectMeta, kept as written.
    metadata: dict[str, Any] | None = None
    """Labels and annotations, as Gardener's template; their labels are the default selector."""
    spec: HpaTemplateSpec | None = None
    """Replica bounds, metrics and behavior."""


class HpaSpec(Model, frozen=True, kw_only=True):
    selector: LabelSelectorSpec | None = None
    """Which pods count; default: the template's labels."""
    deploy: bool = False
    """true: hvpa computes the horizontal recommendation (it creates no HPA object); false: the
    replica count is left alone.
    """
    scale_up: ScaleType | None = None
    """Gates for adding replicas."""
    scale_down: ScaleType | None = None
    """Gates for removing replicas."""
    template: HpaTemplate = HpaTemplate()
    """The horizontal autoscaling settings."""


class ContainerResourcePolicy(Model, frozen=True, kw_only=True):
    """A VPA container policy; `containerName: "*"` is the default for every other container."""

    container_name: str
    """The container, or "*" for every container without a policy of its own."""
    mode: Literal["Auto", "Off"] | None = None
    """Auto (resize) or Off (leave this container alone)."""
    min_allowed: ResourceList | None = None
    """Requests are never set below these."""
    max_allowed: ResourceList | None = None
    """Requests are never set above these."""
    controlled_resources: (
        Annotated[tuple[Literal["cpu", "memory"], ...], msgspec.Meta(max_length=2)] | None
    ) = None
    """Which resources are resized; default both cpu and memory."""
    controlled_values: Literal["RequestsAndLimits", "RequestsOnly"] | None = None
    """RequestsAndLimits (default: limits keep their ratio to requests) or RequestsOnly."""


class PodResourcePolicy(Model, frozen=True, kw_only=True):
    container_policies: tuple[ContainerResourcePolicy, ...] = ()
    """One policy per container name."""


class VpaTemplateSpec(Model, frozen=True, kw_only=True):
    resource_policy: PodResourcePolicy | None = None
    """The container policies of the VPA hvpa creates, which also bound hvpa's own changes."""


class VpaTemplate(Model, frozen=True, kw_only=True):
    metadata: dict[str, Any] | None = None
    """Labels and annotations, as Gardener's template; their labels are the default selector."""
    spec: VpaTemplateSpec | None = None
    """The VPA's resource policy."""


class VpaSpec(Model, frozen=True, kw_only=True):
    selector: LabelSelectorSpec | None = None
    """Which pods count; default: the template's labels."""
    deploy: bool = False
    """true: hvpa creates a VerticalPodAutoscaler (updateMode Off) and applies its
    recommendations itself; false: container resources are left alone.
    """
    scale_up: ScaleType | None = None
    """Gates for growing container requests."""
    scale_down: ScaleType | None = None
    """Gates for shrinking container requests."""
    template: VpaTemplate = VpaTemplate()
    """The VPA to create."""
    limits_requests_gap_scale_params: ScaleParams | None = None
    """New limits: the larger of request x (1 + percentage/100) and request + value; absent: keep
    the old limit/request ratio.
    """
    resize_mode: ResizeMode | None = None
    """How new container resources reach the pods. Rollout (default): the target's pod template
    is patched, so every pod is replaced. InPlaceOrRollout: running pods are resized in place
    (pods/resize) and new pods get the size at admission; the template is patched (a rollout)
    only where a pod cannot be resized in place. InPlace: never a rollout for a resize; what
    cannot be done in place is held and reported. The in-place modes need Kubernetes 1.33 or
    newer and hvpa's admission webhook; on a server without pods/resize they act as Rollout.
    """


class WeightBasedScalingInterval(Model, frozen=True, kw_only=True):
    """The VPA weight (percent) between two replica counts; the first matching interval wins.

    A start or last count left out (or 0, as Gardener treats it) means the
    HPA's minReplicas or maxReplicas; `hvpa.api.defaults` fills them in.
    """

    vpa_weight: Weight = 0
    """Percent of the vertical recommendation applied (0 to 100); the rest of the change goes to
    the replica count.
    """
    start_replica_count: NonNegative | None = None
    """First replica count of the interval; absent or 0: minReplicas."""
    last_replica_count: NonNegative | None = None
    """Last replica count of the interval; absent or 0: maxReplicas."""


class MaintenanceTimeWindow(Model, frozen=True, kw_only=True):
    begin: WindowTime
    """Start of the daily window, HHMMSS+ZZZZ, e.g. "220000+0100"."""
    end: WindowTime
    """End of the daily window, HHMMSS+ZZZZ."""


class MixedSpec(Model, frozen=True, kw_only=True):
    """The proposal's Mixed mode: thresholds that make one axis's change worth applying."""

    replica_threshold: NonNegative | None = None
    """The replica change is applied when it is larger than this; default 0."""
    cpu_threshold: Quantity | None = None
    """The CPU change is applied when it is larger than this, or the target exceeds the limit;
    default 0.
    """
    memory_threshold: Quantity | None = None
    """The memory change is applied when it is larger than this, or the target exceeds the limit;
    default 0.
    """
    prefer: Literal["Hpa", "Vpa"] | None = None
    """Hpa (default) or Vpa: which change wins when both qualify."""


class CurvePoint(Model, frozen=True, kw_only=True):
    """The largest per-pod request allowed at `replicas`; points are linearly interpolated."""

    replicas: Positive
    """The replica count of this point."""
    cpu: Quantity | None = None
    """The largest CPU request per pod at this count."""
    memory: Quantity | None = None
    """The largest memory request per pod at this count."""


class ResourceAmounts(Model, frozen=True, kw_only=True):
    cpu: Quantity | None = None
    """CPU, a quantity."""
    memory: Quantity | None = None
    """Memory, a quantity."""


class CapacitySpec(Model, frozen=True, kw_only=True):
    """The `Capacity` strategy (docs/strategies.md): one curve of per-pod size against replicas."""

    curve: Annotated[
        tuple[CurvePoint, ...], msgspec.Meta(min_length=1, max_length=MAX_CURVE_POINTS)
    ]
    """Points {replicas, cpu, memory}, non-decreasing in each, linearly interpolated: the largest
    per-pod request allowed at each replica count.
    """
    base_resources_per_replica: ResourceAmounts | None = None
    """What every pod needs whatever its share of the load."""
    tolerance: Annotated[float, msgspec.Meta(ge=0)] | None = None
    """Percent the total capacity asked for must differ from the current total before anything
    moves; default 10.
    """
    resize_tolerance: Annotated[float, msgspec.Meta(ge=0, le=100)] | None = None
    """Percent a pod's size may differ from the curve's size for the demand before the pods are
    resized (a rolling update) rather than counted; default 30.
    """
    headroom: Annotated[float, msgspec.Meta(ge=0, le=100)] | None = None
    """Percent over the load a resource the HPA template has no target for (memory, usually) is
    sized with, and a pod out is carried with; default 25.
    """
    # At most upstream HPA's longest stabilization window.
    scale_down_stabilization_seconds: Annotated[int, msgspec.Meta(ge=0, le=3600)] | None = None
    """A scale-down uses the largest demand seen within this many seconds; default: the HPA
    template's behavior.scaleDown.stabilizationWindowSeconds, else 300.
    """
    demand_percentile: Annotated[float, msgspec.Meta(gt=0, le=100)] | None = None
    """The percentile of total usage samples taken as demand; default 90."""
    # At most a day: the window's samples are kept in status.history.usage.
    demand_window_seconds: Annotated[int, msgspec.Meta(ge=1, le=86400)] | None = None
    """Usage samples within this many seconds count; default 600."""


class LinearSpec(Model, frozen=True, kw_only=True):
    """cluster-proportional-autoscaler's `linear` parameters; its own rules check the values."""

    cores_per_replica: float | None = None
    """One replica per this many cores."""
    nodes_per_replica: float | None = None
    """One replica per this many nodes."""
    # Go ints (int64) in cluster-proportional-autoscaler.
    min: Int64 | None = None
    """The fewest replicas; default 1."""
    max: Int64 | None = None
    """The most replicas; 0: no maximum."""
    prevent_single_point_failure: bool | None = None
    """At least 2 replicas when there are 2 nodes or more."""
    include_unschedulable_nodes: bool | None = None
    """Count cordoned and not-ready nodes too."""


class LadderSpec(Model, frozen=True, kw_only=True):
    """cluster-proportional-autoscaler's `ladder`: [count, replicas] steps."""

    cores_to_replicas: LadderSteps | None = None
    """[cores, replicas] steps: the step with the largest core count not above the cluster's
    applies.
    """
    nodes_to_replicas: LadderSteps | None = None
    """[nodes, replicas] steps, likewise."""
    include_unschedulable_nodes: bool | None = None
    """Count cordoned and not-ready nodes too."""


class ConfigMapReference(Model, frozen=True, kw_only=True):
    name: str
    """The ConfigMap, in the Hvpa's namespace, holding one key, linear or ladder, with cluster-
    proportional-autoscaler's JSON.
    """
    namespace: str | None = None
    """Must not be set: the ConfigMap is always read from the Hvpa's own namespace."""


class ClusterProportional(Model, frozen=True, kw_only=True):
    """`spec.clusterProportional` as written; `params()` gives the form the engine computes with."""

    linear: LinearSpec | None = None
    """cluster-proportional-autoscaler's linear mode."""
    ladder: LadderSpec | None = None
    """cluster-proportional-autoscaler's ladder mode."""
    config_map_ref: ConfigMapReference | None = None
    """Read the linear or ladder parameters from a ConfigMap, as cluster-proportional-autoscaler
    does.
    """
    node_selector: dict[str, str] | None = None
    """Count only nodes with these labels."""

    def params(self) -> ClusterProportionalSpec:
        """Checked by cluster-proportional-autoscaler's rules; raises ProportionalError if they fail."""
        return parse_cluster_proportional(plain(self))


class HvpaSpec(Model, frozen=True, kw_only=True):
    target_ref: CrossVersionObjectReference
    """The workload to scale: a Deployment, StatefulSet or ReplicaSet (apps/v1) in the Hvpa's
    namespace.
    """
    replicas: NonNegative | None = None
    """Gardener's field, kept so its manifests stay valid; hvpa does not read it."""
    hpa: HpaSpec = HpaSpec()
    """Horizontal scaling: replica bounds, metrics, gates."""
    vpa: VpaSpec = VpaSpec()
    """Vertical scaling: the VPA whose recommendation hvpa applies, gates, limits."""
    weight_based_scaling_intervals: Annotated[
        tuple[WeightBasedScalingInterval, ...], msgspec.Meta(max_length=MAX_INTERVALS)
    ] = ()
    """Replica ranges with the VPA weight in each (strategy Weighted); the first interval that
    holds the current count applies.
    """
    maintenance_time_window: MaintenanceTimeWindow | None = None
    """The daily window for update mode MaintenanceWindow."""
    strategy: Strategy | None = None
    """How the horizontal and vertical recommendations combine: Weighted (Gardener's),
    HpaPreferred, HpaBiased, VpaBiased, Mixed or Capacity.
    """
    mixed: MixedSpec | None = None
    """Thresholds for strategy Mixed."""
    capacity: CapacitySpec | None = None
    """The curve for strategy Capacity."""
    cluster_proportional: ClusterProportional | None = None
    """Replicas from the number of nodes or cores, as cluster-proportional-autoscaler computes
    them; the larger of this and the metrics' count applies.
    """
