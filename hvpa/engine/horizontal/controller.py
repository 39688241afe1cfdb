"""The horizontal recommendation: upstream's reconcileAutoscaler, without the I/O.

Kubernetes pkg/controller/podautoscaler/horizontal.go (v1.37.2), step
by step: the scale is read (AbleToScale=SucceededGetScale); a new Hvpa's
history is seeded with the current count (recordInitialRecommendation); a
target at zero replicas is scaled only if hvpa took it there itself
(ScaledToZero=True; HPAScaleToZero), else left alone (ScalingDisabled); a
count outside min/max is brought back inside without reading metrics; the
target's selector must be present and parse (InvalidSelector); otherwise
every metric proposes a count (computeReplicasForMetrics: the largest wins,
a failing or invalid metric is skipped unless all fail or the rest would
scale down) and the proposal is normalized with or without behavior.

Cluster-proportional replicas (docs/engine.md, "Cluster-proportional") join
at the end: the recommendation is the larger of the HPA's normalized count
and the CPA's, within min/max, and the CPA's count is subject neither to
stabilization nor to rate limits; with no HPA metrics the CPA's count alone
decides.

The scale itself is not written here: the strategy and gates decide the
final count, and `record_rescale` then sets AbleToScale=SucceededRescale and
ScaledToZero and stores the scale event, as upstream does after a
successful update.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from hvpa.api.autoscaling import HorizontalPodAutoscalerBehavior, MetricSpec
from hvpa.engine.conditions import (
    ABLE_TO_SCALE,
    SCALED_TO_ZERO,
    SCALING_ACTIVE,
    SCALING_LIMITED,
    Conditions,
)
from hvpa.engine.explain import Explanation, counted
from hvpa.engine.history import HorizontalHistory, Recommendation, ScaleEvent
from hvpa.engine.horizontal.behavior import (
    ScalingRules,
    convert_desired_replicas_with_behavior_rate,
    convert_desired_replicas_with_rules,
    generate_scale_down_rules,
    generate_scale_up_rules,
    get_longest_policy_period,
    prune_recommendations,
    prune_scale_events,
    rule_tolerance,
    stabilize_recommendation,
    stabilize_recommendation_with_behaviors,
    store_scale_event,
)
from hvpa.engine.horizontal.metric_types import (
    MetricContext,
    MetricFailure,
    compute_replicas_for_metric,
    describe_metric,
)
from hvpa.engine.horizontal.proportional import ProportionalInput, cluster_proportional_replicas
from hvpa.engine.horizontal.replica_calculator import ReplicaCalculator, Tolerances
from hvpa.engine.memo import SPECS_REMEMBERED
from hvpa.engine.metrics import MetricError, MetricReadings
from hvpa.engine.settings import Settings
from hvpa.labels import LabelSelector, SelectorError
from hvpa.records import NodeRecord, PodRecord, TargetRecord

__all__ = [
    "HorizontalRecommendation",
    "HorizontalSpec",
    "MetricResult",
    "recommend_horizontal",
    "record_rescale",
    "tolerances_for",
]


@dataclass(frozen=True, slots=True)
class HorizontalSpec:
    """What the horizontal axis reads of an Hvpa (`spec.hpa.template.spec`, `clusterProportional`)."""

    min_replicas: int
    max_replicas: int
    metrics: tuple[MetricSpec, ...]
    behavior: HorizontalPodAutoscalerBehavior | None = None
    cluster_proportional: ProportionalInput | None = None

    @property
    def object_or_external(self) -> bool:
        """hasObjectOrExternalMetrics: only these can bring a target back from zero pods."""
        return any(metric.type in ("Object", "External") for metric in self.metrics)


@dataclass(frozen=True, slots=True)
class MetricResult:
    """One metric's raw calculator result (before stabilization, rate limits and min/max)."""

    type: str
    name: str
    desired_replicas: int | None
    container: str | None = None
    current_utilization: int | None = None
    current_average_value: int | None = None  # milli-units
    current_value: int | None = None  # milli-units
    error: str | None = None


