"""`Capacity`: one curve of per-pod size against replicas, read with the demand (ENGINE.md §5).

Gardener's hvpa mixed the steps of two recommenders, so where it ended
depended on who moved first and the two steps multiplied (1 x 1 core
needing 5 cores at 50/50 ended at 3 x 3 = 9 cores). Here both axes come
from one reading of one curve with one number per resource, the demand D
(demand.py): the fewest replicas n within min/max whose curve ceiling
covers it, n x (ceiling(n) - overhead) >= D for every resource, and pods of
overhead + D / n, never above the ceiling at n nor outside
minAllowed/maxAllowed. That point depends on the demand alone, whichever
side it is reached from, and its total is the demand itself (memory beside
a CPU target gets D / n x (1 + tolerance), since the count may sit in CPU's
band: _Room.slacks).

The curve is a ceiling, and a resize is a rolling update while a replica
move is not, so the bands and the order of a move keep the workload from
rolling at every wobble:
- the joint hysteresis: nothing moves while every total (replicas x
  per-pod request) is within `tolerance` of the curve's and today's pods
  cover the demand less the shortfall the band may hold: `tolerance` for a
  resource with a utilization target (as the HPA's tolerance holds a usage
  ratio up to 1.1), none for one without (memory: held_shortfall);
- the resize band: pods keep their size while the curve's size for the
  demand is within `resizeTolerance` of today's request, and the count
  moves to the fewest pods of that size that cover the demand under the
  curve; out of the band they are resized to the curve's point. The band
  is read against the level (demand.py) while it lags a rise, and no
  resize is read from a falling demand or from throttled CPU readings;
- the order: pods that fall short are added to first, pods that grow
  while the count falls grow first, and a scale-down waits for a rollout
  (combine.py);
- the down window (demand.py): a scale-down reads the largest demand of
  `scaleDownStabilizationSeconds`.
A starving container (CPU at its request while the curve gives more)
passes the hysteresis. From four replicas a resource without a utilization
target is sized so that the pods carry its load with one of them out.

The curve caps pods everywhere but past its end: when even max replicas at
the curve's size do not cover the demand, pods grow beyond the curve up to
maxAllowed (up to the curve's last size where a container has none).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from hvpa.engine.demand import DEFAULT_HEADROOM_PERCENT, describe_amounts
from hvpa.engine.vertical import ContainerTarget, ResourceChange, round_request
from hvpa.engine.vertical.recommendation import RESOURCES
from hvpa.engine.vertical.requests import MEMORY_STEP_MILLI
from hvpa.quantity import ceil_div, format_milli
from hvpa.records import CPU, MEMORY, ContainerSpec, Resources

from .plan import HorizontalInput, Plan

__all__ = [
    "CapacityParams",
    "CapacityPlan",
    "CurvePoint",
    "Shape",
    "ceiling",
    "held_shortfall",
    "plan_capacity",
    "pod_split",
]

# A Deployment's default maxUnavailable (25%, rounded down) takes a pod down from four replicas.
SPARE_FROM_REPLICAS = 4


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """The largest per-pod request at `replicas`, milli-units; None where the curve sets none."""

    replicas: int
    amounts: Resources


@dataclass(frozen=True, slots=True)
class CapacityParams:
    """`spec.capacity` in the units the engine computes with; both tolerances are percents."""

    curve: tuple[CurvePoint, ...]
    overhead: Mapping[str, int]
    tolerance: Fraction
    resize_tolerance: Fraction


@dataclass(frozen=True, slots=True)
class Shape:
    """A replica count and the per-pod size of each resource (milli-units) there."""

    replicas: int
    sizes: Mapping[str, int]

    def total(self, resource: str) -> int:
        return self.replicas * self.sizes[resource]


@dataclass(frozen=True, slots=True)
class CapacityPlan:
    """The strategy's Plan, the curve's own answer (`ideal`), and the containers' targets.

    `targets` carry each sized container's policy bounds and, as `target`,
    its request at the ideal size: what the starvation guard compares usage
    with and what `apply_changes` writes limits for.
    """

    plan: Plan
    ideal: Shape
    targets: tuple[ContainerTarget, ...]


def ceiling(curve: Sequence[CurvePoint], resource: str, replicas: int) -> int | None:
    """The curve's per-pod ceiling at a replica count, linearly interpolated and rounded down.

    Before the first point and after the last the curve is flat; at a count
    with several points (a vertical segment) the largest wins. None when the
    curve gives no amount for the resource.
    """
    points = [(p.replicas, a) for p in curve if (a := p.amounts.get(resource)) is not None]
    if not points:
        return None
    points.sort()
    below = [p for p in points if p[0] <= replicas]
    above = [p for p in points if p[0] > replicas]
    if not below:
        return points[0][1]
    low_replicas, low_amount = below[-1]
    if not above:
        return low_amount
    high_replicas, high_amount = above[0]
    span = high_replicas - low_replicas
    return low_amount + (high_amount - low_amount) * (replicas - low_replicas) // span


@dataclass(frozen=True, slots=True)
class _Room:
    """What a pod may hold of each resource: the curve (or the size it must keep), and maxAllowed."""

    params: CapacityParams
    fixed: Mapping[str, int]
    max_allowed: Mapping[str, int | None]
    min_allowed: Mapping[str, int]
    spare: frozenset[str] = frozenset()
    slack: Fraction = Fraction(0)

    def cap(self, resource: str, replicas: int) -> int | None:
        """The largest per-pod size at `replicas`; None: unbounded."""
        if resource in self.fixed:
            return self.fixed[resource]
        top = ceiling(self.params.curve, resource, replicas)
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
        for resource, needed in demand.items():
            top = self.cap(resource, replicas)
            if top is None:
                continue
            room = max(top - self.params.overhead.get(resource, 0), 0)
            if replicas * room < needed:
                return False
            if (
                self.spares(resource, replicas)
                and (replicas - 1) * room * (100 + DEFAULT_HEADROOM_PERCENT) < needed * 100
            ):
                return False
        return True

    def spares(self, resource: str, replicas: int) -> bool:
        """Whether `replicas` pods must carry the load of `resource` with one of them out.

        A resource without a utilization target (memory, usually) has only
        the default 15% headroom, less than a pod's share below eight pods:
        while one pod is starting, restarting or being replaced in a rolling
        update, the others carry its share, and with 15% they run out
        (of memory: OOMKills). So there the count must carry the load
        itself with one pod out, as well as the demand with all of them.
        One pod alone has no other to carry it.

        Not where the band's slack applies (`slacks`: memory beside a CPU
        target): that share already holds 1.15 x 1.1 = 26.5% over the load,
        which carries a pod out from 5 replicas; measured with the slack,
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
        """A pod's share of the demand at `replicas` (with the band's slack, and with one pod
        out where those bind)."""
        share = _share(resource, needed, replicas)
        if self.slacks(resource):
            share = round_request(resource, math.ceil(share * (100 + self.slack) / 100))
        if self.spares(resource, replicas):
            load = ceil_div(needed * 100, 100 + DEFAULT_HEADROOM_PERCENT)
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


