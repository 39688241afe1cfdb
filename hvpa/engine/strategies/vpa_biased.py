"""`VpaBiased`: a vertical recommendation worth applying wins; replicas move only when there is none.

"Worth applying" means at least one step clears MinChange: a target a few
millicores off would otherwise hold the replica count for ever. Steps below
MinChange still go to the gates, which report them.
"""

from __future__ import annotations

from collections.abc import Sequence

from hvpa.engine.explain import counted
from hvpa.engine.vertical import ContainerTarget, ScaleParams
from hvpa.records import ContainerSpec

from .common import full_weight, header, horizontal_move, moving, significant
from .plan import WEIGHT, Blocked, HorizontalInput, Plan, direction_of

__all__ = ["plan_vpa_biased"]


def plan_vpa_biased(
    horizontal: HorizontalInput,
    containers: Sequence[ContainerSpec],
    targets: Sequence[ContainerTarget] | None,
    min_change_up: ScaleParams | None,
    min_change_down: ScaleParams | None,
) -> Plan:
    lines = [header("VpaBiased", horizontal)]
    changes, vertical_lines = full_weight(containers, targets)
    lines.extend(vertical_lines)
    proposed = moving(changes)
    wanted = horizontal_move(horizontal)
    if not significant(proposed, min_change_up, min_change_down) or wanted is None:
        replicas = horizontal.bounded(horizontal.wants)
        if replicas != horizontal.current:
            lines.append(
                f"horizontal: no vertical change clears MinChange; "
                f"{horizontal.current} -> {counted(replicas, 'replica')}"
            )
        return Plan("VpaBiased", horizontal, replicas, proposed, explanation=tuple(lines))
    direction = direction_of(horizontal.current, wanted)
    message = (
        f"VpaBiased: the vertical change goes first (recommendation {counted(wanted, 'replica')})"
    )
    lines.append(f"horizontal: {message}")
    blocked = (Blocked("horizontal", direction, WEIGHT, message),)
    return Plan(
        "VpaBiased",
        horizontal,
        horizontal.bounded(horizontal.current),
        proposed,
        blocked,
        explanation=tuple(lines),
    )
