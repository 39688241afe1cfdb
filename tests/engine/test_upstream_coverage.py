"""Every upstream test hvpa follows, and the hvpa test that ports it or why none does.

The ledger below lists each test of Kubernetes 1.37.2's
pkg/controller/podautoscaler/horizontal_test.go and
replica_calculator_test.go (a table test row by row, by its subtest name),
and each test function of cluster-proportional-autoscaler v1.10.3. A ported
case names where hvpa has it: a scenario under tests/engine/scenarios/
(decided through `hvpa recommend`; its source line names the upstream file,
test and row) or an engine test, with the pytest id of the row (`row(...)`:
the id is the upstream row's name). A case that is not ported says why. The
tests check that every scenario and test named exists and names its
upstream case, and that docs/gardener-compatibility.md gives the ledger's
counts.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from _pytest.mark.structures import ParameterSet

ENGINE_TESTS = Path(__file__).parent
SCENARIOS = ENGINE_TESTS / "scenarios"
DOCS = ENGINE_TESTS.parents[1] / "docs" / "gardener-compatibility.md"
BEHAVIOR = "test_horizontal_behavior.py"
CALCULATOR = "test_replica_calculator.py"
DECIDE = "test_decide.py"
PROPORTIONAL = "test_proportional.py"


@dataclass(frozen=True, slots=True)
class Ref:
    """Where hvpa has a case: a scenario, or an engine test and one of its pytest ids."""

    scenario: str = ""
    module: str = ""
    function: str = ""
    case_id: str | None = None
    # The pytest id is the upstream row's own name.
    same_id: bool = False


@dataclass(frozen=True, slots=True)
class NotApplicable:
    reason: str


Where = tuple[Ref, ...] | NotApplicable


def scenario(*stems: str) -> tuple[Ref, ...]:
    return tuple(Ref(scenario=stem) for stem in stems)


def in_test(module: str, function: str, case_id: str | None = None) -> tuple[Ref, ...]:
    return (Ref(module=module, function=function, case_id=case_id),)


def row(module: str, function: str) -> tuple[Ref, ...]:
    return (Ref(module=module, function=function, same_id=True),)


GATE = NotApplicable(
    "needs the HPAScaleToZero feature gate off; hvpa always behaves as upstream with it on"
)
GATE_TOLERANCE = NotApplicable(
    "needs the HPAConfigurableTolerance feature gate off; hvpa always honours behavior's tolerance"
)
GATE_POD_LEVEL = NotApplicable(
    "needs the PodLevelResources feature gate off; hvpa always reads pod-level requests (the "
    "row's figures are those of the row with the gate on and no pod-level requests)"
)
MIN_ZERO = NotApplicable(
    "minReplicas 0 without an Object or External metric: the API server refuses such an HPA, "
    "and hvpa such an Hvpa (InvalidSpec)"
)
AMBIGUOUS = NotApplicable(
    "pods selected by two HPAs (AmbiguousSelector): hvpa does not compare pod selectors; "
    "another autoscaler of the same target holds the axis instead (ConflictingAutoscaler)"
)
FAILED_UPDATE = NotApplicable(
    "a failed write of the scale: the engine does not write; hvpa's reconciler retries the "
    "write with backoff and writes no status for that decision, where upstream records "
    "AbleToScale=False, FailedUpdateScale"
)
AVOID_UPDATES = NotApplicable(
    "a status write that changes nothing is skipped; hvpa's reconciler does the same "
    "(hvpa/controller/reconciler.py), outside the engine"
)
MULTIPLE = NotApplicable(
    "controller throughput, 1000 HPAs through the work queue, with no expected replica count "
    "(scenario multiple-hpas-scale-up-with-events reuses its fixture as hvpa's own case)"
)
CONFLICT = NotApplicable(
    "the retry of a conflicting scale update is the writer's (hvpa/controller), not the engine's"
)
MONITOR = NotApplicable(
    "the HPA controller's own Prometheus metrics; hvpa's are its own "
    "(hvpa/controller/observability.py)"
)
QUEUE = NotApplicable(
    "the HPA controller's work queue, selector tracker and consistency store; hvpa's queue "
    "and cache are its own (hvpa/kube/queue.py, hvpa/controller/cache.py)"
)
QUANTITY = NotApplicable(
    "formats the HPA status' metric quantities; hvpa writes no HPA status (its output gives "
    "milli-unit values)"
)
CPA_FLAGS = NotApplicable("CPA's --target flag; an Hvpa names its one target in spec.targetRef")
CPA_INFORMER = NotApplicable(
    "CPA's trimmed node informer; hvpa's cache keeps its own slim node records (hvpa/records.py)"
)
CPA_EXIT = NotApplicable(
    "CPA exits after --max-sync-failures; hvpa keeps deciding and reports a failed read as "
    "ScalingActive=False, FailedGetClusterProportional"
)

KUBERNETES: dict[tuple[str, str], dict[str | None, Where]] = {
    ("horizontal_test.go", "TestScaleCPU"): {
        "scale up": scenario("scale-up"),
        "scale up with unready pods results in less scale": scenario("scale-up-unready-less-scale"),
        "scale up with hot cpu pods results in less scale": scenario("scale-up-hot-cpu-less-scale"),
        "scale up ignores failed pods": scenario("scale-up-ignores-failed-pods"),
        "scale up ignores deletion pods": scenario("scale-up-ignores-deletion-pods"),
        "scale up deployment": scenario("scale-up"),
        "scale up replicaset": scenario("scale-up-replica-set"),
        "no scale up when all unready pods bring utilization within target": scenario(
            "scale-up-unready-no-scale"
        ),
        "scale down": scenario("scale-down"),
        "scale down includes unready pods": scenario("scale-down-include-unready-pods"),
        "scale down ignores hot cpu pods": scenario("scale-down-ignore-hot-cpu-pods"),
        "scale down ignores failed pods": scenario("scale-down-ignores-failed-pods"),
        "scale down ignores deletion pods": scenario("scale-down-ignores-deletion-pods"),
    },
    ("horizontal_test.go", "TestScaleContainerResource"): {
        "scale up container resource": scenario("scale-up-container"),
        "scale down container resource": scenario("scale-down-container-resource"),
    },
    ("horizontal_test.go", "TestScaleUpHotCpuNoScale"): {
        None: scenario("scale-up-hot-cpu-no-scale"),
    },
    ("horizontal_test.go", "TestScaleUpCM"): {
        "scale up custom metric": scenario("scale-up-cm"),
        "unready and hot cpu pods do not reduce scale for custom metric": scenario(
            "scale-up-cm-unready-and-hot-cpu-no-less-scale"
        ),
        "unready and hot cpu pods scale to max with scaling limited condition": scenario(
            "scale-up-cm-unready-and-cpu-hot"
        ),
        "scale up external metric with value target": scenario("scale-up-cm-external"),
        "scale up external metric with per-pod average value target": scenario(
            "scale-up-per-pod-cm-external"
        ),
    },
    ("horizontal_test.go", "TestScaleUpCMObject"): {
        "scale up object metric with value target": scenario("scale-up-cm-object"),
        "scale up from zero with HPAScaleToZero enabled": scenario("scale-up-from-zero-cm-object"),
        "scale up from zero with HPAScaleToZero disabled": GATE,
        "scale up from zero ignores tolerance with HPAScaleToZero enabled": in_test(
            CALCULATOR, "test_scale_from_zero_ignores_tolerance"
        )
        + scenario("scale-up-from-zero-ignores-tolerance-cm-object"),
        "scale up from zero ignores tolerance with HPAScaleToZero disabled": GATE,
        "scale up per-pod object metric with average value target": scenario(
            "scale-up-per-pod-cm-object"
        ),
    },
    ("horizontal_test.go", "TestScaleWithOneInvalidMetric"): {
        "scale up with one invalid metric": scenario("scale-up-one-metric-invalid"),
        "from zero with invalid metric, HPAScaleToZero enabled": MIN_ZERO,
        "from zero with invalid metric, HPAScaleToZero disabled": MIN_ZERO,
    },
    ("horizontal_test.go", "TestScaleUpCMUnreadyandCpuHot"): {
        None: scenario("scale-up-cm-unready-and-cpu-hot"),
    },
    ("horizontal_test.go", "TestScaleDownStabilizeInitialSize"): {
        None: scenario("scale-down-stabilize-initial-size"),
    },
    ("horizontal_test.go", "TestScaleDownCM"): {
        "scale down pods metric": scenario("scale-down-cm"),
        "scale down object metric with value target": scenario("scale-down-cm-object"),
        "scale down to zero object metric with HPAScaleToZero enabled": scenario(
            "scale-down-to-zero-cm-object"
        ),
        "scale down to zero object metric with HPAScaleToZero disabled": GATE,
        "scale down per-pod object metric with average value target": scenario(
            "scale-down-per-pod-cm-object"
        ),
        "scale down external metric with value target": scenario("scale-down-cm-external"),
        "scale down to zero external metric with HPAScaleToZero enabled": scenario(
            "scale-down-to-zero-cm-external"
        ),
        "scale down to zero external metric with HPAScaleToZero disabled": GATE,
        "scale down per-pod external metric with average value target": scenario(
            "scale-down-per-pod-cm-external"
        ),
    },
    ("horizontal_test.go", "TestScaleToZeroBehavior"): {
        "from zero without condition, HPAScaleToZero enabled": scenario(
            "zero-replicas-not-scaled-by-hvpa"
        ),
        "from zero without condition, HPAScaleToZero disabled": GATE,
        "minReplicas increased with ScaledToZero condition, HPAScaleToZero enabled": scenario(
            "zero-replicas-scaled-to-zero-min-raised"
        ),
        "minReplicas increased with ScaledToZero condition, HPAScaleToZero disabled": GATE,
        "stale ScaledToZero condition cleared on normal rescale, HPAScaleToZero enabled": scenario(
            "scale-to-zero-stale-condition-cleared"
        ),
        "stale ScaledToZero condition removed on normal rescale, HPAScaleToZero disabled": GATE,
        "manual scale to zero disables HPA, HPAScaleToZero enabled": scenario(
            "scale-to-zero-manual-scale-to-zero"
        ),
        "manual scale to zero disables HPA, HPAScaleToZero disabled": GATE,
        "no ScaledToZero condition when HPAScaleToZero disabled": GATE,
    },
    ("horizontal_test.go", "TestTolerance"): {
        "CPU resource metric within tolerance": scenario("tolerance"),
        "pods metric within tolerance": scenario("tolerance-cm"),
        "object metric with value target within tolerance": scenario("tolerance-cm-object"),
        "external metric with value target within tolerance": scenario("tolerance-cm-external"),
        "per-pod object metric with average value target within tolerance": scenario(
            "tolerance-per-pod-cm-object"
        ),
        "per-pod external metric with average value target within tolerance": scenario(
            "tolerance-per-pod-cm-external"
        ),
    },
    ("horizontal_test.go", "TestConfigurableTolerance"): {
        "scaling up because of a 1% configurable tolerance": scenario(
            "configurable-tolerance-scale-up-1-percent"
        ),
        "no scale-down because of a 90% configurable tolerance": scenario(
            "configurable-tolerance-no-scale-down-90-percent"
        ),
        "no scaling because of the large default tolerance": scenario("tolerance"),
        "no scaling because the configurable tolerance is ignored when feature gate is disabled": GATE_TOLERANCE,
    },
    ("horizontal_test.go", "TestReplicaLimits"): {
        "scale down clamped to min replicas": scenario("min-replicas"),
        "scale down to zero when min replicas is zero": MIN_ZERO,
        "scale down clamped to min when desired is zero": scenario("min-replicas-desired-zero"),
        "no scaling when spec replicas is zero": scenario("zero-replicas"),
        "scale up to min when below min replicas": scenario("too-few-replicas"),
        "scale down to max when above max replicas": scenario("too-many-replicas"),
        "scale up clamped to max replicas": scenario("max-replicas"),
        "scale up to min immediately even with recent scale time": scenario(
            "scale-up-rc-immediately"
        ),
        "scale down to max immediately even with recent scale time": scenario(
            "scale-down-rc-immediately"
        ),
    },
    ("horizontal_test.go", "TestMetricsEdgeCases"): {
        "superfluous metrics reported": scenario("superfluous-metrics"),
        "missing metrics from some pods": scenario("missing-metrics"),
        "empty metrics from all pods": scenario("empty-metrics"),
        "empty CPU requests": scenario("empty-cpu-request"),
        "missing reports from some pods scales down": scenario("missing-reports"),
        "more replicas than spec no scale": scenario("more-replicas-than-spec-no-scale"),
    },
    ("horizontal_test.go", "TestEventCreated"): {
        None: scenario("event-created"),
    },
    ("horizontal_test.go", "TestEventNotCreated"): {
        None: scenario("event-not-created"),
    },
    ("horizontal_test.go", "TestUpscaleCap"): {
        None: scenario("upscale-cap"),
    },
    ("horizontal_test.go", "TestUpscaleCapGreaterThanMaxReplicas"): {
        None: scenario("upscale-cap-greater-than-max-replicas"),
    },
    ("horizontal_test.go", "TestConditionInvalidSelectorMissing"): {
        None: scenario("condition-invalid-selector-missing"),
    },
    ("horizontal_test.go", "TestConditionInvalidSelectorUnparsable"): {
        None: scenario("condition-invalid-selector-unparsable"),
    },
    ("horizontal_test.go", "TestConditionNoAmbiguousSelectorWhenNoSelectorOverlapBetweenHPAs"): {
        None: AMBIGUOUS,
    },
    ("horizontal_test.go", "TestConditionAmbiguousSelectorWhenFullSelectorOverlapBetweenHPAs"): {
        None: AMBIGUOUS,
    },
    ("horizontal_test.go", "TestConditionAmbiguousSelectorWhenPartialSelectorOverlapBetweenHPAs"): {
        None: AMBIGUOUS,
    },
    ("horizontal_test.go", "TestConditionFailedGetMetrics"): {
        None: scenario(
            "condition-failed-get-resource-metric",
            "condition-failed-get-pods-metric",
            "condition-failed-get-object-metric",
            "condition-failed-get-external-metric",
        ),
    },
    ("horizontal_test.go", "TestConditionInvalidSourceType"): {
        None: scenario("condition-invalid-source-type"),
    },
    ("horizontal_test.go", "TestConditionFailedGetScale"): {
        None: in_test(DECIDE, "test_target_not_found"),
    },
    ("horizontal_test.go", "TestConditionFailedUpdateScale"): {
        None: FAILED_UPDATE,
    },
    ("horizontal_test.go", "TestNoBackoffUpscaleCM"): {
        None: scenario("no-backoff-upscale-cm"),
    },
    ("horizontal_test.go", "TestNoBackoffUpscaleCMNoBackoffCpu"): {
        None: scenario("no-backoff-upscale-cm-no-backoff-cpu"),
    },
    ("horizontal_test.go", "TestStabilizeDownscale"): {
        None: scenario("stabilize-downscale"),
    },
    ("horizontal_test.go", "TestComputedToleranceAlgImplementation"): {
        None: scenario("computed-tolerance-alg-scales", "computed-tolerance-alg-holds"),
    },
    ("horizontal_test.go", "TestAvoidUnnecessaryUpdates"): {
        None: AVOID_UPDATES,
    },
    ("horizontal_test.go", "TestConvertDesiredReplicasWithRules"): {
        "prenormalized desired replicas within range": row(
            BEHAVIOR, "test_convert_desired_replicas_with_rules"
        ),
        "prenormalized desired replicas < minReplicas": row(
            BEHAVIOR, "test_convert_desired_replicas_with_rules"
        ),
        "prenormalized desired zeroed replicas within range": row(
            BEHAVIOR, "test_convert_desired_replicas_with_rules"
        ),
        "maxReplicas is the limit because maxReplicas < scaleUpLimit": row(
            BEHAVIOR, "test_convert_desired_replicas_with_rules"
        ),
        "scaleUpLimit is the limit because scaleUpLimit < maxReplicas": row(
            BEHAVIOR, "test_convert_desired_replicas_with_rules"
        ),
    },
    ("horizontal_test.go", "TestCalculateScaleUpLimitWithScalingRules"): {
        None: in_test(BEHAVIOR, "test_scale_up_limit_with_min_policy"),
    },
    ("horizontal_test.go", "TestCalculateScaleDownLimitWithBehaviors"): {
        None: in_test(BEHAVIOR, "test_scale_down_limit_with_min_policy"),
    },
    ("horizontal_test.go", "TestNormalizeDesiredReplicas"): {
        "empty log": row(BEHAVIOR, "test_stabilize_recommendation"),
        "stabilize": row(BEHAVIOR, "test_stabilize_recommendation"),
        "no stabilize": row(BEHAVIOR, "test_stabilize_recommendation"),
        "no stabilize - old recommendations": row(BEHAVIOR, "test_stabilize_recommendation"),
        "stabilize - old recommendations": row(BEHAVIOR, "test_stabilize_recommendation"),
    },
    ("horizontal_test.go", "TestScalingWithRules"): {
        "prenormalized desired replicas within range": row(BEHAVIOR, "test_scaling_with_rules")
        + scenario("rules-min-zero", "rules-within-range"),
        "prenormalized desired replicas < minReplicas": row(BEHAVIOR, "test_scaling_with_rules")
        + scenario("rules-below-min"),
        "prenormalized desired replicas within range when minReplicas is 0": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-min-zero"),
        "maxReplicas is the limit because maxReplicas < scaleUpLimit": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "desired replica count is more than the maximum replica count": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-above-max"),
        "scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-down-limit-user-policy", "rules-up-limit-user-policy"),
        "scaleUp with default behavior": row(BEHAVIOR, "test_scaling_with_rules")
        + scenario("rules-up-default"),
        "scaleUp with pods policy larger than percent policy": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-up-pods-over-percent"),
        "scaleUp with percent policy larger than pods policy": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-up-percent-over-pods"),
        "scaleUp with spec MaxReplicas limitation with large pod policy": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-up-large-pods-policy", "rules-up-max-with-events"),
        "scaleUp with spec MaxReplicas limitation with large percent policy": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "scaleUp with pod policy limitation": row(BEHAVIOR, "test_scaling_with_rules")
        + scenario("rules-up-pods-limit"),
        "scaleUp with percent policy limitation": row(BEHAVIOR, "test_scaling_with_rules")
        + scenario("rules-up-percent-limit"),
        "scaleDown with percent policy larger than pod policy": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-down-percent-over-pods"),
        "scaleDown with pod policy larger than percent policy": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-down-pods-over-percent"),
        "scaleDown with spec MinReplicas limitation with large pod policy": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-down-min-large-pods-policy"),
        "scaleDown with spec MinReplicas limitation with large percent policy": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-down-min-large-percent-policy"),
        "scaleDown with pod policy limitation": row(BEHAVIOR, "test_scaling_with_rules")
        + scenario("rules-down-pods-limit"),
        "scaleDown with percent policy limitation": row(BEHAVIOR, "test_scaling_with_rules")
        + scenario("rules-down-percent-limit"),
        "scaleUp with spec MaxReplicas limitation with large pod policy and events": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-up-max-with-events"),
        "scaleUp with spec MaxReplicas limitation with large percent policy and events": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-up-many-recent-events"),
        "scaleUp with pod policy and previous scale up events": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-up-pods-with-events"),
        "scaleUp with percent policy and previous scale up events": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-up-percent-with-events"),
        "scaleUp with percent policy and previous scale up and down events": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-up-percent-with-up-and-down-events"),
        "scaleDown with default policy and previous events": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-down-default-with-events"),
        "scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "scaleDown with spec MinReplicas limitation with large pod policy and previous events": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "scaleDown with spec MinReplicas limitation with large percent policy and previous events": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "scaleDown with pod policy limitation and previous events": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "scaleDown with percent policy limitation and previous events": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "scaleDown with percent policy and previous scale up and down events": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "scaleDown with previous events preventing further scale down": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "scaleDown with with previous events still allowing more scale down": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "check 'outdated' flag for events for one behavior for up": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-up-outdated-events-one-policy"),
        "check that events were not marked 'outdated' for two different policies in the behavior for up": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "check that events were marked 'outdated' for two different policies in the behavior for up": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "check 'outdated' flag for events for one behavior for down": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "check that events were not marked 'outdated' for two different policies in the behavior for down": row(
            BEHAVIOR, "test_scaling_with_rules"
        ),
        "check that events were marked 'outdated' for two different policies in the behavior for down": row(
            BEHAVIOR, "test_scaling_with_rules"
        )
        + scenario("rules-down-outdated-events-two-policies"),
    },
    ("horizontal_test.go", "TestStoreScaleEvents"): {
        "empty entries with default behavior": row(
            BEHAVIOR, "test_store_scale_events_without_behavior"
        ),
        "empty entries with two-policy-behavior": row(BEHAVIOR, "test_store_scale_events"),
        "one outdated entry to be kept untouched without behavior": row(
            BEHAVIOR, "test_store_scale_events_without_behavior"
        ),
        "one outdated entry to be replaced with behavior": row(BEHAVIOR, "test_store_scale_events"),
        "one actual entry to be not touched with behavior": row(
            BEHAVIOR, "test_store_scale_events"
        ),
        "two entries, one of them to be replaced": row(BEHAVIOR, "test_store_scale_events"),
        "replace one entry, use policies with different periods": row(
            BEHAVIOR, "test_store_scale_events"
        ),
        "two entries, both actual": row(BEHAVIOR, "test_store_scale_events"),
    },
    ("horizontal_test.go", "TestNormalizeDesiredReplicasWithBehavior"): {
        "empty recommendations for scaling down": row(
            BEHAVIOR, "test_stabilize_recommendation_with_behaviors"
        ),
        "simple scale down stabilization": row(
            BEHAVIOR, "test_stabilize_recommendation_with_behaviors"
        )
        + scenario("stabilize-simple-scale-down"),
        "simple scale up stabilization": row(
            BEHAVIOR, "test_stabilize_recommendation_with_behaviors"
        )
        + scenario("stabilize-simple-scale-up"),
        "no scale down stabilization": row(BEHAVIOR, "test_stabilize_recommendation_with_behaviors")
        + scenario("stabilize-no-scale-down-stabilization"),
        "no scale up stabilization": row(BEHAVIOR, "test_stabilize_recommendation_with_behaviors")
        + scenario("stabilize-no-scale-up-stabilization"),
        "no scale down stabilization, reuse recommendation element": row(
            BEHAVIOR, "test_stabilize_recommendation_with_behaviors"
        ),
        "no scale up stabilization, reuse recommendation element": row(
            BEHAVIOR, "test_stabilize_recommendation_with_behaviors"
        ),
        "scale down stabilization, reuse one of obsolete recommendation element": row(
            BEHAVIOR, "test_stabilize_recommendation_with_behaviors"
        )
        + scenario("stabilize-scale-down-reuse-obsolete"),
        "scale up stabilization, reuse one of obsolete recommendation element": row(
            BEHAVIOR, "test_stabilize_recommendation_with_behaviors"
        )
        + scenario("stabilize-scale-up-reuse-obsolete"),
        "scale up and down stabilization, do not scale up when prenormalized rec goes down": row(
            BEHAVIOR, "test_stabilize_recommendation_with_behaviors"
        )
        + scenario("stabilize-no-up-when-going-down"),
        "scale up and down stabilization, do not scale down when prenormalized rec goes up": row(
            BEHAVIOR, "test_stabilize_recommendation_with_behaviors"
        )
        + scenario("stabilize-no-down-when-going-up"),
    },
    ("horizontal_test.go", "TestScaleUpOneMetricEmpty"): {
        None: scenario("scale-up-one-metric-empty"),
    },
    ("horizontal_test.go", "TestNoScaleDownOneMetricInvalid"): {
        None: scenario("no-scale-down-one-metric-invalid"),
    },
    ("horizontal_test.go", "TestNoScaleDownOneMetricEmpty"): {
        None: scenario("no-scale-down-one-metric-empty"),
    },
    ("horizontal_test.go", "TestMultipleHPAs"): {
        None: MULTIPLE,
    },
    ("horizontal_test.go", "TestHPARescaleWithSuccessfulConflictRetry"): {
        None: CONFLICT,
    },
    ("horizontal_test.go", "TestReconciliationDurationIsRecorded"): {
        None: MONITOR,
    },
    ("horizontal_test.go", "TestReconciliationDurationIsRecordedOnError"): {
        None: MONITOR,
    },
    ("horizontal_test.go", "TestReconciliationsTotalCountMultipleReconciliations"): {
        None: MONITOR,
    },
    ("horizontal_test.go", "TestBuildQuantity"): {
        "Memory - 1000 bytes → 1Ki": QUANTITY,
        "Memory - 1000000 bytes → 1000Ki": QUANTITY,
        "CPU - 100 milli-cores": QUANTITY,
        "CPU - 500 milli-cores": QUANTITY,
        "CPU - 1 milli-core": QUANTITY,
        "CustomResource - 200 milli-units": QUANTITY,
        "CustomResource - 300 milli-units": QUANTITY,
    },
    ("horizontal_test.go", "TestEnqueueHPAAddsImmediately"): {
        None: QUEUE,
    },
    ("horizontal_test.go", "TestEnqueueHPARegistersSelectorBeforeQueueAdd"): {
        None: QUEUE,
    },
    ("horizontal_test.go", "TestUpdateHPAEnqueueBehavior"): {
        "generation change enqueues immediately": QUEUE,
        "status-only change uses rate limiting": QUEUE,
        "unrecognized old object type falls back to rate-limited enqueue": QUEUE,
        "unrecognized new object type falls back to rate-limited enqueue": QUEUE,
    },
    ("horizontal_test.go", "TestUpdateHPAFallsBackWhenFeatureDisabled"): {
        None: QUEUE,
    },
    ("horizontal_test.go", "TestUpdateStatusPopulatesConsistencyStore"): {
        None: QUEUE,
    },
    ("horizontal_test.go", "TestReconcileKeyEnsureReadyStaleCache"): {
        None: QUEUE,
    },
    ("horizontal_test.go", "TestDeleteHPAClearsConsistencyStore"): {
        "direct HPA object": QUEUE,
        "tombstone": QUEUE,
    },
    ("replica_calculator_test.go", "TestReplicaCalcResourceScale"): {
        "scale up": row(CALCULATOR, "test_replica_calc_resource_scale")
        + scenario(
            "calc-scale-up",
            "calc-scale-up-container",
            "calc-scale-up-hot-cpu-scales-less",
            "calc-scale-up-unready-scales-less",
        ),
        "scale up: container metric": row(CALCULATOR, "test_replica_calc_resource_scale")
        + scenario("calc-scale-up-container"),
        "scale up: unready pod scales less": row(CALCULATOR, "test_replica_calc_resource_scale")
        + scenario("calc-scale-up-unready-scales-less"),
        "scale up: hot-CPU container scales less": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
        "scale up: hot-CPU pod scales less": row(CALCULATOR, "test_replica_calc_resource_scale")
        + scenario("calc-scale-up-hot-cpu-scales-less"),
        "no scale: unready pods ignored": row(CALCULATOR, "test_replica_calc_resource_scale")
        + scenario("calc-no-scale-unready-ignored"),
        "no scale: hot-CPU pods ignored": row(CALCULATOR, "test_replica_calc_resource_scale"),
        "scale up: failed pods ignored": row(CALCULATOR, "test_replica_calc_resource_scale"),
        "scale up: failed pods ignored with missing container metric": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
        "scale up: container metrics with failed pods ignored": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
        "scale up: pods being deleted are ignored": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
        "scale up: container metrics with pods being deleted ignored": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
        "scale down": row(CALCULATOR, "test_replica_calc_resource_scale")
        + scenario(
            "calc-scale-down",
            "calc-scale-down-exclude-unready",
            "calc-scale-down-exclude-unscheduled",
        ),
        "scale down: container metric": row(CALCULATOR, "test_replica_calc_resource_scale"),
        "scale down: exclude unready pods": row(CALCULATOR, "test_replica_calc_resource_scale")
        + scenario("calc-scale-down-exclude-unready"),
        "scale down: container metric excludes unready pods": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
        "scale down: exclude unscheduled pods": row(CALCULATOR, "test_replica_calc_resource_scale")
        + scenario("calc-scale-down-exclude-unscheduled"),
        "scale down: container metric excludes unscheduled pods": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
        "scale down: ignore hot-CPU pods": row(CALCULATOR, "test_replica_calc_resource_scale"),
        "scale down: container metric ignores hot-CPU pods": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
        "scale down: failed pods ignored": row(CALCULATOR, "test_replica_calc_resource_scale"),
        "scale down: container metric with failed pods ignored": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
        "scale down: pods being deleted are ignored": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
        "scale down: still-running pods being deleted are ignored": row(
            CALCULATOR, "test_replica_calc_resource_scale"
        ),
    },
    ("replica_calculator_test.go", "TestReplicaCalcExternalPerPodMetric"): {
        "replica count overflow saturates to MaxInt32": row(
            CALCULATOR, "test_replica_calc_external_per_pod_metric"
        ),
        "usage overflow with huge target leaves replicas unchanged": row(
            CALCULATOR, "test_replica_calc_external_per_pod_metric"
        ),
        "scale up": row(CALCULATOR, "test_replica_calc_external_per_pod_metric")
        + scenario("calc-scale-up-per-pod-cm-external"),
        "scale down": row(CALCULATOR, "test_replica_calc_external_per_pod_metric")
        + scenario("calc-scale-down-per-pod-cm-external"),
        "within default tolerance": row(CALCULATOR, "test_replica_calc_external_per_pod_metric")
        + scenario("calc-tolerance-per-pod-cm-external"),
        "outside configurable 1% tolerance": row(
            CALCULATOR, "test_replica_calc_external_per_pod_metric"
        )
        + scenario("calc-configurable-tolerance-per-pod-cm-external"),
    },
    ("replica_calculator_test.go", "TestReplicaCalcPodMetric"): {
        "scale up": row(CALCULATOR, "test_pods_metric_replicas")
        + scenario(
            "calc-scale-up-cm",
            "calc-scale-up-cm-unready-hot-cpu-no-less-scale",
            "calc-scale-up-cm-unready-hot-cpu-scale-would-scale-down",
        ),
        "scale up: unready hot-CPU pod scales less": row(CALCULATOR, "test_pods_metric_replicas")
        + scenario("calc-scale-up-cm-unready-hot-cpu-no-less-scale"),
        "scale up: unready hot-CPU pods avoid scale-down": row(
            CALCULATOR, "test_pods_metric_replicas"
        )
        + scenario("calc-scale-up-cm-unready-hot-cpu-scale-would-scale-down"),
        "scale down": row(CALCULATOR, "test_pods_metric_replicas") + scenario("calc-scale-down-cm"),
        "within default tolerance": row(CALCULATOR, "test_pods_metric_replicas")
        + scenario("calc-tolerance-cm"),
        "outside configurable 1% tolerance": in_test(
            CALCULATOR, "test_pods_metric_configurable_tolerance"
        )
        + scenario("calc-configurable-tolerance-cm"),
        "no change: missing metrics": row(CALCULATOR, "test_pods_metric_replicas")
        + scenario("calc-plain-missing-metrics-no-change-eq"),
        "rolling update with maxSurge: extra pod missing metric": in_test(
            CALCULATOR, "test_pods_metric_rolling_update_with_surge"
        )
        + scenario("calc-rolling-update-with-max-surge-cm"),
    },
    ("replica_calculator_test.go", "TestReplicaCalcObjectMetric"): {
        "scale up": row(CALCULATOR, "test_replica_calc_object_metric")
        + scenario("calc-scale-up-cm-object", "calc-scale-up-cm-object-ignores-unready-pods"),
        "scale up: very large metric saturates replicas to MaxInt32": row(
            CALCULATOR, "test_replica_calc_object_metric"
        ),
        "scale up: ignores unready pods": row(CALCULATOR, "test_replica_calc_object_metric")
        + scenario("calc-scale-up-cm-object-ignores-unready-pods"),
        "scale down": row(CALCULATOR, "test_replica_calc_object_metric")
        + scenario("calc-scale-down-cm-object"),
        "within default tolerance": row(CALCULATOR, "test_replica_calc_object_metric")
        + scenario("calc-tolerance-cm-object"),
        "outside configurable 1% tolerance": row(CALCULATOR, "test_replica_calc_object_metric")
        + scenario("calc-configurable-tolerance-cm-object"),
    },
    ("replica_calculator_test.go", "TestReplicaCalcObjectPerPodMetric"): {
        "scale up": row(CALCULATOR, "test_replica_calc_object_per_pod_metric")
        + scenario("calc-scale-up-cm-per-pod-object"),
        "scale down": row(CALCULATOR, "test_replica_calc_object_per_pod_metric")
        + scenario("calc-scale-down-per-pod-cm-object"),
        "within default tolerance": row(CALCULATOR, "test_replica_calc_object_per_pod_metric")
        + scenario("calc-tolerance-per-pod-cm-object"),
        "outside configurable 1% tolerance": row(
            CALCULATOR, "test_replica_calc_object_per_pod_metric"
        )
        + scenario("calc-configurable-tolerance-per-pod-cm-object"),
    },
    ("replica_calculator_test.go", "TestReplicaCalcExternalMetric"): {
        "scale down: ignores unready pods (would otherwise scale up)": row(
            CALCULATOR, "test_replica_calc_external_metric"
        )
        + scenario("calc-scale-up-cm-external-ignores-unready-pods"),
        "scale down": row(CALCULATOR, "test_replica_calc_external_metric")
        + scenario("calc-scale-down-cm-external", "calc-scale-up-cm-external-ignores-unready-pods"),
        "within default tolerance": row(CALCULATOR, "test_replica_calc_external_metric")
        + scenario("calc-tolerance-cm-external"),
        "outside configurable 1% tolerance": row(CALCULATOR, "test_replica_calc_external_metric")
        + scenario("calc-configurable-tolerance-cm-external"),
        "usage overflow caps at MaxInt64": row(CALCULATOR, "test_replica_calc_external_metric"),
    },
    ("replica_calculator_test.go", "TestReplicaCalcResourceTolerance"): {
        "within default tolerance": row(CALCULATOR, "test_replica_calc_resource_tolerance")
        + scenario("calc-tolerance"),
        "outside 0% tolerance": row(CALCULATOR, "test_replica_calc_resource_tolerance"),
        "within 200% scale-up tolerance": row(CALCULATOR, "test_replica_calc_resource_tolerance"),
        "outside 8% scale-up tolerance (superfluous scale-down tolerance)": row(
            CALCULATOR, "test_replica_calc_resource_tolerance"
        ),
        "within 36% scale-down tolerance": row(CALCULATOR, "test_replica_calc_resource_tolerance"),
        "outside 34% scale-down tolerance": row(CALCULATOR, "test_replica_calc_resource_tolerance"),
    },
    ("replica_calculator_test.go", "TestReplicaCalcResourceMissingMetrics"): {
        "superfluous metrics counted": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        ),
        "some pods missing metrics scales down": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        )
        + scenario("calc-missing-metrics"),
        "no change: metric equal to target": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        )
        + scenario("calc-missing-metrics-no-change-eq"),
        "no change: metric above target": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        )
        + scenario("calc-missing-metrics-no-change-gt"),
        "no change: metric below target": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        )
        + scenario("calc-missing-metrics-no-change-lt"),
        "no change: unready pod metric missing": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        )
        + scenario("calc-missing-metrics-unready-change"),
        "no change: hot-CPU pod metric missing": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        ),
        "scale up: unready pod metric missing": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        )
        + scenario("calc-missing-metrics-unready-scale-up"),
        "scale up: hot-CPU pod metric missing": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        ),
        "scale down: unready pod metric missing": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        )
        + scenario("calc-missing-metrics-unready-scale-down"),
        "scale down: target over 100": row(CALCULATOR, "test_replica_calc_resource_missing_metrics")
        + scenario("calc-missing-metrics-scale-down-target-over-100"),
        "rolling update with maxSurge: extra pod missing metric": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics"
        )
        + scenario("calc-rolling-update-with-max-surge"),
        "disjoint pod and metric names": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics_errors"
        ),
        "no metrics returned from metrics API": in_test(
            CALCULATOR, "test_no_metrics_at_all_is_an_error_of_the_metrics_client"
        ),
        "missing CPU request on container": row(
            CALCULATOR, "test_replica_calc_resource_missing_metrics_errors"
        ),
    },
    ("replica_calculator_test.go", "TestReplicaCalcComputedToleranceAlgImplementation"): {
        None: in_test(CALCULATOR, "test_computed_tolerance_boundary"),
    },
    ("replica_calculator_test.go", "TestGroupPods"): {
        "void": row(CALCULATOR, "test_group_pods"),
        "count in a ready pod - memory": row(CALCULATOR, "test_group_pods"),
        "unready a pod without ready condition - CPU": row(CALCULATOR, "test_group_pods"),
        "count in a ready pod with fresh metrics during initialization period - CPU": row(
            CALCULATOR, "test_group_pods"
        ),
        "unready a ready pod without fresh metrics during initialization period - CPU": row(
            CALCULATOR, "test_group_pods"
        ),
        "unready an unready pod during initialization period - CPU": row(
            CALCULATOR, "test_group_pods"
        ),
        "count in a ready pod without fresh metrics after initialization period - CPU": row(
            CALCULATOR, "test_group_pods"
        ),
        "count in an unready pod that was ready after initialization period - CPU": row(
            CALCULATOR, "test_group_pods"
        ),
        "unready pod that has never been ready after initialization period - CPU": row(
            CALCULATOR, "test_group_pods"
        ),
        "a missing pod": row(CALCULATOR, "test_group_pods"),
        "several pods": row(CALCULATOR, "test_group_pods"),
        "pending pods are unreadied": row(CALCULATOR, "test_group_pods"),
        "ignore pods with deletion timestamps": row(CALCULATOR, "test_group_pods"),
        "ignore pods in a failed state": row(CALCULATOR, "test_group_pods"),
    },
    ("replica_calculator_test.go", "TestCalculateRequests"): {
        "void": in_test(CALCULATOR, "test_calculate_requests_void"),
        "Sum container requests if pod-level feature is disabled": GATE_POD_LEVEL,
        "Pod-level resources are enabled, but not set: fallback to sum container requests": row(
            CALCULATOR, "test_calculate_requests"
        ),
        "Pod-level resources override container requests when feature enabled and pod resources specified": row(
            CALCULATOR, "test_calculate_requests"
        ),
        "Fail if at least one of the containers is missing requests and pod-level feature/requests are not set": row(
            CALCULATOR, "test_calculate_requests_errors"
        ),
        "Pod-level resources override missing container requests when feature enabled and pod resources specified": row(
            CALCULATOR, "test_calculate_requests"
        ),
        "Container: if a container name is specified, calculate requests only for that container": row(
            CALCULATOR, "test_calculate_requests"
        ),
        "Container: if a container name is specified, calculate requests only for that container and ignore pod-level requests": row(
            CALCULATOR, "test_calculate_requests"
        ),
        "pod with restartable init containers": row(CALCULATOR, "test_calculate_requests"),
    },
    ("replica_calculator_test.go", "TestCalculatePodRequestsFromContainers_NonExistentContainer"): {
        None: in_test(
            CALCULATOR,
            "test_calculate_requests_errors",
            "TestCalculatePodRequestsFromContainers_NonExistentContainer",
        ),
    },
}

CLUSTER_PROPORTIONAL: dict[tuple[str, str], dict[str | None, Where]] = {
    ("ladder_controller_test.go", "TestControllerParser"): {
        None: in_test(PROPORTIONAL, "test_ladder_parses")
        + in_test(PROPORTIONAL, "test_ladder_refused"),
    },
    ("ladder_controller_test.go", "TestControllerSorter"): {
        None: in_test(PROPORTIONAL, "test_ladder_sorter"),
    },
    ("ladder_controller_test.go", "TestControllerScaler"): {
        None: in_test(PROPORTIONAL, "test_ladder_lookup"),
    },
    ("ladder_controller_test.go", "TestControllerScalerFromZero"): {
        None: in_test(PROPORTIONAL, "test_ladder_from_zero"),
    },
    ("ladder_controller_test.go", "TestScaleFromUnschedulableNodes"): {
        None: in_test(PROPORTIONAL, "test_ladder_unschedulable_nodes")
        + scenario("cpa-ladder-schedulable-only", "cpa-ladder-unschedulable-included"),
    },
    ("linear_controller_test.go", "TestControllerParser"): {
        None: in_test(PROPORTIONAL, "test_linear_parses")
        + in_test(PROPORTIONAL, "test_linear_refused"),
    },
    ("linear_controller_test.go", "TestScaleFromSingleParam"): {
        None: in_test(PROPORTIONAL, "test_linear_single_param"),
    },
    ("linear_controller_test.go", "TestScaleFromMultipleParams"): {
        None: in_test(PROPORTIONAL, "test_linear_multiple_params"),
    },
    ("linear_controller_test.go", "TestScaleFromUnschedulableNodes"): {
        None: in_test(PROPORTIONAL, "test_linear_scale_from_unschedulable_nodes"),
    },
    ("plugin_test.go", "TestEnsureController"): {
        None: in_test(PROPORTIONAL, "test_configmap_shape")
        + in_test(PROPORTIONAL, "test_configmap_accepted")
        + scenario("cpa-configmap-too-many-entries"),
    },
    ("k8sclient_test.go", "TestGetTarget"): {None: CPA_FLAGS},
    ("k8sclient_test.go", "TestGetScaleTargets"): {None: CPA_FLAGS},
    ("k8sclient_test.go", "TestNewK8sClient"): {
        None: in_test(PROPORTIONAL, "test_cluster_status_counts_selected_nodes")
        + scenario("cpa-linear-not-ready-left-out"),
    },
    ("k8sclient_test.go", "TestGetTrimmedNodeClients"): {None: CPA_INFORMER},
    ("autoscaler_test.go", "TestRun"): {None: in_test(PROPORTIONAL, "test_polling_loop_steps")},
    ("autoscaler_test.go", "TestRun_MaxRetries"): {None: CPA_EXIT},
}


def _module(name: str) -> ModuleType:
    """An engine test module by file name, loaded apart from pytest's own copy."""
    path = ENGINE_TESTS / name
    spec = importlib.util.spec_from_file_location(f"_ledger_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _ids(function: object) -> set[str]:
    found: set[str] = set()
    for mark in getattr(function, "pytestmark", ()):
        if mark.name == "parametrize":
            found.update(
                value.id for value in mark.args[1] if isinstance(value, ParameterSet) and value.id
            )
    return found


def _scenario_problem(stem: str, names: list[str]) -> str | None:
    path = SCENARIOS / f"{stem}.yaml"
    if not path.exists():
        return f"scenario {stem}: no such file"
    source = path.read_text().splitlines()[0]
    absent = [name for name in names if name not in source]
    return f"scenario {stem}: its source line does not name {absent}" if absent else None


def _test_problem(ref: Ref, case: str | None, modules: dict[str, ModuleType]) -> str | None:
    if ref.module not in modules:
        modules[ref.module] = _module(ref.module)
    function = getattr(modules[ref.module], ref.function, None)
    if function is None:
        return f"{ref.module}::{ref.function}: no such test"
    case_id = case if ref.same_id else ref.case_id
    if case_id is not None and case_id not in _ids(function):
        return f"{ref.module}::{ref.function}: no pytest id {case_id!r}"
    return None


def _problems(ledger: dict[tuple[str, str], dict[str | None, Where]]) -> list[str]:
    modules: dict[str, ModuleType] = {}
    problems = []
    for (file, name), cases in ledger.items():
        for case, where in cases.items():
            if isinstance(where, NotApplicable):
                continue
            named = [name] + ([case] if case else [])
            for ref in where:
                if ref.scenario:
                    problem = _scenario_problem(ref.scenario, [file, *named])
                else:
                    problem = _test_problem(ref, case, modules)
                if problem is not None:
                    problems.append(f"{name}/{case}: {problem}")
    return problems


@pytest.mark.parametrize(
    "ledger",
    [
        pytest.param(KUBERNETES, id="kubernetes"),
        pytest.param(CLUSTER_PROPORTIONAL, id="cluster-proportional-autoscaler"),
    ],
)
def test_every_reference_exists_and_names_its_case(
    ledger: dict[tuple[str, str], dict[str | None, Where]],
) -> None:
    assert _problems(ledger) == []


def _counts(ledger: dict[tuple[str, str], dict[str | None, Where]]) -> tuple[int, int, int]:
    decided = [where for cases in ledger.values() for where in cases.values()]
    not_applicable = sum(1 for where in decided if isinstance(where, NotApplicable))
    return len(decided), len(decided) - not_applicable, not_applicable


@pytest.mark.parametrize(
    ("ledger", "pattern"),
    [
        pytest.param(
            KUBERNETES,
            r"Kubernetes 1\.37\.2: (\d+) test cases, (\d+) ported, (\d+) not applicable",
            id="kubernetes",
        ),
        pytest.param(
            CLUSTER_PROPORTIONAL,
            r"cluster-proportional-autoscaler v1\.10\.3: (\d+) test functions, (\d+) ported, "
            r"(\d+) not applicable",
            id="cluster-proportional-autoscaler",
        ),
    ],
)
def test_the_docs_give_the_ledgers_counts(
    ledger: dict[tuple[str, str], dict[str | None, Where]], pattern: str
) -> None:
    found = re.search(pattern, " ".join(DOCS.read_text().split()))
    assert found is not None, f"docs/gardener-compatibility.md lacks {pattern!r}"
    assert tuple(int(group) for group in found.groups()) == _counts(ledger)
