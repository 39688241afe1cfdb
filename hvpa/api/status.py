"""`Hvpa.status`: Gardener's status fields, plus conditions and the engine's history.

The history is what makes the engine a pure function that survives restarts
and leader changes: everything a stabilization window or a demand percentile
needs is written back here. No `history` at all (None) means a new Hvpa; an
empty list means an empty history (docs/engine.md, "History"), so every list in `History`
keeps None and () apart.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, TypeVar, get_args

import msgspec

from hvpa.api.autoscaling import CrossVersionObjectReference, Quantity
from hvpa.api.base import Int32, Int64, Model, NonNegative, Text, Time
from hvpa.api.spec import ResourceList, UpdatePolicy

__all__ = [
    "BLOCKING_REASONS",
    "AxisWrite",
    "BlockedScaling",
    "Condition",
    "FieldRewrite",
    "FieldWrite",
    "History",
    "HpaStatus",
    "HvpaStatus",
    "LastError",
    "LastScaleTimes",
    "PodResources",
    "RecommendedContainerResources",
    "RecommendedPodResources",
    "ReplicaRecommendation",
    "ResourceSample",
    "ScaleEvent",
    "ScalingStatus",
    "SizedContainer",
    "VerticalPodAutoscalerCondition",
    "VerticalPodAutoscalerStatus",
]

BlockingReason = Literal[
    "StabilizationWindow",
    "MaintenanceWindow",
    "UpdatePolicy",
    "Weight",
    "MinChange",
    "Rollout",
    "ConflictingAutoscaler",
    "ConflictingFieldManager",
]
# Gardener's five, plus Rollout, ConflictingAutoscaler and ConflictingFieldManager (another
# field manager keeps rewriting what hvpa set: docs/gitops.md).
BLOCKING_REASONS: Final[tuple[str, ...]] = get_args(BlockingReason)
ConditionStatus = Literal["True", "False", "Unknown"]
# The controller prunes history to the longest window in use: with the 15 s sync period and
# windows of at most 3600 s (HPA) and 86400 s (Capacity's demand window) that is 240 and
# 5760 entries; event-driven decisions add some. The bound is what the API server enforces,
# so it sits well above that.
MAX_HISTORY: Final = 10000
T = TypeVar("T")
HistoryList = Annotated[tuple[T, ...], msgspec.Meta(max_length=MAX_HISTORY)]


class HpaStatus(Model, frozen=True, kw_only=True):
    current_replicas: Int32 | None = None
    """The replica count when the change was made."""
    desired_replicas: Int32 | None = None
    """The replica count decided."""


class RecommendedContainerResources(Model, frozen=True, kw_only=True):
    container_name: str | None = None
    """The container."""
    target: ResourceList
    """The recommended requests."""
    lower_bound: ResourceList | None = None
    """The least the container should get."""
    upper_bound: ResourceList | None = None
    """The most the container should get."""
    uncapped_target: ResourceList | None = None
    """The recommendation before the container policy's bounds."""


class RecommendedPodResources(Model, frozen=True, kw_only=True):
    container_recommendations: tuple[RecommendedContainerResources, ...] | None = None
    """One per container."""


class VerticalPodAutoscalerCondition(Model, frozen=True, kw_only=True):
    type: str
    """The condition's type."""
    status: ConditionStatus
    """True, False or Unknown."""
    last_transition_time: Time | None = None
    """When the status last changed."""
    reason: str | None = None
    """Why, in one CamelCase word."""
    message: Text | None = None
    """Why, for people."""


class VerticalPodAutoscalerStatus(Model, frozen=True, kw_only=True):
    recommendation: RecommendedPodResources | None = None
    """The recommended resources."""
    conditions: tuple[VerticalPodAutoscalerCondition, ...] | None = None
    """The VPA's conditions."""


class ScalingStatus(Model, frozen=True, kw_only=True):
    last_scale_time: Time | None = None
    """When."""
    hpa_status: HpaStatus | None = None
    """The replica change."""
    vpa_status: VerticalPodAutoscalerStatus | None = None
    """The resource change."""


class BlockedScaling(Model, frozen=True, kw_only=True):
    """A change a gate held back. Gardener nests the figures under `scalingStatus`."""

    reason: BlockingReason | None = None
    """The gate: StabilizationWindow, MaintenanceWindow, UpdatePolicy, Weight, MinChange, Rollout
    or ConflictingAutoscaler.
    """
    scaling_status: ScalingStatus | None = None
    """The change that was held back."""


class LastError(Model, frozen=True, kw_only=True):
    description: Text | None = None
    """What went wrong."""
    last_update_time: Time | None = None
    """When."""
    last_operation: str | None = None
    """What was being done."""


