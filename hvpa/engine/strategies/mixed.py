"""`Mixed`: per-axis thresholds decide which axis moves when both have something new.

From the proposal: when only one axis has a new recommendation it applies.
When both do, the horizontal one qualifies if it moves more than
`replicaThreshold` replicas, the vertical one if some target differs from its
request by more than the resource's threshold or exceeds the container's
limit; if both qualify, `prefer` (Hpa or Vpa, Hpa by default) decides, and if
neither does, both wait. "New" for the vertical axis means a step that clears
MinChange, as for VpaBiased.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol

from hvpa.engine.explain import counted
from hvpa.engine.vertical import ContainerTarget, ResourceChange, ScaleParams
from hvpa.quantity import format_human_resource, parse_milli
from hvpa.records import CPU, MEMORY, ContainerSpec

from .common import full_weight, header, horizontal_move, moving, significant
from .plan import WEIGHT, Blocked, HorizontalInput, Plan, direction_of, held_changes

__all__ = ["MixedParams", "plan_mixed"]

PREFER_HPA: Final = "Hpa"
PREFER_VPA: Final = "Vpa"


class MixedParams(Protocol):
    """`spec.mixed`: thresholds as counts and quantities, and the preferred axis."""

    @property
    def replica_threshold(self) -> int | None: ...

    @property
    def cpu_threshold(self) -> str | int | float | None: ...

    @property
    def memory_threshold(self) -> str | int | float | None: ...

    @property
    def prefer(self) -> str | None: ...


def _vertical_qualifies(
    change: ResourceChange, limit: int | None, thresholds: dict[str, int]
) -> str:
    gap = abs(change.target - change.current)
    if gap > thresholds[change.resource]:
        return (
            f"{change.container} {change.resource}: |target - request| "
            f"{format_human_resource(change.resource, gap)} > "
            f"{format_human_resource(change.resource, thresholds[change.resource])}"
        )
    if limit and change.target > limit:
        return (
            f"{change.container} {change.resource}: target "
            f"{format_human_resource(change.resource, change.target)} "
            f"above limit {format_human_resource(change.resource, limit)}"
        )
    return ""


def plan_mixed(
    horizontal: HorizontalInput,
    containers: Sequence[ContainerSpec],
    targets: Sequence[ContainerTarget] | None,
    mixed: MixedParams | None,
    min_change_up: ScaleParams | None,
    min_change_down: ScaleParams | None,
) -> Plan:
    lines = [header("Mixed", horizontal)]
    changes, vertical_lines = full_weight(containers, targets)
    lines.extend(vertical_lines)
    proposed = moving(changes)
    wanted = horizontal_move(horizontal)
    vertical_new = significant(proposed, min_change_up, min_change_down)
    horizontal_replicas = horizontal.bounded(horizontal.wants)
    if wanted is None or not vertical_new:
        lines.append("mixed: at most one axis has a new recommendation; it applies")
        return Plan("Mixed", horizontal, horizontal_replicas, proposed, explanation=tuple(lines))

    replica_threshold = (mixed.replica_threshold if mixed else None) or 0
    cpu = mixed.cpu_threshold if mixed else None
    memory = mixed.memory_threshold if mixed else None
    thresholds = {
        CPU: parse_milli(cpu) if cpu is not None else 0,
        MEMORY: parse_milli(memory) if memory is not None else 0,
    }
    prefer = (mixed.prefer if mixed else None) or PREFER_HPA
    horizontal_ok = abs(wanted - horizontal.current) > replica_threshold
    lines.append(
        f"mixed: horizontal |{wanted} - {horizontal.current}| "
        f"{'>' if horizontal_ok else '<='} replicaThreshold {replica_threshold}"
    )
    limits = {c.name: c.limits for c in containers}
    reasons = [
        why
        for c in proposed
        if (why := _vertical_qualifies(c, limits[c.container].get(c.resource), thresholds))
    ]
    vertical_ok = bool(reasons)
    lines.extend(f"mixed: vertical qualifies: {why}" for why in reasons)
    if not vertical_ok:
        lines.append("mixed: no vertical change exceeds its threshold or its limit")
    if horizontal_ok and vertical_ok:
        choose_horizontal = prefer != PREFER_VPA
        lines.append(f"mixed: both qualify; prefer {prefer}")
    else:
        choose_horizontal = horizontal_ok

    direction = direction_of(horizontal.current, wanted)
    if choose_horizontal:
        note = "Mixed: the horizontal change goes first"
        blocked = held_changes(proposed, WEIGHT, note)
        return Plan("Mixed", horizontal, horizontal_replicas, (), blocked, explanation=tuple(lines))
    current = horizontal.bounded(horizontal.current)
    if vertical_ok:
        message = (
            f"Mixed: the vertical change goes first (recommendation {counted(wanted, 'replica')})"
        )
        blocked_h = (Blocked("horizontal", direction, WEIGHT, message),)
        return Plan("Mixed", horizontal, current, proposed, blocked_h, explanation=tuple(lines))
    message = "Mixed: neither axis exceeds its threshold"
    both = (
        Blocked(
            "horizontal",
            direction,
            WEIGHT,
            f"{message} (recommendation {counted(wanted, 'replica')})",
        ),
        *held_changes(proposed, WEIGHT, message),
    )
    return Plan("Mixed", horizontal, current, (), both, explanation=tuple(lines))
