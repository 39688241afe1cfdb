"""Strategies: how the horizontal and the vertical recommendation combine (docs/strategies.md).

Each strategy is a pure function from the horizontal input, the containers
and their VPA targets to a Plan. `plan_scaling` picks one by the name
`spec.strategy` uses. `Capacity` (§5) is not among them: it reads neither
recommendation but a curve with the demand (capacity.py), and goes through
combine.combine_capacity.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from hvpa.engine.vertical import ContainerTarget, ScaleParams
from hvpa.records import ContainerSpec

from .hpa_biased import plan_hpa_biased
from .hpa_preferred import plan_hpa_preferred
from .mixed import MixedParams, plan_mixed
from .plan import Blocked, Hold, HorizontalInput, Plan
from .vpa_biased import plan_vpa_biased
from .weighted import plan_weighted
from .weights import WeightInterval, lookup_vpa_weight

__all__ = [
    "STRATEGIES",
    "Blocked",
    "Hold",
    "HorizontalInput",
    "MixedParams",
    "Plan",
    "WeightInterval",
    "lookup_vpa_weight",
    "plan_scaling",
]

STRATEGIES: Final = ("Weighted", "HpaPreferred", "HpaBiased", "VpaBiased", "Mixed")


def plan_scaling(
    strategy: str,
    horizontal: HorizontalInput,
    containers: Sequence[ContainerSpec],
    targets: Sequence[ContainerTarget] | None,
    *,
    intervals: Sequence[WeightInterval] = (),
    mixed: MixedParams | None = None,
    min_change_up: ScaleParams | None = None,
    min_change_down: ScaleParams | None = None,
) -> Plan:
    """The plan of the named strategy (`Weighted` when the spec names none)."""
    match strategy or "Weighted":
        case "Weighted":
            return plan_weighted(horizontal, containers, targets, intervals)
        case "HpaPreferred":
            return plan_hpa_preferred(horizontal, containers, targets)
        case "HpaBiased":
            return plan_hpa_biased(horizontal, containers, targets)
        case "VpaBiased":
            return plan_vpa_biased(horizontal, containers, targets, min_change_up, min_change_down)
        case "Mixed":
            return plan_mixed(
                horizontal, containers, targets, mixed, min_change_up, min_change_down
            )
    raise ValueError(f"strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
