"""Which vpaWeight applies at the current replica count: Gardener's interval lookup.

Reproduces getVpaWeightFromIntervals (controllers/autoscaling/hvpa_controller.go):
intervals are tried in list order and the first that contains the current
replica count wins; a start of 0 means minReplicas and a last of 0 means
maxReplicas; no match means weight 0. A weight of 100 would hold the replica
count for ever, so when the horizontal recommendation wants more replicas the
first later interval with a weight below 100 is used instead, and when it
wants fewer, the last interval with a weight below 100 seen up to the match;
with no such interval the weight stays 100.

Gardener read minReplicas through a nil pointer here and panicked when it was
unset; the caller passes the effective minReplicas (1 by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from hvpa.engine.explain import counted

__all__ = ["FULL_WEIGHT", "WeightInterval", "WeightLookup", "lookup_vpa_weight"]

FULL_WEIGHT: Final = 100


class WeightInterval(Protocol):
    """One entry of `spec.weightBasedScalingIntervals`; 0 or None bounds mean min/maxReplicas."""

    @property
    def vpa_weight(self) -> int: ...

    @property
    def start_replica_count(self) -> int | None: ...

    @property
    def last_replica_count(self) -> int | None: ...


@dataclass(frozen=True, slots=True)
class WeightLookup:
    weight: int
    interval: int | None
    explanation: tuple[str, ...]


def _span(interval: WeightInterval, min_replicas: int, max_replicas: int) -> tuple[int, int]:
    return (
        interval.start_replica_count or min_replicas,
        interval.last_replica_count or max_replicas,
    )


def lookup_vpa_weight(
    intervals: Sequence[WeightInterval],
    current: int,
    desired: int,
    min_replicas: int,
    max_replicas: int,
) -> WeightLookup:
    """The vpaWeight (percent) for `current` replicas when the horizontal axis wants `desired`."""
    last_fraction, last_fraction_at = FULL_WEIGHT, None
    for index, interval in enumerate(intervals):
        start, last = _span(interval, min_replicas, max_replicas)
        if interval.vpa_weight < FULL_WEIGHT:
            last_fraction, last_fraction_at = interval.vpa_weight, index
        if not start <= current <= last:
            continue
        found = (
            f"weight: interval {index + 1} [{start}..{last}] vpaWeight {interval.vpa_weight} "
            f"contains {counted(current, 'replica')}"
        )
        if interval.vpa_weight < FULL_WEIGHT or desired == current:
            return WeightLookup(interval.vpa_weight, index, (found,))
        if desired < current:
            where = (
                f"interval {last_fraction_at + 1}"
                if last_fraction_at is not None
                else "none, so it stays"
            )
            why = (
                f"{found}; the horizontal recommendation wants fewer ({desired}): "
                f"last earlier weight below 100 is {last_fraction} ({where})"
            )
            return WeightLookup(last_fraction, last_fraction_at, (why,))
        for later in range(index + 1, len(intervals)):
            if intervals[later].vpa_weight < FULL_WEIGHT:
                weight = intervals[later].vpa_weight
                why = (
                    f"{found}; the horizontal recommendation wants more ({desired}): "
                    f"next weight below 100 is {weight} (interval {later + 1})"
                )
                return WeightLookup(weight, later, (why,))
        why = (
            f"{found}; the horizontal recommendation wants more ({desired}) "
            "but no later interval has a weight below 100"
        )
        return WeightLookup(FULL_WEIGHT, index, (why,))
    return WeightLookup(
        0, None, (f"weight: no interval contains {counted(current, 'replica')}: vpaWeight 0",)
    )
