"""PodDisruptionBudgets as the Eviction API honours them: whether an eviction may go ahead.

The native VPA updater evicts through `pods/eviction`, and the API server
refuses an eviction that would take more of a budget's pods down than it
allows (429 "Cannot evict pod as it would violate the pod's disruption
budget"); the updater logs the refusal and goes on to its next pod. The
model has no eviction subresource, so the baseline's updater asks these
rules before it deletes a pod, with the budget's status computed as the
disruption controller would write it at that moment:

- the expected pods: for `maxUnavailable` (a number or a percentage) and
  for a percentage `minAvailable`, the sum of the scale (spec.replicas) of
  the workloads owning the selected pods (a pod without one adds nothing);
  for a number `minAvailable`, the selected pods themselves; with neither
  set, none;
- desired healthy: expected minus maxUnavailable (a percentage of the
  expected, rounded up), not below 0; or minAvailable (a percentage rounded
  up);
- current healthy: the selected pods that are Ready and not being deleted
  (an evicted pod is deleted at once here, so it stops counting at once,
  where the real server marks it disrupted until the deletion is seen);
- disruptions allowed: current minus desired healthy, 0 when negative or
  when no pod is expected.

An eviction goes ahead without the budget for a pod that is Pending,
Succeeded or Failed, or already being deleted; for a running pod that is
not Ready when the budget's `unhealthyPodEvictionPolicy` is `AlwaysAllow`,
or, with `IfHealthyBudget` (the default), when current healthy is at least
desired healthy and desired healthy is above 0; otherwise only while
disruptions are allowed. A pod two budgets select is refused (the server
does not support that), and so is a budget whose values the disruption
controller cannot read (its status would never be current). As in
policy/v1, a budget without a selector selects nothing and an empty one
(`{}`) every pod of its namespace; an invalid one selects nothing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hvpa.labels import LabelSelector, SelectorError

__all__ = [
    "Budget",
    "BudgetPod",
    "BudgetStatus",
    "budget_status",
    "disruptions_allowed",
    "eviction_refusal",
    "parse_budget",
    "selects",
]

ALWAYS_ALLOW: Final = "AlwaysAllow"
_PERCENT: Final = re.compile(r"^([0-9]+)%$")
# The API server's answers (pkg/registry/core/pod/storage/eviction.go), as the updater logs them.
VIOLATES: Final = "Cannot evict pod as it would violate the pod's disruption budget."
TWO_BUDGETS: Final = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
    "support."
)


@dataclass(frozen=True, slots=True)
class Budget:
    """A PodDisruptionBudget's spec as the eviction reads it; `max_unavailable` and
    `min_available` are an int, a string ("50%"), or None when not set."""

    name: str
    namespace: str
    selector: LabelSelector
    max_unavailable: int | str | None = None
    min_available: int | str | None = None
    always_allow_unhealthy: bool = False


@dataclass(frozen=True, slots=True)
class BudgetPod:
    """What the rules read of a pod: its labels, phase, readiness and deletion, and the
    scale of the workload that owns it (its spec.replicas)."""

    namespace: str
    labels: Mapping[str, str]
    phase: str
    ready: bool
    deleting: bool
    owner_scale: tuple[str, int] | None


def parse_budget(obj: Mapping[str, Any]) -> Budget:
    """The budget as the eviction reads it: no selector, or an invalid one, selects nothing;
    an empty one every pod of the namespace."""
    metadata = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    raw = spec.get("selector")
    try:
        selector = LabelSelector.from_dict(raw if isinstance(raw, Mapping) else None)
    except SelectorError:
        selector = LabelSelector(nothing=True)
    return Budget(
        name=str(metadata.get("name", "")),
        namespace=str(metadata.get("namespace", "")),
        selector=selector,
        max_unavailable=spec.get("maxUnavailable"),
        min_available=spec.get("minAvailable"),
        always_allow_unhealthy=spec.get("unhealthyPodEvictionPolicy") == ALWAYS_ALLOW,
    )


def selects(budget: Budget, pod: BudgetPod) -> bool:
    return budget.namespace == pod.namespace and budget.selector.matches(pod.labels)


def _scaled(value: int | str, total: int) -> int | None:
    """An int, or a percentage of `total` rounded up (intstr's GetScaledValueFromIntOrPercent
    with roundUp); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    match = _PERCENT.match(value) if isinstance(value, str) else None
    if match is None:
        return None
    return math.ceil(int(match.group(1)) * total / 100)


def _expected_scale(pods: Sequence[BudgetPod]) -> int:
    """The sum of the scale of the workloads owning the pods, each counted once; a pod
    without such an owner adds nothing (upstream lists it as unmanaged)."""
    scales = dict(pod.owner_scale for pod in pods if pod.owner_scale is not None)
    return sum(scales.values())


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """A budget's status as the disruption controller writes it."""

    expected_pods: int
    desired_healthy: int
    current_healthy: int
    disruptions_allowed: int


def disruptions_allowed(expected: int, desired: int, healthy: int) -> int:
    """The budget's status.disruptionsAllowed (the disruption controller's updatePdbStatus)."""
    allowed = healthy - desired
    return 0 if expected <= 0 or allowed <= 0 else allowed


def budget_status(budget: Budget, pods: Sequence[BudgetPod]) -> BudgetStatus | None:
    """The status of `budget` over `pods` (every pod of its namespace); None when the
    disruption controller could not compute one (a value it cannot read)."""
    selected = [p for p in pods if selects(budget, p)]
    healthy = sum(1 for p in selected if p.ready and not p.deleting)
    expected, desired = 0, 0
    if budget.max_unavailable is not None:
        expected = _expected_scale(selected)
        unavailable = _scaled(budget.max_unavailable, expected)
        if unavailable is None:
            return None
        desired = max(0, expected - unavailable)
    elif isinstance(budget.min_available, int) and not isinstance(budget.min_available, bool):
        expected, desired = len(selected), budget.min_available
    elif budget.min_available is not None:
        expected = _expected_scale(selected)
        available = _scaled(budget.min_available, expected)
        if available is None:
            return None
        desired = available
    return BudgetStatus(expected, desired, healthy, disruptions_allowed(expected, desired, healthy))


def eviction_refusal(
    pod: BudgetPod, budgets: Sequence[Budget], pods: Sequence[BudgetPod]
) -> str | None:
    """Why the Eviction API refuses to evict `pod` (None: it evicts). `pods` are every pod
    of the namespace as they stand, `pod` among them."""
    if pod.phase in ("Pending", "Succeeded", "Failed") or pod.deleting:
        return None
    matching = [b for b in budgets if selects(b, pod)]
    if not matching:
        return None
    if len(matching) > 1:
        return TWO_BUDGETS
    budget = matching[0]
    status = budget_status(budget, pods)
    if not pod.ready:
        if budget.always_allow_unhealthy:
            return None
        if status is not None and status.current_healthy >= status.desired_healthy > 0:
            return None
    if status is None:
        return f"{VIOLATES} The disruption budget {budget.name} is still being processed."
    if status.disruptions_allowed == 0:
        return (
            f"{VIOLATES} The disruption budget {budget.name} needs {status.desired_healthy} "
            f"healthy pods and has {status.current_healthy} currently"
        )
    return None
