"""`decide`: one Hvpa, one snapshot, one instant in, one Decision out.

The order of a decision: read the history and conditions the last decision
wrote (status.py); compute the horizontal recommendation (upstream HPA
semantics plus cluster-proportional replicas); read the vertical one from
the VPA under the Hvpa's container policies; find what holds an axis (another writer, missing
data); combine the two (strategy, starvation guard, gates, limits:
strategies/combine.py); record the rescale (conditions, scale event); write
the status back (status.py). The explanation follows the same order.

Conditions this module adds to upstream's: `VerticalScalingActive` (True,
ValidRecommendation; False with the reason that holds the vertical axis:
NoVerticalPodAutoscaler, VerticalPodAutoscalerNotOwned, NoRecommendation, RecommendationNotProvided,
ConfigUnsupported, LowConfidence, ConflictingAutoscaler, TargetNotFound),
`AbleToScale=False, reason=ConflictingAutoscaler` when another writer holds
the replica count, `reason=ConflictingFieldManager` on either axis while
another field manager keeps rewriting what hvpa set there (rewrites.py),
`ResizingInPlace` in the in-place resize modes (inplace.py), `reason=NoDemand` on both when the Capacity strategy has
nothing to measure demand from, and `ScalingActive=False,
reason=InvalidSpec` when the spec cannot be applied at all. For a Capacity
Hvpa ScalingActive says whether it has a demand (True: DemandMeasured or
DemandFromVpaTarget; False: NoDemand), not what the HPA metrics say.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Final

import msgspec

from hvpa.api.defaults import (
    CAPACITY_IN_PLACE_RESIZE_TOLERANCE_PERCENT,
    DEFAULT_MIN_REPLICAS,
    default_spec,
)
from hvpa.api.proportional import ProportionalError
from hvpa.api.resource import Hvpa
from hvpa.api.spec import HpaTemplateSpec, HvpaSpec
from hvpa.api.status import History, HvpaStatus, PodResources, SizedContainer
from hvpa.durations import DurationError
from hvpa.engine.capacity_inputs import CAPACITY, capacity_input, capacity_problem
from hvpa.engine.conditions import (
    ABLE_TO_SCALE,
    INVALID_SPEC,
    SCALING_ACTIVE,
    VERTICAL_SCALING_ACTIVE,
    Conditions,
)
from hvpa.engine.decision import (
    Decision,
    HorizontalDecision,
    Snapshot,
    VerticalContainer,
    VerticalDecision,
    format_resources,
)
from hvpa.engine.demand import Demand, describe_amounts
from hvpa.engine.explain import Explanation, counted
from hvpa.engine.gates import (
    IN_PLACE_MIN_CHANGE_PERCENT,
    GateSettings,
    MaintenanceWindowError,
    gate_settings,
    in_place_min_change,
)
from hvpa.engine.gomath import MAX_INT32
from hvpa.engine.guards import (
    TARGET_NOT_FOUND,
    find_conflicts,
    missing_data_holds,
    writer_from_hvpa,
)
from hvpa.engine.history import HorizontalHistory
from hvpa.engine.horizontal.controller import (
    HorizontalRecommendation,
    HorizontalSpec,
    recommend_horizontal,
    record_rescale,
)
from hvpa.engine.horizontal.proportional import ProportionalInput, proportional_input
from hvpa.engine.inplace import (
    RESIZING_IN_PLACE,
    ROLLOUT,
    InPlacePlan,
    describe_size,
    plan_in_place,
    sized_containers,
)
from hvpa.engine.memo import ByIdentity
from hvpa.engine.metrics import PodMetricsList
from hvpa.engine.rewrites import Assessment, assess, record_writes
from hvpa.engine.settings import Settings
from hvpa.engine.status import (
    read_conditions,
    read_demand_history,
    read_history,
    read_scale_times,
    write_status,
)
from hvpa.engine.strategies import STRATEGIES, Hold, HorizontalInput
from hvpa.engine.strategies.combine import Outcome, combine, combine_capacity
from hvpa.engine.vertical import (
    ContainerResources,
    VerticalRecommendation,
    describe,
    policies_from_spec,
    read_recommendation,
)
from hvpa.records import (
    NO_RESOURCES,
    ContainerSpec,
    PodMetricsRecord,
    RecordError,
    Resources,
    TargetRecord,
    VpaContainerPolicy,
    VpaRecord,
    format_time,
    quantity_milli,
)

__all__ = ["decide"]

# Hold reason when Capacity has nothing to measure demand from.
NO_DEMAND: Final = "NoDemand"
# ScalingActive reasons of a Capacity Hvpa with a demand to read the curve with.
DEMAND_MEASURED: Final = "DemandMeasured"
DEMAND_FROM_VPA_TARGET: Final = "DemandFromVpaTarget"


def _horizontal_spec(hvpa: Hvpa, snapshot: Snapshot) -> HorizontalSpec:
    """What the horizontal axis reads of the spec, with the CPA's parameters resolved.

    Raises ProportionalError when the parameters a configMapRef names are
    ones CPA refuses: an invalid spec, as the same parameters inline are.
    """
    template = hvpa.spec.hpa.template.spec
    proportional: ProportionalInput | None = None
    if hvpa.spec.cluster_proportional is not None:
        proportional = proportional_input(
            hvpa.spec.cluster_proportional.params(), hvpa.namespace, snapshot.config_maps
        )
    if template is None:
        # Cluster-proportional alone: no HPA template, so no metrics and no min/max.
        return HorizontalSpec(DEFAULT_MIN_REPLICAS, MAX_INT32, (), None, proportional)
    return HorizontalSpec(
        min_replicas=_min_replicas(template),
        max_replicas=template.max_replicas,
        metrics=template.metrics,
        behavior=template.behavior,
        cluster_proportional=proportional,
    )


def _min_replicas(template: HpaTemplateSpec) -> int:
    """minReplicas of the defaulted template (apply_defaults fills it in; no second default)."""
    assert template.min_replicas is not None, "decide runs on a defaulted Hvpa"
    return template.min_replicas


def _strategy(spec: HvpaSpec) -> str:
    """The strategy of the defaulted spec (apply_defaults fills it in; no second default)."""
    assert spec.strategy is not None, "decide runs on a defaulted Hvpa"
    return spec.strategy


def _horizontal_input(
    hvpa: Hvpa, horizontal: HorizontalRecommendation | None, current: int
) -> HorizontalInput:
    """What the strategies read of the horizontal axis.

    The recommendation already lies within its own bounds; cluster-proportional
    replicas without HPA metrics follow the CPA's min/max, which may be below
    minReplicas (a ladder may ask for 0), so the bounds given to the
    strategies widen to include it rather than undo it.
    """
    if horizontal is None:
        template = hvpa.spec.hpa.template.spec
        if template is None:
            return HorizontalInput(current, DEFAULT_MIN_REPLICAS, current, enabled=False)
        return HorizontalInput(
            current, _min_replicas(template), template.max_replicas, enabled=False
        )
    low, high = horizontal.min_replicas, horizontal.max_replicas
    desired = horizontal.desired_replicas
    if desired is not None:
        low, high = min(low, desired), max(high, desired)
    return HorizontalInput(
        current, low, high, desired, horizontal.unclamped, moved_by=horizontal.moved_by
    )


def _policies(hvpa: Hvpa, vpa: VpaRecord | None) -> tuple[VpaContainerPolicy, ...]:
    """The container policies: `vpa.template`'s, which hvpa's VPA is made from, else the VPA's own."""
    template = hvpa.spec.vpa.template.spec
    written = template.resource_policy if template else None
    if written is not None:
        return policies_from_spec(written.container_policies)
    return vpa.container_policies if vpa is not None else ()