@dataclass(frozen=True, slots=True)
class HorizontalRecommendation:
    """The horizontal axis' wish, and the history it leaves.

    `desired_replicas` is after stabilization, rate limits, the CPA's count
    and min/max; None holds the count (scaling disabled, every metric failed,
    a failing metric on a scale-down). `unclamped` is the raw wish before all
    of that, which tells a strategy whether the wish presses against a bound.
    `moved_by` names each rule that changed the metrics' count on its way to
    `desired_replicas`, with the change (`scale-down stabilization window:
    4 -> 5`), so a reader is told which rule, not only that one did.
    """

    current_replicas: int
    min_replicas: int
    max_replicas: int
    desired_replicas: int | None
    unclamped: int | None
    metrics: tuple[MetricResult, ...]
    cluster_proportional: int | None
    rescale_reason: str | None
    recommendations: tuple[Recommendation, ...] | None
    scale_up_rules: ScalingRules | None
    scale_down_rules: ScalingRules | None
    # Whether the metrics can read load at zero pods (an Object or External metric).
    object_or_external: bool = False
    moved_by: tuple[str, ...] = ()

    @property
    def wants(self) -> int:
        return self.current_replicas if self.desired_replicas is None else self.desired_replicas


def tolerances_for(
    behavior: HorizontalPodAutoscalerBehavior | None, settings: Settings
) -> Tolerances:
    """tolerancesForHpa: the controller's tolerance, overridden per direction by behavior."""
    up = down = settings.tolerance
    if behavior is not None:
        up_override = rule_tolerance(behavior.scale_up)
        down_override = rule_tolerance(behavior.scale_down)
        up = up if up_override is None else up_override
        down = down if down_override is None else down_override
    return Tolerances(scale_down=down, scale_up=up)


@dataclass(slots=True)
class _Metrics:
    replicas: int | None
    name: str
    results: tuple[MetricResult, ...]


def _result(metric: MetricSpec) -> MetricResult:
    """The identity of a metric in the output: its type, name and container."""
    if metric.type == "Resource" and metric.resource is not None:
        return MetricResult("Resource", metric.resource.name, None)
    if metric.type == "ContainerResource" and metric.container_resource is not None:
        source = metric.container_resource
        return MetricResult("ContainerResource", source.name, None, container=source.container)
    if metric.type == "Pods" and metric.pods is not None:
        return MetricResult("Pods", metric.pods.metric.name, None)
    if metric.type == "Object" and metric.object is not None:
        return MetricResult("Object", metric.object.metric.name, None)
    if metric.type == "External" and metric.external is not None:
        return MetricResult("External", metric.external.metric.name, None)
    return MetricResult(metric.type, "", None)


def compute_replicas_for_metrics(
    metrics: Sequence[MetricSpec],
    context: MetricContext,
    conditions: Conditions,
    explain: Explanation,
) -> _Metrics:
    """computeReplicasForMetrics: the largest proposal; None when the count must hold.

    A failing metric is skipped, unless every metric fails or the others
    would scale down: a metric that cannot be read might want more, so no
    scale-down on partial data (ScalingActive=False with the first failure).
    """
    replicas = 0
    chosen_name = ""
    results: list[MetricResult] = []
    invalid = 0
    first_failure: MetricFailure | None = None
    for index, metric in enumerate(metrics, 1):
        explain.add(f"metric {index}: {describe_metric(metric)}")
        identity = _result(metric)
        with explain.indented():
            try:
                proposal = compute_replicas_for_metric(metric, context)
            except MetricFailure as failure:
                explain.add(f"cannot be computed ({failure.reason}): {failure.error}")
                results.append(_replace_error(identity, failure.error))
                if first_failure is None:
                    first_failure = failure
                invalid += 1
                continue
            explain.add(f"proposes {counted(proposal.replicas, 'replica')}")
        results.append(
            MetricResult(
                identity.type,
                identity.name,
                proposal.replicas,
                container=identity.container,
                current_utilization=proposal.utilization,
                current_average_value=proposal.average_value,
                current_value=proposal.value,
            )
        )
        if replicas == 0 or proposal.replicas > replicas:
            replicas = proposal.replicas
            chosen_name = proposal.metric_name

    if first_failure is not None:
        explain.add(
            f"invalid metrics ({invalid} invalid out of {len(metrics)}), first error is: "
            f"{first_failure.wrapped}"
        )
    if invalid >= len(metrics) or (invalid > 0 and replicas < context.spec_replicas):
        assert first_failure is not None
        conditions.set(
            SCALING_ACTIVE,
            False,
            first_failure.reason,
            f"the HPA was unable to compute the replica count: {first_failure.error}",
        )
        if invalid < len(metrics):
            explain.add(
                f"the valid metrics would scale down to {replicas}: no scale-down while a "
                "metric cannot be read, keep the count"
            )
        else:
            explain.add("no metric can be computed: keep the count")
        return _Metrics(None, "", tuple(results))
    conditions.set(
        SCALING_ACTIVE,
        True,
        "ValidMetricFound",
        f"the HPA was able to successfully calculate a replica count from {chosen_name}",
    )
    explain.add(f"largest proposal: {counted(replicas, 'replica')}, from {chosen_name}")
    return _Metrics(replicas, chosen_name, tuple(results))


