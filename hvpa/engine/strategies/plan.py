"""The values a strategy reads and writes: the horizontal input, the plan, blocks and holds.

A strategy proposes; it does not check update policies, windows or MinChange
(the gates do, for every strategy alike). What a strategy itself declines to
do is recorded as a Blocked with reason `Weight`, so the blocked list says why
an axis did not move even when no gate stopped it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from hvpa.engine.vertical import Direction, ResourceChange
from hvpa.quantity import format_human_resource

__all__ = [
    "CONFLICTING_AUTOSCALER",
    "MAINTENANCE_WINDOW",
    "MIN_CHANGE",
    "REASONS",
    "ROLLOUT",
    "STABILIZATION_WINDOW",
    "UPDATE_POLICY",
    "WEIGHT",
    "Axis",
    "Blocked",
    "Hold",
    "HorizontalInput",
    "Plan",
    "direction_of",
    "held_changes",
]

Axis = Literal["horizontal", "vertical"]

UPDATE_POLICY: Final = "UpdatePolicy"
MAINTENANCE_WINDOW: Final = "MaintenanceWindow"
STABILIZATION_WINDOW: Final = "StabilizationWindow"
MIN_CHANGE: Final = "MinChange"
WEIGHT: Final = "Weight"
ROLLOUT: Final = "Rollout"
CONFLICTING_AUTOSCALER: Final = "ConflictingAutoscaler"
# The order blocked changes are reported in (docs/engine.md, "Combining the axes").
REASONS: Final = (
    CONFLICTING_AUTOSCALER,
    UPDATE_POLICY,
    MAINTENANCE_WINDOW,
    STABILIZATION_WINDOW,
    MIN_CHANGE,
    WEIGHT,
    ROLLOUT,
)


@dataclass(frozen=True, slots=True)
class HorizontalInput:
    """The replica count and what the horizontal recommendation wants of it.

    `desired` is the recommendation after stabilization, rate limits and
    min/max (None: held for lack of data, so the count stays); `unclamped` is
    the same before min/max, which tells whether the recommendation presses
    against a bound. `moved_by` names each rule that moved the metrics' count
    to `desired`, with the change. `enabled` is False when `hpa.deploy` is false.
    """

    current: int
    min_replicas: int
    max_replicas: int
    desired: int | None = None
    unclamped: int | None = None
    enabled: bool = True
    moved_by: tuple[str, ...] = ()

    @property
    def wants(self) -> int:
        """The count the horizontal axis asks for; the current one when it asks nothing."""
        if not self.enabled or self.desired is None:
            return self.current
        return self.desired

    @property
    def presses_up(self) -> bool:
        """At (or over) maxReplicas while the unclamped recommendation wants more."""
        return (
            self.enabled
            and self.current >= self.max_replicas
            and self.unclamped is not None
            and self.unclamped > self.current
        )

    @property
    def presses_down(self) -> bool:
        """At (or under) minReplicas while the unclamped recommendation wants fewer."""
        return (
            self.enabled
            and self.current <= self.min_replicas
            and self.unclamped is not None
            and self.unclamped < self.current
        )

    def bounded(self, replicas: int) -> int:
        """Within [minReplicas, maxReplicas] while the axis acts; untouched when it holds."""
        if not self.enabled or self.desired is None:
            return self.current
        return max(self.min_replicas, min(self.max_replicas, replicas))


@dataclass(frozen=True, slots=True)
class Blocked:
    """A change that did not happen this decision, and why.

    Vertical blocks name the container and resource; `report` in gates.py
    merges them into one entry per axis, direction and reason. `why` is the
    gate's reason alone, without the move it names (Capacity plans within
    the gates' limits and words them for its own move).
    """

    axis: Axis
    direction: Direction
    reason: str
    message: str
    container: str = ""
    resource: str = ""
    why: str = ""


@dataclass(frozen=True, slots=True)
class Hold:
    """An axis that must not move this decision (missing data, another writer)."""

    axis: Axis
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class Plan:
    """A strategy's proposal: the replica count and the vertical changes, before the gates."""

    strategy: str
    horizontal: HorizontalInput
    replicas: int
    changes: tuple[ResourceChange, ...]
    blocked: tuple[Blocked, ...] = ()
    vpa_weight: int | None = None
    explanation: tuple[str, ...] = ()

    @property
    def current_replicas(self) -> int:
        return self.horizontal.current


def direction_of(current: int, wanted: int) -> Direction:
    return "up" if wanted > current else "down"


def held_changes(
    changes: tuple[ResourceChange, ...], reason: str, message: str
) -> tuple[Blocked, ...]:
    """Blocks for vertical changes a strategy declines, one per container resource."""
    return tuple(
        Blocked(
            "vertical",
            c.direction,
            reason,
            f"{message}: {c.container} {c.resource} "
            f"{format_human_resource(c.resource, c.current)} -> "
            f"target {format_human_resource(c.resource, c.target)}",
            c.container,
            c.resource,
        )
        for c in changes
    )