class Condition(Model, frozen=True, kw_only=True):
    """A metav1.Condition (AbleToScale, ScalingActive, ScalingLimited, ...)."""

    type: str
    """AbleToScale, ScalingActive, ScalingLimited, VerticalScalingActive or DryRun."""
    status: ConditionStatus
    """True, False or Unknown."""
    reason: Annotated[str, msgspec.Meta(max_length=1024)] = ""
    """Why, in one CamelCase word."""
    message: Text = ""
    """Why, for people."""
    last_transition_time: Time | None = None
    """When the status last changed."""
    observed_generation: Int64 | None = None
    """The spec generation the condition was set for."""


class ReplicaRecommendation(Model, frozen=True, kw_only=True):
    """A raw horizontal recommendation, before stabilization, as upstream's HPA keeps it."""

    time: Time
    """When."""
    replicas: Int32
    """The recommended replica count."""


class ScaleEvent(Model, frozen=True, kw_only=True):
    time: Time
    """When."""
    replica_change: Int32
    """By how many replicas the count changed (positive both ways)."""


class LastScaleTimes(Model, frozen=True, kw_only=True):
    """Per axis and direction; where absent, `status.lastScaling.lastScaleTime` stands for all four."""

    horizontal_up: Time | None = None
    """When replicas were last added."""
    horizontal_down: Time | None = None
    """When replicas were last removed."""
    vertical_up: Time | None = None
    """When requests last grew."""
    vertical_down: Time | None = None
    """When requests last shrank."""


class ResourceSample(Model, frozen=True, kw_only=True):
    """A total over the target's pods at one time, or the demand derived from it.

    In `history.usage` it is the load: the usage of the containers Capacity
    sizes, less `baseResourcesPerReplica` for every pod measured.
    """

    time: Time
    """When."""
    cpu: Quantity | None = None
    """CPU, a quantity."""
    memory: Quantity | None = None
    """Memory, a quantity."""


Axis = Literal["horizontal", "vertical"]
# A field path as the API server names it in an apply conflict (records.container_field).
FieldPath = Annotated[str, msgspec.Meta(max_length=1024)]
# A quantity or replica count as written, or a field manager's name (at most 128 bytes).
FieldValue = Annotated[str, msgspec.Meta(max_length=256)]
# One entry per container resource hvpa sets: 2 sections x 2 resources x containers.
MAX_FIELDS: Final = 1000


class FieldWrite(Model, frozen=True, kw_only=True):
    field: FieldPath
    """The field, as the API server names it (`.spec.replicas`)."""
    value: FieldValue
    """What hvpa set it to."""
    earlier: FieldValue | None = None
    """What it was before (absent: the field was not set)."""


class AxisWrite(Model, frozen=True, kw_only=True):
    """hvpa's latest write of one axis, kept until it is seen rewritten or written again."""

    axis: Axis
    """`horizontal` (the replica count) or `vertical` (the containers' resources)."""
    time: Time
    """When hvpa wrote it."""
    fields: Annotated[tuple[FieldWrite, ...], msgspec.Meta(max_length=MAX_FIELDS)]
    """The fields it set."""


class FieldRewrite(Model, frozen=True, kw_only=True):
    """The latest time another writer rewrote what hvpa had set on one axis."""

    axis: Axis
    """`horizontal` or `vertical`."""
    time: Time
    """When (the other manager's managedFields time, else when hvpa saw it)."""
    field: FieldPath
    """The first field found rewritten."""
    manager: FieldValue
    """The field manager that owns it now; empty when managedFields name none (the value went
    back to the one hvpa had replaced)."""
    value: FieldValue | None = None
    """The value found (absent: the field was removed)."""
    written: FieldValue
    """What hvpa had set."""
    count: Int32
    """Rewrites of this axis in a row, this one included: the hold doubles with each after the
    first two (docs/gitops.md)."""


