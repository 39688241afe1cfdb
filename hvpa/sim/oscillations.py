"""Oscillation: an axis that turns back soon after it moved.

The report counts, per axis, the moves whose direction is the opposite of
the axis' previous move and which come within `window_seconds` (ten
minutes) of it: replicas up then down (or down then up), a pod's CPU request
up then down, its memory request likewise. Each is a change an autoscaler
made and then undid, paying its cost twice (a pod started for nothing, a
pod restarted twice). The horizontal axis is the workload's spec.replicas;
the vertical axis is the workload's pod size over time (`PodSizes`): the
main container's requests as they last reached one of its pods, whichever
way they got there. Every strategy and baseline is measured the same way:
a rollout's new pods, a pod an admission webhook or a VPA's admission
controller sized, and a running pod resized in place are all the size
reaching a pod, so a VPA that resizes in place oscillates as visibly as
one that evicts.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Final

__all__ = [
    "OSCILLATION_WINDOW_SECONDS",
    "PodSizes",
    "Size",
    "direction_changes",
    "replica_moves",
    "size_moves",
]

OSCILLATION_WINDOW_SECONDS: Final = 600.0

# (time in seconds, +1 for up or -1 for down)
Move = tuple[float, int]
# A container's requests: {resource: amount}, in millicores and bytes.
Size = Mapping[str, int]


class PodSizes:
    """The workload's pod size over time, as its pods show it.

    The size steps when one of the pods shows requests other than the last
    size reached: a pod created with them (a rollout's, or one a webhook or
    a VPA's admission controller sized), or a running pod its kubelet
    resized in place. A pod created at the size the others were resized to
    is no move;
    a pod created at the template's size and resized to another in place is
    two. Reading the pods rather than the controllers' intents (the
    template, an Hvpa's status, a recommendation) is what makes one
    definition serve every strategy: only a size a pod got counts, however
    it got there.
    """

    def __init__(self) -> None:
        self.sizes: list[tuple[float, Size]] = []
        self._pods: dict[str, Size] = {}

    def observe(self, time: float, pods: Mapping[str, Size]) -> None:
        """Record what the workload's pods (by name, in creation order) show at `time`."""
        for name, size in pods.items():
            if self._pods.get(name) == size:
                continue
            self._pods[name] = size
            if not self.sizes or self.sizes[-1][1] != size:
                self.sizes.append((time, dict(size)))
        for gone in self._pods.keys() - pods.keys():
            del self._pods[gone]


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
