"""The VPA updater's rules on plain data: which pods to update, in what order, how many at once.

The Vertical Pod Autoscaler's updater (kubernetes/autoscaler,
vertical-pod-autoscaler/pkg/updater) wakes every minute and, for each VPA in
an updating mode, decides per pod, in this order:

1. Capping: the recommendation is clamped to the container policy's
   minAllowed and maxAllowed, and with `controlledValues: RequestsOnly` to the
   container's limit (a request above its limit would be refused).
2. Priority: a pod is *outside the recommended range* when a container's
   request lies below the lowerBound or above the upperBound (a missing
   request counts as outside); it *scales up* when a target exceeds a
   request; its *resource diff* is, per resource, |total request - total
   target| / total request, summed over CPU and memory.
3. Whether to update: outside the range, or after a *quick OOM* (a
   container OOMKilled less than 10 minutes after it started, and the
   resources would change), always; otherwise only a pod that has lived 12
   hours (the long-lived-pod rule) and whose resource diff is at least 10%.
4. Order: pods that scale up first, then the larger resource diff.
5. Pacing (the eviction restriction): a group (a ReplicaSet) with fewer live
   pods than `min_replicas` (2) is left alone; otherwise at most
   `floor(replicas x eviction_tolerance)` (0.5) of its pods may be down at
   once, counting those evicted in this pass, and at least one when every
   pod is running. Pending pods may always be evicted. An optional rate
   limit (`--eviction-rate-limit`, off by default) spaces evictions.

6. In place (`updateMode: InPlaceOrRecreate`, in_place_decision): a pod the
   rules above would update is resized through `pods/resize` instead of
   evicted, when the group may lose it (the same budget: a resize started
   in this pass counts as a pod down); a pod whose earlier resize is still
   pending or in progress waits, and is evicted instead once the kubelet
   said Infeasible (or Error), deferred it for more than 5 minutes, or kept
   it in progress for more than an hour. Any other mode evicts.

The numbers are the updater's defaults (pkg/updater/config: updater
interval 1 min, min-replicas 2, eviction-tolerance 0.5, eviction-rate-limit
-1, pod-update-threshold 0.1, in-recommendation-bounds-eviction-lifetime-
threshold 12 h, evict-after-oom-threshold 10 min). Amounts are millicores
and bytes; a resource a container does not set is absent from its mapping.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeVar

__all__ = [
    "APPROVED",
    "CPU",
    "DEFERRED",
    "DEFERRED_RESIZE_TIMEOUT_SECONDS",
    "EVICT",
    "IN_PROGRESS_RESIZE_TIMEOUT_SECONDS",
    "MEMORY",
    "ContainerPolicy",
    "ContainerRecommendation",
    "ContainerResources",
    "EvictionBudget",
    "PodPriority",
    "RateLimiter",
    "ResizeConditions",
    "UpdaterSettings",
    "capped_target",
    "eviction_budget",
    "in_place_decision",
    "quick_oom",
    "update_order",
    "update_priority",
    "wants_update",
]

CPU: Final = "cpu"
MEMORY: Final = "memory"
RESOURCES: Final = (CPU, MEMORY)
_Pod = TypeVar("_Pod")

# What InPlaceOrRecreate does with a pod it would update (upstream's InPlaceDecision).
APPROVED: Final = "Approved"  # resize it in place now
DEFERRED: Final = "Deferred"  # leave it for a later pass
EVICT: Final = "Evict"  # fall back to eviction
# How long a resize may stay deferred by the kubelet, or in progress, before
# InPlaceOrRecreate gives it up and evicts the pod (upstream's constants, not flags).
DEFERRED_RESIZE_TIMEOUT_SECONDS: Final = 5 * 60.0
IN_PROGRESS_RESIZE_TIMEOUT_SECONDS: Final = 3600.0


@dataclass(frozen=True, slots=True)
class UpdaterSettings:
    """The updater's flags, at their upstream defaults."""

    interval_seconds: float = 60.0
    min_replicas: int = 2
    eviction_tolerance: float = 0.5
    # Evictions per second; None: no limit (upstream's -1).
    eviction_rate_limit: float | None = None
    eviction_rate_burst: int = 1
    update_threshold: float = 0.1
    pod_lifetime_threshold_seconds: float = 12 * 3600.0
    evict_after_oom_threshold_seconds: float = 600.0


