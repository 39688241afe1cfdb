"""New requests: a weighted step from the current request towards the VPA target.

The arithmetic is Gardener's (getWeightedRequests in
controllers/autoscaling/hvpa_controller.go), so a Weighted Hvpa lands on the
same numbers: the difference to the target is taken in whole units (CPU in
millicores, memory in bytes), multiplied by the weight in percent and
divided by 100 with Go's integer division, which truncates toward zero; a
new memory request is then rounded up to a multiple of 1000 bytes. The
MinChange gate compares that truncated step, not the rounded request. What
is finally written rounds memory up once more, to a whole MiB
(`limits.apply_changes` says why).

Unlike Gardener, the result is kept inside the container policy's
[minAllowed, maxAllowed]: a request set below minAllowed (or above
maxAllowed) by hand would otherwise stay outside it after a weighted step.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from hvpa.engine.gomath import trunc_div
from hvpa.quantity import ceil_div, format_human_resource, parse_milli
from hvpa.records import CPU, MEMORY, ContainerSpec

from .recommendation import ContainerTarget

__all__ = [
    "DEFAULT_MIN_CHANGE",
    "MEMORY_STEP_MILLI",
    "ChangeParams",
    "Direction",
    "ResourceChange",
    "ScaleParams",
    "change_params",
    "clears_min_change",
    "min_change_threshold",
    "propose_changes",
    "round_request",
    "weighted_step",
]

Direction = Literal["up", "down"]

# Memory requests are rounded up to 1000 bytes; amounts are in milli-units.
MEMORY_STEP_MILLI: Final = 1_000_000
# Gardener's getThreshold defaults when minChange sets neither value nor percentage.
DEFAULT_MIN_CHANGE: Final = {CPU: parse_milli("200m"), MEMORY: parse_milli("200M")}


class ChangeParams(Protocol):
    """`{value, percentage}` as the Hvpa spec writes minChange and limitsRequestsGapScaleParams."""

    @property
    def value(self) -> str | int | float | None: ...

    @property
    def percentage(self) -> int | None: ...


class ScaleParams(Protocol):
    """`{cpu, memory}` of ChangeParams."""

    @property
    def cpu(self) -> ChangeParams | None: ...

    @property
    def memory(self) -> ChangeParams | None: ...


def change_params(params: ScaleParams | None, resource: str) -> ChangeParams | None:
    if params is None:
        return None
    return params.cpu if resource == CPU else params.memory


def min_change_threshold(params: ChangeParams | None, resource: str, current_milli: int) -> int:
    """The smallest step (milli-units) worth a rolling update, as Gardener's getThreshold.

    Neither value nor percentage set: 200m CPU, 200M memory. A percentage is
    of the current request (so 0 when there is none); with both set the
    smaller wins.
    """
    if params is None or (params.value is None and params.percentage is None):
        return DEFAULT_MIN_CHANGE[resource]
    if params.percentage is None:
        return parse_milli(params.value) if params.value is not None else 0
    by_percentage = current_milli * params.percentage // 100
    if params.value is None:
        return by_percentage
    return min(by_percentage, parse_milli(params.value))


def clears_min_change(
    change: ResourceChange, up: ScaleParams | None, down: ScaleParams | None
) -> tuple[bool, int]:
    """Whether the step reaches the threshold of its direction (equality passes), and the threshold.

    Gardener blocked when `step.Cmp(threshold) < 0`, so a step exactly at
    the threshold is applied.
    """
    params = change_params(up if change.direction == "up" else down, change.resource)
    threshold = min_change_threshold(params, change.resource, change.current)
    return abs(change.step) >= threshold, threshold


def weighted_step(resource: str, current: int, target: int, weight: int) -> int:
    """The change (milli-units) a weight in percent allows, truncated toward zero.

    Memory is stepped in whole bytes: apimachinery's Value() rounds the
    difference away from zero to a byte before it is weighted.
    """
    if resource == MEMORY:
        difference = target - current
        whole_bytes = ceil_div(abs(difference), 1000) * (1 if difference >= 0 else -1)
        return trunc_div(whole_bytes * weight, 100) * 1000
    return trunc_div((target - current) * weight, 100)


def round_request(resource: str, milli: int) -> int:
    """Memory up to a multiple of 1000 bytes (Gardener's SetScaled(.., Kilo)); CPU stays in millicores."""
    if resource == MEMORY:
        return ceil_div(milli, MEMORY_STEP_MILLI) * MEMORY_STEP_MILLI
    return milli


@dataclass(frozen=True, slots=True)
class ResourceChange:
    """One container resource the vertical axis would move, in milli-units.

    `step` is the weighted, truncated change MinChange measures; `proposed`
    the request after rounding and the policy bounds. `starving` says why the
    starvation guard lets it past MinChange and the scale-up window;
    `failing_rollout` why it may also pass the Rollout gate (the rollout in
    progress cannot finish: its own pods are OOMKilled). `exact` is the
    memory the weighted step gave before Gardener's 1000-byte rounding, when
    `proposed` is that rounding of it (not a policy bound): what is written
    rounds `exact` up to a whole MiB instead (`limits.apply_changes`), so a
    VPA target of exactly 256Mi is written 256Mi, not 257Mi.
    """

    container: str
    resource: str
    current: int
    target: int
    proposed: int
    step: int
    weight: int
    starving: str = ""
    failing_rollout: str = ""
    exact: int | None = None

    @property
    def direction(self) -> Direction:
        return "up" if self.target > self.current else "down"

    @property
    def moves(self) -> bool:
        return self.proposed != self.current

    def describe(self) -> str:
        return (
            f"{self.container} {self.resource} "
            f"{format_human_resource(self.resource, self.current)} -> "
            f"{format_human_resource(self.resource, self.proposed)}"
        )


def propose(
    target: ContainerTarget, resource: str, current: int, weight: int
) -> tuple[ResourceChange | None, str]:
    """The change for one resource at a weight, and the explanation line saying how."""
    wanted = target.target.get(resource)
    if wanted is None or not target.controls(resource):
        return None, ""
    human = functools.partial(format_human_resource, resource)
    if wanted == current:
        return None, f"vertical: {target.name} {resource}: at target {human(wanted)}"
    step = weighted_step(resource, current, wanted, weight)
    proposed = current
    exact: int | None = None
    line = (
        f"vertical: {target.name} {resource}: {human(current)} + "
        f"trunc(({human(wanted)} - {human(current)}) x {weight}/100) = "
        f"{human(current + step)}"
    )
    if step:
        proposed = round_request(resource, current + step)
        if proposed != current + step:
            line += f", rounded up to 1000 bytes: {human(proposed)}"
            exact = current + step
        bounded = target.clamp(resource, proposed)
        if bounded != proposed:
            line += f", kept within the policy bounds: {human(bounded)}"
            proposed, exact = bounded, None
    change = ResourceChange(
        target.name, resource, current, wanted, proposed, step, weight, exact=exact
    )
    return change, line


def propose_changes(
    containers: Sequence[ContainerSpec],
    targets: Sequence[ContainerTarget],
    weight_up: int,
    weight_down: int,
) -> tuple[tuple[ResourceChange, ...], tuple[str, ...]]:
    """Every controlled resource whose target differs from its request, stepped by the weight.

    A missing request counts as 0, as in Gardener. Changes whose step
    truncates to nothing (or whose weight is 0) are returned too, with
    `moves` False, so a strategy can say why they are held.
    """
    by_name = {t.name: t for t in targets}
    changes: list[ResourceChange] = []
    lines: list[str] = []
    for container in containers:
        target = by_name.get(container.name)
        if target is None:
            continue
        for resource in (CPU, MEMORY):
            current = container.requests.get(resource) or 0
            wanted = target.target.get(resource)
            weight = weight_up if wanted is not None and wanted > current else weight_down
            change, line = propose(target, resource, current, weight)
            if line:
                lines.append(line)
            if change is not None:
                changes.append(change)
    return tuple(changes), tuple(lines)
