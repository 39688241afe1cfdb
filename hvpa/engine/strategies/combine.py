"""One call from the two recommendations to the applied result: strategy, guards, gates, limits.

The order is fixed so that every strategy gets the same safety: the strategy
proposes, the starvation guard lets starving containers through, the gates
block what the spec or the situation forbids (reporting every reason), and
the accepted requests get their limits. Kept out of the package's __init__,
because it imports gates.py and guards.py, which import the plan types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from hvpa.engine.gates import (
    NO_MIN_CHANGE,
    Gated,
    GateSettings,
    apply_gates,
    fill_min_change,
    last_vertical_scaling,
    record_scale_times,
    report,
)
from hvpa.engine.guards import Starving, apply_starvation, detect_starvation
from hvpa.engine.vertical import (
    ContainerResources,
    ContainerTarget,
    ResourceChange,
    ScaleParams,
    VerticalRecommendation,
    apply_changes,
    clears_min_change,
)
from hvpa.records import CPU, MEMORY, ContainerSpec, PodMetricsRecord, PodRecord

from . import plan_scaling
from .capacity import (
    CapacityParams,
    CurveReading,
    MoveLimits,
    Reasons,
    Situation,
    plan_capacity,
    read_curve,
)
from .mixed import MixedParams
from .plan import ROLLOUT, Blocked, Hold, HorizontalInput, Plan
from .weights import WeightInterval

__all__ = ["CapacityInput", "Outcome", "combine", "combine_capacity"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The decision of both axes, ready for the Decision and the status.

    `containers` holds every container of the target with its resulting
    requests and limits (milli-units); `blocked` is one entry per axis,
    direction and reason (for the Decision and `status.lastBlockedScaling`),
    `blocked_items` the same per container resource; `scale_times` the new
    `status.history.lastScaleTimes`; `targets` what each container was
    moved towards (the VPA's targets, or the Capacity curve's requests).
    """

    plan: Plan
    replicas: int
    containers: tuple[ContainerResources, ...]
    applied: tuple[ResourceChange, ...]
    blocked: tuple[Blocked, ...]
    blocked_items: tuple[Blocked, ...]
    holds: tuple[Hold, ...]
    scale_times: dict[str, float]
    explanation: tuple[str, ...]
    targets: tuple[ContainerTarget, ...] = ()

    @property
    def vpa_weight(self) -> int | None:
        return self.plan.vpa_weight

    @property
    def scaled(self) -> bool:
        return self.replicas != self.plan.current_replicas or bool(self.applied)


def combine(
    strategy: str,
    horizontal: HorizontalInput,
    containers: Sequence[ContainerSpec],
    recommendation: VerticalRecommendation | None,
    settings: GateSettings,
    *,
    now: float,
    intervals: Sequence[WeightInterval] = (),
    mixed: MixedParams | None = None,
    limits_gap: ScaleParams | None = None,
    scale_times: Mapping[str, float | None] | None = None,
    rollout: str | None = None,
    holds: Sequence[Hold] = (),
    pods: Sequence[PodRecord] = (),
    metrics: Sequence[PodMetricsRecord] = (),
    override_oom: bool = False,
) -> Outcome:
    """Decide both axes for one Hvpa.

    `recommendation` is None when vertical scaling is off (`vpa.deploy`
    false); a recommendation that is not usable holds the vertical axis.
    `holds` are the guards' holds (find_conflicts, missing_data_holds): a
    change on a held axis is blocked with the hold's reason. `pods` and
    `metrics` are the target's, for the starvation guard; `override_oom` is
    `status.overrideScaleUpStabilization`.
    """
    lines: list[str] = list(recommendation.explanation) if recommendation else []
    lines.extend(f"guard: hold {hold.axis} ({hold.reason}): {hold.message}" for hold in holds)
    usable = recommendation is not None and recommendation.usable
    targets = recommendation.containers if recommendation is not None and usable else None
    plan = plan_scaling(
        strategy,
        horizontal,
        containers,
        targets,
        intervals=intervals,
        mixed=mixed,
        min_change_up=settings.min_change_up,
        min_change_down=settings.min_change_down,
    )
    if targets is not None:
        starving, starvation_lines = detect_starvation(
            containers,
            targets,
            pods,
            metrics,
            since=last_vertical_scaling(scale_times),
            override_oom=override_oom,
        )
        lines.extend(starvation_lines)
        plan = apply_starvation(plan, starving, containers, targets)
    lines.extend(plan.explanation)
    gated = apply_gates(
        plan,
        settings,
        now=now,
        scale_times=scale_times,
        rollout=rollout,
        holds=holds,
    )
    lines.extend(gated.explanation)

    return _apply(
        plan, gated, containers, targets or (), limits_gap, scale_times, now, holds, lines
    )