@dataclass(frozen=True, slots=True)
class ContainerPolicy:
    """What the updater reads of a VPA container policy."""

    mode: str = "Auto"
    min_allowed: Mapping[str, int] = field(default_factory=dict)
    max_allowed: Mapping[str, int] = field(default_factory=dict)
    controlled_resources: tuple[str, ...] = RESOURCES
    controlled_values: str = "RequestsAndLimits"


@dataclass(frozen=True, slots=True)
class ContainerRecommendation:
    target: Mapping[str, int]
    lower_bound: Mapping[str, int] = field(default_factory=dict)
    upper_bound: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ContainerResources:
    """A running container's requests and limits."""

    name: str
    requests: Mapping[str, int]
    limits: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PodPriority:
    outside_recommended_range: bool
    scale_up: bool
    resource_diff: float


def capped_target(
    target: Mapping[str, int], policy: ContainerPolicy, limits: Mapping[str, int]
) -> dict[str, int]:
    """The target within minAllowed..maxAllowed (and, RequestsOnly, under the limit), for the
    resources the policy controls. maxAllowed wins over minAllowed where they cross, as the
    VPA's capping applies the maximum last."""
    result: dict[str, int] = {}
    for resource in policy.controlled_resources:
        amount = target.get(resource)
        if amount is None:
            continue
        low = policy.min_allowed.get(resource)
        high = policy.max_allowed.get(resource)
        if low is not None:
            amount = max(amount, low)
        if high is not None:
            amount = min(amount, high)
        limit = limits.get(resource)
        if policy.controlled_values == "RequestsOnly" and limit is not None:
            amount = min(amount, limit)
        result[resource] = amount
    return result


def update_priority(
    containers: Sequence[ContainerResources],
    recommendations: Mapping[str, ContainerRecommendation],
) -> PodPriority:
    """The pod's update priority against the (capped) recommendation of each container."""
    outside = scale_up = False
    requested: dict[str, int] = {}
    recommended: dict[str, int] = {}
    for container in containers:
        recommendation = recommendations.get(container.name)
        if recommendation is None:
            continue
        for resource, target in recommendation.target.items():
            recommended[resource] = recommended.get(resource, 0) + target
            request = container.requests.get(resource)
            if request is None:
                scale_up = outside = True
                continue
            requested[resource] = requested.get(resource, 0) + request
            if target > request:
                scale_up = True
            lower = recommendation.lower_bound.get(resource)
            upper = recommendation.upper_bound.get(resource)
            if (lower is not None and request < lower) or (upper is not None and request > upper):
                outside = True
    diff = 0.0
    for resource, target in recommended.items():
        total = max(float(requested.get(resource, 0)), 1.0)
        diff += abs(total - target) / total
    return PodPriority(outside, scale_up, diff)


def quick_oom(
    terminations: Iterable[tuple[str, float | None, float | None]], settings: UpdaterSettings
) -> bool:
    """Whether a last termination (reason, started, finished) of a VPA-scaled container was
    an OOMKill less than `evict_after_oom_threshold_seconds` after the container started."""
    return any(
        reason == "OOMKilled"
        and started is not None
        and finished is not None
        and finished - started < settings.evict_after_oom_threshold_seconds
        for reason, started, finished in terminations
    )


def wants_update(
    priority: PodPriority,
    *,
    started_at: float | None,
    quick_oom: bool,
    now: float,
    settings: UpdaterSettings,
) -> bool:
    """Whether the updater accepts the pod for an update (AddPod's rules)."""
    if not priority.outside_recommended_range and not quick_oom:
        if started_at is None:
            return False
        if now < started_at + settings.pod_lifetime_threshold_seconds:
            return False
        if priority.resource_diff < settings.update_threshold:
            return False
    return not (quick_oom and priority.resource_diff == 0)


def update_order(candidates: Iterable[tuple[_Pod, PodPriority]]) -> list[_Pod]:
    """Pods that scale up first, then the larger resource diff; ties keep their order."""
    ranked = sorted(candidates, key=lambda item: (not item[1].scale_up, -item[1].resource_diff))
    return [pod for pod, _ in ranked]


