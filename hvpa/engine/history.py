"""What the horizontal axis wrote last time and reads back: recommendations and scale events.

Upstream's HPA controller keeps its recommendations and scale events in
memory, so a restart forgets them; hvpa keeps them in the Hvpa status
(`status.history`) and passes them in, so the decision is a function of its
inputs and survives a leader change. Times are POSIX seconds, like every
time the engine handles.

`recommendations is None` means the Hvpa has no history at all, a new Hvpa,
which upstream seeds with the current replica count; an empty tuple means an
empty history.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["HorizontalHistory", "Recommendation", "ScaleEvent"]


@dataclass(frozen=True, slots=True)
class Recommendation:
    """A raw horizontal recommendation (before stabilization, rate limits and min/max)."""

    time: float
    replicas: int


@dataclass(frozen=True, slots=True)
class ScaleEvent:
    """A change of the replica count the engine decided; `replica_change` is positive both ways."""

    time: float
    replica_change: int


@dataclass(frozen=True, slots=True)
class HorizontalHistory:
    """The horizontal part of `status.history`."""

    recommendations: tuple[Recommendation, ...] | None = None
    scale_up_events: tuple[ScaleEvent, ...] = ()
    scale_down_events: tuple[ScaleEvent, ...] = ()