class History(Model, frozen=True, kw_only=True):
    recommendations: HistoryList[ReplicaRecommendation] | None = None
    """Raw horizontal recommendations within the longest stabilization window, before
    stabilization (as upstream's HPA keeps them).
    """
    scale_up_events: HistoryList[ScaleEvent] | None = None
    """Replica additions within the longest scale-up policy period."""
    scale_down_events: HistoryList[ScaleEvent] | None = None
    """Replica removals within the longest scale-down policy period."""
    last_scale_times: LastScaleTimes | None = None
    """When each axis last moved each way."""
    usage: HistoryList[ResourceSample] | None = None
    """Capacity: total usage samples within the demand window."""
    demands: HistoryList[ResourceSample] | None = None
    """Capacity: demands within the scale-down stabilization window."""
    demand_since: Time | None = None
    """Capacity: when the Hvpa first had a demand (from usage, or from the VPA target as a
    new Hvpa's one-time bootstrap); once set, the VPA target is never read as demand again.
    """
    writes: Annotated[tuple[AxisWrite, ...], msgspec.Meta(max_length=2)] | None = None
    """hvpa's latest write of each axis, until another writer is seen to rewrite it."""
    rewrites: Annotated[tuple[FieldRewrite, ...], msgspec.Meta(max_length=2)] | None = None
    """The latest rewrite of each axis by another writer, while it still counts."""


# A pod has no bound on its containers; this is far above any real one, and it is what the API
# server's cost estimate for the status schema needs.
MAX_SIZED_CONTAINERS: Final = 64


class SizedContainer(Model, frozen=True, kw_only=True):
    """One container's size, as hvpa decided it for the target's pods."""

    name: str
    """The container (a restartable init container too)."""
    requests: ResourceList | None = None
    """Its requests."""
    limits: ResourceList | None = None
    """Its limits."""


class PodResources(Model, frozen=True, kw_only=True):
    """The pod size the in-place modes apply, and how far the pods are from it.

    The template keeps the size it had (patching it would replace every pod),
    so the size lives here: the next decision starts from it, the admission
    webhook gives it to new pods, and running pods are resized to it. The
    counts are the pods of the target at the latest decision.
    """

    containers: Annotated[tuple[SizedContainer, ...], msgspec.Meta(max_length=MAX_SIZED_CONTAINERS)]
    """The decided requests and limits of each sized container."""
    pods: NonNegative = 0
    """Pods of the target, not terminating."""
    at_size: NonNegative = 0
    """Of those, running at the decided size (what the kubelet reports applied)."""
    resizing: NonNegative = 0
    """Accepted by their kubelet, being applied (or restarting a container to apply it)."""
    waiting: NonNegative = 0
    """Not yet asked: paced (a container restarts for the resize) or held."""
    deferred: NonNegative = 0
    """Their kubelet cannot apply the size now (PodResizePending, Deferred)."""
    infeasible: NonNegative = 0
    """Their node can never fit the size, or the API server refuses it in place."""


class HvpaStatus(Model, frozen=True, kw_only=True):
    replicas: Int32 | None = None
    """The target's replica count after the latest decision (in a dry run, as it is)."""
    target_selector: Annotated[str, msgspec.Meta(max_length=4096)] | None = None
    """The target's pod selector, in string form."""
    target_ref: CrossVersionObjectReference | None = None
    """The target, whichever form the spec names it in (spec.targetRef or the three-stage form's
    hpaSpec.scaleTargetRef).
    """
    desired_replicas: Int32 | None = None
    """The replica count the latest decision wants (also in a dry run, where it is not applied).
    """
    hpa_scale_up_update_policy: UpdatePolicy | None = None
    """The update policy in force for this axis and direction (Gardener's field)."""
    hpa_scale_down_update_policy: UpdatePolicy | None = None
    """The update policy in force for this axis and direction (Gardener's field)."""
    vpa_scale_up_update_policy: UpdatePolicy | None = None
    """The update policy in force for this axis and direction (Gardener's field)."""
    vpa_scale_down_update_policy: UpdatePolicy | None = None
    """The update policy in force for this axis and direction (Gardener's field)."""
    hpa_weight: Int32 | None = None
    """The horizontal weight of the latest scaling, percent (Gardener's field)."""
    vpa_weight: Int32 | None = None
    """The vertical weight of the latest scaling, percent (Gardener's field)."""
    override_scale_up_stabilization: bool = False
    """Gardener's OOMKill flag: true makes the next vertical scale-up skip its stabilization
    window.
    """
    last_blocked_scaling: tuple[BlockedScaling, ...] | None = None
    """The changes the latest decision held back, and the gate that held each."""
    last_scaling: ScalingStatus | None = None
    """The latest change applied."""
    last_error: LastError | None = None
    """Gardener's last error."""
    conditions: tuple[Condition, ...] | None = None
    """What holds or drives the scaling, as standard conditions."""
    observed_generation: Int64 | None = None
    """The spec generation the status was written for."""
    history: History | None = None
    """What the next decision reads: recommendations, scale events, usage and demand samples."""
    pod_resources: PodResources | None = None
    """spec.vpa.resizeMode InPlaceOrRollout or InPlace: the size the pods are resized to in
    place and new pods get at admission, and how many pods have it.
    """
