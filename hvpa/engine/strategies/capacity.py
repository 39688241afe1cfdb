"""`Capacity`: one curve of per-pod size against replicas, read with the demand.

Both axes come from one reading of one curve (capacity_curve.py) with one
number per resource, the demand (demand.py). The curve's point for the
demand is where the decision goes; three rules keep the workload from
rolling at every wobble, since a per-pod resize is a rolling update while a
replica move is ready in seconds:

- the joint hysteresis: nothing moves while today's count is the curve's,
  every total is within `tolerance` of the curve's, today's pods cover the
  demand less the shortfall the band may hold, and no pod is above the
  ceiling. The shortfall is `tolerance` for a resource with a utilization
  target (as an HPA holds a usage ratio up to 1.1), none without one
  (memory: held_shortfall);
- the resize band: a settled demand keeps today's pod size only at the
  curve's count and where the hysteresis would hold it; never at a larger
  count chosen because today's size does not fit under the ceiling at the
  curve's count: that was Gardener's stuck equilibrium (1 x 1233m for a
  3.7-core demand settled at 7 x 1233m, 2.3 times the demand, where the
  curve says 4 x 925m). While the demand moves (the level lags the newest
  reading, the window spreads wider than the tolerance) the count covers it
  with today's pods as long as they are within `resizeTolerance` of a size
  the curve gives between the window's low and the demand; while it falls
  (the down window) or hides behind the pods' CPU limits, no size is read;
  nor on the first reading of a CPU rise, a rate averaged over a window that
  holds the rise's start: the count moves, and the pods are sized a reading
  later, for the count the whole rise needs (else memory, read whole at
  once, was sized for the first reading's smaller count and shrank a
  decision later);
- the order of a move: a rollout starts from pods that cover the demand
  with a quarter of them out (pods are added first), and pods that grow
  while the count falls grow first at today's count.

From any start the target rests within three decisions (pods added, pods
resized, count settled) at the curve's count, every total within the
tolerance of the curve's; from below it rests at the curve's point itself
(tests/engine/test_capacity_properties.py).

docs/strategies.md explains each rule with the runs that justify it.

The gates (update policies, windows, rollouts, other writers) are asked
before the plan which moves they forbid (MoveLimits, combine.py); the plan
then never proposes half of a joint move: at a held count the pods take
the demand up to the curve there, with held pod sizes the count covers it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

from hvpa.engine.demand import describe_amounts
from hvpa.engine.explain import counted
from hvpa.engine.vertical import ContainerTarget, Direction, ResourceChange
from hvpa.engine.vertical.recommendation import RESOURCES
from hvpa.engine.vertical.requests import MEMORY_STEP_MILLI
from hvpa.quantity import ceil_div, format_human_resource
from hvpa.records import CPU, MEMORY, ContainerSpec, Resources

from .capacity_curve import (
    CapacityParams,
    CurvePoint,
    Room,
    Shape,
    ceiling,
    curve_point,
    fewest_replicas,
    held_shortfall,
    tolerated,
    within,
)
from .plan import Blocked, HorizontalInput, Plan

__all__ = [
    "CapacityParams",
    "CapacityPlan",
    "CurvePoint",
    "CurveReading",
    "MoveLimits",
    "Reasons",
    "Shape",
    "Situation",
    "ceiling",
    "held_shortfall",
    "plan_capacity",
    "pod_split",
    "read_curve",
]

# A Deployment's default maxUnavailable: a rolling update takes this share of the pods down.
ROLLOUT_UNAVAILABLE_PERCENT = 25
# (reason, why) pairs: what a gate says about a move it forbids.
Reasons = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class MoveLimits:
    """The moves the gates forbid now, with their reasons; empty: the move may happen.

    The count's two directions, and each resource's pod size up and down
    (whatever the container: a pod's size moves as one).
    """

    count_up: Reasons = ()
    count_down: Reasons = ()
    size_up: Mapping[str, Reasons] = field(default_factory=dict)
    size_down: Mapping[str, Reasons] = field(default_factory=dict)

    def size(self, resource: str, direction: Direction) -> Reasons:
        return (self.size_up if direction == "up" else self.size_down).get(resource, ())


@dataclass(frozen=True, slots=True)
class Situation:
    """What the demand and the pods are doing, beyond the demand itself.

    `level` is the sustained demand pod sizes follow (the demand when it is
    not behind it), `level_low` the low of the same window (a level is
    settled when the window's low is within the tolerance of it); `starving` a container at its CPU request while the
    curve gives more (it passes the hysteresis); `serving` whether some of
    the target's pods are ready, taking load; `falling` whether the down
    window holds the demand above this reading's; `capped` the resources
    whose readings sit at the pods' limits (throttled: the need is higher);
    `partial` the resources whose newest reading begins a rise (a rate
    averaged over a window that holds the rise's start: the next reading
    will be higher; demand.rise_begins).
    """

    level: Mapping[str, int] = field(default_factory=dict)
    level_low: Mapping[str, int] = field(default_factory=dict)
    starving: bool = False
    serving: bool = False
    falling: bool = False
    capped: frozenset[str] = frozenset()
    partial: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class CurveReading:
    """The curve read for this decision: who is sized, today's shape, the curve's point.

    `sized` names, per resource, the containers whose requests Capacity
    sets; `bounds` the counts the decision may choose (minReplicas and
    maxReplicas, or today's count when the horizontal axis is off or held);
    `ideal` the curve's point for `demand` there; `targets` each sized
    container's policy with its request at the ideal size as `target` (what
    the starvation guard compares usage with). `idle` says why nothing can
    be decided at all (no replicas, nothing sized), else ''.
    """

    horizontal: HorizontalInput
    containers: tuple[ContainerSpec, ...]
    policies: tuple[ContainerTarget, ...]
    shares: Mapping[str, Mapping[str, int]]
    sized: Mapping[str, tuple[str, ...]]
    demand: Mapping[str, int]
    current: Shape
    room: Room
    bounds: tuple[int, int]
    ideal: Shape
    targets: tuple[ContainerTarget, ...]
    explanation: tuple[str, ...]
    idle: str = ""

    @property
    def tolerance(self) -> Fraction:
        return self.room.params.tolerance

    def tolerated(self) -> dict[str, int]:
        """The demand less the shortfall the hysteresis may hold."""
        return tolerated(self.demand, self.tolerance, self.room.spare)


@dataclass(frozen=True, slots=True)
class CapacityPlan:
    """The strategy's Plan, the curve's own answer (`ideal`), and the containers' targets."""

    plan: Plan
    ideal: Shape
    targets: tuple[ContainerTarget, ...]


def read_curve(
    horizontal: HorizontalInput,
    containers: Sequence[ContainerSpec],
    policies: Sequence[ContainerTarget],
    demand: Mapping[str, int],
    params: CapacityParams,
    *,
    shares: Mapping[str, Mapping[str, int]] | None = None,
    fixed: frozenset[str] = frozenset(),
    spare: frozenset[str] = frozenset(),
) -> CurveReading:
    """The curve's point for `demand`, and what the plan reads beside it.

    `policies` are the containers Capacity sizes, with their policy bounds
    and controlled resources; `shares` how a pod's size splits between them
    per resource (by default evenly). `fixed` resources keep their per-pod
    size (an axis that is off, or that another writer or a missing demand
    holds); a horizontal axis that is off keeps the count. `spare` names the
    resources without a utilization target (capacity_curve.Room).
    """
    current_replicas = horizontal.current
    lines = [
        f"strategy Capacity: {counted(current_replicas, 'replica')} (min {horizontal.min_replicas}, "
        f"max {horizontal.max_replicas})",
        f"capacity: demand {describe_amounts(demand)} beyond the overhead "
        f"({describe_amounts(params.overhead)} per pod), tolerance {float(params.tolerance):g}%",
    ]
    sized = {
        r: tuple(p.name for p in policies if p.controls(r))
        for r in RESOURCES
        if r in demand and any(p.controls(r) for p in policies)
    }
    current = _current(containers, sized, current_replicas)
    room = _room(params, policies, sized, current, fixed, spare)
    wanted = {r: demand[r] for r in sized}
    low, high = horizontal.min_replicas, horizontal.max_replicas
    if not horizontal.enabled:
        low = high = current_replicas
        lines.append(f"capacity: the replica count stays at {current_replicas} (held)")
    idle = ""
    if current_replicas == 0:
        idle = "capacity: the target is at 0 replicas: scaling is disabled"
    elif not sized:
        idle = "capacity: no container Capacity sizes has a demand: hold"
    ideal = current if idle else curve_point(wanted, room, low, high, lines)
    requests = _requests(ideal, policies, sized, shares or {})
    return CurveReading(
        horizontal=horizontal,
        containers=tuple(containers),
        policies=tuple(policies),
        shares=shares or {},
        sized=sized,
        demand=wanted,
        current=current,
        room=room,
        bounds=(low, high),
        ideal=ideal,
        targets=tuple(policies) if idle else _targets(policies, requests),
        explanation=tuple(lines),
        idle=idle,
    )


def plan_capacity(reading: CurveReading, situation: Situation, limits: MoveLimits) -> CapacityPlan:
    """The replica count and requests to move to, after the bands, the order and the limits.

    One pass, top to bottom: hold if the hysteresis holds; else choose
    between today's pod size and the curve's point (the band); put the
    move in an order that keeps the load covered; and keep it within what
    the gates allow.
    """
    lines = list(reading.explanation)
    if reading.idle:
        lines.append(reading.idle)
        return _hold(reading, lines)
    if _holds(reading, situation.starving, lines):
        return _hold(reading, lines)
    target = _choose(reading, situation, lines)
    target = _after_partial(target, reading, situation.partial, lines)
    target = _order(target, reading, situation.serving, lines)
    target, blocked = _within_limits(target, reading, limits, lines)
    if target == reading.current:
        lines.append("capacity: the pods as they are stay: hold")
        return _hold(reading, lines, blocked)
    changes = _changes(
        _requests(target, reading.policies, reading.sized, reading.shares), reading.containers
    )
    current_replicas = reading.current.replicas
    lines.append(
        f"capacity: {current_replicas} -> {counted(target.replicas, 'replica')} of "
        f"{describe_amounts(target.sizes)}"
        if target.replicas != current_replicas
        else f"capacity: keep {counted(current_replicas, 'replica')}; pods {describe_amounts(target.sizes)}"
    )
    lines.extend(f"vertical: {c.describe()}" for c in changes)
    plan = Plan(
        "Capacity",
        reading.horizontal,
        target.replicas,
        changes,
        blocked=blocked,
        explanation=tuple(lines),
    )
    return CapacityPlan(plan, reading.ideal, reading.targets)


# ---------------------------------------------------------------- the hysteresis


def _acceptable(shape: Shape, reading: CurveReading) -> str:
    """Why the hysteresis would not hold `shape` for this demand ('' when it would).

    The count must be the curve's: more pods than it (a step or a rollout
    left more, smaller pods, which at twice the count cost twice the
    per-pod overhead) go back to it, and fewer cannot cover the demand
    under the curve. So where the workload rests depends on the demand,
    not on the way it came. Within that count pods may sit up to
    `tolerance` from the curve's size: short of it by the shortfall the
    band holds (CPU with a utilization target, as an HPA holds a usage
    ratio up to 1.1), over it by `tolerance` (every total).
    """
    room, ideal = reading.room, reading.ideal
    if shape.replicas != ideal.replicas:
        return f"{counted(shape.replicas, 'replica')} {_be(shape.replicas)} not the curve's {ideal.replicas}"
    if not room.keeping(shape.sizes).covers(reading.tolerated(), shape.replicas):
        return (
            f"{shape.replicas} pods of {describe_amounts(shape.sizes)} fall short of the demand by "
            "more than the hysteresis holds (the tolerance with a utilization target, none without)"
        )
    past_end = ideal.replicas == reading.bounds[1] and not room.fits(ideal.sizes, ideal.replicas)
    if not past_end and not room.fits(shape.sizes, shape.replicas):
        return f"pods of {describe_amounts(shape.sizes)} are above the curve at {shape.replicas}"
    far = [
        r
        for r in ideal.sizes
        if not within(shape.replicas * shape.sizes[r], ideal.total(r), reading.tolerance)
    ]
    if far:
        return (
            f"the {', '.join(far)} total of {shape.replicas} x {describe_amounts(shape.sizes)} "
            f"is more than {float(reading.tolerance):g}% from the curve's"
        )
    return ""


def _holds(reading: CurveReading, starving: bool, lines: list[str]) -> bool:
    """The joint hysteresis: today's shape is one the curve could give for a demand within
    `tolerance`, and today's pods cover the demand less the shortfall it may hold.

    A surplus of up to `tolerance` is held for every resource; a shortfall
    only for a resource with a utilization target. Without it a CPU-sized
    workload added a pod at every crossing of its target and sat a pod
    above it (5 pods at 70 x 5/6 = 58% on the way up), where an HPA runs
    between its target and its tolerance. The count must be the curve's
    (_acceptable), so that where the workload rests depends on the demand,
    not on the path.
    """
    current, ideal = reading.current, reading.ideal
    low, high = reading.bounds
    if not low <= current.replicas <= high:
        lines.append(
            f"capacity: {counted(current.replicas, 'replica')} {_be(current.replicas)} outside minReplicas {low} and "
            f"maxReplicas {high}: no hysteresis holds them there"
        )
        return False
    if starving:
        lines.append("capacity: a container is starving: no hysteresis holds it")
        return False
    for r in ideal.sizes:
        lines.append(
            f"capacity: {r} total: the curve's {ideal.replicas} x "
            f"{format_human_resource(r, ideal.sizes[r])} = {format_human_resource(r, ideal.total(r))} against "
            f"{current.replicas} x {format_human_resource(r, current.sizes[r])} = "
            f"{format_human_resource(r, current.total(r))} now"
        )
    why = _acceptable(current, reading)
    if why:
        lines.append(f"capacity: no hold: {why}")
        return False
    lines.append(
        f"capacity: the pods cover the demand (less the shortfall the hysteresis holds), "
        f"fit under the curve, and every total is within {float(reading.tolerance):g}% of the "
        "curve's: hold (hysteresis)"
    )
    return True


# ---------------------------------------------------------------- the band


def _covering_count(reading: CurveReading, demand: Mapping[str, int]) -> int | None:
    """The fewest replicas whose pods, at today's size, cover `demand`."""
    low, high = reading.bounds
    pods = reading.room.keeping(reading.current.sizes)
    return fewest_replicas(demand, pods, low, high)


def _fitting_count(reading: CurveReading, count: int) -> int | None:
    """The fewest replicas from `count` at which today's pods fit under the curve."""
    current, room = reading.current, reading.room
    low, high = reading.bounds
    return next((n for n in range(max(count, low), high + 1) if room.fits(current.sizes, n)), None)


def _outside_band(reading: CurveReading, situation: Situation) -> str:
    """Why today's pods are too far from the curve to wait for the demand to settle ('' if not).

    While the demand moves the band is a range: the curve's sizes from the
    window's low to the demand itself, and today's request may be within
    `resizeTolerance` of any size between them. Pods far from both ends
    (tiny pods under a grown demand, pods that a vertical segment has
    outgrown) are resized while it moves; within the band the count covers
    the demand with them.
    """
    band = reading.room.params.resize_tolerance
    demand, current = reading.demand, reading.current
    low, high = reading.bounds
    low_demand = {
        r: min(situation.level_low.get(r, situation.level.get(r, needed)), needed)
        for r, needed in demand.items()
    }
    at_low = curve_point(low_demand, reading.room, low, high, [])
    outside = []
    for r in reading.ideal.sizes:
        if r in reading.room.fixed:
            continue
        least, most = sorted((at_low.sizes[r], reading.ideal.sizes[r]))
        size = current.sizes[r]
        if not size or least * 100 > size * (100 + band) or most * 100 < size * (100 - band):
            outside.append(
                f"{r} {format_human_resource(r, size)} per pod is more than {float(band):g}% from the "
                f"curve's {format_human_resource(r, least)}..{format_human_resource(r, most)}"
            )
    return "; ".join(outside)


def _keep_size(reading: CurveReading, motion: str, lines: list[str]) -> Shape | None:
    """Today's pods at a count that covers the demand with them, where the band allows it.

    Settled (`motion` ''), only at the curve's own count and where the
    hysteresis would hold that shape (the pods cover the demand there, fit
    under the curve, and every total is within the tolerance): then the
    same demand rests at the same count from any side, and never at a
    larger count chosen because today's pods do not fit under the ceiling
    at the curve's count (Gardener's stuck equilibrium). While the demand
    moves (`motion` 'moving': the level lags the newest reading, or the
    window spreads wider than the tolerance), at the fewest count that
    covers it with today's pods, where they fit under the curve. While it falls
    (`motion` 'falling': the down window holds it; or 'throttled': readings
    at the pods' limits hide it), the count falls no further than where
    today's pods fit, and
    the resize waits for the demand to settle: a transitional demand is no
    size to roll the pods to, and the pods a fall leaves are larger than
    it needs.
    """
    current = reading.current
    count = reading.ideal.replicas if not motion else _covering_count(reading, reading.tolerated())
    if motion in ("falling", "throttled") and count is not None:
        count = _fitting_count(reading, count)
    if count is None:
        lines.append(
            f"capacity: no count of pods of {describe_amounts(current.sizes)} covers the demand "
            "under the curve: resize to the curve"
        )
        return None
    if not reading.room.fits(current.sizes, count):
        lines.append(
            f"capacity: pods of {describe_amounts(current.sizes)} are above the curve at {count}, "
            "the count that covers the demand: resize to the curve (not a larger count)"
        )
        return None
    kept = Shape(count, current.sizes)
    why = "" if motion else _acceptable(kept, reading)
    if why:
        lines.append(f"capacity: resize band: pods do not keep their size: {why}: resize")
        return None
    lines.append(
        f"capacity: resize band: pods keep {describe_amounts(current.sizes)} at {counted(count, 'replica')}"
        + (f" (the demand is {motion}: a resize waits for it to settle)" if motion else "")
    )
    return kept


def _unsettled(reading: CurveReading, situation: Situation) -> list[str]:
    """The resources whose demand window spreads wider than the tolerance (a step, a ramp,
    noise): no size to resize the pods to exactly."""
    tolerance = reading.tolerance
    return [
        r
        for r, level in situation.level.items()
        if r in reading.demand
        and (low := situation.level_low.get(r)) is not None
        and low * (100 + tolerance) < level * 100
    ]


def _choose(reading: CurveReading, situation: Situation, lines: list[str]) -> Shape:
    """Today's pod size at a count that covers the demand, or the curve's point (a resize).

    A resize is a rolling update, worth it for a settled demand. While the
    down window holds a fall or CPU readings sit at the pods' limits no
    size is read at all. While the demand moves (the level lags the newest
    reading, or the window's readings spread wider than the tolerance: a
    step, a ramp, noise) the count covers the demand with today's pods as
    long as they are within `resizeTolerance` of a size the curve gives
    between the window's low and the demand (_outside_band).
    Settled, pods keep their size only at the curve's count and within the
    tolerance (_keep_size); else they go to the curve's point.
    """
    if situation.falling:
        lines.append(
            "capacity: the down window holds the demand (it is falling): pods keep their "
            "size until it settles"
        )
        return _keep_size(reading, "falling", lines) or reading.ideal
    if situation.capped:
        lines.append(
            f"capacity: {', '.join(sorted(situation.capped))} readings are at the pods' limits "
            "(throttled: the need is higher than they say): pods keep their size until a "
            "reading is below"
        )
        return _keep_size(reading, "throttled", lines) or reading.ideal
    lagging = [r for r, needed in reading.demand.items() if situation.level.get(r, needed) < needed]
    unsettled = _unsettled(reading, situation)
    if not lagging and not unsettled:
        return _keep_size(reading, "", lines) or reading.ideal
    lines.append(
        "capacity: the demand is moving: "
        + "; ".join(
            ([f"the level of {', '.join(lagging)} lags the newest reading"] if lagging else [])
            + (
                [
                    f"the {', '.join(unsettled)} readings of the window spread wider than "
                    f"{float(reading.tolerance):g}%"
                ]
                if unsettled
                else []
            )
        )
    )
    outside = _outside_band(reading, situation)
    if outside:
        lines.append(f"capacity: resize band: {outside}: resize to the curve")
        return reading.ideal
    return _keep_size(reading, "moving", lines) or reading.ideal


def _after_partial(
    target: Shape, reading: CurveReading, partial: frozenset[str], lines: list[str]
) -> Shape:
    """On the first reading of a rise, the count only: the resize waits for the next reading.

    A rate read over a window that holds the rise's start shows part of the
    rise (demand.rise_begins), so the count the curve gives for it is a
    floor of the count the next reading gives, while a resource read whole
    (memory) is already at its new demand. Pods sized now would get that
    resource's share at the smaller count, and lose part of it one decision
    later when the count rises: on a step of Gardener's kube-apiserver, 2
    pods of 5011Mi went to 3 of 16002Mi, then 15 s later to 4 of 12077Mi,
    a reversal of the pods' size for nothing. The count is a replica move,
    ready in seconds, and never undone by the rise's next reading: it goes
    to the curve's count at today's size (where today's pods fit under the
    curve there); the pods are sized at the next decision, whose reading
    holds the whole rise.
    """
    current = reading.current
    if not partial or target.sizes == current.sizes:
        return target
    count = current.replicas
    if target.replicas > count and reading.room.fits(current.sizes, target.replicas):
        count = target.replicas
    lines.append(
        f"capacity: the {', '.join(sorted(partial))} reading begins a rise (a rate over a window "
        "that holds its start: the next reading holds all of it): the count "
        + (f"goes to {count}" if count != current.replicas else f"stays at {count}")
        + f" at today's size; the resize to {describe_amounts(target.sizes)} waits for that reading"
    )
    return Shape(count, current.sizes)


# ---------------------------------------------------------------- the order


def _serving_in_rollout(replicas: int) -> int:
    """The pods that serve while a rolling update replaces the rest: a Deployment's default
    maxUnavailable takes 25% of them down, rounded down."""
    return replicas - replicas * ROLLOUT_UNAVAILABLE_PERCENT // 100


def _order(target: Shape, reading: CurveReading, serving: bool, lines: list[str]) -> Shape:
    """The first step towards a resized `target` that never lowers what serves the load.

    A rolling update takes pods down while it replaces them, so it starts
    only from pods that cover the demand (all of it: the shortfall the
    band holds is no margin to roll pods out of) with the pods it takes
    down gone: when today's pods fall short of that and more of them
    would not (and fit under the curve there), the count grows first at
    today's size (a replica move, ready in seconds), and the resize
    follows at a later decision. On a ramp, 4 pods that covered the memory
    demand rolled with 3 serving, 3% short of it for 15 s. And a resize
    that grows pods while the count falls grows them at today's count:
    shrinking the count in the same rollout would take small pods away
    before the big ones are ready. With no pod ready (nothing serving yet:
    a new workload) there is nothing to keep covered, and the pods go
    straight to the curve.
    """
    current, room = reading.current, reading.room
    if target.sizes == current.sizes:
        return target
    pods_now = room.keeping(current.sizes)
    low, high = reading.bounds
    if serving and not pods_now.covers(reading.demand, _serving_in_rollout(current.replicas)):
        count = next(
            (
                n
                for n in range(max(current.replicas + 1, low), high + 1)
                if pods_now.covers(reading.demand, _serving_in_rollout(n))
            ),
            None,
        )
        if count is not None and room.fits(current.sizes, count):
            lines.append(
                f"capacity: the pods as they are would fall short of the demand while a rollout "
                f"replaces a quarter of them: the count grows first at their size "
                f"({current.replicas} -> {count}); the resize follows"
            )
            return Shape(count, current.sizes)
    grows = any(target.sizes[r] > current.sizes[r] for r in target.sizes)
    inside = low <= current.replicas <= high
    if (
        target.replicas < current.replicas
        and grows
        and inside
        and room.fits(target.sizes, current.replicas)
    ):
        lines.append(
            f"capacity: pods grow at today's {counted(current.replicas, 'replica')} first; the count "
            f"falls to {target.replicas} once they are ready"
        )
        return Shape(current.replicas, target.sizes)
    return target


# ---------------------------------------------------------------- the limits


def _within_limits(
    target: Shape, reading: CurveReading, limits: MoveLimits, lines: list[str]
) -> tuple[Shape, tuple[Blocked, ...]]:
    """The target with no move the gates forbid, and what they held back.

    A held count keeps today's; held pod sizes keep today's. The rest of the
    move is read from the curve again under those limits, so that the two
    axes stay one decision: fewer replicas without the larger pods they
    were sized for would leave the demand uncovered, larger pods without
    the replicas would pass the curve. At most once per resource and once
    for the count, so this ends.
    """
    current = reading.current
    low, high = reading.bounds
    held: dict[str, int] = {}
    blocked: list[Blocked] = []
    for _ in range(len(RESOURCES) + 2):
        count_reasons = _count_reasons(target, current, limits)
        size_reasons = {
            r: reasons
            for r in target.sizes
            if r not in held
            and target.sizes[r] != current.sizes[r]
            and (reasons := limits.size(r, _direction(current.sizes[r], target.sizes[r])))
        }
        if not count_reasons and not size_reasons:
            break
        if count_reasons:
            blocked.extend(_count_blocks(target, current, count_reasons))
            if target.replicas > current.replicas:
                high = max(low, current.replicas)
            else:
                low = min(high, current.replicas)
        for r, reasons in size_reasons.items():
            blocked.extend(_size_blocks(reading, r, target.sizes[r], reasons))
            held[r] = current.sizes[r]
        lines.append(
            "capacity: the gates hold "
            + ", ".join(
                ([f"the count at {current.replicas}"] if count_reasons else [])
                + [f"{r} per pod" for r in size_reasons]
            )
            + ": the curve is read again with them as they are"
        )
        target = curve_point(reading.demand, reading.room.keeping(held), low, high, lines)
    return target, tuple(blocked)


def _direction(current: int, wanted: int) -> Direction:
    return "up" if wanted > current else "down"


def _count_reasons(target: Shape, current: Shape, limits: MoveLimits) -> Reasons:
    if target.replicas > current.replicas:
        return limits.count_up
    if target.replicas < current.replicas:
        return limits.count_down
    return ()


def _count_blocks(target: Shape, current: Shape, reasons: Reasons) -> list[Blocked]:
    direction = _direction(current.replicas, target.replicas)
    moved = f"{current.replicas} -> {counted(target.replicas, 'replica')}"
    return [Blocked("horizontal", direction, reason, f"{moved}: {why}") for reason, why in reasons]


def _size_blocks(
    reading: CurveReading, resource: str, wanted: int, reasons: Reasons
) -> list[Blocked]:
    current = reading.current.sizes[resource]
    direction = _direction(current, wanted)
    return [
        Blocked(
            "vertical",
            direction,
            reason,
            f"{name} {resource} per pod {format_human_resource(resource, current)} -> {format_human_resource(resource, wanted)}: {why}",
            name,
            resource,
        )
        for name in reading.sized[resource]
        for reason, why in reasons
    ]


# ---------------------------------------------------------------- requests


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


def _pod_bounds(
    policies: Sequence[ContainerTarget], names: Sequence[str], resource: str
) -> tuple[int, int | None]:
    """A pod's minAllowed and maxAllowed: its sized containers' sums; no maximum when one has none."""
    by_name = {p.name: p for p in policies}
    lows = [by_name[name].min_allowed.get(resource) or 0 for name in names]
    highs = [by_name[name].max_allowed.get(resource) for name in names]
    return sum(lows), None if any(not high for high in highs) else sum(h or 0 for h in highs)


def _room(
    params: CapacityParams,
    policies: Sequence[ContainerTarget],
    sized: Mapping[str, Sequence[str]],
    current: Shape,
    fixed: frozenset[str],
    spare: frozenset[str],
) -> Room:
    """What a pod may hold: the curve, the pods' policy bounds, the held sizes, the slack.

    Memory carries the joint band's slack only beside a resource with a
    utilization target (Room.slacks).
    """
    bounds = {r: _pod_bounds(policies, sized[r], r) for r in sized}
    return Room(
        params,
        {r: current.sizes[r] for r in sized if r in fixed},
        {r: most for r, (_, most) in bounds.items()},
        {r: least for r, (least, _) in bounds.items()},
        spare,
        params.tolerance if any(r not in spare for r in sized) else Fraction(0),
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
    reading: CurveReading, lines: list[str], blocked: tuple[Blocked, ...] = ()
) -> CapacityPlan:
    horizontal = reading.horizontal
    plan = Plan(
        "Capacity", horizontal, horizontal.current, (), blocked=blocked, explanation=tuple(lines)
    )
    return CapacityPlan(plan, reading.ideal, reading.targets)


def _be(count: int) -> str:
    """The verb after a counted noun (`1 replica is`, `3 replicas are`)."""
    return "is" if count == 1 else "are"