def _replace_error(result: MetricResult, error: str) -> MetricResult:
    return MetricResult(result.type, result.name, None, container=result.container, error=error)


def _cluster_proportional(
    proportional: ProportionalInput, nodes: Sequence[NodeRecord], explain: Explanation
) -> int | MetricError:
    explain.add("cluster-proportional:")
    with explain.indented():
        try:
            return cluster_proportional_replicas(proportional, nodes, explain)
        except MetricError as error:
            explain.add(f"cannot be computed: {error.message}")
            return error


class _Outcome:
    """Builds the recommendation from the values every exit path shares."""

    def __init__(
        self,
        spec: HorizontalSpec,
        current: int,
        recommendations: list[Recommendation],
        cpa: int | None,
        up_rules: ScalingRules | None,
        down_rules: ScalingRules | None,
        now: float,
        settings: Settings,
    ) -> None:
        self.spec = spec
        self.current = current
        self.recommendations = recommendations
        self.cpa = cpa
        self.up_rules = up_rules
        self.down_rules = down_rules
        self.now = now
        self.settings = settings

    def __call__(
        self,
        desired: int | None,
        unclamped: int | None,
        metrics: tuple[MetricResult, ...] = (),
        reason: str | None = None,
        moved_by: tuple[str, ...] = (),
    ) -> HorizontalRecommendation:
        if self.up_rules is None or self.down_rules is None:
            window: float = self.settings.downscale_stabilization_seconds
        else:
            window = max(
                self.up_rules.stabilization_window_seconds,
                self.down_rules.stabilization_window_seconds,
            )
        return HorizontalRecommendation(
            current_replicas=self.current,
            min_replicas=self.spec.min_replicas,
            max_replicas=self.spec.max_replicas,
            desired_replicas=desired,
            unclamped=unclamped,
            metrics=metrics,
            cluster_proportional=self.cpa,
            rescale_reason=reason,
            recommendations=prune_recommendations(self.recommendations, self.now, window),
            scale_up_rules=self.up_rules,
            scale_down_rules=self.down_rules,
            object_or_external=self.spec.object_or_external,
            moved_by=moved_by,
        )