def _rollout(target: TargetRecord, explain: Explanation) -> str | None:
    """Whether a rollout of the target is under way (the Rollout gate).

    A target that reports no status at all (none of the counts, generations
    or revisions a workload controller writes: a hand-written scenario, or an
    object no controller has picked up yet) says nothing about a rollout; it
    is taken as settled rather than as rolling out for ever.
    """
    reported = (
        target.observed_generation,
        target.status_replicas,
        target.updated_replicas,
        target.ready_replicas,
        target.available_replicas,
        target.current_revision,
        target.update_revision,
    )
    if not any(reported):
        explain.add("the target reports no status: no rollout is taken to be in progress")
        return None
    return target.rollout_in_progress()


def _pod_metrics(snapshot: Snapshot) -> tuple[PodMetricsRecord, ...]:
    """The target's PodMetrics, once per pod, for the starvation guard."""
    found: dict[str, PodMetricsRecord] = {}
    for reading in snapshot.metrics.values():
        if isinstance(reading, PodMetricsList):
            for item in reading.items:
                found.setdefault(item.name, item)
    return tuple(found.values())


def _not_decidable(hvpa: Hvpa) -> str:
    """Why nothing can be scaled at all (a strategy this engine lacks, a Capacity spec without its parts), or ''."""
    strategy = _strategy(hvpa.spec)
    if strategy == CAPACITY:
        return capacity_problem(hvpa.spec)
    if strategy not in STRATEGIES:
        return f"strategy {strategy} is not available in this version of the engine"
    return ""


