"""The Hvpa status a decision reads and writes.

Read: the conditions and the history the last decision left (horizontal
recommendations and scale events, the per-axis scale times). Written:
Gardener's fields (lastScaling, lastBlockedScaling, the update policies,
the weights, the OOM mark) as Gardener's controller would write them, plus
conditions and the history. Everything a later decision needs is here, so a
restarted controller decides as if it had never stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import cast

from msgspec.structs import replace

from hvpa.api.autoscaling import Quantity
from hvpa.api.resource import Hvpa
from hvpa.api.status import (
    BLOCKING_REASONS,
    BlockedScaling,
    BlockingReason,
    History,
    HpaStatus,
    HvpaStatus,
    RecommendedContainerResources,
    RecommendedPodResources,
    ReplicaRecommendation,
    ResourceSample,
    ScalingStatus,
    VerticalPodAutoscalerStatus,
)
from hvpa.api.status import (
    Condition as StatusCondition,
)
from hvpa.api.status import (
    ScaleEvent as StatusScaleEvent,
)
from hvpa.engine.conditions import Condition
from hvpa.engine.decision import format_amount
from hvpa.engine.demand import DemandHistory, Sample
from hvpa.engine.gates import SCALE_KEYS, last_scale_times, scale_times_from_status
from hvpa.engine.history import HorizontalHistory, Recommendation, ScaleEvent
from hvpa.engine.strategies.combine import Outcome
from hvpa.engine.strategies.weights import FULL_WEIGHT
from hvpa.engine.vertical import ContainerResources, ContainerTarget
from hvpa.quantity import milli_value
from hvpa.records import CPU, MEMORY, Resources

__all__ = [
    "read_conditions",
    "read_demand_history",
    "read_history",
    "read_scale_times",
    "write_status",
]


def _seconds(moment: datetime) -> float:
    return moment.timestamp()


def _moment(seconds: float) -> datetime:
    """A time as metav1.Time keeps it: whole seconds, UTC."""
    return datetime.fromtimestamp(int(seconds), UTC)


def read_conditions(status: HvpaStatus | None) -> tuple[Condition, ...]:
    return tuple(
        Condition(
            c.type,
            c.status,
            c.reason,
            c.message,
            None if c.last_transition_time is None else _seconds(c.last_transition_time),
        )
        for c in (status.conditions if status is not None and status.conditions else ())
    )


def read_history(status: HvpaStatus | None) -> HorizontalHistory:
    """No `status.history` at all: a new Hvpa (recommendations None); a missing list: empty."""
    history = status.history if status is not None else None
    if history is None:
        return HorizontalHistory()
    return HorizontalHistory(
        recommendations=tuple(
            Recommendation(_seconds(r.time), r.replicas) for r in history.recommendations or ()
        ),
        scale_up_events=tuple(
            ScaleEvent(_seconds(e.time), e.replica_change) for e in history.scale_up_events or ()
        ),
        scale_down_events=tuple(
            ScaleEvent(_seconds(e.time), e.replica_change) for e in history.scale_down_events or ()
        ),
    )


def _events(
    events: tuple[ScaleEvent, ...], before: tuple[StatusScaleEvent, ...] | None
) -> tuple[StatusScaleEvent, ...] | None:
    if not events and before is None:
        return None
    return tuple(
        StatusScaleEvent(time=_moment(e.time), replica_change=e.replica_change) for e in events
    )


def write_status(
    hvpa: Hvpa,
    conditions: tuple[Condition, ...],
    horizontal_history: tuple[
        tuple[Recommendation, ...] | None, tuple[ScaleEvent, ...], tuple[ScaleEvent, ...]
    ],
    current: int,
    replicas: int,
    outcome: Outcome | None,
    targets: tuple[ContainerTarget, ...],
    now: float,
    demand_history: DemandHistory | None = None,
) -> HvpaStatus:
    """The status Gardener's controller would write, plus conditions and the history.

    `lastBlockedScaling` is this decision's blocks, empty when nothing was
    blocked (Gardener kept a stale list); `lastScaling` changes only when
    something was applied, each half only when its axis moved.
    `demand_history` (Capacity only) replaces `history.usage`, `.demands` and `.demandSince`.
    """
    recommendations, scale_up, scale_down = horizontal_history
    status = hvpa.status or HvpaStatus()
    history = status.history or History()
    if recommendations is not None:
        history = replace(
            history,
            recommendations=tuple(
                ReplicaRecommendation(time=_moment(r.time), replicas=r.replicas)
                for r in recommendations
            ),
        )
    history = replace(
        history,
        scale_up_events=_events(scale_up, history.scale_up_events),
        scale_down_events=_events(scale_down, history.scale_down_events),
    )
    if outcome is not None and outcome.scale_times:
        history = replace(history, last_scale_times=last_scale_times(outcome.scale_times))
    if demand_history is not None:
        history = _with_demand_history(history, demand_history)
    # An empty history object would read back as "not a new Hvpa": write none until there is one.
    kept = history if history != History() else status.history
    spec = hvpa.spec
    written = replace(
        status,
        conditions=tuple(
            StatusCondition(
                type=c.type,
                status=c.status,  # type: ignore[arg-type]
                reason=c.reason,
                message=c.message,
                last_transition_time=None
                if c.last_transition_time is None
                else _moment(c.last_transition_time),
                observed_generation=hvpa.generation,
            )
            for c in conditions
        ),
        history=kept,
        observed_generation=hvpa.generation,
        hpa_scale_up_update_policy=spec.hpa.scale_up.update_policy if spec.hpa.scale_up else None,
        hpa_scale_down_update_policy=spec.hpa.scale_down.update_policy
        if spec.hpa.scale_down
        else None,
        vpa_scale_up_update_policy=spec.vpa.scale_up.update_policy if spec.vpa.scale_up else None,
        vpa_scale_down_update_policy=spec.vpa.scale_down.update_policy
        if spec.vpa.scale_down
        else None,
        last_blocked_scaling=() if outcome is None else _blocked_scalings(outcome, targets),
    )
    resized = () if outcome is None else tuple(c for c in outcome.containers if c.changed)
    if replicas == current and not resized:
        return written
    last = status.last_scaling or ScalingStatus()
    written = replace(
        written,
        last_scaling=ScalingStatus(
            last_scale_time=_moment(now),
            hpa_status=HpaStatus(current_replicas=current, desired_replicas=replicas)
            if replicas != current
            else last.hpa_status,
            vpa_status=_applied(resized) if resized else last.vpa_status,
        ),
    )
    if outcome is not None and outcome.vpa_weight is not None:
        written = replace(
            written, hpa_weight=FULL_WEIGHT - outcome.vpa_weight, vpa_weight=outcome.vpa_weight
        )
    if resized:
        # Gardener's OOMKill mark is answered by a vertical change.
        written = replace(written, override_scale_up_stabilization=False)
    return written


def _applied(resized: tuple[ContainerResources, ...]) -> VerticalPodAutoscalerStatus:
    """`lastScaling.vpaStatus`: the new requests of the resources that changed, as Gardener wrote them."""
    return VerticalPodAutoscalerStatus(
        recommendation=RecommendedPodResources(
            container_recommendations=tuple(
                RecommendedContainerResources(
                    container_name=c.name,
                    target={
                        change.resource: format_amount(
                            change.resource, c.requests.get(change.resource) or 0
                        )
                        for change in c.applied
                    },
                )
                for c in resized
            )
        )
    )


def _blocked_scalings(
    outcome: Outcome, targets: tuple[ContainerTarget, ...]
) -> tuple[BlockedScaling, ...]:
    """`lastBlockedScaling` in Gardener's shape: one entry per reason, in the Decision's order.

    As Gardener's getWeightedReplicas and getWeightedRequests fill it, an
    entry holds the replica count held back (`hpaStatus`) and the VPA target
    of every container resource held back (`vpaStatus`), whichever the reason
    stopped; direction is not part of Gardener's shape.
    """
    plan = outcome.plan
    current = plan.current_replicas
    wanted = plan.replicas if plan.replicas != current else plan.horizontal.wants
    by_name = {c.name: c for c in targets}
    reasons = dict.fromkeys(entry.reason for entry in outcome.blocked)
    entries: list[BlockedScaling] = []
    for reason in reasons:
        if reason not in BLOCKING_REASONS:
            continue
        items = [item for item in outcome.blocked_items if item.reason == reason]
        held: dict[str, dict[str, Quantity]] = {}
        for item in items:
            target = by_name.get(item.container)
            amount = target.target.get(item.resource) if target else None
            if item.axis == "vertical" and amount is not None:
                held.setdefault(item.container, {})[item.resource] = format_amount(
                    item.resource, amount
                )
        horizontal = any(item.axis == "horizontal" for item in items)
        scaling = ScalingStatus(
            hpa_status=HpaStatus(current_replicas=current, desired_replicas=wanted)
            if horizontal
            else None,
            vpa_status=VerticalPodAutoscalerStatus(
                recommendation=RecommendedPodResources(
                    container_recommendations=tuple(
                        RecommendedContainerResources(container_name=name, target=resources)
                        for name, resources in held.items()
                    )
                )
            )
            if held
            else None,
        )
        entries.append(BlockedScaling(reason=cast(BlockingReason, reason), scaling_status=scaling))
    return tuple(entries)


def read_scale_times(status: HvpaStatus | None) -> dict[str, float | None] | None:
    """`status.history.lastScaleTimes`, or Gardener's one `lastScaleTime` for all four.

    Gardener's time stands in only where hvpa never wrote lastScaleTimes: it
    seeds all four, and from then on hvpa keeps each one itself, so a time
    missing there means that axis and direction never scaled.
    `lastScaling.lastScaleTime`, which hvpa also writes on every scaling,
    must not stand in then, or a vertical change would restart the
    horizontal windows as in Gardener.
    """
    times, legacy = scale_times_from_status(status)
    if times is None and legacy is not None:
        return dict.fromkeys(SCALE_KEYS, legacy)
    return times


def _samples(written: tuple[ResourceSample, ...] | None) -> tuple[Sample, ...]:
    """The status's samples as the engine reads them. Every decision converts all of them
    (each watch event decodes the status anew, so there is no object to remember them by,
    and remembering them by value would take 10,000 Hvpas' histories), hence the plain loop,
    and `milli_value` rather than the cached `parse_milli`: at that scale no spelling
    repeats, and each would only push a target's spelling out of that cache.
    """
    return tuple(
        Sample(
            _seconds(s.time),
            Resources(
                None if s.cpu is None else milli_value(s.cpu),
                None if s.memory is None else milli_value(s.memory),
            ),
        )
        for s in written or ()
        if s.time
    )


def read_demand_history(status: HvpaStatus | None) -> DemandHistory:
    """`status.history.usage`, `.demands` and `.demandSince`; absent means no earlier samples."""
    history = status.history if status is not None else None
    if history is None:
        return DemandHistory()
    since = None if history.demand_since is None else _seconds(history.demand_since)
    return DemandHistory(_samples(history.usage), _samples(history.demands), since)


def _written(
    samples: tuple[Sample, ...], before: tuple[ResourceSample, ...] | None
) -> tuple[ResourceSample, ...]:
    """The samples as the status keeps them, reusing each entry the status already held.

    A decision keeps all but the oldest samples it read and adds one, so most
    of what it writes is what it read. Walking both in time order, a kept
    sample whose entry in `before` is exactly what spelling it anew would give
    is written as that entry: an aware UTC time of whole seconds at the
    sample's instant (which encodes as `_moment`'s does) and the amounts
    spelled the same way. An entry spelled otherwise (by someone else, or
    with a fraction of a second) is spelled anew, as a new sample is.
    """
    entries = iter(before or ())
    entry, at = _next_entry(entries)
    written: list[ResourceSample] = []
    for sample in samples:
        while entry is not None and at < sample.time:
            entry, at = _next_entry(entries)
        amounts = sample.amounts
        cpu = None if amounts.cpu is None else format_amount(CPU, amounts.cpu)
        memory = None if amounts.memory is None else format_amount(MEMORY, amounts.memory)
        if (
            entry is not None
            and at == sample.time
            and entry.cpu == cpu
            and entry.memory == memory
            and entry.time.tzinfo is UTC
            and not entry.time.microsecond
        ):
            written.append(entry)
            entry, at = _next_entry(entries)
        else:
            written.append(ResourceSample(time=_moment(sample.time), cpu=cpu, memory=memory))
    return tuple(written)


def _next_entry(entries: Iterator[ResourceSample]) -> tuple[ResourceSample | None, float]:
    """The next entry that has a time, and that time in POSIX seconds."""
    for entry in entries:
        if entry.time:
            return entry, entry.time.timestamp()
    return None, 0.0


def _with_demand_history(history: History, kept: DemandHistory) -> History:
    return replace(
        history,
        usage=_written(kept.usage, history.usage),
        demands=_written(kept.demands, history.demands),
        demand_since=None if kept.since is None else _moment(kept.since),
    )