def _apply(
    plan: Plan,
    gated: Gated,
    containers: Sequence[ContainerSpec],
    targets: Sequence[ContainerTarget],
    limits_gap: ScaleParams | None,
    scale_times: Mapping[str, float | None] | None,
    now: float,
    holds: Sequence[Hold],
    lines: list[str],
) -> Outcome:
    """The accepted changes written into requests and limits, and the scale times they leave."""
    by_target = {t.name: t for t in targets}
    results: list[ContainerResources] = []
    applied: list[ResourceChange] = []
    for container in containers:
        changes = [c for c in gated.applied if c.container == container.name]
        if not changes:
            results.append(
                ContainerResources(container.name, container.requests, container.limits, ())
            )
            continue
        result = apply_changes(container, changes, by_target[container.name], limits_gap)
        results.append(result)
        applied.extend(result.applied)
        lines.extend(result.explanation)
    times = record_scale_times(
        scale_times,
        now=now,
        current_replicas=plan.current_replicas,
        replicas=gated.replicas,
        applied=applied,
    )
    items = gated.blocked
    return Outcome(
        plan=plan,
        replicas=gated.replicas,
        containers=tuple(results),
        applied=tuple(applied),
        blocked=report(items),
        blocked_items=items,
        holds=tuple(holds),
        scale_times=times,
        explanation=tuple(lines),
        targets=tuple(targets),
    )


# Every step counts in both directions: a resize that comes with a replica move is part of
# one decision.
_ZERO: Final = fill_min_change(None, ("cpu", "memory"), NO_MIN_CHANGE)


@dataclass(frozen=True, slots=True)
class CapacityInput:
    """What the Capacity strategy reads beyond the common inputs.

    `policies` are the containers Capacity sizes, with their policy bounds;
    `shares` how a pod's size splits between them; `demand` the effective
    demand per resource, `level` the sustained one pod sizes follow and
    `level_low` the window's low, which says whether it is settled
    (demand.py); `spare` the resources without a utilization target, which
    the count carries with one pod out; `serving` whether any of the
    target's pods is ready (taking load); `falling` whether the
    down window holds it above this reading's; `capped` the resources whose
    readings sit at the pods' limits (CPU throttling: the need is higher);
    `partial` those whose newest reading begins a rise (a rate over a window
    that holds the rise's start: demand.rise_begins); `vertical` is
    `vpa.deploy` (when false the pods keep their size and only the count
    follows the curve).
    """

    params: CapacityParams
    policies: tuple[ContainerTarget, ...]
    demand: Mapping[str, int]
    level: Mapping[str, int]
    shares: Mapping[str, Mapping[str, int]]
    level_low: Mapping[str, int] = field(default_factory=dict)
    spare: frozenset[str] = frozenset()
    serving: bool = True
    falling: bool = False
    capped: frozenset[str] = frozenset()
    partial: frozenset[str] = frozenset()
    vertical: bool = True