def _set_hold_conditions(
    hvpa: Hvpa,
    holds: tuple[Hold, ...],
    recommendation: VerticalRecommendation | None,
    vpa: VpaRecord | None,
    conditions: Conditions,
    explain: Explanation,
    *,
    capacity: bool = False,
) -> None:
    """What holds an axis, as conditions: AbleToScale for the replicas, VerticalScalingActive for the pods."""
    horizontal = [hold for hold in holds if hold.axis == "horizontal"]
    if horizontal:
        message = "; ".join(hold.message for hold in horizontal)
        conditions.set(ABLE_TO_SCALE, False, horizontal[0].reason, message)
        explain.add(f"condition {ABLE_TO_SCALE}=False ({horizontal[0].reason}): {message}")
    if not hvpa.spec.vpa.deploy:
        if conditions.get(VERTICAL_SCALING_ACTIVE) is not None:
            conditions.set(
                VERTICAL_SCALING_ACTIVE, False, "VerticalScalingOff", "spec.vpa.deploy is false"
            )
        return
    vertical = [hold for hold in holds if hold.axis == "vertical"]
    if vertical:
        status, reason = False, vertical[0].reason
        message = "; ".join(hold.message for hold in vertical)
    elif capacity:
        status, reason = True, "ValidRecommendation"
        message = "pod sizes follow spec.capacity.curve for the demand"
    else:
        status, reason = True, "ValidRecommendation"
        message = (
            "the recommendation of "
            + (f"VerticalPodAutoscaler {vpa.namespace}/{vpa.name}" if vpa else "the VPA")
            + " is used"
        )
        if recommendation is not None and recommendation.warnings:
            message += " (" + "; ".join(recommendation.warnings) + ")"
    conditions.set(VERTICAL_SCALING_ACTIVE, status, reason, message)
    explain.add(f"condition {VERTICAL_SCALING_ACTIVE}={status} ({reason}): {message}")


def _set_capacity_scaling_active(
    demand: Demand, conditions: Conditions, explain: Explanation
) -> None:
    """ScalingActive for a Capacity Hvpa: whether it has a demand to read the curve with.

    The horizontal calculation runs for Capacity too (its Pods, Object and
    External metrics are floors of the demand), and it sets ScalingActive
    from the HPA metrics: False, FailedGetResourceMetric, for a new Hvpa
    whose pods have no metrics yet, although the count follows the curve
    from the VPA target then. What moves a Capacity Hvpa's count is the
    demand, so the condition says whether there is one and where it comes
    from.

    The message names the source, not the amounts: usage moves at every
    reading, and a condition that changed with it would make every decision
    a status write (kept back otherwise until the history is worth writing,
    reconciler._defer_history), and every status write a watch event to
    each client of the Hvpa. The amounts are in the explanation (`hvpa
    explain`, /debug/state) and in `status.history.demands`.
    """
    if demand.known:
        reason = DEMAND_MEASURED if demand.source == "usage" else DEMAND_FROM_VPA_TARGET
        source = (
            "the usage of the target's pods"
            if demand.source == "usage"
            else "the VPA target (no usage samples yet)"
        )
        message = f"the replica count follows spec.capacity.curve for the demand from {source}"
        conditions.set(SCALING_ACTIVE, True, reason, message)
        explain.add(
            f"condition {SCALING_ACTIVE}=True ({reason}): {message}: "
            f"{describe_amounts(demand.effective)}"
        )
    else:
        reason, message = NO_DEMAND, demand.unknown
        conditions.set(SCALING_ACTIVE, False, reason, message)
        explain.add(f"condition {SCALING_ACTIVE}=False ({reason}): {message}")