def _solve(
    demand: Mapping[str, int],
    room: _Room,
    low: int,
    high: int,
    lines: list[str],
) -> Shape:
    """The fewest replicas in [low, high] the curve lets cover the demand, and the pods' sizes there."""
    overhead = room.params.overhead
    if not room.covers(demand, high):
        sizes = {}
        for resource, needed in demand.items():
            need = overhead.get(resource, 0) + room.share(resource, needed, high)
            sizes[resource] = _size(
                need, room.past_end(resource, high), room.min_allowed.get(resource, 0)
            )
        lines.append(
            f"curve: even {high} replicas (maxReplicas) at the curve's size do not cover the "
            "demand: past the curve's end, pods grow up to maxAllowed (stay on the curve "
            f"without one): {describe_amounts(sizes)}"
        )
        return Shape(high, sizes)
    first, last = low, high
    while first < last:
        middle = (first + last) // 2
        if room.covers(demand, middle):
            last = middle
        else:
            first = middle + 1
    replicas = first
    if replicas > low:
        fewer = replicas - 1
        short = [
            f"{r}: {fewer} x ({format_milli(top)} - {format_milli(overhead.get(r, 0))}) "
            f"< {format_milli(needed)}"
            for r, needed in demand.items()
            if (top := room.cap(r, fewer)) is not None
            and fewer * max(top - overhead.get(r, 0), 0) < needed
        ]
        lines.append(f"curve: {fewer} replicas are too few: {'; '.join(short)}")
    else:
        lines.append(f"curve: {replicas} replicas (minReplicas) cover the demand")
    sizes = {}
    for resource, needed in demand.items():
        top = room.cap(resource, replicas)
        if resource in room.fixed:
            sizes[resource] = room.fixed[resource]
            lines.append(
                f"curve: {resource}: pods keep {format_milli(sizes[resource])} (held); "
                f"{replicas} of them cover {format_milli(needed)}"
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
            f"curve: {resource}: {replicas} replicas, ceiling "
            f"{'none' if top is None else format_milli(top)} per pod; per pod "
            f"{format_milli(overhead.get(resource, 0))} + its share of {format_milli(needed)}"
            f"{widened} = {format_milli(sizes[resource])}"
        )
    return Shape(replicas, sizes)


