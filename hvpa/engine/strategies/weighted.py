"""`Weighted` (the default): both axes move by the interval's weight, as Gardener's hvpa did.

With vpaWeight w (percent) from weights.py: a request moves w% of the way to
the VPA target (requests.weighted_step) and the replica count (100 - w)% of
the way to the horizontal recommendation, rounded up when growing and down
when shrinking (Gardener's getWeightedReplicas), so any weight above 0 moves
at least one replica.

The proposal's mitigation: at maxReplicas, while the unclamped horizontal
recommendation wants more, vertical scale-ups take weight 100 (the only way
left to add capacity); at minReplicas, while it wants fewer, vertical
scale-downs do. Gardener approximated this with the HPA's ScalingLimited
condition and otherwise blocked every vertical scale-up.
"""

from __future__ import annotations

from collections.abc import Sequence

from hvpa.engine.explain import counted
from hvpa.engine.vertical import ContainerTarget, propose_changes
from hvpa.quantity import ceil_div
from hvpa.records import ContainerSpec

from .common import header, horizontal_move, moving
from .plan import WEIGHT, Blocked, HorizontalInput, Plan, direction_of, held_changes
from .weights import FULL_WEIGHT, WeightInterval, lookup_vpa_weight

__all__ = ["plan_weighted", "weighted_replicas"]


def weighted_replicas(current: int, desired: int, hpa_weight: int) -> tuple[int, str]:
    """current + (desired - current) * hpaWeight/100, ceil when growing, floor when shrinking."""
    scaled = current * 100 + (desired - current) * hpa_weight
    if desired > current:
        replicas, rounding = ceil_div(scaled, 100), "ceil"
    else:
        replicas, rounding = scaled // 100, "floor"
    return replicas, (
        f"replicas: {rounding}({current} + ({desired} - {current}) x {hpa_weight}/100) = {replicas}"
    )


def plan_weighted(
    horizontal: HorizontalInput,
    containers: Sequence[ContainerSpec],
    targets: Sequence[ContainerTarget] | None,
    intervals: Sequence[WeightInterval],
) -> Plan:
    """Both axes stepped by the weight of the interval holding the current replica count.

    `targets` is None when the vertical axis has nothing to apply (off, or
    held for lack of a recommendation).
    """
    lookup = lookup_vpa_weight(
        intervals,
        horizontal.current,
        horizontal.wants,
        horizontal.min_replicas,
        horizontal.max_replicas,
    )
    weight, hpa_weight = lookup.weight, FULL_WEIGHT - lookup.weight
    lines = [header("Weighted", horizontal), *lookup.explanation]
    lines.append(f"weight: vpaWeight {weight}, hpaWeight {hpa_weight}")
    blocked: list[Blocked] = []

    replicas = horizontal.bounded(horizontal.current)
    wanted = horizontal_move(horizontal)
    if wanted is not None:
        direction = direction_of(horizontal.current, wanted)
        if hpa_weight == 0:
            message = (
                f"vpaWeight 100 at {counted(horizontal.current, 'replica')} holds the replica count "
                f"(recommendation {wanted})"
            )
            blocked.append(Blocked("horizontal", direction, WEIGHT, message))
            lines.append(f"horizontal: {message}")
        else:
            stepped, line = weighted_replicas(horizontal.current, wanted, hpa_weight)
            lines.append(line)
            replicas = horizontal.bounded(stepped)
    if replicas != horizontal.current:
        lines.append(f"horizontal: {horizontal.current} -> {counted(replicas, 'replica')}")

    if targets is None:
        return Plan("Weighted", horizontal, replicas, (), tuple(blocked), weight, tuple(lines))
    weight_up = FULL_WEIGHT if horizontal.presses_up else weight
    weight_down = FULL_WEIGHT if horizontal.presses_down else weight
    if horizontal.presses_up:
        lines.append(
            f"weight: at maxReplicas {horizontal.max_replicas} and the horizontal "
            f"recommendation wants {horizontal.unclamped}: vertical scale-up with weight 100"
        )
    if horizontal.presses_down:
        lines.append(
            f"weight: at minReplicas {horizontal.min_replicas} and the horizontal "
            f"recommendation wants {horizontal.unclamped}: vertical scale-down with weight 100"
        )
    changes, vertical_lines = propose_changes(containers, targets, weight_up, weight_down)
    lines.extend(vertical_lines)
    held = tuple(c for c in changes if c.weight == 0)
    blocked.extend(
        held_changes(held, WEIGHT, f"vpaWeight 0 at {counted(horizontal.current, 'replica')}")
    )
    return Plan(
        "Weighted", horizontal, replicas, moving(changes), tuple(blocked), weight, tuple(lines)
    )