def decide(
    hvpa: Hvpa, snapshot: Snapshot, now: float, settings: Settings | None = None
) -> Decision:
    """The decision for one Hvpa (its spec, and its status as the history) at `now`."""
    settings = settings or Settings()
    band_unset = hvpa.spec.capacity is not None and hvpa.spec.capacity.resize_tolerance is None
    hvpa = msgspec.structs.replace(hvpa, spec=_defaulted(hvpa.spec))
    explain = Explanation()
    explain.add(f"Hvpa {hvpa.namespace}/{hvpa.name} at {format_time(now)}")
    conditions = Conditions(read_conditions(hvpa.status), now)
    history = read_history(hvpa.status)
    target = snapshot.target
    if target is None:
        ref = hvpa.spec.target_ref
        message = f"{ref.kind} {hvpa.namespace}/{ref.name} not found"
        conditions.set(
            ABLE_TO_SCALE,
            False,
            "FailedGetScale",
            f"the HPA controller was unable to get the target's current scale: {message}",
        )
        if hvpa.spec.vpa.deploy:
            conditions.set(VERTICAL_SCALING_ACTIVE, False, TARGET_NOT_FOUND, message)
        explain.add(f"target {ref.kind} {ref.name} not found: nothing to scale")
        return _decision(hvpa, history, conditions, now, explain)

    current = target.spec_replicas
    explain.add(
        f"target {target.kind} {target.key}: {counted(current, 'replica')}, {counted(len(snapshot.pods), 'pod')} selected"
    )
    rewrites = assess(hvpa, target, now, settings)
    for line in rewrites.explanation:
        explain.add(line)
    mode = _resize_mode(hvpa, snapshot, conditions, explain)
    template = target.containers
    if band_unset and mode != ROLLOUT:
        hvpa = _in_place_band(hvpa, explain)
    target = _at_decided_size(hvpa, target, explain)
    for container in target.containers:
        explain.add(
            f"container {container.name}: requests {describe(container.requests)}; "
            f"limits {describe(container.limits)}"
        )
    horizontal: HorizontalRecommendation | None = None
    problem = ""
    if hvpa.spec.hpa.deploy:
        try:
            spec = _horizontal_spec(hvpa, snapshot)
        except ProportionalError as error:
            problem = f"spec.clusterProportional.{error}"
    if hvpa.spec.hpa.deploy and not problem:
        explain.add("horizontal:")
        with explain.indented():
            horizontal = recommend_horizontal(
                spec,
                hvpa.namespace,
                target,
                snapshot.pods,
                snapshot.nodes,
                snapshot.metrics,
                history,
                conditions,
                now,
                settings,
                explain,
            )
            explain.add(
                f"horizontal recommendation: {counted(horizontal.wants, 'replica')}"
                + (f" ({horizontal.rescale_reason})" if horizontal.rescale_reason else "")
            )
    elif not hvpa.spec.hpa.deploy:
        explain.add("horizontal scaling is off (spec.hpa.deploy is false)")
    if not hvpa.spec.vpa.deploy:
        explain.add("vertical scaling is off (spec.vpa.deploy is false)")

    problem = problem or _not_decidable(hvpa)
    try:
        gates = _gate_settings(hvpa.spec)
    except (DurationError, MaintenanceWindowError) as error:
        problem = f"the spec cannot be applied: {error}"
    outcome: Outcome | None = None
    recommendation: VerticalRecommendation | None = None
    demand: Demand | None = None
    if problem:
        conditions.set(SCALING_ACTIVE, False, INVALID_SPEC, problem)
        explain.add(f"{problem}: nothing is scaled")
    else:
        if mode != ROLLOUT:
            gates = _in_place_gates(hvpa, target, gates, explain)
        outcome, recommendation, demand = _combine(
            hvpa,
            snapshot,
            target,
            horizontal,
            gates,
            now,
            explain,
            rewrites.holds,
            in_place=mode != ROLLOUT,
        )
    plan = None
    if outcome is not None and mode != ROLLOUT:
        plan = _plan_in_place(mode, outcome, snapshot, target, now, settings, conditions, explain)
    return _decision(
        hvpa,
        history,
        conditions,
        now,
        explain,
        current=current,
        containers=target.containers,
        horizontal=horizontal,
        outcome=outcome,
        recommendation=recommendation,
        vpa=snapshot.vpa,
        demand=demand,
        rewrites=rewrites,
        in_place=plan,
        template=template,
    )


def _in_place_gates(
    hvpa: Hvpa, target: TargetRecord, gates: GateSettings, explain: Explanation
) -> GateSettings:
    """MinChange's default when resizes are made in place: a tenth of the request (gates.py),
    for the resources no sized container restarts for; Capacity keeps having none."""
    if _strategy(hvpa.spec) == CAPACITY:
        return gates
    cheap = [
        r for r in ("cpu", "memory") if all(r not in c.restart_on_resize for c in target.containers)
    ]
    if not cheap:
        return gates
    explain.add(
        f"in place: an unset minChange for {' and '.join(cheap)} is "
        f"{IN_PLACE_MIN_CHANGE_PERCENT}% of the request (a resize restarts nothing)"
    )
    return replace(
        gates,
        min_change_up=in_place_min_change(gates.min_change_up, cheap),
        min_change_down=in_place_min_change(gates.min_change_down, cheap),
    )


