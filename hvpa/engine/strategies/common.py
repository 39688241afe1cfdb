"""Pieces every strategy shares: the opening explanation line and the full-weight proposal."""

from __future__ import annotations

from collections.abc import Sequence

from hvpa.engine.explain import counted
from hvpa.engine.vertical import (
    ContainerTarget,
    ResourceChange,
    ScaleParams,
    clears_min_change,
    propose_changes,
)
from hvpa.records import ContainerSpec

from .plan import HorizontalInput

__all__ = ["full_weight", "header", "horizontal_move", "moving", "significant"]


def header(strategy: str, horizontal: HorizontalInput) -> str:
    bounds = f"min {horizontal.min_replicas}, max {horizontal.max_replicas}"
    if not horizontal.enabled:
        wants = "horizontal scaling off (hpa.deploy false)"
    elif horizontal.desired is None:
        wants = "no horizontal recommendation (held)"
    else:
        wants = f"horizontal recommendation {horizontal.desired}"
        if horizontal.moved_by:
            wants += f" ({'; '.join(horizontal.moved_by)})"
    return f"strategy {strategy}: {counted(horizontal.current, 'replica')} ({bounds}), {wants}"


def horizontal_move(horizontal: HorizontalInput) -> int | None:
    """The replica count the horizontal axis asks for, or None when it asks for no change."""
    wants = horizontal.wants
    return None if wants == horizontal.current else wants


def full_weight(
    containers: Sequence[ContainerSpec], targets: Sequence[ContainerTarget] | None
) -> tuple[tuple[ResourceChange, ...], tuple[str, ...]]:
    """The VPA targets taken whole (weight 100), as every strategy but Weighted applies them."""
    if targets is None:
        return (), ("vertical: no recommendation to apply",)
    return propose_changes(containers, targets, 100, 100)


def moving(changes: Sequence[ResourceChange]) -> tuple[ResourceChange, ...]:
    return tuple(c for c in changes if c.moves)


def significant(
    changes: Sequence[ResourceChange], up: ScaleParams | None, down: ScaleParams | None
) -> bool:
    """Whether any change clears MinChange: a vertical recommendation worth acting on."""
    return any(c.moves and clears_min_change(c, up, down)[0] for c in changes)