def recommend_horizontal(
    spec: HorizontalSpec,
    namespace: str,
    target: TargetRecord,
    pods: Sequence[PodRecord],
    nodes: Sequence[NodeRecord],
    readings: MetricReadings,
    history: HorizontalHistory,
    conditions: Conditions,
    now: float,
    settings: Settings,
    explain: Explanation,
) -> HorizontalRecommendation:
    """The horizontal axis' recommendation for one decision."""
    current = target.spec_replicas
    minimum, maximum = spec.min_replicas, spec.max_replicas
    conditions.set(
        ABLE_TO_SCALE,
        True,
        "SucceededGetScale",
        "the HPA controller was able to get the target's current scale",
    )
    explain.add(
        f"current replicas {current} (status {target.status_replicas}), "
        f"minReplicas {minimum}, maxReplicas {maximum}"
    )
    if history.recommendations is None:
        recommendations = [Recommendation(now, current)]
        explain.add(
            f"new Hvpa: the current {counted(current, 'replica')} count as a recommendation made now"
        )
    else:
        recommendations = list(history.recommendations)
    cpa: int | MetricError | None = None
    if spec.cluster_proportional is not None:
        cpa = _cluster_proportional(spec.cluster_proportional, nodes, explain)
    cpa_replicas = cpa if isinstance(cpa, int) else None
    up_rules = down_rules = None
    if spec.behavior is not None:
        up_rules = generate_scale_up_rules(spec.behavior.scale_up)
        down_rules = generate_scale_down_rules(
            spec.behavior.scale_down, settings.downscale_stabilization_seconds
        )
    outcome = _Outcome(
        spec, current, recommendations, cpa_replicas, up_rules, down_rules, now, settings
    )

    if not spec.metrics:
        return _proportional_only(cpa, current, conditions, explain, outcome)
    scaled_to_zero = _scaled_to_zero(conditions)
    if current == 0:
        if not _computes_from_zero(spec, minimum, scaled_to_zero):
            conditions.set(
                SCALING_ACTIVE,
                False,
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
            )
            explain.add(
                "the target has 0 replicas and hvpa did not scale it there (no ScaledToZero=True "
                "condition, or no Object or External metric to read the load at zero pods): "
                "scaling is disabled"
            )
            return outcome(None, None)
        explain.add(
            "the target has 0 replicas and hvpa scaled it there (ScaledToZero=True): the metrics "
            "decide whether it comes back"
        )
    elif current > maximum:
        desired = _with_proportional(maximum, cpa_replicas, minimum, maximum, conditions, explain)
        explain.add(f"current replicas above maxReplicas: {desired}")
        return outcome(desired, desired, reason="Current number of replicas above Spec.MaxReplicas")
    elif current < minimum:
        desired = _with_proportional(minimum, cpa_replicas, minimum, maximum, conditions, explain)
        explain.add(f"current replicas below minReplicas: {desired}")
        return outcome(desired, desired, reason="Current number of replicas below Spec.MinReplicas")
    selector_problem = _selector_problem(target.selector)
    if selector_problem is not None:
        message, why = selector_problem
        conditions.set(SCALING_ACTIVE, False, "InvalidSelector", message)
        explain.add(f"{why}: keep the count")
        return outcome(None, None)

    context = MetricContext(
        calculator=ReplicaCalculator(
            pods,
            settings.cpu_initialization_period_seconds,
            settings.initial_readiness_delay_seconds,
            now,
            explain,
        ),
        namespace=namespace,
        pod_selector=target.selector,
        spec_replicas=current,
        status_replicas=target.status_replicas,
        tolerances=tolerances_for(spec.behavior, settings),
        readings=readings,
    )
    explain.add(f"tolerance {context.tolerances}")
    computed = compute_replicas_for_metrics(spec.metrics, context, conditions, explain)
    if computed.replicas is None:
        if cpa_replicas is not None and cpa_replicas > current:
            desired = min(cpa_replicas, maximum)
            explain.add(
                f"cluster-proportional asks for {cpa_replicas}: {desired} even so (while the "
                "metrics hold the count it may add replicas, never remove them)"
            )
            return outcome(desired, cpa_replicas, computed.results, "cluster-proportional")
        return outcome(None, None, computed.results)
    if isinstance(cpa, MetricError) and computed.replicas < current:
        conditions.set(
            SCALING_ACTIVE,
            False,
            "FailedGetClusterProportional",
            f"the HPA was unable to compute the replica count: {cpa.message}",
        )
        explain.add(
            "the cluster-proportional count cannot be computed and the metrics would scale "
            "down: keep the count"
        )
        return outcome(None, None, computed.results)

    prenormalized = computed.replicas
    reason = None
    if prenormalized > current:
        reason = f"{computed.name} above target"
    elif prenormalized < current:
        reason = "All metrics below target"
    if up_rules is None or down_rules is None:
        desired, moved_by = _normalize(
            prenormalized,
            current,
            minimum,
            maximum,
            recommendations,
            now,
            settings,
            conditions,
            explain,
        )
    else:
        desired, moved_by = _normalize_with_behaviors(
            prenormalized,
            current,
            minimum,
            maximum,
            up_rules,
            down_rules,
            recommendations,
            history,
            now,
            conditions,
            explain,
        )
    if current == 0 and minimum != 0 and scaled_to_zero and desired < minimum:
        explain.add(f"back from zero: at least minReplicas, {minimum}")
        moved_by += (f"minReplicas, back from zero: {desired} -> {minimum}",)
        desired = minimum
    unclamped = prenormalized
    if cpa_replicas is not None:
        unclamped = max(prenormalized, cpa_replicas)
        if cpa_replicas > desired:
            proportional = _with_proportional(
                desired, cpa_replicas, minimum, maximum, conditions, explain
            )
            moved_by += (f"cluster-proportional: {desired} -> {proportional}",)
            desired = proportional
            reason = "cluster-proportional above target"
    return outcome(desired, unclamped, computed.results, reason, moved_by)


