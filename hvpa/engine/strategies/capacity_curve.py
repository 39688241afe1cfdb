"""The `Capacity` curve and its point for a demand: the fewest replicas whose ceiling covers it.

The curve is a list of points {replicas, cpu, memory}, non-decreasing in
every coordinate and linearly interpolated: the largest per-pod request
allowed at each replica count (flat before its first point and after its
last; a repeated count is a vertical segment). Its point for a demand D is
the fewest replicas n within min/max with n x (ceiling(n) - overhead) >= D
for every resource, and pods of overhead + D / n there, never above the
ceiling nor outside minAllowed/maxAllowed. That point depends on D alone,
whichever side it is reached from, and its total is D itself: the answer
to Gardener's mixed deltas (1 x 1 core needing 5 cores ended at 3 x 3 = 9
cores at 50/50; here at 3 x 1667m).

Two rules widen a pod's share (`Room.share`), each for a resource without an
HPA target (neither Utilization nor AverageValue: memory, usually), which
has only Capacity's `headroom` (25% unset): beside a resource that has one it carries
the joint band's slack
(the count may sit `tolerance` short of the CPU demand, and the same pods
must hold all the memory), and alone, from four replicas, it carries its
load with one pod out (a rolling update or a restart takes one down).
Past the curve's end (even max replicas at the curve's size fall short)
pods grow beyond the curve up to maxAllowed.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Final

from hvpa.engine.demand import describe_amounts
from hvpa.engine.explain import counted
from hvpa.engine.vertical import round_request
from hvpa.quantity import ceil_div, format_human_resource
from hvpa.records import CPU, MEMORY, Resources

__all__ = [
    "SPARE_FROM_REPLICAS",
    "CapacityParams",
    "CurvePoint",
    "Room",
    "Shape",
    "ceiling",
    "curve_point",
    "fewest_replicas",
    "held_shortfall",
    "tolerated",
    "within",
]

# A Deployment's default maxUnavailable (25%, rounded down) takes a pod down from four replicas.
SPARE_FROM_REPLICAS: Final = 4
# How a count falls short of a resource's demand (Room.short): with all its pods, or with one out.
ALL_PODS: Final = "all pods"
ONE_OUT: Final = "one pod out"


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """The largest per-pod request at `replicas`, milli-units; None where the curve sets none."""

    replicas: int
    amounts: Resources


@dataclass(frozen=True, slots=True)
class CapacityParams:
    """`spec.capacity` in the units the engine computes with; tolerances and headroom are percents."""

    curve: tuple[CurvePoint, ...]
    overhead: Mapping[str, int]
    tolerance: Fraction
    resize_tolerance: Fraction
    headroom: Fraction
    # The curve per resource as `ceiling` reads it, sorted once here: a decision asks the
    # ceiling at a dozen or more counts (the search for the fewest replicas, the band).
    points: Mapping[str, _Points] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        points = {resource: _points(self.curve, resource) for resource in (CPU, MEMORY)}
        object.__setattr__(self, "points", points)


@dataclass(frozen=True, slots=True)
class Shape:
    """A replica count and the per-pod size of each resource (milli-units) there."""

    replicas: int
    sizes: Mapping[str, int]

    def total(self, resource: str) -> int:
        return self.replicas * self.sizes[resource]


@dataclass(frozen=True, slots=True)
class _Points:
    """One resource's curve: its (replicas, amount) points sorted, and their counts apart
    for the search."""

    pairs: tuple[tuple[int, int], ...]
    counts: tuple[int, ...]


def _points(curve: Sequence[CurvePoint], resource: str) -> _Points:
    pairs = sorted((p.replicas, a) for p in curve if (a := p.amounts.get(resource)) is not None)
    return _Points(tuple(pairs), tuple(count for count, _ in pairs))


def ceiling(curve: Sequence[CurvePoint], resource: str, replicas: int) -> int | None:
    """The curve's per-pod ceiling at a replica count, linearly interpolated and rounded down.

    Before the first point and after the last the curve is flat; at a count
    with several points (a vertical segment) the largest wins. None when the
    curve gives no amount for the resource.
    """
    return _interpolated(_points(curve, resource), replicas)


def _interpolated(points: _Points, replicas: int) -> int | None:
    """`ceiling` on a resource's sorted points: the last point at or below the count (the
    largest amount there, as the points sort by count, then amount) and the first above it."""
    pairs = points.pairs
    if not pairs:
        return None
    above = bisect_right(points.counts, replicas)
    if above == 0:
        return pairs[0][1]
    low_replicas, low_amount = pairs[above - 1]
    if above == len(pairs):
        return low_amount
    high_replicas, high_amount = pairs[above]
    span = high_replicas - low_replicas
    return low_amount + (high_amount - low_amount) * (replicas - low_replicas) // span


def held_shortfall(tolerance: Fraction, headroom_only: bool) -> Fraction:
    """How far (a percent) below the demand the hysteresis may hold a resource's pods.

    A resource with a utilization target (CPU, compressible) keeps most of
    that target's margin while it runs up to `tolerance` over it, as an HPA
    does (70% held up to 77%). One with only Capacity's `headroom`
    (memory, usually) holds no shortfall: memory is not compressible, and a
    pod using more than it requests is among the first the kubelet evicts
    under memory pressure, so its requests follow every rise (a pod added
    is ready in seconds).
    """
    return Fraction(0) if headroom_only else tolerance


def tolerated(
    demand: Mapping[str, int], tolerance: Fraction, headroom_only: frozenset[str]
) -> dict[str, int]:
    """The demand less the shortfall the hysteresis may hold (rounded up: exact integers)."""
    return {
        resource: math.ceil(
            needed * 100 / (100 + held_shortfall(tolerance, resource in headroom_only))
        )
        for resource, needed in demand.items()
    }


def within(value: int, reference: int, tolerance: Fraction) -> bool:
    """|value - reference| <= tolerance% of reference (exact, in integers and fractions)."""
    return abs(value - reference) * 100 <= tolerance * reference


@dataclass(frozen=True, slots=True)
class Room:
    """What a pod may hold of each resource: the curve (or the size it must keep), and maxAllowed.

    `fixed` are the per-pod sizes that may not change (an axis that is off
    or held); `spare` the resources without an HPA target; `slack`
    the joint band's tolerance, carried by those when a resource with a
    target is sized beside them (0 otherwise).
    """

    params: CapacityParams
    fixed: Mapping[str, int]
    max_allowed: Mapping[str, int | None]
    min_allowed: Mapping[str, int]
    spare: frozenset[str] = frozenset()
    slack: Fraction = Fraction(0)

    def keeping(self, sizes: Mapping[str, int]) -> Room:
        """The same room with pods that keep `sizes` (today's, or the held resources')."""
        return replace(self, fixed={**self.fixed, **sizes})

    def cap(self, resource: str, replicas: int) -> int | None:
        """The largest per-pod size at `replicas`; None: unbounded."""
        if resource in self.fixed:
            return self.fixed[resource]
        points = self.params.points.get(resource)  # none: the curve cannot give the resource
        top = None if points is None else _interpolated(points, replicas)
        most = self.max_allowed.get(resource)
        if top is None:
            return most
        return top if most is None else min(top, most)

    def past_end(self, resource: str, replicas: int) -> int | None:
        """Past the curve's end pods grow to maxAllowed; without one they stay on the curve."""
        if resource in self.fixed:
            return self.fixed[resource]
        most = self.max_allowed.get(resource)
        return most if most is not None else self.cap(resource, replicas)

    def fits(self, sizes: Mapping[str, int], replicas: int) -> bool:
        """Whether pods of `sizes` are within what a pod may hold at `replicas`."""
        return all(
            (top := self.cap(r, replicas)) is None or size <= top for r, size in sizes.items()
        )

    def covers(self, demand: Mapping[str, int], replicas: int) -> bool:
        """Whether `replicas` pods, as large as the room lets them be, cover the demand."""
        return not any(self.short(r, needed, replicas) for r, needed in demand.items())

    def short(self, resource: str, needed: int, replicas: int) -> str:
        """How `replicas` pods as large as the room lets them be fall short of `needed` of
        `resource`: "" (they do not), ALL_PODS (together) or ONE_OUT (with one pod out,
        where `spares` asks that)."""
        top = self.cap(resource, replicas)
        if top is None:
            return ""
        room = max(top - self.params.overhead.get(resource, 0), 0)
        if replicas * room < needed:
            return ALL_PODS
        if (
            self.spares(resource, replicas)
            and (replicas - 1) * room * (100 + self.params.headroom) < needed * 100
        ):
            return ONE_OUT
        return ""

    def spares(self, resource: str, replicas: int) -> bool:
        """Whether `replicas` pods must carry the load of `resource` with one of them out.

        A resource without an HPA target (memory, usually) has only
        Capacity's `headroom`, less than a pod's share below 1 + 100 /
        headroom pods (five at the default 25%, eight at 15%): while one pod
        is starting, restarting or being replaced in a rolling update, the
        others carry its share, and with too little headroom they run out
        (of memory: OOMKills). So there the count must carry the load
        itself with one pod out, as well as the demand with all of them.
        One pod alone has no other to carry it. A resource with a target
        (Utilization, or AverageValue: capacity_inputs.targeted) is carried
        as its owner said a pod may be, as an HPA would carry it.

        Not where the band's slack applies (`slacks`: memory beside a CPU
        target): that share already holds (1 + headroom) x 1.1 over the
        load (26.5% at a 15% headroom), which carries a pod out from 5
        replicas; measured with the slack (and a 15% headroom),
        this rule on top added nothing to the under-provisioned minutes of
        any `hvpa sim` trace and cost 1 to 2 points of CPU utilization (it
        added a pod for a 1% memory shortfall with one pod out).
        """
        return (
            resource in self.spare and replicas >= SPARE_FROM_REPLICAS and not self.slacks(resource)
        )

    def slacks(self, resource: str) -> bool:
        """Whether a pod's share of `resource` carries the joint band's slack.

        The count may sit up to `tolerance` short of what the CPU demand
        needs (the hysteresis holds it there, as an HPA's tolerance does),
        and the same count must carry the memory, which holds no shortfall.
        Sized to its bare share, memory ran out first at every step, so the
        count moved at each crossing of the CPU target and CPU's band never
        held (a pod above the target, 4-6 points of CPU utilization on a
        ramp). So a resource without a utilization target, sized beside one
        with a target, gets its share for a count `tolerance` smaller:
        share x (1 + tolerance), under the curve's ceiling as always.
        """
        return resource in self.spare and self.slack > 0

    def share(self, resource: str, needed: int, replicas: int) -> int:
        """A pod's share of the demand at `replicas`, with the band's slack and with one pod
        out where those apply."""
        share = _share(resource, needed, replicas)
        if self.slacks(resource):
            share = round_request(resource, math.ceil(share * (100 + self.slack) / 100))
        if self.spares(resource, replicas):
            load = math.ceil(needed * 100 / (100 + self.params.headroom))
            share = max(share, _share(resource, load, replicas - 1))
        return share