def combine_capacity(
    horizontal: HorizontalInput,
    containers: Sequence[ContainerSpec],
    capacity: CapacityInput,
    settings: GateSettings,
    *,
    now: float,
    limits_gap: ScaleParams | None = None,
    scale_times: Mapping[str, float | None] | None = None,
    rollout: str | None = None,
    holds: Sequence[Hold] = (),
    pods: Sequence[PodRecord] = (),
    metrics: Sequence[PodMetricsRecord] = (),
    override_oom: bool = False,
) -> Outcome:
    """Both axes from the Capacity curve, through the same guards and gates as every strategy.

    One decision, top to bottom: read the curve for the demand; find the
    starving containers (usage at the request while the curve gives more);
    ask the gates which moves they forbid now; plan once within those
    limits (strategies/capacity.py: a held axis stays as it is and the
    other is read from the curve with it, so neither half of a joint move
    goes through alone); let the starving containers through; gate the
    plan (what remains to block is MinChange); write requests and limits.

    MinChange applies only to a resize that keeps the replica count, and
    to the resize as a whole: when one resource's step clears it the pods
    roll anyway, so the other resources change in the same rollout rather
    than in one of their own. A minChange the spec does not set is no
    threshold here (Gardener's 200m / 200M default would hold small pods
    off the curve for good, so the same demand would leave different sizes
    behind): the tolerance is what says a resize is worth a rollout.
    """
    settings = _without_default_min_change(settings)
    reading = read_curve(
        horizontal,
        containers,
        capacity.policies,
        capacity.demand,
        capacity.params,
        shares=capacity.shares,
        fixed=frozenset() if capacity.vertical else frozenset((CPU, MEMORY)),
        spare=capacity.spare,
    )
    starving, starvation_lines = _starvation(
        reading, capacity.vertical, pods, metrics, scale_times, override_oom
    )
    limits = _move_limits(
        reading,
        settings,
        now=now,
        scale_times=scale_times,
        rollout=rollout,
        holds=holds,
        starving=starving,
    )
    situation = Situation(
        level=capacity.level,
        level_low=capacity.level_low,
        starving=any(s.cpu for s in starving),  # none when the vertical axis is off
        serving=capacity.serving,
        falling=capacity.falling,
        capped=capacity.capped,
        partial=capacity.partial,
    )
    planned = plan_capacity(reading, situation, limits)
    plan = apply_starvation(planned.plan, starving, containers, planned.targets)
    gate, gate_lines = _min_change_for(plan, settings)
    gated = apply_gates(plan, gate, now=now, scale_times=scale_times, rollout=rollout, holds=holds)
    lines = [
        *(f"guard: hold {hold.axis} ({hold.reason}): {hold.message}" for hold in holds),
        *starvation_lines,
        *plan.explanation,
        *gate_lines,
        *gated.explanation,
    ]
    return _apply(
        plan, gated, containers, planned.targets, limits_gap, scale_times, now, holds, lines
    )


def _without_default_min_change(settings: GateSettings) -> GateSettings:
    """No minChange where the spec sets none, resource by resource (not Gardener's
    200m / 200M default)."""
    both = ("cpu", "memory")
    return replace(
        settings,
        min_change_up=fill_min_change(settings.min_change_up, both, NO_MIN_CHANGE),
        min_change_down=fill_min_change(settings.min_change_down, both, NO_MIN_CHANGE),
    )


def _starvation(
    reading: CurveReading,
    vertical: bool,
    pods: Sequence[PodRecord],
    metrics: Sequence[PodMetricsRecord],
    scale_times: Mapping[str, float | None] | None,
    override_oom: bool,
) -> tuple[tuple[Starving, ...], tuple[str, ...]]:
    """The containers the starvation guard lets grow, measured against the curve's size."""
    if not vertical:
        return (), ()
    return detect_starvation(
        reading.containers,
        reading.targets,
        pods,
        metrics,
        since=last_vertical_scaling(scale_times),
        override_oom=override_oom,
        source="the Capacity curve's size",
    )


