"""`HpaBiased`: a new replica count wins; the vertical recommendation applies only when there is none.

"Biased" rather than "preferred": the vertical axis is not kept for the
bounds, it simply waits while the horizontal axis is moving.
"""

from __future__ import annotations

from collections.abc import Sequence

from hvpa.engine.explain import counted
from hvpa.engine.vertical import ContainerTarget
from hvpa.records import ContainerSpec

from .common import full_weight, header, horizontal_move, moving
from .plan import WEIGHT, HorizontalInput, Plan, held_changes

__all__ = ["plan_hpa_biased"]


def plan_hpa_biased(
    horizontal: HorizontalInput,
    containers: Sequence[ContainerSpec],
    targets: Sequence[ContainerTarget] | None,
) -> Plan:
    lines = [header("HpaBiased", horizontal)]
    changes, vertical_lines = full_weight(containers, targets)
    lines.extend(vertical_lines)
    wanted = horizontal_move(horizontal)
    if wanted is None:
        lines.append("horizontal: no change; the vertical recommendation applies")
        return Plan(
            "HpaBiased",
            horizontal,
            horizontal.bounded(horizontal.current),
            moving(changes),
            explanation=tuple(lines),
        )
    replicas = horizontal.bounded(wanted)
    lines.append(
        f"horizontal: {horizontal.current} -> {counted(replicas, 'replica')}; vertical waits"
    )
    blocked = held_changes(
        moving(changes),
        WEIGHT,
        f"HpaBiased: the horizontal change to {counted(replicas, 'replica')} goes first",
    )
    return Plan("HpaBiased", horizontal, replicas, (), blocked, explanation=tuple(lines))
