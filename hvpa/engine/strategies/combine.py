"""One call from the two recommendations to the applied result: strategy, guards, gates, limits.

The order is fixed so that every strategy gets the same safety: the strategy
proposes, the starvation guard lets starving containers through, the gates
block what the spec or the situation forbids (reporting every reason), and
the accepted requests get their limits. Kept out of the package's __init__,
because it imports gates.py and guards.py, which import the plan types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hvpa.engine.gates import (
    GateSettings,
    apply_gates,
    last_scale_time,
    record_scale_times,
    report,
)
from hvpa.engine.guards import apply_starvation, detect_starvation
from hvpa.engine.vertical import (
    ContainerResources,
    ResourceChange,
    ScaleParams,
    VerticalRecommendation,
    apply_changes,
)
from hvpa.records import ContainerSpec, PodMetricsRecord, PodRecord

from . import plan_scaling
from .mixed import MixedParams
from .plan import Blocked, Hold, HorizontalInput, Plan
from .weights import WeightInterval

__all__ = ["Outcome", "combine"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """The decision of both axes, ready for the Decision and the status.

    `containers` holds every container of the target with its resulting
    requests and limits (milli-units); `blocked` is one entry per axis,
    direction and reason (for the Decision and `status.lastBlockedScaling`),
    `blocked_items` the same per container resource; `scale_times` the new
    `status.history.lastScaleTimes`.
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
    legacy_scale_time: float | None = None,
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
        since_times = (
            last_scale_time(key, scale_times, legacy_scale_time)
            for key in ("verticalUp", "verticalDown")
        )
        since = max((t for t in since_times if t is not None), default=None)
        starving, starvation_lines = detect_starvation(
            containers, targets, pods, metrics, since=since, override_oom=override_oom
        )
        lines.extend(starvation_lines)
        plan = apply_starvation(plan, starving, containers, targets)
    lines.extend(plan.explanation)
    gated = apply_gates(
        plan,
        settings,
        now=now,
        scale_times=scale_times,
        legacy_scale_time=legacy_scale_time,
        rollout=rollout,
        holds=holds,
    )
    lines.extend(gated.explanation)

    by_target = {t.name: t for t in targets or ()}
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
        current_replicas=horizontal.current,
        replicas=gated.replicas,
        applied=applied,
    )
    return Outcome(
        plan=plan,
        replicas=gated.replicas,
        containers=tuple(results),
        applied=tuple(applied),
        blocked=report(gated.blocked),
        blocked_items=gated.blocked,
        holds=tuple(holds),
        scale_times=times,
        explanation=tuple(lines),
    )
