"""`decide`: one Hvpa, one snapshot, one instant in, one Decision out.

The order of a decision: read the history and conditions the last decision
wrote; compute the horizontal recommendation (upstream HPA semantics plus
cluster-proportional replicas); combine the axes into the count to apply;
record the rescale (condition, scale event); write the status back. The
vertical axis, the strategies and the gates plug in at `_combine`; until they
do, the count follows the horizontal recommendation as the Weighted strategy
does at vpaWeight 0, and every container keeps its resources.
"""

from __future__ import annotations

from datetime import UTC, datetime

from msgspec.structs import replace

from hvpa.api import apply_defaults
from hvpa.api.base import plain
from hvpa.api.proportional import (
    ClusterProportionalSpec,
    ProportionalError,
    parse_cluster_proportional,
)
from hvpa.api.resource import Hvpa
from hvpa.api.status import (
    Condition as StatusCondition,
)
from hvpa.api.status import (
    History,
    HpaStatus,
    HvpaStatus,
    ReplicaRecommendation,
    ScalingStatus,
)
from hvpa.api.status import (
    ScaleEvent as StatusScaleEvent,
)
from hvpa.engine.conditions import ABLE_TO_SCALE, Condition, Conditions
from hvpa.engine.decision import (
    Decision,
    HorizontalDecision,
    Snapshot,
    VerticalDecision,
)
from hvpa.engine.explain import Explanation
from hvpa.engine.gomath import MAX_INT32
from hvpa.engine.history import HorizontalHistory, Recommendation, ScaleEvent
from hvpa.engine.horizontal.controller import (
    HorizontalRecommendation,
    HorizontalSpec,
    recommend_horizontal,
    record_rescale,
)
from hvpa.engine.settings import Settings
from hvpa.engine.vertical import ContainerResources
from hvpa.records import format_time

__all__ = ["decide"]


def _seconds(moment: datetime) -> float:
    return moment.timestamp()


def _moment(seconds: float) -> datetime:
    """A time as metav1.Time keeps it: whole seconds, UTC."""
    return datetime.fromtimestamp(int(seconds), UTC)


def _read_conditions(status: HvpaStatus | None) -> tuple[Condition, ...]:
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


def _read_history(status: HvpaStatus | None) -> HorizontalHistory:
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


def _write_status(
    hvpa: Hvpa,
    conditions: tuple[Condition, ...],
    recommendations: tuple[Recommendation, ...] | None,
    scale_up: tuple[ScaleEvent, ...],
    scale_down: tuple[ScaleEvent, ...],
    current: int,
    desired: int,
    now: float,
) -> HvpaStatus:
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
    # An empty history object would read back as "not a new Hvpa": write none until there is one.
    kept = history if history != History() else status.history
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
    )
    if desired != current:
        written = replace(
            written,
            last_scaling=ScalingStatus(
                last_scale_time=_moment(now),
                hpa_status=HpaStatus(current_replicas=current, desired_replicas=desired),
                vpa_status=status.last_scaling.vpa_status if status.last_scaling else None,
            ),
        )
    return written


def _horizontal_spec(hvpa: Hvpa, explain: Explanation) -> HorizontalSpec:
    template = hvpa.spec.hpa.template.spec
    proportional: ClusterProportionalSpec | None = None
    if hvpa.spec.cluster_proportional is not None:
        try:
            proportional = parse_cluster_proportional(plain(hvpa.spec.cluster_proportional))
        except ProportionalError as error:
            explain.add(f"spec.clusterProportional cannot be read: {error}")
    if template is None:
        # Cluster-proportional alone: no HPA template, so no metrics and no min/max.
        return HorizontalSpec(1, MAX_INT32, (), None, proportional)
    return HorizontalSpec(
        min_replicas=1 if template.min_replicas is None else template.min_replicas,
        max_replicas=template.max_replicas,
        metrics=template.metrics,
        behavior=template.behavior,
        cluster_proportional=proportional,
    )