def _spec_in_place_band(spec: HvpaSpec) -> HvpaSpec:
    capacity = spec.capacity
    assert capacity is not None
    band = msgspec.structs.replace(
        capacity, resize_tolerance=CAPACITY_IN_PLACE_RESIZE_TOLERANCE_PERCENT
    )
    return msgspec.structs.replace(spec, capacity=band)


# Derived from the spec alone, once per spec object (memo.py).
_defaulted: Final = ByIdentity(default_spec)
_in_place_banded: Final = ByIdentity(_spec_in_place_band)
_gate_settings: Final = ByIdentity(gate_settings)


def _in_place_band(hvpa: Hvpa, explain: Explanation) -> Hvpa:
    """Capacity's resize band when no resizeTolerance is written and pods are resized in place:
    narrower than for rollouts, since a resize then replaces no pod (api/defaults.py)."""
    explain.add(
        f"in place: an unset resizeTolerance is {CAPACITY_IN_PLACE_RESIZE_TOLERANCE_PERCENT}% "
        "(a resize replaces no pod)"
    )
    return msgspec.structs.replace(hvpa, spec=_in_place_banded(hvpa.spec))


def _resize_mode(
    hvpa: Hvpa, snapshot: Snapshot, conditions: Conditions, explain: Explanation
) -> str:
    """The resize mode in force: the spec's, or Rollout where the server cannot resize pods."""
    wanted = hvpa.spec.vpa.resize_mode or ROLLOUT
    if wanted == ROLLOUT:
        conditions.remove(RESIZING_IN_PLACE)
        return ROLLOUT
    if not snapshot.resize_served:
        message = (
            f"spec.vpa.resizeMode is {wanted} but the API server does not serve pods/resize "
            "(Kubernetes 1.33 or newer does): new sizes are rolled out through the pod template"
        )
        conditions.set(RESIZING_IN_PLACE, False, "ResizeNotServed", message)
        explain.add(f"condition {RESIZING_IN_PLACE}=False (ResizeNotServed): {message}")
        return ROLLOUT
    explain.add(f"resize mode {wanted}: pods are resized in place, the template is left alone")
    return wanted


def _at_decided_size(hvpa: Hvpa, target: TargetRecord, explain: Explanation) -> TargetRecord:
    """The target as its pods are sized: `status.podResources` where an in-place mode keeps it.

    The template then still holds the size it had before the in-place modes
    began; the decision starts from what the pods were given since. In
    Rollout mode the same holds until the template has caught up (a mode
    switched back): the decision starts from the pods' size and the
    controller writes it into the template.
    """
    sized = hvpa.status.pod_resources if hvpa.status else None
    if sized is None:
        return target
    sizes: dict[str, tuple[Resources, Resources]] = {}
    for container in sized.containers:
        try:
            sizes[container.name] = (
                _resources(container.requests or {}),
                _resources(container.limits or {}),
            )
        except RecordError as error:
            explain.add(
                f"status.podResources cannot be read ({error}): the template's size is used"
            )
            return target
    known = {c.name for c in target.containers}
    if not set(sizes) <= known:
        explain.add("status.podResources names containers the template lacks: ignored")
        return target
    explain.add("the pods' size is status.podResources (the in-place size), not the template's")
    return msgspec.structs.replace(target, containers=sized_containers(target.containers, sizes))


def _resources(amounts: Mapping[str, str | int | float]) -> Resources:
    return Resources(
        cpu=quantity_milli(amounts["cpu"], "cpu") if "cpu" in amounts else None,
        memory=quantity_milli(amounts["memory"], "memory") if "memory" in amounts else None,
    )