def held_shortfall(tolerance: Fraction, headroom_only: bool) -> Fraction:
    """How far (a percent) below the demand the hysteresis may hold a resource's pods.

    A resource with a utilization target (CPU, compressible) keeps most of
    that target's margin while it runs up to `tolerance` over it, as an HPA
    does (70% held up to 77%). One with only the default 15% headroom
    (memory, usually) holds no shortfall: memory is not compressible, and a
    pod using more than it requests is among the first the kubelet evicts
    under memory pressure, so its requests follow every rise (a pod added
    is ready in seconds).
    """
    return Fraction(0) if headroom_only else tolerance


def _tolerated(
    demand: Mapping[str, int], tolerance: Fraction, headroom_only: frozenset[str]
) -> dict[str, int]:
    """The demand less the shortfall the hysteresis may hold (rounded up: exact integers)."""
    tolerated = {}
    for resource, needed in demand.items():
        held = held_shortfall(tolerance, resource in headroom_only)
        tolerated[resource] = math.ceil(needed * 100 / (100 + held))
    return tolerated


def _within(value: int, reference: int, tolerance: Fraction) -> bool:
    """|value - reference| <= tolerance% of reference (exact, in integers and fractions)."""
    return abs(value - reference) * 100 <= tolerance * reference


def _kept(
    current: Shape, room: _Room, demand: Mapping[str, int], low: int, high: int
) -> Shape | None:
    """The fewest replicas in [low, high] at today's pod size that the curve allows and that cover the demand."""
    fixed = replace(room, fixed=dict(current.sizes))
    for replicas in range(low, high + 1):
        if room.fits(current.sizes, replicas) and fixed.covers(demand, replicas):
            return Shape(replicas, current.sizes)
    return None


def _resized(
    ideal: Shape, reference: Shape, current: Shape, room: _Room, lines: list[str]
) -> Shape | None:
    """The curve's point when a pod size has left the resize band, else None.

    A resize is a rolling update, a replica move is not, so pods keep
    their size while, for every resource, the curve's size for the demand
    is within `resizeTolerance` of today's request (a band around the
    request, ENGINE.md §5.4) (`reference`; read at the level while
    the level lags a rise, so that the first readings of a step, which the
    pods' CPU limits cap, answer with pods rather than a resize). Out of
    the band they are resized straight to the curve's point. A vertical
    segment is no exception: the curve's size grows with the demand at one
    count there, so pods grow once it has grown past the band; until then
    the count may move, as anywhere the curve allows today's pods (the
    curve is a ceiling).
    """
    band = room.params.resize_tolerance
    outside = [
        r
        for r in reference.sizes
        if r not in room.fixed
        and (not current.sizes[r] or not _within(reference.sizes[r], current.sizes[r], band))
    ]
    if not outside:
        return None
    lines.append(
        "capacity: resize band: "
        + "; ".join(
            f"{r} {format_milli(current.sizes[r])} per pod is more than {float(band):g}% "
            f"from the curve's {format_milli(reference.sizes[r])}"
            for r in outside
        )
        + ": resize to the curve"
    )
    return ideal


