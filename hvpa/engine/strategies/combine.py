"""One call from the two recommendations to the applied result: strategy, guards, gates, limits.

The order is fixed so that every strategy gets the same safety: the strategy
proposes, the starvation guard lets starving containers through, the gates
block what the spec or the situation forbids (reporting every reason), and
the accepted requests get their limits. Kept out of the package's __init__,
because it imports gates.py and guards.py, which import the plan types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from hvpa.engine.gates import (
    Gated,
    GateSettings,
    apply_gates,
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
from .capacity import CapacityParams, CapacityPlan, plan_capacity
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
    blocked: Sequence[Blocked] = (),
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
    items = (*blocked, *gated.blocked)
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


@dataclass(frozen=True, slots=True)
class _ZeroChange:
    value: str = "0"
    percentage: int | None = None


@dataclass(frozen=True, slots=True)
class _NoMinChange:
    """minChange of 0: a resize that comes with a replica move is part of one decision."""

    cpu: _ZeroChange = _ZeroChange()
    memory: _ZeroChange = _ZeroChange()


@dataclass(frozen=True, slots=True)
class CapacityInput:
    """What the Capacity strategy reads beyond the common inputs.

    `policies` are the containers Capacity sizes, with their policy bounds;
    `shares` how a pod's size splits between them; `demand` the effective
    demand per resource and `level` the sustained one pod sizes follow
    (demand.py); `spare` the resources without a utilization target, which
    the count carries with one pod out; `serving` whether any of the
    target's pods is ready (taking load); `falling` whether the
    down window holds it above this reading's; `capped` the resources whose
    readings sit at the pods' limits (CPU throttling: the need is higher); `vertical` is `vpa.deploy` (when false the pods keep their
    size and only the count follows the curve).
    """

    params: CapacityParams
    policies: tuple[ContainerTarget, ...]
    demand: Mapping[str, int]
    level: Mapping[str, int]
    shares: Mapping[str, Mapping[str, int]]
    spare: frozenset[str] = frozenset()
    serving: bool = True
    falling: bool = False
    capped: frozenset[str] = frozenset()
    vertical: bool = True


@dataclass(frozen=True, slots=True)
class _Pass:
    plan: Plan
    gated: Gated
    targets: tuple[ContainerTarget, ...]
    lines: tuple[str, ...]


def _hold_scale_down_while_rolling(plan: Plan, rollout: str | None) -> Plan:
    """Capacity's scale-down waits for a rollout in progress.

    The pods a rollout replaces serve nothing while their successors start,
    so removing pods then takes capacity away twice; and a resize that grows
    pods comes first at the count it starts from (strategies/capacity.py),
    with the count falling only once the bigger pods are ready. A count
    outside minReplicas..maxReplicas is brought back at once all the same.
    """
    horizontal = plan.horizontal
    inside = horizontal.min_replicas <= plan.current_replicas <= horizontal.max_replicas
    if not rollout or plan.replicas >= plan.current_replicas or not inside:
        return plan
    moved = f"{plan.current_replicas} -> {plan.replicas} replicas"
    why = f"a rollout of the target is in progress: {rollout}"
    return replace(
        plan,
        replicas=plan.current_replicas,
        blocked=(*plan.blocked, Blocked("horizontal", "down", ROLLOUT, f"{moved}: {why}")),
        explanation=(
            *plan.explanation,
            f"gate: horizontal down {moved} blocked by {ROLLOUT}: {why} (Capacity)",
        ),
    )


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

    The two axes are one decision: a gate that holds one of them must not
    let the other half through alone (fewer replicas without the larger
    pods they were sized for would leave the demand uncovered; larger pods
    without the replicas would pass the curve). So when a gate holds the
    count, or holds the pods while the count would move, the curve is read
    again with the held axis as it is (at a held count the pods may grow
    to the curve there), and that second plan goes through the gates
    instead; what the first pass blocked is still reported. MinChange applies only
    to a resize that keeps the replica count, and to the resize as a whole:
    when one resource's step clears it the pods roll anyway, so the other
    resources change in the same rollout rather than in one of their own.
    A minChange the spec does not set is no threshold here (Gardener's
    200m / 200M default would hold small pods off the curve for good, so
    the same demand would leave different sizes behind): the tolerance is
    what says a resize is worth a rollout.
    """
    lines = [f"guard: hold {hold.axis} ({hold.reason}): {hold.message}" for hold in holds]
    since = last_vertical_scaling(scale_times)
    settings = replace(
        settings,
        min_change_up=settings.min_change_up or _NoMinChange(),
        min_change_down=settings.min_change_down or _NoMinChange(),
    )

    def run(fixed: frozenset[str], fixed_replicas: bool) -> _Pass:
        def plan_pass(*, starving: bool = False) -> CapacityPlan:
            return plan_capacity(
                horizontal,
                containers,
                capacity.policies,
                capacity.demand,
                capacity.params,
                level=capacity.level,
                shares=capacity.shares,
                fixed=fixed,
                fixed_replicas=fixed_replicas,
                starving=starving,
                spare=capacity.spare,
                serving=capacity.serving,
                falling=capacity.falling,
                capped=capacity.capped,
            )

        planned = plan_pass()
        starving: tuple[Starving, ...] = ()
        starvation_lines: tuple[str, ...] = ()
        if capacity.vertical:
            starving, starvation_lines = detect_starvation(
                containers,
                planned.targets,
                pods,
                metrics,
                since=since,
                override_oom=override_oom,
                source="the Capacity curve's size",
            )
        if any(s.cpu for s in starving) and CPU not in fixed:
            planned = plan_pass(starving=True)
        plan = _hold_scale_down_while_rolling(
            apply_starvation(planned.plan, starving, containers, planned.targets), rollout
        )
        moves = plan.replicas != plan.current_replicas
        cleared = any(
            c.moves and clears_min_change(c, settings.min_change_up, settings.min_change_down)[0]
            for c in plan.changes
        )
        gate = replace(settings, min_change_up=_NoMinChange(), min_change_down=_NoMinChange())
        gated = apply_gates(
            plan,
            gate if moves or cleared else settings,
            now=now,
            scale_times=scale_times,
            rollout=rollout,
            holds=holds,
        )
        gated_lines: tuple[str, ...] = ()
        if moves and plan.changes:
            gated_lines = ("gate: minChange does not apply: the replica count moves too",)
        elif cleared and len(plan.changes) > 1:
            gated_lines = (
                "gate: minChange is met by one resource: the resize carries every resource "
                "(one rollout, not one per resource)",
            )
        return _Pass(
            plan,
            gated,
            planned.targets,
            (*starvation_lines, *plan.explanation, *gated_lines, *gated.explanation),
        )

    fixed = frozenset() if capacity.vertical else frozenset((CPU, MEMORY))
    first = run(fixed, fixed_replicas=not horizontal.enabled)
    lines.extend(first.lines)
    plan, gated = first.plan, first.gated
    replica_move = plan.replicas != plan.current_replicas
    held_vertical = frozenset(c.resource for c in plan.changes if c not in gated.applied)
    again: _Pass | None = None
    carried: tuple[Blocked, ...] = ()
    if replica_move and gated.replicas == plan.current_replicas:
        lines.append("capacity: the replica count is held: the curve is read again at that count")
        again = run(fixed, fixed_replicas=True)
        carried = tuple(b for b in gated.blocked if b.axis == "horizontal")
    elif replica_move and gated.replicas != plan.current_replicas and held_vertical:
        lines.append(
            f"capacity: {', '.join(sorted(held_vertical))} per pod is held: "
            "the curve is read again with the pods at their size"
        )
        again = run(fixed | held_vertical, fixed_replicas=False)
        carried = tuple(
            b for b in gated.blocked if b.axis == "vertical" and b.resource in held_vertical
        )
    if again is not None:
        lines.extend(f"  {line}" for line in again.lines)
    final = again or first
    return _apply(
        final.plan,
        final.gated,
        containers,
        final.targets,
        limits_gap,
        scale_times,
        now,
        holds,
        lines,
        carried,
    )
