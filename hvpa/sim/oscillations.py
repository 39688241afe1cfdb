"""Oscillation: an axis that turns back soon after it moved.

The report counts, per axis, the moves whose direction is the opposite of
the axis' previous move and which come within `window_seconds` (ten
minutes) of it: replicas up then down (or down then up), a pod's CPU request
up then down, its memory request likewise. Each is a change an autoscaler
made and then undid, paying its cost twice (a pod started for nothing, a
pod restarted twice). The horizontal axis is the workload's spec.replicas;
the vertical axis is the size new pods of the main container get: the
template's for hvpa, the admission controller's for a VPA baseline (its
pods differ from the template).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Final

__all__ = ["OSCILLATION_WINDOW_SECONDS", "direction_changes", "replica_moves", "size_moves"]

OSCILLATION_WINDOW_SECONDS: Final = 600.0

# (time in seconds, +1 for up or -1 for down)
Move = tuple[float, int]


def direction_changes(
    moves: Sequence[Move], window_seconds: float = OSCILLATION_WINDOW_SECONDS
) -> int:
    """How many moves reverse the move before them within `window_seconds`; moves in time order."""
    count = 0
    for (before, before_direction), (after, direction) in itertools.pairwise(moves):
        if direction != before_direction and after - before <= window_seconds:
            count += 1
    return count


def replica_moves(changes: Sequence[tuple[float, int, int]]) -> list[Move]:
    """(time, replicas before, after) changes as moves; an unchanged count is no move."""
    return [
        (time, 1 if after > before else -1) for time, before, after in changes if after != before
    ]


def size_moves(sizes: Sequence[tuple[float, Mapping[str, int]]]) -> dict[str, list[Move]]:
    """Per resource, the moves of a size over time: (time, {resource: amount}) in time order,
    the first being where it starts. A resource a size does not name keeps its amount."""
    moves: dict[str, list[Move]] = {}
    current: dict[str, int] = {}
    for time, size in sizes:
        for resource, amount in size.items():
            before = current.get(resource)
            current[resource] = amount
            if before is not None and amount != before:
                moves.setdefault(resource, []).append((time, 1 if amount > before else -1))
    return moves