def _holds(
    ideal: Shape,
    current: Shape,
    params: CapacityParams,
    bounds: tuple[int, int],
    starving: bool,
    covered: bool,
    lines: list[str],
) -> bool:
    """The joint hysteresis: every total within `tolerance` of the curve's, and pods that
    cover the demand less the shortfall it may hold (`held_shortfall`).

    A surplus of up to `tolerance` is held for every resource; a shortfall
    only for a resource with a utilization target. Without it a CPU-sized
    workload added a pod at every crossing of its target and sat a pod
    above it (5 pods at 70 x 5/6 = 58% on the way up), where an HPA runs
    between its target and its tolerance.
    """
    low, high = bounds
    if not low <= current.replicas <= high:
        lines.append(
            f"capacity: {current.replicas} replicas are outside minReplicas {low} and "
            f"maxReplicas {high}: no hysteresis holds them there"
        )
        return False
    if starving:
        lines.append("capacity: a container is starving: no hysteresis holds it")
        return False
    for r in ideal.sizes:
        lines.append(
            f"capacity: {r} total: the curve's {ideal.replicas} x "
            f"{format_milli(ideal.sizes[r])} = {format_milli(ideal.total(r))} against "
            f"{current.replicas} x {format_milli(current.sizes[r])} = "
            f"{format_milli(current.total(r))} now"
        )
    if not covered:
        lines.append(
            "capacity: the pods as they are fall short of the demand by more than the "
            "hysteresis holds (the tolerance with a utilization target, none without)"
        )
        return False
    if all(_within(ideal.total(r), current.total(r), params.tolerance) for r in ideal.sizes):
        lines.append(
            f"capacity: the pods cover the demand (less the shortfall the hysteresis holds) "
            f"and every total is within {float(params.tolerance):g}% of the curve's: hold "
            "(hysteresis)"
        )
        return True
    return False


def _counted(
    ideal: Shape,
    reference: Shape,
    current: Shape,
    room: _Room,
    demand: Mapping[str, int],
    bounds: tuple[int, int],
    lines: list[str],
) -> Shape:
    """Today's pods at the fewest replicas that cover the demand under the curve, else the curve's point."""
    kept = _kept(current, room, demand, *bounds)
    if kept is None:
        lines.append(
            f"capacity: no count of pods of {describe_amounts(current.sizes)} covers the demand "
            "under the curve: resize to the curve"
        )
        return ideal
    lines.append(
        f"capacity: resize band: pods keep {describe_amounts(current.sizes)} (within "
        f"{float(room.params.resize_tolerance):g}% of the curve's "
        f"{describe_amounts(reference.sizes)}); {kept.replicas} of them cover the demand"
    )
    return kept


def _order(
    target: Shape,
    current: Shape,
    room: _Room,
    demand: Mapping[str, int],
    bounds: tuple[int, int],
    serving: bool,
    lines: list[str],
) -> Shape:
    """The first step towards a resized `target` that never lowers what serves the load.

    A rolling update takes pods down while it replaces them, so it starts
    only from pods that cover the demand: when today's pods fall short and
    more of them would not, the count grows first at today's size (a
    replica move, ready in seconds), and the resize follows at a later
    decision. And a resize that grows pods while the count falls grows them
    at today's count: shrinking the count in the same rollout would take
    small pods away before the big ones are ready. With no pod ready
    (nothing serving yet: a new workload) there is nothing to keep covered,
    and the pods go straight to the curve.
    """
    pods_now = replace(room, fixed=dict(current.sizes))
    if serving and not pods_now.covers(demand, current.replicas):
        kept = _kept(current, room, demand, *bounds)
        if kept is not None and kept.replicas > current.replicas:
            lines.append(
                f"capacity: the pods as they are fall short of the demand: the count grows "
                f"first at their size ({current.replicas} -> {kept.replicas}); the resize "
                "follows once they cover it"
            )
            return kept
    grows = any(target.sizes[r] > current.sizes[r] for r in target.sizes)
    fits = room.fits(target.sizes, current.replicas)
    low, high = bounds
    inside = low <= current.replicas <= high
    if target.replicas < current.replicas and grows and fits and inside:
        lines.append(
            f"capacity: pods grow at today's {current.replicas} replicas first; the count "
            f"falls to {target.replicas} once they are ready"
        )
        return Shape(current.replicas, target.sizes)
    return target


def pod_split(
    amount: int, names: Sequence[str], shares: Mapping[str, int], unit: int = 1
) -> dict[str, int]:
    """A per-pod amount split between containers by their shares; the parts add up to `amount`.

    Cumulative rounding gives each container its share in whole `unit`s
    (a byte of memory) without losing or adding any; the last part takes
    what is left below a unit. Without shares the split is even.
    """
    weights = [max(shares.get(name, 0), 0) for name in names]
    if not any(weights):
        weights = [1] * len(names)
    whole = sum(weights)
    parts: dict[str, int] = {}
    units = amount // unit
    running, given = 0, 0
    for name, weight in zip(names, weights, strict=True):
        running += weight
        upto = ceil_div(units * running, whole) * unit
        parts[name] = upto - given
        given = upto
    parts[names[-1]] += amount - given
    return parts