def _scaled_to_zero(conditions: Conditions) -> bool:
    """getScaledToZeroConditionStatus: whether hvpa itself took the target to zero replicas."""
    condition = conditions.get(SCALED_TO_ZERO)
    return condition is not None and condition.status == "True"


def _computes_from_zero(spec: HorizontalSpec, minimum: int, scaled_to_zero: bool) -> bool:
    """shouldComputeMetricsForZeroReplicas: a target at zero is scaled only if hvpa put it there.

    Someone who sets the replicas to zero by hand (or a target created at
    zero) has switched autoscaling off for it, as with upstream's HPA; a
    target hvpa scaled to zero comes back when an Object or External metric
    says so, or, if minReplicas has since risen above zero, at least to it.
    """
    return (minimum != 0 and scaled_to_zero) or (scaled_to_zero and spec.object_or_external)


def _selector_problem(selector: LabelSelector) -> tuple[str, str] | None:
    """validateAndParseSelector: the condition message and the explanation of a bad target selector.

    Upstream parses the Scale's `status.selector`, the string form of the
    target's selector; a selector without requirements is missing, and one
    whose string form does not parse (a label value with a space) is invalid.
    """
    if selector.nothing or selector.empty:
        return (
            "the HPA target's scale is missing a selector",
            "the target has no pod selector (selector is required)",
        )
    text = str(selector)
    error = _unparsable(text)
    if error is not None:
        return (
            f"couldn't convert selector into a corresponding internal selector object: {error}",
            f"the target's selector {text!r} does not parse ({error})",
        )
    return None


@lru_cache(maxsize=SPECS_REMEMBERED)
def _unparsable(text: str) -> str | None:
    """Why a selector's string form does not parse, or None; remembered per string, as a
    target's selector is the same at every decision (one string per Hvpa with an HPA side,
    so as many as memo.py remembers specs)."""
    try:
        LabelSelector.parse(text)
    except SelectorError as error:
        return str(error)
    return None


def _proportional_only(
    cpa: int | MetricError | None,
    current: int,
    conditions: Conditions,
    explain: Explanation,
    outcome: _Outcome,
) -> HorizontalRecommendation:
    """No HPA metrics: the CPA's count alone decides, within its own min/max (a ladder may say 0)."""
    if isinstance(cpa, MetricError):
        conditions.set(
            SCALING_ACTIVE,
            False,
            "FailedGetClusterProportional",
            f"the HPA was unable to compute the replica count: {cpa.message}",
        )
        explain.add("no HPA metrics and no cluster-proportional count: keep the count")
        return outcome(None, None)
    if cpa is None:
        explain.add("no HPA metrics and no cluster-proportional rule: keep the count")
        return outcome(None, None)
    conditions.set(
        SCALING_ACTIVE,
        True,
        "ValidMetricFound",
        "the HPA was able to successfully calculate a replica count from cluster-proportional",
    )
    conditions.set(
        SCALING_LIMITED,
        False,
        "DesiredWithinRange",
        "the desired count is within the acceptable range",
    )
    explain.add(f"no HPA metrics: the cluster-proportional count {cpa} decides")
    return outcome(cpa, cpa, (), None if cpa == current else "cluster-proportional")