def _share(resource: str, needed: int, replicas: int) -> int:
    """A pod's share of the demand, rounded up: CPU to the millicore, memory to 1000 bytes.

    Only the share is rounded, not overhead + share, so a pod with no share
    of the demand is exactly its overhead (1Gi stays 1Gi).
    """
    return round_request(resource, ceil_div(needed, replicas))


def _size(need: int, top: int | None, floor: int) -> int:
    """A per-pod request: the need, never above `top`, never below the pod's minAllowed."""
    return max(need if top is None else min(need, top), floor)


def fewest_replicas(demand: Mapping[str, int], room: Room, low: int, high: int) -> int | None:
    """The fewest replicas in [low, high] whose room covers the demand; None when none does."""
    if not room.covers(demand, high):
        return None
    first, last = low, high
    while first < last:
        middle = (first + last) // 2
        if room.covers(demand, middle):
            last = middle
        else:
            first = middle + 1
    return first


def _past_end(demand: Mapping[str, int], room: Room, high: int, lines: list[str]) -> Shape:
    overhead = room.params.overhead
    sizes = {
        resource: _size(
            overhead.get(resource, 0) + room.share(resource, needed, high),
            room.past_end(resource, high),
            room.min_allowed.get(resource, 0),
        )
        for resource, needed in demand.items()
    }
    lines.append(
        f"curve: even {counted(high, 'replica')} (maxReplicas) at the curve's size do not cover the "
        "demand: past the curve's end, pods grow up to maxAllowed (stay on the curve "
        f"without one): {describe_amounts(sizes)}"
    )
    return Shape(high, sizes)