def _current(
    containers: Sequence[ContainerSpec], sized: Mapping[str, Sequence[str]], replicas: int
) -> Shape:
    by_name = {c.name: c for c in containers}
    return Shape(
        replicas,
        {
            resource: sum(by_name[name].requests.get(resource) or 0 for name in names)
            for resource, names in sized.items()
        },
    )


def _requests(
    shape: Shape,
    policies: Sequence[ContainerTarget],
    sized: Mapping[str, Sequence[str]],
    shares: Mapping[str, Mapping[str, int]],
) -> dict[str, dict[str, int]]:
    """Per-container requests for a pod shape, each within its container's policy."""
    by_policy = {p.name: p for p in policies}
    requests: dict[str, dict[str, int]] = {}
    for resource, names in sized.items():
        if resource not in shape.sizes:
            continue
        unit = MEMORY_STEP_MILLI // 1000 if resource == MEMORY else 1
        parts = pod_split(shape.sizes[resource], names, shares.get(resource, {}), unit)
        for name in names:
            amount = by_policy[name].clamp(resource, parts[name])
            requests.setdefault(name, {})[resource] = amount
    return requests


def _changes(
    requests: Mapping[str, Mapping[str, int]], containers: Sequence[ContainerSpec]
) -> tuple[ResourceChange, ...]:
    changes = []
    for container in containers:
        for resource, wanted in requests.get(container.name, {}).items():
            current = container.requests.get(resource) or 0
            if wanted != current:
                changes.append(
                    ResourceChange(
                        container.name, resource, current, wanted, wanted, wanted - current, 100
                    )
                )
    return tuple(changes)


