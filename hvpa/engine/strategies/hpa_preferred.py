"""`HpaPreferred`: replicas first; pods grow only at maxReplicas and shrink only at minReplicas.

Vertical changes roll every pod, so this strategy keeps them for when the
replica count can go no further. With horizontal scaling off the vertical
axis acts alone and is not held.
"""

from __future__ import annotations

from collections.abc import Sequence

from hvpa.engine.explain import counted
from hvpa.engine.vertical import ContainerTarget
from hvpa.records import ContainerSpec

from .common import full_weight, header, moving
from .plan import WEIGHT, HorizontalInput, Plan, held_changes

__all__ = ["plan_hpa_preferred"]


def plan_hpa_preferred(
    horizontal: HorizontalInput,
    containers: Sequence[ContainerSpec],
    targets: Sequence[ContainerTarget] | None,
) -> Plan:
    lines = [header("HpaPreferred", horizontal)]
    replicas = horizontal.bounded(horizontal.wants)
    if replicas != horizontal.current:
        lines.append(f"horizontal: {horizontal.current} -> {counted(replicas, 'replica')}")
    changes, vertical_lines = full_weight(containers, targets)
    lines.extend(vertical_lines)
    proposed = moving(changes)
    at_max = not horizontal.enabled or horizontal.current >= horizontal.max_replicas
    at_min = not horizontal.enabled or horizontal.current <= horizontal.min_replicas
    allowed = tuple(c for c in proposed if (at_max if c.direction == "up" else at_min))
    ups = tuple(c for c in proposed if c.direction == "up" and not at_max)
    downs = tuple(c for c in proposed if c.direction == "down" and not at_min)
    blocked = held_changes(
        ups,
        WEIGHT,
        f"HpaPreferred: vertical scale-up only at maxReplicas "
        f"({horizontal.current} of {horizontal.max_replicas})",
    ) + held_changes(
        downs,
        WEIGHT,
        f"HpaPreferred: vertical scale-down only at minReplicas "
        f"({horizontal.current}, min {horizontal.min_replicas})",
    )
    lines.extend(f"vertical: {b.message}" for b in blocked)
    return Plan("HpaPreferred", horizontal, replicas, allowed, blocked, explanation=tuple(lines))
