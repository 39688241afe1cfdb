"""Demand for the `Capacity` strategy (docs/strategies.md): what the workload needs, in total.

Demand must not move when the decision does, or the decision chases its own
tail: a VPA's per-pod target still remembers the usage of fewer, busier pods
after a scale-out, so "target x replicas" grows with every pod added, which
adds pods. Total usage (PodMetrics summed over the target's pods) is the
same however many pods share it, so demand is built from that: each
reading is the total usage less the fixed overhead of every pod measured
(the load), divided by the target utilization. The overhead is taken out
per pod measured, not per replica wanted: during a rollout or a scale-out
the extra pods use their overhead too, and counting it as load would ask
for more pods, which would use more overhead. And it is taken out before
the division: the target utilization is headroom for load, and an overhead
scaled by it would grow with the replica count (with 1Gi per pod at
1 / 1.15, ten pods would ask 1.5Gi more than one). Pods, Object and
External metrics speak in replicas, so each adds "at least this many pods
of the current size".

Only a new Hvpa, which has never had a demand, falls back to the VPA target
x replicas, and for that one decision: the history records when the Hvpa
first had a demand (`since`), and from then on a decision without usage
samples has no demand and holds. Read twice, the target would count the
pods the first reading added: one pod of 733m whose VPA asks for 2200m
went to 3 pods, then 7, then 9, then 10 (17.6 cores for a 2.2-core need)
in four decisions while the target stood still.

Two readings of the same samples, because the two axes cost differently:
- the demand the count follows is the newest reading's, held for a
  scale-down at the largest of the down window: a pod added is ready in
  seconds, so a rise is answered at the next decision (a percentile over a
  ten-minute window sees a step only once 10% of the window has, and a
  fall only nine minutes late, on top of the down window);
- the level pod sizes follow is the `demandPercentile` of the readings in
  `demandWindowSeconds`: a resize is a rolling update, worth doing for a
  sustained level, not for a moment (and the first readings of a step are
  the least trustworthy: usage is capped by the CPU limits the pods had).
  The window's low (the 100 - `demandPercentile` percentile) says whether
  the level is settled: a window whose readings spread wider than the
  tolerance holds a step, a ramp or noise, and pods are not resized to
  the curve's exact size for it (strategies/capacity.py).

CPU is a rate averaged over the metrics window, memory the working set at
the window's end: the reading whose window holds the start of a rise shows
all of memory's rise and part of CPU's (rise_begins), so pods are not sized
on it (strategies/capacity.py).

Samples are kept in `status.history.usage` (the loads) and `.demands`
(times in POSIX seconds here), pruned to their windows, so a restarted
controller computes the same demand.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from operator import attrgetter
from typing import Final

import msgspec

from hvpa.engine.explain import counted
from hvpa.engine.vertical import describe, round_request
from hvpa.engine.vertical.recommendation import RESOURCES
from hvpa.quantity import ceil_div, format_human_resource
from hvpa.records import CPU, MEMORY, PodMetricsRecord, Resources, format_time

__all__ = [
    "AVERAGE_VALUE_MARGIN_PERCENT",
    "RATE_RESOURCES",
    "Demand",
    "DemandHistory",
    "DemandInput",
    "ReplicaFloor",
    "Sample",
    "describe_amounts",
    "measure_demand",
    "percentile",
    "rise_begins",
    "total_load",
]


# Over the load of a resource with an AverageValue target T: the margin of the VPA recommender
# that sizes pods beside such an HPA (Gardener's VPAAndHPA). T already bounds what a pod carries
# (capacity_inputs.targeted); measured in the VPAAndHPA comparison (docs/strategies.md), Capacity's
# 25% headroom there cost 7 points of utilization on steady (79% against 86%, behind the pair)
# for five ticks less under-provisioning (0.92 minutes against 1.33; the pair's 4.67).
AVERAGE_VALUE_MARGIN_PERCENT: Final = 15

# The resources whose reading is a rate averaged over the metrics window (metrics-server derives
# CPU from cumulative counters); memory is the working set at the window's end, whole at once.
RATE_RESOURCES: Final = (CPU,)

# A sample's amount of each resource, read by attribute: a decision reads every kept sample
# several times over (the newest, the percentiles, the down window, the demands kept), about
# 480 reads with a 40-sample window, and a method call for each added up.
_AMOUNT: Final[Mapping[str, Callable[[Sample], int | None]]] = {
    CPU: attrgetter("amounts.cpu"),
    MEMORY: attrgetter("amounts.memory"),
}


class Sample(msgspec.Struct, frozen=True, gc=False):
    """A total over the target's pods at one time (usage), or the demand derived from it.

    Times are whole seconds, as the status keeps them, so a reading read back
    from the status is recognised as the same reading. A struct rather than a
    frozen dataclass: every decision of a Capacity Hvpa makes one for each
    sample its status keeps, and a frozen dataclass's __init__ costs more to
    build than a struct's. It holds a time and a Resources of
    integers, so the collector need not track it.
    """

    time: float
    amounts: Resources


@dataclass(frozen=True, slots=True)
class DemandHistory:
    """`status.history.usage`, `.demands` and `.demandSince`; empty when the status has none.

    `since` is when the Hvpa first had a demand; None: a new Hvpa, which
    may take its first demand from the VPA target.
    """

    usage: tuple[Sample, ...] = ()
    demands: tuple[Sample, ...] = ()
    since: float | None = None


@dataclass(frozen=True, slots=True)
class ReplicaFloor:
    """A Pods, Object or External metric's raw wish, which demand must cover with pods as they are."""

    metric: str
    replicas: int