def _plan_in_place(
    mode: str,
    outcome: Outcome,
    snapshot: Snapshot,
    target: TargetRecord,
    now: float,
    settings: Settings,
    conditions: Conditions,
    explain: Explanation,
) -> InPlacePlan:
    """Each pod against the decided size, and the condition that says how far they are."""
    sized = {c.name for c in target.containers}
    decided = tuple(c for c in outcome.containers if c.name in sized)
    plan = plan_in_place(
        mode,
        decided,
        snapshot.pods,
        target,
        now=now,
        bounds=settings.in_place,
        refused=snapshot.resize_refused,
    )
    explain.add(f"in place ({mode}): pods to be sized {describe_size(decided)}")
    with explain.indented():
        for pod in plan.pods:
            detail = f" ({pod.message})" if pod.message else ""
            stuck = ", stuck" if pod.stuck else ""
            explain.add(f"pod {pod.name}: {pod.state}{stuck}{detail}")
    status, reason, message = _in_place_condition(plan)
    conditions.set(RESIZING_IN_PLACE, status, reason, message)
    explain.add(f"condition {RESIZING_IN_PLACE}={status} ({reason}): {message}")
    if plan.resize:
        explain.add(f"decision: resize in place pods {', '.join(plan.resize)}")
    if plan.rollout:
        explain.add(f"decision: roll the size out through the template ({plan.rollout})")
    return plan


def _in_place_condition(plan: InPlacePlan) -> tuple[bool, str, str]:
    pods = len(plan.pods)
    at_size = plan.count("AtSize")
    parts = [f"{at_size} of {pods} pods at the decided size"]
    for state, words in (
        ("Resizing", "resizing"),
        ("Resize", "to resize"),
        ("Paced", "waiting to restart"),
        ("Deferred", "deferred"),
        ("Infeasible", "infeasible"),
        ("NotInPlace", "not resizable in place"),
    ):
        if plan.count(state):
            parts.append(f"{plan.count(state)} {words}")
    summary = ", ".join(parts)
    if plan.rollout:
        return (
            False,
            "FellBackToRollout",
            f"{summary}; rolled out through the template: {plan.rollout}",
        )
    if plan.held:
        stuck = [p for p in plan.pods if p.stuck]
        reason = {
            "Infeasible": "ResizeInfeasible",
            "Deferred": "ResizeDeferred",
            "Resizing": "ResizeInProgressTooLong",
            "NotInPlace": "NotResizableInPlace",
        }[stuck[0].state]
        return False, reason, f"{summary}; held (spec.vpa.resizeMode is InPlace): {plan.held}"
    reason = "AtSize" if at_size == pods else "Resizing"
    return True, reason, summary


def _combine(
    hvpa: Hvpa,
    snapshot: Snapshot,
    target: TargetRecord,
    horizontal: HorizontalRecommendation | None,
    gates: GateSettings,
    now: float,
    explain: Explanation,
    rewrite_holds: tuple[Hold, ...],
    *,
    in_place: bool = False,
) -> tuple[Outcome, VerticalRecommendation | None, Demand | None]:
    """Both axes through strategies/combine.py: strategy, starvation guard, gates, limits.

    `rewrite_holds`: the axes another field manager keeps rewriting (rewrites.py), held
    like an axis another autoscaler drives. In the in-place modes a resize replaces no
    pod, so a rollout of the target in progress holds no vertical change (the Rollout
    gate is for resizes that would roll the pods on top of it)."""
    rollout = _rollout(target, explain)
    if in_place and rollout is not None:
        explain.add(f"a rollout is in progress ({rollout}); resizing in place is not held by it")
        rollout = None
    spec = hvpa.spec
    strategy = _strategy(spec)
    h = _horizontal_input(hvpa, horizontal, target.spec_replicas)
    policies = _policies(hvpa, snapshot.vpa)
    recommendation = (
        read_recommendation(snapshot.vpa, target.containers, policies, snapshot.vpa_name_taken)
        if spec.vpa.deploy
        else None
    )
    conflicts = find_conflicts(
        writer_from_hvpa(hvpa), snapshot.writers, horizontal=h.enabled, vertical=spec.vpa.deploy
    ) + tuple(
        hold
        for hold in rewrite_holds
        if (hold.axis == "horizontal" and h.enabled)
        or (hold.axis == "vertical" and spec.vpa.deploy)
    )
    if strategy == CAPACITY:
        outcome, demand = _combine_capacity(
            hvpa,
            snapshot,
            target,
            h,
            horizontal,
            recommendation,
            policies,
            conflicts,
            gates,
            now,
            explain,
            rollout,
            in_place=in_place,
        )
        _explain_combined(strategy, outcome, explain)
        return outcome, recommendation, demand
    holds = conflicts + missing_data_holds(vertical=recommendation)
    status = hvpa.status
    outcome = combine(
        strategy,
        h,
        target.containers,
        recommendation,
        gates,
        now=now,
        intervals=spec.weight_based_scaling_intervals,
        mixed=spec.mixed,
        limits_gap=spec.vpa.limits_requests_gap_scale_params,
        scale_times=read_scale_times(status),
        rollout=rollout,
        holds=holds,
        pods=snapshot.pods,
        metrics=_pod_metrics(snapshot),
        override_oom=bool(status and status.override_scale_up_stabilization),
    )
    _explain_combined(strategy, outcome, explain)
    return outcome, recommendation, None


