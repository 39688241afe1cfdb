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

What is written rounds memory up to a whole MiB, after Gardener's arithmetic
(which the explanation still shows, and MinChange still measures). The API
server keeps a quantity in its canonical spelling, in which a byte count
that is no multiple of 1Ki has only a decimal spelling: Gardener's 672,138,000
bytes read `672138k` in the user's Deployment whatever hvpa sends, so only
the value can make it read `642Mi`. The cost is less than 1 MiB more per
request or limit, always upwards (never less than the arithmetic asked for):
under 1% of any request from 100Mi on. The VPA recommender makes the same
trade with `--humanize-memory` (recommendations rounded up to binary units
for readability); whole MiB keep the canonical spelling the readable one. A
request rounded past maxAllowed is maxAllowed, as the user wrote it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from hvpa.quantity import ceil_div, format_human_resource, parse_milli
from hvpa.records import CPU, MEMORY, ContainerSpec, Resources

from .recommendation import REQUESTS_AND_LIMITS, ContainerTarget
from .requests import ChangeParams, ResourceChange, ScaleParams, change_params, round_request

__all__ = [
    "WRITTEN_MEMORY_UNIT_MILLI",
    "ContainerResources",
    "apply_changes",
    "readable",
    "scale_limit",
]

# Memory written into a workload is a whole number of MiB (see the module docstring); in
# milli-units, as every amount here: 1,048,576 bytes x 1000.
WRITTEN_MEMORY_UNIT_MILLI: Final = (1 << 20) * 1000


def readable(resource: str, milli: int, ceiling: int | None = None) -> int:
    """`milli` as it is written: memory up to a whole MiB, but not past `ceiling`
    (maxAllowed) when it was within it; CPU as it is (millicores read well)."""
    if resource != MEMORY or milli % WRITTEN_MEMORY_UNIT_MILLI == 0:
        return milli
    rounded = ceil_div(milli, WRITTEN_MEMORY_UNIT_MILLI) * WRITTEN_MEMORY_UNIT_MILLI
    if ceiling and rounded > ceiling >= milli:
        return ceiling
    return rounded


def scale_limit(
    resource: str,
    old_limit: int | None,
    old_request: int | None,
    new_request: int,
    gap: ChangeParams | None,
    rounding: Callable[[str, int], int] = round_request,
) -> tuple[int | None, str]:
    """The limit (milli-units) that goes with `new_request`, and which rule gave it;
    `rounding` is Gardener's 1000 bytes unless the caller writes in whole MiB."""
    if not old_limit:
        return None, "no limit before, none after"
    if not old_request or old_request == old_limit:
        limit, rule = new_request, "limit follows the request"
    elif gap is None or (gap.value is None and not gap.percentage):
        limit = old_limit * new_request // old_request
        rule = (
            f"ratio {format_human_resource(resource, old_limit)}/"
            f"{format_human_resource(resource, old_request)} kept"
        )
    else:
        by_percentage = new_request + new_request * gap.percentage // 100 if gap.percentage else 0
        by_value = new_request + parse_milli(gap.value) if gap.value is not None else 0
        limit = max(by_percentage, by_value)
        rule = (
            f"limitsRequestsGapScaleParams: max(request x (1 + {gap.percentage or 0}/100), "
            f"request + {gap.value if gap.value is not None else 0})"
        )
    return rounding(resource, limit), rule


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
        # The limit scales with the request as the arithmetic gave it (before any
        # rounding); each is then rounded up on its own, so the rounding never compounds.
        computed = change.proposed
        exact = computed if change.exact is None else change.exact
        request = readable(resource, exact, target.max_allowed.get(resource))
        if request != computed:
            rounded = f"{format_human_resource(resource, exact)} rounded up to a whole MiB"
            if exact != computed:
                rounded += f" (in place of 1000 bytes: {format_human_resource(resource, computed)})"
            lines.append(f"{name}: {rounded}: {format_human_resource(resource, request)}")
        limit = limits[resource]
        if keep_limits:
            lines.append(f"{name}: controlledValues {target.controlled_values}: limit unchanged")
        else:
            old_limit = limits[resource]
            new_limit, rule = scale_limit(
                resource,
                old_limit,
                requests[resource],
                exact,
                change_params(gap, resource),
                rounding=readable,
            )
            if new_limit is not None:
                limit = new_limit
                lines.append(f"{name}: limit {format_human_resource(resource, new_limit)} ({rule})")
        if limit and request > limit:
            lines.append(
                f"{name}: request {format_human_resource(resource, request)} lowered to its limit"
            )
            request = limit
        low = target.min_allowed.get(resource)
        if (low and request < low) or request == change.current:
            why = "below minAllowed under its limit" if request != change.current else "no change"
            lines.append(
                f"{name}: left at {format_human_resource(resource, change.current)} ({why})"
            )
            dropped.append(change)
            continue
        requests[resource], limits[resource] = request, limit
        applied.append(change)
        lines.append(
            f"{name}: request {format_human_resource(resource, change.current)} -> {format_human_resource(resource, request)}"
        )
    return ContainerResources(
        name=container.name,
        requests=Resources(cpu=requests[CPU], memory=requests[MEMORY]),
        limits=Resources(cpu=limits[CPU], memory=limits[MEMORY]),
        applied=tuple(applied),
        dropped=tuple(dropped),
        explanation=tuple(lines),
    )