@dataclass(frozen=True, slots=True)
class DemandInput:
    """Everything demand is computed from, in milli-units and POSIX seconds.

    `sized` names, per resource, the containers whose requests Capacity sets
    (their usage is the demand; the others are left out of it). `pod_size`
    is the current per-pod request of those containers and `overhead` the
    per-pod `baseResourcesPerReplica`. `utilization` is the HPA Resource
    metric's averageUtilization per resource, where there is one, and
    `average_value` the resources whose metric has an averageValue instead.
    `vpa_targets` is the VPA's per-container target when it can be trusted,
    for the fallback of a new Hvpa. `headroom` is the percent over the load
    a resource without such a target is sized with (`spec.capacity.headroom`).
    """

    now: float
    replicas: int
    sized: Mapping[str, frozenset[str]]
    pod_size: Mapping[str, int]
    overhead: Mapping[str, int]
    percentile: float
    window_seconds: float
    down_window_seconds: float
    utilization: Mapping[str, int]
    headroom: Fraction
    average_value: frozenset[str] = frozenset()
    floors: tuple[ReplicaFloor, ...] = ()
    vpa_targets: Mapping[str, Resources] | None = None
    # Which setting gave down_window_seconds, for the explanation ('' to leave it unsaid).
    down_window_source: str = ""


@dataclass(frozen=True, slots=True)
class Demand:
    """The demand this decision acts on.

    `measured` is this reading's demand per resource (beyond the pods'
    overhead), `effective` the largest of it and every demand in the down
    window: what the count is read with. `level` is the percentile of the
    window's readings: the sustained demand pod sizes follow; `low` the
    window's low percentile (100 - the percentile), which tells a settled
    level from one in motion. All are empty
    when there is nothing to measure from, and `unknown` says why: the
    decision then holds. `history` is the status history to write.
    """

    measured: dict[str, int]
    effective: dict[str, int]
    level: dict[str, int]
    source: str
    history: DemandHistory
    explanation: tuple[str, ...]
    unknown: str = ""
    low: dict[str, int] = field(default_factory=dict)

    @property
    def known(self) -> bool:
        return bool(self.effective)