def _with_proportional(
    replicas: int,
    cpa_replicas: int | None,
    minimum: int,
    maximum: int,
    conditions: Conditions,
    explain: Explanation,
) -> int:
    """The larger of the HPA's count and the CPA's, within min/max."""
    if cpa_replicas is None or cpa_replicas <= replicas:
        return replicas
    if cpa_replicas > maximum:
        conditions.set(
            SCALING_LIMITED,
            True,
            "TooManyReplicas",
            "the desired replica count is more than the maximum replica count",
        )
        explain.add(f"cluster-proportional {cpa_replicas} is above maxReplicas: {maximum}")
        return maximum
    conditions.set(
        SCALING_LIMITED,
        False,
        "DesiredWithinRange",
        "the desired count is within the acceptable range",
    )
    explain.add(f"cluster-proportional {cpa_replicas} is above {replicas}: {cpa_replicas}")
    return max(cpa_replicas, minimum)


# The rule behind each of upstream's ScalingLimited reasons, as `moved_by` names it.
_LIMIT_RULES: Final = {
    "TooFewReplicas": "minReplicas",
    "TooManyReplicas": "maxReplicas",
    "ScaleUpLimit": "scale-up limit",
    "ScaleDownLimit": "scale-down limit",
}


def _normalize(
    prenormalized: int,
    current: int,
    minimum: int,
    maximum: int,
    history: list[Recommendation],
    now: float,
    settings: Settings,
    conditions: Conditions,
    explain: Explanation,
) -> tuple[int, tuple[str, ...]]:
    """normalizeDesiredReplicas: downscale stabilization, then min/max and the fixed scale-up
    limit; the count, and each rule that moved it (`HorizontalRecommendation.moved_by`)."""
    moved_by: tuple[str, ...] = ()
    window = settings.downscale_stabilization_seconds
    stabilized = stabilize_recommendation(history, prenormalized, now, window)
    if stabilized != prenormalized:
        conditions.set(
            ABLE_TO_SCALE,
            True,
            "ScaleDownStabilized",
            "recent recommendations were higher than current one, applying the highest recent recommendation",
        )
        explain.add(
            f"downscale stabilization ({window:g} s): a recent recommendation was {stabilized}, "
            f"keep {stabilized} instead of {prenormalized}"
        )
        moved_by += (
            f"downscale stabilization window ({window:g} s): {prenormalized} -> {stabilized}",
        )
    else:
        conditions.set(
            ABLE_TO_SCALE, True, "ReadyForNewScale", "recommended size matches current size"
        )
        explain.add(f"downscale stabilization ({window:g} s): no higher recent recommendation")
    desired, reason, message = convert_desired_replicas_with_rules(
        current,
        stabilized,
        minimum,
        maximum,
        settings.scale_up_limit_factor,
        settings.scale_up_limit_minimum,
    )
    conditions.set(SCALING_LIMITED, desired != stabilized, reason, message)
    if desired != stabilized:
        explain.add(f"{reason}: {message}, {stabilized} becomes {desired}")
        moved_by += (f"{_LIMIT_RULES.get(reason, reason)}: {stabilized} -> {desired}",)
    else:
        explain.add(f"{desired} is within minReplicas, maxReplicas and the scale-up limit")
    return desired, moved_by


