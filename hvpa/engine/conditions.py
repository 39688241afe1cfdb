"""Status conditions, set the way the HPA controller sets them.

Upstream keeps one condition per type in a list, in the order each type was
first set, and moves `lastTransitionTime` only when the status flips; a
reason or message change alone keeps the old time. hvpa reads the list back
from the Hvpa status and updates it in place the same way, so a condition
that keeps its status keeps its transition time across decisions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

__all__ = [
    "ABLE_TO_SCALE",
    "INVALID_SPEC",
    "SCALED_TO_ZERO",
    "SCALING_ACTIVE",
    "SCALING_LIMITED",
    "VERTICAL_SCALING_ACTIVE",
    "Condition",
    "Conditions",
]

ABLE_TO_SCALE: Final = "AbleToScale"
SCALING_ACTIVE: Final = "ScalingActive"
SCALING_LIMITED: Final = "ScalingLimited"
# Upstream's HPAScaleToZero: True while the target is at zero because hvpa scaled it there.
SCALED_TO_ZERO: Final = "ScaledToZero"
# hvpa's own: whether the vertical axis may act, and if not, what holds it.
VERTICAL_SCALING_ACTIVE: Final = "VerticalScalingActive"
# ScalingActive=False for a spec that cannot be applied (named field or parameter).
INVALID_SPEC: Final = "InvalidSpec"


@dataclass(frozen=True, slots=True)
class Condition:
    type: str
    status: str  # "True" | "False" | "Unknown"
    reason: str
    message: str
    last_transition_time: float | None = None


class Conditions:
    """An ordered, mutable set of conditions keyed by type (upstream's setConditionInList)."""

    __slots__ = ("_items", "_now", "_set_now")

    def __init__(self, existing: Iterable[Condition], now: float) -> None:
        self._items: list[Condition] = list(existing)
        self._now = now
        self._set_now: set[str] = set()

    def set(self, kind: str, status: bool, reason: str, message: str) -> None:
        text = "True" if status else "False"
        self._set_now.add(kind)
        for index, old in enumerate(self._items):
            if old.type == kind:
                moved = old.status != text
                # The constructor, not dataclasses.replace: this runs a dozen times a decision.
                self._items[index] = Condition(
                    kind, text, reason, message, self._now if moved else old.last_transition_time
                )
                return
        self._items.append(Condition(kind, text, reason, message, self._now))

    def remove(self, kind: str) -> None:
        """Drop the condition of that type (it no longer applies: a mode switched off)."""
        self._items = [c for c in self._items if c.type != kind]

    def get(self, kind: str) -> Condition | None:
        return next((c for c in self._items if c.type == kind), None)

    def drop_stale(self, kind: str, reason: str) -> None:
        """Remove `kind` if it still carries `reason` from an earlier status and was not set
        in this decision: a reason that only this decision can establish (InvalidSpec for a
        spec that parses again) must not outlive the problem that set it."""
        if kind in self._set_now:
            return
        self._items = [c for c in self._items if not (c.type == kind and c.reason == reason)]

    def items(self) -> tuple[Condition, ...]:
        return tuple(self._items)