def total_load(
    metrics: Sequence[PodMetricsRecord],
    sized: Mapping[str, frozenset[str]],
    overhead: Mapping[str, int],
    now: float,
) -> Sample | None:
    """The usage of the sized containers summed over the pods, less each pod's overhead.

    The time is the newest reading's, so the same reading read twice is one sample.
    """
    if not metrics:
        return None
    totals = {resource: 0 for resource in RESOURCES if sized.get(resource)}
    for pod in metrics:
        for container in pod.containers:
            for resource in totals:
                amount = container.usage.get(resource)
                if amount is not None and container.name in sized[resource]:
                    totals[resource] += amount
    for resource in totals:
        totals[resource] = max(totals[resource] - len(metrics) * overhead.get(resource, 0), 0)
    times = [pod.timestamp for pod in metrics if pod.timestamp is not None]
    return Sample(
        math.floor(max(times) if times else now),
        Resources(cpu=totals.get(CPU), memory=totals.get(MEMORY)),
    )


def percentile(values: Sequence[int], percent: float) -> int:
    """The nearest-rank percentile: the smallest value at least `percent`% of the values reach."""
    ordered = sorted(values)
    rank = math.ceil(_exact_percent(percent) * len(ordered) / 100)
    return ordered[max(rank, 1) - 1]


@lru_cache(maxsize=64, typed=True)
def _exact_percent(percent: float) -> Fraction:
    """A percent as the decimal it is written as (90.9 is 909/10, not the float's binary
    fraction). Remembered: a spec has one percentile, read twice at every decision; the
    few a cluster's Hvpas set fit in the cache."""
    return Fraction(str(percent))


def rise_begins(usage: Sequence[Sample], tolerance: Fraction) -> frozenset[str]:
    """The rate resources whose newest reading is the first of a rise: a partial one.

    A rate is the average over the metrics window, so the reading whose
    window holds the start of a rise shows only the part of it that came
    after: a step from 4 to 20 cores 10 s into a 15 s window reads 9.3,
    and only the next reading reads 20, while memory (the working set at
    the window's end) reads all of the step at once. The newest reading
    begins a rise when it is more than `tolerance` above the one before,
    which was not itself more than `tolerance` above its own predecessor
    (on the second reading of a rise the window holds only the new rate).
    The same reading read again by another decision still begins it: what
    ends the wait is a newer reading.
    """
    ordered = sorted(usage, key=_sample_time)
    begun: set[str] = set()
    for resource in RATE_RESOURCES:
        values = _amounts_of(resource, ordered)
        if len(values) < 2 or not _rose(values[-2], values[-1], tolerance):
            continue
        if len(values) == 2 or not _rose(values[-3], values[-2], tolerance):
            begun.add(resource)
    return frozenset(begun)


def _rose(before: int, after: int, tolerance: Fraction) -> bool:
    """Whether a load rose by more than `tolerance` percent (exact)."""
    return after * 100 > before * (100 + tolerance)


def _within(samples: Sequence[Sample], now: float, window: float) -> tuple[Sample, ...]:
    return tuple(s for s in samples if now - s.time < window)


def _record(samples: Sequence[Sample], sample: Sample) -> tuple[Sample, ...]:
    """The samples with `sample` added; a reading already kept (same time) is not counted twice."""
    kept = tuple(s for s in samples if s.time != sample.time)
    return (*kept, sample)


def _record_for_the_largest(demands: Sequence[Sample], demand: Sample) -> tuple[Sample, ...]:
    """The demands with `demand` added, less those no window can need any more.

    The down window only ever asks for the largest demand in it, per resource
    (`_held_down`). An earlier demand whose every resource is matched or
    exceeded by some later demand can never give that largest again: every
    later window that holds it holds those later ones too. The newest demand
    does not count as such a later one: a decision within the same second
    replaces it (`_record`), possibly with a smaller one. So per resource the
    history is the falling run of the demands before this one, then this one
    (not one sample per decision), with the same answer for every window as
    keeping them all while the decisions' clock does not go back, and a
    30-minute window no longer writes 120 samples into every status write (to
    be validated and decoded again at every watch event of the Hvpa).
    """
    earlier = sorted((s for s in demands if s.time != demand.time), key=_sample_time)
    kept: list[Sample] = []
    # The largest later amount of each resource, -1 before any;
    # one variable each, read off the struct: a down window keeps up to 120 demands.
    largest_cpu = largest_memory = -1
    for sample in reversed(earlier):
        cpu, memory = sample.amounts.cpu, sample.amounts.memory
        needed = False
        if cpu is not None and cpu > largest_cpu:
            largest_cpu, needed = cpu, True
        if memory is not None and memory > largest_memory:
            largest_memory, needed = memory, True
        if needed:
            kept.append(sample)
    return (*reversed(kept), demand)