def _normalize_with_behaviors(
    prenormalized: int,
    current: int,
    minimum: int,
    maximum: int,
    up_rules: ScalingRules,
    down_rules: ScalingRules,
    recommendations: list[Recommendation],
    history: HorizontalHistory,
    now: float,
    conditions: Conditions,
    explain: Explanation,
) -> tuple[int, tuple[str, ...]]:
    """normalizeDesiredReplicasWithBehaviors: both windows, then the policies' rate and min/max;
    the count, and each rule that moved it (`HorizontalRecommendation.moved_by`)."""
    moved_by: tuple[str, ...] = ()
    stabilized, reason, message = stabilize_recommendation_with_behaviors(
        recommendations,
        current,
        prenormalized,
        up_rules.stabilization_window_seconds,
        down_rules.stabilization_window_seconds,
        now,
    )
    windows = (
        f"scale-up window {up_rules.stabilization_window_seconds} s, "
        f"scale-down window {down_rules.stabilization_window_seconds} s"
    )
    if stabilized != prenormalized:
        conditions.set(ABLE_TO_SCALE, True, reason, message)
        explain.add(f"stabilization ({windows}): {reason}, {prenormalized} becomes {stabilized}")
        window = up_rules if stabilized > prenormalized else down_rules
        direction = "scale-up" if stabilized > prenormalized else "scale-down"
        moved_by += (
            f"{direction} stabilization window ({window.stabilization_window_seconds} s): "
            f"{prenormalized} -> {stabilized}",
        )
    else:
        conditions.set(
            ABLE_TO_SCALE, True, "ReadyForNewScale", "recommended size matches current size"
        )
        explain.add(f"stabilization ({windows}): {prenormalized} stands")
    desired, reason, message = convert_desired_replicas_with_behavior_rate(
        current,
        stabilized,
        minimum,
        maximum,
        up_rules,
        down_rules,
        history.scale_up_events,
        history.scale_down_events,
        now,
    )
    conditions.set(SCALING_LIMITED, desired != stabilized, reason, message)
    rules = up_rules if stabilized > current else down_rules
    policies = (
        ", ".join(f"{p.type} {p.value} per {p.period_seconds} s" for p in rules.policies) or "none"
    )
    if desired != stabilized:
        explain.add(
            f"{reason}: {message} (policies {policies}, select {rules.select_policy}), "
            f"{stabilized} becomes {desired}"
        )
        moved_by += (f"{_LIMIT_RULES.get(reason, reason)}: {stabilized} -> {desired}",)
    else:
        explain.add(f"{desired} is within minReplicas, maxReplicas and the policies ({policies})")
    return desired, moved_by


def record_rescale(
    recommendation: HorizontalRecommendation,
    replicas: int,
    scale_up_events: Sequence[ScaleEvent],
    scale_down_events: Sequence[ScaleEvent],
    conditions: Conditions,
    now: float,
    explain: Explanation,
) -> tuple[tuple[ScaleEvent, ...], tuple[ScaleEvent, ...]]:
    """After the decision: AbleToScale=SucceededRescale, ScaledToZero and the scale event (with behavior).

    Returns the scale-up and scale-down events to keep, pruned to the
    longest policy period of either direction.
    """
    current = recommendation.current_replicas
    up_rules, down_rules = recommendation.scale_up_rules, recommendation.scale_down_rules
    up, down = tuple(scale_up_events), tuple(scale_down_events)
    if replicas != current:
        conditions.set(
            ABLE_TO_SCALE,
            True,
            "SucceededRescale",
            f"the HPA controller was able to update the target scale to {replicas}",
        )
        _record_scaled_to_zero(recommendation, replicas, conditions)
        if up_rules is not None and down_rules is not None:
            if replicas > current:
                up = store_scale_event(up, up_rules, replicas - current, now)
            else:
                down = store_scale_event(down, down_rules, current - replicas, now)
            explain.add(f"scale event recorded: {current} -> {replicas}")
    if up_rules is None or down_rules is None:
        return up, down
    longest = max(get_longest_policy_period(up_rules), get_longest_policy_period(down_rules))
    return prune_scale_events(up, now, longest), prune_scale_events(down, now, longest)


def _record_scaled_to_zero(
    recommendation: HorizontalRecommendation, replicas: int, conditions: Conditions
) -> None:
    """ScaledToZero after a rescale: True only when hvpa itself took the target to zero.

    It marks the zero as hvpa's, so the next decisions may bring the target
    back; any other rescale (a scale-up from zero included) sets it False.
    """
    current = recommendation.current_replicas
    if (
        current > 0
        and replicas == 0
        and recommendation.min_replicas == 0
        and recommendation.object_or_external
    ):
        conditions.set(
            SCALED_TO_ZERO, True, "ScaledToZero", "the HPA controller scaled the workload to zero"
        )
    else:
        conditions.set(
            SCALED_TO_ZERO,
            False,
            "NotScaledToZero",
            "the HPA controller did not scale the workload to zero",
        )