def plan_capacity(
    horizontal: HorizontalInput,
    containers: Sequence[ContainerSpec],
    policies: Sequence[ContainerTarget],
    demand: Mapping[str, int],
    params: CapacityParams,
    *,
    level: Mapping[str, int] | None = None,
    shares: Mapping[str, Mapping[str, int]] | None = None,
    fixed: frozenset[str] = frozenset(),
    fixed_replicas: bool = False,
    starving: bool = False,
    spare: frozenset[str] = frozenset(),
    serving: bool = False,
    falling: bool = False,
    capped: frozenset[str] = frozenset(),
) -> CapacityPlan:
    """The replica count and requests the curve gives for `demand`, after the bands.

    `demand` is what the count covers and `level` the sustained demand the
    resize band compares pod sizes with (the demand itself when None).
    `policies` are the containers Capacity sizes, with their policy bounds
    and controlled resources; `shares` how a pod's size splits between
    them per resource (by default evenly). `fixed` resources keep their
    per-pod size and `fixed_replicas` keeps the count (an axis that is off,
    or that a gate held back). `starving` (a container at its CPU
    request while the curve gives more) lets the decision past the
    hysteresis; the resize band still decides whether pods or the count move.
    `spare` names the resources without a utilization target, which the
    count must carry with one pod out (_Room.spares). `serving` says some
    of the target's pods are ready, taking load: a resize then goes in the
    order that keeps them covered (_order); `falling` that the down window
    holds the demand above this reading's, so pods keep their size until
    it settles (a transitional demand, each resource's held for its own
    window, is no size to roll the pods to); `capped` the resources whose
    readings sit at the pods' limits, which no resize is read from until
    a reading is below them (the count covers the floor they give meanwhile).
    """
    current_replicas = horizontal.current
    lines = [
        f"strategy Capacity: {current_replicas} replicas (min {horizontal.min_replicas}, "
        f"max {horizontal.max_replicas})",
        f"capacity: demand {describe_amounts(demand)} beyond the overhead "
        f"({describe_amounts(params.overhead)} per pod), tolerance {float(params.tolerance):g}%",
    ]
    sized: dict[str, list[str]] = {
        r: [p.name for p in policies if p.controls(r)]
        for r in RESOURCES
        if r in demand and any(p.controls(r) for p in policies)
    }
    current = _current(containers, sized, current_replicas)
    pinned = {r: current.sizes[r] for r in sized if r in fixed}
    bounds = {r: _pod_bounds(policies, sized[r], r) for r in sized}
    room = _Room(
        params,
        pinned,
        {r: high for r, (_, high) in bounds.items()},
        {r: low for r, (low, _) in bounds.items()},
        spare,
        params.tolerance if any(r not in spare for r in sized) else Fraction(0),
    )
    wanted = {r: demand[r] for r in sized}
    if current_replicas == 0:
        lines.append("capacity: the target is at 0 replicas: scaling is disabled")
        return _hold(horizontal, tuple(policies), current, lines)
    if not sized:
        lines.append("capacity: no container Capacity sizes has a demand: hold")
        return _hold(horizontal, tuple(policies), current, lines)
    low, high = horizontal.min_replicas, horizontal.max_replicas
    if fixed_replicas or not horizontal.enabled:
        low = high = current_replicas
        lines.append(f"capacity: the replica count stays at {current_replicas} (held)")
    ideal = _solve(wanted, room, low, high, lines)
    targets = _targets(policies, _requests(ideal, policies, sized, shares or {}))
    covered = replace(room, fixed=dict(current.sizes)).covers(
        _tolerated(wanted, params.tolerance, spare), current_replicas
    )
    if _holds(ideal, current, params, (low, high), starving, covered, lines):
        return _hold(horizontal, targets, ideal, lines)
    reference = ideal
    sustained = {r: min(level.get(r, wanted[r]), wanted[r]) for r in wanted} if level else {}
    if sustained and sustained != wanted:
        reference = _solve(sustained, room, low, high, [])
        lines.append(
            f"capacity: the level is below the demand (it has not caught up with a rise): "
            f"the curve for {describe_amounts(sustained)} is {reference.replicas} x "
            f"{describe_amounts(reference.sizes)}"
        )
    chosen = None
    if falling:
        lines.append(
            "capacity: the down window holds the demand (it is falling): pods keep their "
            "size until it settles"
        )
    elif capped:
        lines.append(
            f"capacity: {', '.join(sorted(capped))} readings are at the pods' limits (throttled: "
            "the need is higher than they say): pods keep their size until a reading is below"
        )
    else:
        chosen = _resized(ideal, reference, current, room, lines)
    if chosen is None:
        chosen = _counted(ideal, reference, current, room, wanted, (low, high), lines)
    if chosen.sizes != current.sizes:
        chosen = _order(chosen, current, room, wanted, (low, high), serving, lines)
    if chosen == current:
        lines.append("capacity: the pods as they are cover the demand: hold")
        return _hold(horizontal, targets, ideal, lines)
    changes = _changes(_requests(chosen, policies, sized, shares or {}), containers)
    lines.append(
        f"capacity: {current_replicas} -> {chosen.replicas} replicas of {describe_amounts(chosen.sizes)}"
        if chosen.replicas != current_replicas
        else f"capacity: keep {current_replicas} replicas; pods {describe_amounts(chosen.sizes)}"
    )
    lines.extend(f"vertical: {c.describe()}" for c in changes)
    plan = Plan("Capacity", horizontal, chosen.replicas, changes, explanation=tuple(lines))
    return CapacityPlan(plan, ideal, targets)


def _pod_bounds(
    policies: Sequence[ContainerTarget], names: Sequence[str], resource: str
) -> tuple[int, int | None]:
    """A pod's minAllowed and maxAllowed: its sized containers' sums; no maximum when one has none."""
    by_name = {p.name: p for p in policies}
    lows = [by_name[name].min_allowed.get(resource) or 0 for name in names]
    highs = [by_name[name].max_allowed.get(resource) for name in names]
    return sum(lows), None if any(not high for high in highs) else sum(h or 0 for h in highs)


def _targets(
    policies: Sequence[ContainerTarget], requests: Mapping[str, Mapping[str, int]]
) -> tuple[ContainerTarget, ...]:
    """The sized containers with their requests at the curve's own size as `target`."""
    return tuple(
        replace(
            policy,
            target=Resources(
                cpu=requests.get(policy.name, {}).get(CPU),
                memory=requests.get(policy.name, {}).get(MEMORY),
            ),
        )
        for policy in policies
    )


def _hold(
    horizontal: HorizontalInput,
    targets: tuple[ContainerTarget, ...],
    ideal: Shape,
    lines: list[str],
) -> CapacityPlan:
    plan = Plan("Capacity", horizontal, horizontal.current, (), explanation=tuple(lines))
    return CapacityPlan(plan, ideal, targets)