def _move_limits(
    reading: CurveReading,
    settings: GateSettings,
    *,
    now: float,
    scale_times: Mapping[str, float | None] | None,
    rollout: str | None,
    holds: Sequence[Hold],
    starving: Sequence[Starving],
) -> MoveLimits:
    """Which moves the gates forbid now, asked of the gates themselves with one step each way.

    A probe plan moves the count one step each way (to the nearest bound
    when today's count is outside them, which the gates let through) and
    each resource of the pod one step each way, marked as the starvation
    guard would mark the real change; MinChange is left out (it depends on
    the step, and is applied to the real plan). Capacity also holds a
    scale-down while a rollout is in progress: the pods a rollout replaces
    serve nothing while their successors start, so removing pods then takes
    capacity away twice (a count outside minReplicas..maxReplicas is still
    brought back at once).
    """
    horizontal = reading.horizontal
    current = horizontal.current
    low, high = horizontal.min_replicas, horizontal.max_replicas
    inside = low <= current <= high
    up = low if current < low else current + 1
    down = high if current > high else max(current - 1, 0)
    probe_settings = replace(settings, min_change_up=_ZERO, min_change_down=_ZERO)
    changes = _probe_changes(reading, starving)  # the same for both counts
    reasons: dict[tuple[str, str, str], Reasons] = {}
    for replicas in (up, down):
        probe = Plan("Capacity", horizontal, replicas, changes)
        gated = apply_gates(
            probe, probe_settings, now=now, scale_times=scale_times, rollout=rollout, holds=holds
        )
        for block in gated.blocked:
            key = (block.axis, block.direction, block.resource)
            found = (block.reason, block.why)
            if found not in reasons.get(key, ()):
                reasons[key] = (*reasons.get(key, ()), found)
    count_down = reasons.get(("horizontal", "down", ""), ())
    if rollout and inside:
        count_down += ((ROLLOUT, f"a rollout of the target is in progress: {rollout} (Capacity)"),)
    return MoveLimits(
        count_up=reasons.get(("horizontal", "up", ""), ()),
        count_down=count_down,
        size_up={r: reasons.get(("vertical", "up", r), ()) for r in (CPU, MEMORY)},
        size_down={r: reasons.get(("vertical", "down", r), ()) for r in (CPU, MEMORY)},
    )


def _probe_changes(
    reading: CurveReading, starving: Sequence[Starving]
) -> tuple[ResourceChange, ...]:
    """One step up and one down of each resource of the pod, as the real change would be marked."""
    cpu_starving = next((s.cpu for s in starving if s.cpu), "")
    memory_starving = next((s.memory for s in starving if s.memory), "")
    failing = next((s.failing_rollout for s in starving if s.failing_rollout), "")
    changes = []
    for resource in (CPU, MEMORY):
        starving_up = cpu_starving if resource == CPU else memory_starving
        for step in (1, -1):
            changes.append(
                ResourceChange(
                    "pod",
                    resource,
                    1000,
                    1000 + step,
                    1000 + step,
                    step,
                    100,
                    starving=starving_up if step > 0 else "",
                    failing_rollout=failing if step > 0 and resource == MEMORY else "",
                )
            )
    return tuple(changes)


def _min_change_for(plan: Plan, settings: GateSettings) -> tuple[GateSettings, tuple[str, ...]]:
    """The gate settings for this plan: MinChange only for a resize that keeps the count and
    that no resource's step clears (and why, when it does not apply)."""
    moves = plan.replicas != plan.current_replicas
    cleared = any(
        c.moves and clears_min_change(c, settings.min_change_up, settings.min_change_down)[0]
        for c in plan.changes
    )
    if not moves and not cleared:
        return settings, ()
    lines: tuple[str, ...] = ()
    if moves and plan.changes:
        lines = ("gate: minChange does not apply: the replica count moves too",)
    elif cleared and len(plan.changes) > 1:
        lines = (
            "gate: minChange is met by one resource: the resize carries every resource "
            "(one rollout, not one per resource)",
        )
    return replace(settings, min_change_up=_ZERO, min_change_down=_ZERO), lines