def _explain_combined(strategy: str, outcome: Outcome, explain: Explanation) -> None:
    explain.add(f"combined ({strategy}):")
    with explain.indented():
        for line in outcome.explanation:
            explain.add(line)


def _combine_capacity(
    hvpa: Hvpa,
    snapshot: Snapshot,
    target: TargetRecord,
    h: HorizontalInput,
    horizontal: HorizontalRecommendation | None,
    recommendation: VerticalRecommendation | None,
    policies: tuple[VpaContainerPolicy, ...],
    conflicts: tuple[Hold, ...],
    gates: GateSettings,
    now: float,
    explain: Explanation,
    rollout: str | None,
    *,
    in_place: bool,
) -> tuple[Outcome, Demand]:
    """Capacity: demand from the pods' total usage, then one reading of the curve.

    The VPA is not what sizes the pods here, so a VPA without a
    recommendation holds nothing; only a demand that cannot be measured
    holds both axes (no usage samples, and the VPA target is no evidence:
    there is none, or it has been read once already, demand.py). `in_place`:
    pods are resized in place (capacity_input reads a rise's first reading
    only then).
    """
    spec = hvpa.spec
    metrics = _pod_metrics(snapshot)
    capacity, demand = capacity_input(
        spec,
        target.containers,
        target.spec_replicas,
        horizontal=horizontal,
        recommendation=recommendation,
        vpa=snapshot.vpa,
        policies=policies,
        metrics=metrics,
        pods=snapshot.pods,
        history=read_demand_history(hvpa.status),
        now=now,
        in_place=in_place,
    )
    holds = conflicts
    if not demand.known:
        holds += (Hold("horizontal", NO_DEMAND, demand.unknown),)
        if spec.vpa.deploy:
            holds += (Hold("vertical", NO_DEMAND, demand.unknown),)
    status = hvpa.status
    outcome = combine_capacity(
        h,
        target.containers,
        capacity,
        gates,
        now=now,
        limits_gap=spec.vpa.limits_requests_gap_scale_params,
        scale_times=read_scale_times(status),
        rollout=rollout,
        holds=holds,
        pods=snapshot.pods,
        metrics=metrics,
        override_oom=bool(status and status.override_scale_up_stabilization),
    )
    return replace(outcome, explanation=demand.explanation + outcome.explanation), demand


def _summary(
    current: int,
    replicas: int,
    before: tuple[ContainerSpec, ...],
    after: tuple[ContainerResources, ...],
) -> list[str]:
    """The closing lines: each resized container, then the replica count."""
    old = {c.name: c for c in before}
    lines = [
        f"decision: {result.name} requests {describe(old[result.name].requests)} -> "
        f"{describe(result.requests)}; limits {describe(old[result.name].limits)} -> "
        f"{describe(result.limits)}"
        for result in after
        if result.changed
    ]
    lines.append(
        f"decision: {current} -> {counted(replicas, 'replica')}"
        if replicas != current
        else f"decision: keep {counted(current, 'replica')}"
    )
    return lines


def _template_results(
    results: tuple[ContainerResources, ...], plan: InPlacePlan | None
) -> tuple[ContainerResources, ...]:
    """What the template is given: the decided sizes, except where the pods are resized in
    place and the template is left alone (rewrites.py would take it for a write hvpa made
    and another manager undid)."""
    if plan is None or plan.rollout:
        return results
    return tuple(replace(r, applied=()) for r in results)


def _with_writes(
    status: HvpaStatus,
    rewrites: Assessment,
    now: float,
    current: int,
    replicas: int,
    containers: tuple[ContainerSpec, ...],
    results: tuple[ContainerResources, ...],
) -> HvpaStatus:
    """The status with the writes this decision makes and the rewrites that still count
    (rewrites.py). No history is made for them alone when there was none: an Hvpa without
    history is a new one to the horizontal axis."""
    writes = record_writes(
        rewrites.writes, now, current=current, replicas=replicas, before=containers, after=results
    )
    if status.history is None and not writes and not rewrites.rewrites:
        return status
    kept = msgspec.structs.replace(
        status.history or History(),
        writes=writes or None,
        rewrites=rewrites.rewrites or None,
    )
    return msgspec.structs.replace(status, history=kept)