_sample_time: Final[Callable[[Sample], float]] = attrgetter("time")


def _amounts_of(resource: str, samples: Sequence[Sample]) -> list[int]:
    """The amounts of `resource` the samples hold, in their order (a sample may hold none)."""
    return [v for v in map(_AMOUNT[resource], samples) if v is not None]


def describe_amounts(amounts: Mapping[str, int]) -> str:
    """`cpu 5, memory 1Gi` for explanation lines, as the vertical axis writes resources."""
    return describe(Resources(cpu=amounts.get(CPU), memory=amounts.get(MEMORY)))


def _over_target(given: DemandInput, resource: str, load: int) -> tuple[int, str]:
    """A load as demand: over the target utilization, with the VPA's margin beside an
    AverageValue target, or with Capacity's headroom; whole bytes."""
    target = given.utilization.get(resource)
    if target:
        return round_request(resource, ceil_div(load * 100, target)), (
            f"/ target utilization {target}%"
        )
    if resource in given.average_value:
        margin, why = Fraction(AVERAGE_VALUE_MARGIN_PERCENT), "margin beside an averageValue target"
    else:
        margin, why = given.headroom, "headroom"
    demand = round_request(resource, _with_margin(load, margin))
    return demand, f"x (1 + {float(margin):g}% {why})"


def _with_margin(load: int, margin: Fraction) -> int:
    """ceil(load x (100 + margin) / 100), exactly, in integers: with margin = n / d that is
    ceil(load x (100 d + n) / 100 d), without a Fraction made for each step."""
    scale = 100 * margin.denominator
    return ceil_div(load * (scale + margin.numerator), scale)


def _from_usage(
    given: DemandInput, samples: Sequence[Sample], lines: list[str]
) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """The newest reading's demand (what the count follows), the window's level (pod sizes)
    and the window's low (whether the level is settled)."""
    newest: dict[str, int] = {}
    level: dict[str, int] = {}
    low: dict[str, int] = {}
    ordered = sorted(samples, key=_sample_time)
    for resource in RESOURCES:
        values = _amounts_of(resource, ordered)
        if not values or not given.sized.get(resource):
            continue
        newest[resource], how = _over_target(given, resource, values[-1])
        load = percentile(values, given.percentile)
        level[resource], _ = _over_target(given, resource, load)
        low_load = percentile(values, 100 - given.percentile)
        low[resource], _ = _over_target(given, resource, low_load)
        lines.append(
            f"demand: {resource}: newest load {format_human_resource(resource, values[-1])} {how} = "
            f"{format_human_resource(resource, newest[resource])}; level (what pod sizes follow): "
            f"P{given.percentile:g} of {len(values)} load samples {format_human_resource(resource, load)} "
            f"= {format_human_resource(resource, level[resource])}; low P{100 - given.percentile:g} "
            f"{format_human_resource(resource, low_load)} = {format_human_resource(resource, low[resource])}"
        )
    return newest, level, low


def _from_vpa(given: DemandInput, lines: list[str]) -> dict[str, int]:
    """A new Hvpa's demand: the VPA target (which holds its own margin) x the replicas there are."""
    targets = given.vpa_targets or {}
    demand: dict[str, int] = {}
    for resource in RESOURCES:
        names = given.sized.get(resource) or frozenset()
        per_pod = [targets[name].get(resource) for name in sorted(names) if name in targets]
        known = [amount for amount in per_pod if amount is not None]
        if not known:
            continue
        pod = sum(known)
        overhead = given.overhead.get(resource, 0)
        demand[resource] = round_request(resource, max(0, given.replicas * (pod - overhead)))
        lines.append(
            f"demand: {resource}: no usage samples yet: VPA target {format_human_resource(resource, pod)} per pod, "
            f"minus overhead {format_human_resource(resource, overhead)}, x {counted(given.replicas, 'replica')} "
            f"= {format_human_resource(resource, demand[resource])}"
        )
    return demand