@dataclass(slots=True)
class EvictionBudget:
    """One replica group's room for disruptions in one pass (singleGroupStats).

    An in-place resize started in this pass counts as a pod down, as an
    eviction does: the kubelet may restart a container to apply it, and the
    updater does not know which."""

    configured: int
    running: int
    tolerance: int
    evicted: int = 0
    resized: int = 0

    def can_evict(self, *, pending: bool) -> bool:
        if pending:
            return True
        should_be_alive = self.configured - self.tolerance
        alive = self.running - (self.evicted + self.resized)
        return alive > should_be_alive or (
            self.configured == self.running
            and self.tolerance == 0
            and self.evicted == 0
            and self.resized == 0
        )

    def record(self, *, pending: bool) -> None:
        if not pending:
            self.evicted += 1

    def record_resize(self) -> None:
        self.resized += 1


def eviction_budget(
    *, configured: int, live: int, pending: int, settings: UpdaterSettings
) -> EvictionBudget | None:
    """The group's budget; None when it has fewer live pods than min_replicas (no eviction).

    `configured` is the group's spec.replicas, `live` its pods bound to a node and not
    being deleted, `pending` how many of those are still Pending."""
    if live < settings.min_replicas:
        return None
    tolerance = math.floor(configured * settings.eviction_tolerance)
    return EvictionBudget(configured=configured, running=live - pending, tolerance=tolerance)


@dataclass(slots=True)
class RateLimiter:
    """A token bucket as Go's rate.Limiter: `rate` tokens a second up to `burst`.

    Upstream waits for a token inside the pass; here a pass that finds no token stops
    and the next pass goes on, which spaces evictions the same way at a minute's grain."""

    rate: float | None
    burst: int
    tokens: float = 0.0
    last: float | None = None

    def allow(self, now: float) -> bool:
        if self.rate is None:
            return True
        if self.last is None:
            self.tokens = float(self.burst)
        else:
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass(frozen=True, slots=True)
class ResizeConditions:
    """A pod's in-place resize as its status conditions tell it.

    `pending` is the reason of a True PodResizePending (Deferred or
    Infeasible), `in_progress` that of a True PodResizeInProgress ('' while
    the kubelet applies it, Error when it failed); None where the condition
    is absent. Either one means the pod is still being resized."""

    pending: str | None = None
    in_progress: str | None = None

    @property
    def resizing(self) -> bool:
        return self.pending is not None or self.in_progress is not None


def in_place_decision(
    mode: str,
    *,
    phase_pending: bool,
    resize: ResizeConditions,
    waited_seconds: float,
    budget: EvictionBudget | None,
) -> str:
    """APPROVED, DEFERRED or EVICT for a pod the updater would update (CanInPlaceUpdate).

    Only InPlaceOrRecreate resizes in place; every other updating mode
    evicts. A group below min-replicas (`budget` None) and a Pending pod
    wait. A pod still being resized waits for the kubelet, unless the
    resize has failed (Infeasible, Error, an unknown reason), or stayed
    Deferred longer than 5 minutes or in progress longer than an hour since
    the updater first saw it (`waited_seconds`): then it is evicted, if the
    group may lose a pod. A pod not being resized is resized now if the
    group may lose a pod, else later.
    """
    if mode != "InPlaceOrRecreate":
        return EVICT
    if budget is None or phase_pending:
        return DEFERRED
    disruptable = budget.can_evict(pending=False)
    if resize.resizing:
        return EVICT if disruptable and _resize_failed(resize, waited_seconds) else DEFERRED
    return APPROVED if disruptable else DEFERRED


def _resize_failed(resize: ResizeConditions, waited_seconds: float) -> bool:
    """Whether InPlaceOrRecreate gives up a resize under way (CanEvictInPlacingPod)."""
    if resize.pending is not None:
        if resize.pending == "Deferred":
            return waited_seconds > DEFERRED_RESIZE_TIMEOUT_SECONDS
        return True  # Infeasible, or a reason the updater does not know
    if resize.in_progress == "":
        return waited_seconds > IN_PROGRESS_RESIZE_TIMEOUT_SECONDS
    return resize.in_progress is not None  # Error, or a reason the updater does not know