def _combine(
    hvpa: Hvpa, horizontal: HorizontalRecommendation | None, current: int, explain: Explanation
) -> int:
    """The count to apply: for now, the horizontal recommendation (Weighted at vpaWeight 0)."""
    weights = [i.vpa_weight for i in hvpa.spec.weight_based_scaling_intervals if i.vpa_weight]
    if weights:
        explain.add(
            f"weightBasedScalingIntervals give vpaWeight {max(weights)}: not applied by this "
            "engine yet, the count follows the horizontal recommendation"
        )
    if hvpa.spec.vpa.deploy:
        explain.add("vpa.deploy is true: vertical scaling is not applied by this engine yet")
    if horizontal is None:
        return current
    return horizontal.wants


def decide(
    hvpa: Hvpa, snapshot: Snapshot, now: float, settings: Settings | None = None
) -> Decision:
    """The decision for one Hvpa (its spec, and its status as the history) at `now`."""
    settings = settings or Settings()
    hvpa = apply_defaults(hvpa)
    explain = Explanation()
    explain.add(f"Hvpa {hvpa.namespace}/{hvpa.name} at {format_time(now)}")
    conditions = Conditions(_read_conditions(hvpa.status), now)
    history = _read_history(hvpa.status)
    target = snapshot.target
    if target is None:
        ref = hvpa.spec.target_ref
        conditions.set(
            ABLE_TO_SCALE,
            False,
            "FailedGetScale",
            f"the HPA controller was unable to get the target's current scale: "
            f"{ref.kind} {hvpa.namespace}/{ref.name} not found",
        )
        explain.add(f"target {ref.kind} {ref.name} not found: nothing to scale")
        return _decision(hvpa, 0, 0, (), None, history, conditions, now, explain)

    current = target.spec_replicas
    explain.add(
        f"target {target.kind} {target.key}: {current} replicas, {len(snapshot.pods)} pods selected"
    )
    horizontal: HorizontalRecommendation | None = None
    if hvpa.spec.hpa.deploy:
        spec = _horizontal_spec(hvpa, explain)
        explain.add("horizontal:")
        with explain.indented():
            horizontal = recommend_horizontal(
                spec,
                hvpa.namespace,
                target,
                snapshot.pods,
                snapshot.nodes,
                snapshot.config_maps,
                snapshot.metrics,
                history,
                conditions,
                now,
                settings,
                explain,
            )
            explain.add(
                f"horizontal recommendation: {horizontal.wants} replicas"
                + (f" ({horizontal.rescale_reason})" if horizontal.rescale_reason else "")
            )
    else:
        explain.add("horizontal scaling is off (spec.hpa.deploy is false)")

    replicas = _combine(hvpa, horizontal, current, explain)
    containers = tuple(
        ContainerResources(c.name, c.requests, c.limits, ()) for c in target.containers
    )
    return _decision(
        hvpa, current, replicas, containers, horizontal, history, conditions, now, explain
    )


def _decision(
    hvpa: Hvpa,
    current: int,
    replicas: int,
    containers: tuple[ContainerResources, ...],
    horizontal: HorizontalRecommendation | None,
    history: HorizontalHistory,
    conditions: Conditions,
    now: float,
    explain: Explanation,
) -> Decision:
    scale_up, scale_down = history.scale_up_events, history.scale_down_events
    recommendations = history.recommendations
    if horizontal is not None:
        scale_up, scale_down = record_rescale(
            horizontal, replicas, scale_up, scale_down, conditions, now, explain
        )
        recommendations = horizontal.recommendations
    elif replicas != current:
        conditions.set(
            ABLE_TO_SCALE,
            True,
            "SucceededRescale",
            f"the HPA controller was able to update the target scale to {replicas}",
        )
    explain.add(
        f"decision: {current} -> {replicas} replicas"
        if replicas != current
        else f"decision: keep {current} replicas"
    )
    final = conditions.items()
    return Decision(
        current_replicas=current,
        desired_replicas=replicas,
        containers=containers,
        horizontal=HorizontalDecision(
            enabled=horizontal is not None,
            desired_replicas=current if horizontal is None else horizontal.wants,
            metrics=() if horizontal is None else horizontal.metrics,
            cluster_proportional=None if horizontal is None else horizontal.cluster_proportional,
        ),
        vertical=VerticalDecision(enabled=hvpa.spec.vpa.deploy),
        blocked=(),
        conditions=final,
        status=_write_status(
            hvpa, final, recommendations, scale_up, scale_down, current, replicas, now
        ),
        explanation=tuple(explain.lines),
    )