def _decision(
    hvpa: Hvpa,
    history: HorizontalHistory,
    conditions: Conditions,
    now: float,
    explain: Explanation,
    *,
    current: int = 0,
    containers: tuple[ContainerSpec, ...] = (),
    horizontal: HorizontalRecommendation | None = None,
    outcome: Outcome | None = None,
    recommendation: VerticalRecommendation | None = None,
    vpa: VpaRecord | None = None,
    demand: Demand | None = None,
    rewrites: Assessment | None = None,
    in_place: InPlacePlan | None = None,
    template: tuple[ContainerSpec, ...] | None = None,
) -> Decision:
    """The Decision and the status to write; `outcome` None: nothing is scaled.

    `rewrites` None (no target): the writes and rewrites in the history stay as they were.
    `template`: the template's containers where `containers` are the pods' in-place size."""
    replicas = current if outcome is None else outcome.replicas
    results = (
        tuple(ContainerResources(c.name, c.requests, c.limits, ()) for c in containers)
        if outcome is None
        else outcome.containers
    )
    if outcome is not None:
        _set_hold_conditions(
            hvpa,
            outcome.holds,
            recommendation,
            vpa,
            conditions,
            explain,
            capacity=demand is not None,
        )
    if demand is not None and horizontal is not None:
        _set_capacity_scaling_active(demand, conditions, explain)
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
    for line in _summary(current, replicas, containers, results):
        explain.add(line)
    usable = recommendation is not None and recommendation.usable
    targets = recommendation.containers if recommendation is not None and usable else ()
    if demand is not None and outcome is not None:
        targets = tuple(t for t in outcome.targets if t.target != NO_RESOURCES)
    applied = {c.container for c in outcome.applied} if outcome is not None else set()
    conditions.drop_stale(SCALING_ACTIVE, INVALID_SPEC)
    final = conditions.items()
    status = write_status(
        hvpa,
        final,
        (recommendations, scale_up, scale_down),
        current,
        replicas,
        outcome,
        targets,
        now,
        demand.history if demand is not None else None,
    )
    status = _with_pod_resources(status, in_place, outcome is not None)
    if rewrites is not None:
        status = _with_writes(
            status,
            rewrites,
            now,
            current,
            replicas,
            template if template is not None else containers,
            _template_results(results, in_place),
        )
    return Decision(
        current_replicas=current,
        desired_replicas=replicas,
        containers=results,
        horizontal=HorizontalDecision(
            enabled=horizontal is not None,
            desired_replicas=current if horizontal is None else horizontal.wants,
            metrics=() if horizontal is None else horizontal.metrics,
            cluster_proportional=None if horizontal is None else horizontal.cluster_proportional,
        ),
        vertical=VerticalDecision(
            enabled=hvpa.spec.vpa.deploy,
            containers=tuple(
                VerticalContainer(t.name, t.target, t.name in applied) for t in targets
            ),
        ),
        blocked=() if outcome is None else outcome.blocked,
        conditions=final,
        status=status,
        explanation=tuple(explain.lines),
        in_place=in_place,
    )


def _quantities(resources: Resources) -> dict[str, str | int | float] | None:
    written: dict[str, str | int | float] = dict(format_resources(resources))
    return written or None


def _with_pod_resources(status: HvpaStatus, plan: InPlacePlan | None, decided: bool) -> HvpaStatus:
    """`status.podResources`: the in-place size and its counts; gone once the pods roll out.

    Kept as it was when nothing was decided (a target not found, an invalid
    spec): the size the pods were given has not changed then."""
    if plan is None:
        return msgspec.structs.replace(status, pod_resources=None) if decided else status
    return msgspec.structs.replace(
        status,
        pod_resources=PodResources(
            containers=tuple(
                SizedContainer(
                    name=c.name,
                    requests=_quantities(c.requests),
                    limits=_quantities(c.limits),
                )
                for c in plan.containers
            ),
            pods=len(plan.pods),
            at_size=plan.count("AtSize"),
            resizing=plan.count("Resizing"),
            waiting=plan.count("Resize", "Paced"),
            deferred=plan.count("Deferred"),
            infeasible=plan.count("Infeasible", "NotInPlace"),
        ),
    )