def _with_floors(given: DemandInput, demand: dict[str, int], lines: list[str]) -> None:
    """Each replica-speaking metric wants at least its replicas at the current pod size."""
    for floor in given.floors:
        for resource in list(demand):
            room = given.pod_size.get(resource, 0) - given.overhead.get(resource, 0)
            wanted = floor.replicas * max(room, 0)
            if wanted > demand[resource]:
                lines.append(
                    f"demand: {resource}: {floor.metric} wants {counted(floor.replicas, 'replica')} of "
                    f"{format_human_resource(resource, room)} beyond the overhead: at least {format_human_resource(resource, wanted)}"
                )
                demand[resource] = wanted


def _unknown(given: DemandInput, history: DemandHistory) -> str:
    """Why there is no demand without usage samples: a new Hvpa without a trusted VPA target,
    or an Hvpa that has had a demand, whose VPA target is no longer evidence of one."""
    if history.since is None:
        return "no usage samples of the target's pods and no trusted VPA target yet"
    return (
        f"no usage samples of the target's pods in the last {given.window_seconds:g}s; the "
        f"VPA target is read only as a new Hvpa's first demand (this one has had a demand "
        f"since {format_time(history.since)}): read again, it would count the pods that "
        "decision added"
    )


def _held_down(measured: dict[str, int], earlier: Sequence[Sample]) -> dict[str, int]:
    """The largest of this reading and every demand of the down window, per resource."""
    effective = dict(measured)
    for resource in effective:
        effective[resource] = max([effective[resource], *_amounts_of(resource, earlier)])
    return effective


def measure_demand(given: DemandInput, history: DemandHistory, usage: Sample | None) -> Demand:
    """This decision's demand and the history to keep; `usage` is the newest total, if any.

    From usage samples when the window has any; else, for a new Hvpa only,
    from the VPA target (once: `since` records it); else none, and the
    decision holds.
    """
    lines: list[str] = []
    samples = history.usage
    if usage is not None:
        samples = _record(samples, usage)
        lines.append(
            "demand: load at this reading (usage less each pod's overhead): "
            f"{describe(usage.amounts)}"
        )
    samples = _within(samples, given.now, given.window_seconds)
    measured: dict[str, int] = {}
    level: dict[str, int] = {}
    low: dict[str, int] = {}
    source = ""
    if samples:
        (measured, level, low), source = _from_usage(given, samples, lines), "usage"
    elif history.since is None:
        lines.append(f"demand: no usage samples in the last {given.window_seconds:g}s")
        measured, source = _from_vpa(given, lines), "vpa"
        level, low = dict(measured), dict(measured)
    earlier = _within(history.demands, given.now, given.down_window_seconds)
    if not measured:
        unknown = _unknown(given, history)
        lines.append(f"demand: unknown ({unknown}): hold")
        kept = DemandHistory(samples, earlier, history.since)
        return Demand({}, {}, {}, "", kept, tuple(lines), unknown)
    _with_floors(given, measured, lines)
    _with_floors(given, level, [])
    _with_floors(given, low, [])
    effective = _held_down(measured, earlier)
    if effective != measured:
        lines.append(
            f"demand: the largest of the last {given.down_window_seconds:g}s"
            f"{f' ({given.down_window_source})' if given.down_window_source else ''} "
            "holds a scale-down: "
            f"{describe_amounts(effective)} (now {describe_amounts(measured)})"
        )
    if source == "vpa":
        lines.append(
            "demand: the VPA target is this new Hvpa's demand for this decision only "
            "(status.history.demandSince records it); without usage samples later decisions hold"
        )
    lines.append(
        f"demand: {describe_amounts(effective)} beyond the pods' overhead ({source}); "
        f"level {describe_amounts(level)}"
    )
    now = Sample(
        math.floor(given.now), Resources(cpu=measured.get(CPU), memory=measured.get(MEMORY))
    )
    since = history.since if history.since is not None else now.time
    kept = DemandHistory(samples, _record_for_the_largest(earlier, now), since)
    return Demand(measured, effective, level, source, kept, tuple(lines), low=low)
