"""`Hvpa.status`: Gardener's status fields, plus conditions and the engine's history.

The history is what makes the engine a pure function that survives restarts
and leader changes: everything a stabilization window or a demand percentile
needs is written back here. No `history` at all (None) means a new Hvpa; an
empty list means an empty history (ENGINE.md §2), so every list in `History`
keeps None and () apart.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal, TypeVar, get_args

import msgspec

from hvpa.api.autoscaling import Quantity
from hvpa.api.base import Int32, Int64, Model, Text, Time
from hvpa.api.spec import ResourceList, UpdatePolicy

__all__ = [
    "BLOCKING_REASONS",
    "BlockedScaling",
    "Condition",
    "History",
    "HpaStatus",
    "HvpaStatus",
    "LastError",
    "LastScaleTimes",
    "RecommendedContainerResources",
    "RecommendedPodResources",
    "ReplicaRecommendation",
    "ResourceSample",
    "ScaleEvent",
    "ScalingStatus",
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
]
# Gardener's five, plus Rollout and ConflictingAutoscaler (ENGINE.md §4).
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
    desired_replicas: Int32 | None = None


class RecommendedContainerResources(Model, frozen=True, kw_only=True):
    container_name: str | None = None
    target: ResourceList
    lower_bound: ResourceList | None = None
    upper_bound: ResourceList | None = None
    uncapped_target: ResourceList | None = None


class RecommendedPodResources(Model, frozen=True, kw_only=True):
    container_recommendations: tuple[RecommendedContainerResources, ...] | None = None


class VerticalPodAutoscalerCondition(Model, frozen=True, kw_only=True):
    type: str
    status: ConditionStatus
    last_transition_time: Time | None = None
    reason: str | None = None
    message: Text | None = None


class VerticalPodAutoscalerStatus(Model, frozen=True, kw_only=True):
    recommendation: RecommendedPodResources | None = None
    conditions: tuple[VerticalPodAutoscalerCondition, ...] | None = None


class ScalingStatus(Model, frozen=True, kw_only=True):
    last_scale_time: Time | None = None
    hpa_status: HpaStatus | None = None
    vpa_status: VerticalPodAutoscalerStatus | None = None


class BlockedScaling(Model, frozen=True, kw_only=True):
    """A change a gate held back. Gardener nests the figures under `scalingStatus`."""

    reason: BlockingReason | None = None
    scaling_status: ScalingStatus | None = None


class LastError(Model, frozen=True, kw_only=True):
    description: Text | None = None
    last_update_time: Time | None = None
    last_operation: str | None = None


class Condition(Model, frozen=True, kw_only=True):
    """A metav1.Condition (AbleToScale, ScalingActive, ScalingLimited, ...)."""

    type: str
    status: ConditionStatus
    reason: Annotated[str, msgspec.Meta(max_length=1024)] = ""
    message: Text = ""
    last_transition_time: Time | None = None
    observed_generation: Int64 | None = None


class ReplicaRecommendation(Model, frozen=True, kw_only=True):
    """A raw horizontal recommendation, before stabilization, as upstream's HPA keeps it."""

    time: Time
    replicas: Int32


class ScaleEvent(Model, frozen=True, kw_only=True):
    time: Time
    replica_change: Int32


class LastScaleTimes(Model, frozen=True, kw_only=True):
    """Per axis and direction; where absent, `status.lastScaling.lastScaleTime` stands for all four."""

    horizontal_up: Time | None = None
    horizontal_down: Time | None = None
    vertical_up: Time | None = None
    vertical_down: Time | None = None


class ResourceSample(Model, frozen=True, kw_only=True):
    """A total over the target's pods at one time, or the demand derived from it.

    In `history.usage` it is the load: the usage of the containers Capacity
    sizes, less `baseResourcesPerReplica` for every pod measured.
    """

    time: Time
    cpu: Quantity | None = None
    memory: Quantity | None = None


class History(Model, frozen=True, kw_only=True):
    recommendations: HistoryList[ReplicaRecommendation] | None = None
    scale_up_events: HistoryList[ScaleEvent] | None = None
    scale_down_events: HistoryList[ScaleEvent] | None = None
    last_scale_times: LastScaleTimes | None = None
    usage: HistoryList[ResourceSample] | None = None
    demands: HistoryList[ResourceSample] | None = None


class HvpaStatus(Model, frozen=True, kw_only=True):
    # The target's replica count, for the scale subresource.
    replicas: Int32 | None = None
    # The pods' label selector in string form, for the scale subresource.
    target_selector: str | None = None
    hpa_scale_up_update_policy: UpdatePolicy | None = None
    hpa_scale_down_update_policy: UpdatePolicy | None = None
    vpa_scale_up_update_policy: UpdatePolicy | None = None
    vpa_scale_down_update_policy: UpdatePolicy | None = None
    hpa_weight: Int32 | None = None
    vpa_weight: Int32 | None = None
    override_scale_up_stabilization: bool = False
    last_blocked_scaling: tuple[BlockedScaling, ...] | None = None
    last_scaling: ScalingStatus | None = None
    last_error: LastError | None = None
    conditions: tuple[Condition, ...] | None = None
    observed_generation: Int64 | None = None
    history: History | None = None