def _too_few(demand: Mapping[str, int], room: Room, fewer: int) -> str:
    overhead = room.params.overhead
    reasons = []
    for r, needed in demand.items():
        short = room.short(r, needed, fewer)
        if not short:
            continue
        top = room.cap(r, fewer) or 0
        if short == ALL_PODS:
            which, count, factor = "", fewer, ""
        else:
            which, count, factor = (
                " (one pod out)",
                fewer - 1,
                f" x {float(100 + room.params.headroom):g}%",
            )
        reasons.append(
            f"{r}{which}: {count} x ({format_human_resource(r, top)} - "
            f"{format_human_resource(r, overhead.get(r, 0))}){factor} < {format_human_resource(r, needed)}"
        )
    return f"curve: {counted(fewer, 'replica')} {'is' if fewer == 1 else 'are'} too few: {'; '.join(reasons)}"


def curve_point(
    demand: Mapping[str, int], room: Room, low: int, high: int, lines: list[str]
) -> Shape:
    """The fewest replicas in [low, high] the curve lets cover the demand, and the pods' sizes there."""
    replicas = fewest_replicas(demand, room, low, high)
    if replicas is None:
        return _past_end(demand, room, high, lines)
    if replicas > low:
        lines.append(_too_few(demand, room, replicas - 1))
    else:
        verb = "covers" if replicas == 1 else "cover"
        lines.append(f"curve: {counted(replicas, 'replica')} (minReplicas) {verb} the demand")
    overhead = room.params.overhead
    sizes = {}
    for resource, needed in demand.items():
        top = room.cap(resource, replicas)
        if resource in room.fixed:
            sizes[resource] = room.fixed[resource]
            lines.append(
                f"curve: {resource}: pods keep {format_human_resource(resource, sizes[resource])} (held); "
                f"{replicas} of them cover {format_human_resource(resource, needed)}"
            )
            continue
        need = overhead.get(resource, 0) + room.share(resource, needed, replicas)
        sizes[resource] = _size(need, top, room.min_allowed.get(resource, 0))
        widened = (
            f" x (1 + {float(room.slack):g}% for the band)" if room.slacks(resource) else ""
        ) + (
            f", and the load with one of {replicas} pods out"
            if room.spares(resource, replicas)
            else ""
        )
        lines.append(
            f"curve: {resource}: {counted(replicas, 'replica')}, ceiling "
            f"{'none' if top is None else format_human_resource(resource, top)} per pod; per pod "
            f"{format_human_resource(resource, overhead.get(resource, 0))} + its share of {format_human_resource(resource, needed)}"
            f"{widened} = {format_human_resource(resource, sizes[resource])}"
        )
    return Shape(replicas, sizes)
