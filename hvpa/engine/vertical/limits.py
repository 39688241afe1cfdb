"""New limits for new requests, and the invariant that no request exceeds its limit.

Gardener's rules (getScaledResourceLimit, scaleQuantityProportionally and
capRequestsToLimits in controllers/autoscaling/hvpa_controller.go):
no old limit means no limit; an old limit without an old request (the API
server treats the request as equal to the limit) or equal to it follows the
new request; otherwise the old limit/request ratio is kept, in milli-units
with the quotient floored, unless `limitsRequestsGapScaleParams` gives a
value or a percentage: then the limit is the larger of request * (1 + pct/100)
and request + value. A memory limit is rounded up to 1000 bytes.

With controlledValues `RequestsOnly` the limits stay; a new request above an
(old or new) limit is lowered to it. A request that the limit would push
below minAllowed is not changed at all: hvpa never writes a request outside
the policy bounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hvpa.quantity import format_milli, parse_milli
from hvpa.records import CPU, MEMORY, ContainerSpec, Resources

from .recommendation import REQUESTS_AND_LIMITS, ContainerTarget
from .requests import ChangeParams, ResourceChange, ScaleParams, change_params, round_request

__all__ = ["ContainerResources", "apply_changes", "scale_limit"]


def scale_limit(
    resource: str,
    old_limit: int | None,
    old_request: int | None,
    new_request: int,
    gap: ChangeParams | None,
) -> tuple[int | None, str]:
    """The limit (milli-units) that goes with `new_request`, and which rule gave it."""
    if not old_limit:
        return None, "no limit before, none after"
    if not old_request or old_request == old_limit:
        limit, rule = new_request, "limit follows the request"
    elif gap is None or (gap.value is None and not gap.percentage):
        limit = old_limit * new_request // old_request
        rule = f"ratio {format_milli(old_limit)}/{format_milli(old_request)} kept"
    else:
        by_percentage = new_request + new_request * gap.percentage // 100 if gap.percentage else 0
        by_value = new_request + parse_milli(gap.value) if gap.value is not None else 0
        limit = max(by_percentage, by_value)
        rule = (
            f"limitsRequestsGapScaleParams: max(request x (1 + {gap.percentage or 0}/100), "
            f"request + {gap.value if gap.value is not None else 0})"
        )
    return round_request(resource, limit), rule


@dataclass(frozen=True, slots=True)
class ContainerResources:
    """A container's requests and limits after the applied changes, in milli-units."""

    name: str
    requests: Resources
    limits: Resources
    applied: tuple[ResourceChange, ...]
    dropped: tuple[ResourceChange, ...] = ()
    explanation: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def apply_changes(
    container: ContainerSpec,
    changes: Sequence[ResourceChange],
    target: ContainerTarget,
    gap: ScaleParams | None,
) -> ContainerResources:
    """The container with `changes` (already past every gate) written into its requests and limits."""
    requests = {CPU: container.requests.cpu, MEMORY: container.requests.memory}
    limits = {CPU: container.limits.cpu, MEMORY: container.limits.memory}
    applied: list[ResourceChange] = []
    dropped: list[ResourceChange] = []
    lines: list[str] = []
    keep_limits = target.controlled_values != REQUESTS_AND_LIMITS
    for change in changes:
        resource, name = change.resource, f"vertical: {container.name} {change.resource}"
        request = change.proposed
        limit = limits[resource]
        if keep_limits:
            lines.append(f"{name}: controlledValues {target.controlled_values}: limit unchanged")
        else:
            old_limit = limits[resource]
            new_limit, rule = scale_limit(
                resource, old_limit, requests[resource], request, change_params(gap, resource)
            )
            if new_limit is not None:
                limit = new_limit
                lines.append(f"{name}: limit {format_milli(new_limit)} ({rule})")
        if limit and request > limit:
            lines.append(f"{name}: request {format_milli(request)} lowered to its limit")
            request = limit
        low = target.min_allowed.get(resource)
        if (low and request < low) or request == change.current:
            why = "below minAllowed under its limit" if request != change.current else "no change"
            lines.append(f"{name}: left at {format_milli(change.current)} ({why})")
            dropped.append(change)
            continue
        requests[resource], limits[resource] = request, limit
        applied.append(change)
        lines.append(f"{name}: request {format_milli(change.current)} -> {format_milli(request)}")
    return ContainerResources(
        name=container.name,
        requests=Resources(cpu=requests[CPU], memory=requests[MEMORY]),
        limits=Resources(cpu=limits[CPU], memory=limits[MEMORY]),
        applied=tuple(applied),
        dropped=tuple(dropped),
        explanation=tuple(lines),
    )
