"""Write the scenario files of this directory from upstream's HPA test cases.

Each case below is one test of Kubernetes 1.37.2's horizontal_test.go or
replica_calculator_test.go (pkg/controller/podautoscaler), named in its
source as `file Function/subtest`, with its figures and its expected
result; a source that says "hvpa's own" or "an earlier release's case" is
not in 1.37.2's files and says where its figures come from. This
script renders it the way upstream's fake clients build the objects (pods
test-pod-N with two containers, pod metrics, custom and external metrics),
as real object shapes in an `hvpa recommend` scenario, and writes the
expected result beside it. The expected values are upstream's (an
"hvpa's own" case derives its values from upstream's arithmetic, as its
source says), never hvpa's output. Regenerate after editing a case:

    .venv/bin/python tests/engine/scenarios/generate.py
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

HERE: Final = Path(__file__).parent
NOW: Final = "2026-11-21T12:00:00Z"
NOW_SECONDS: Final = 1_795_262_400
OLD_START: Final = "2026-11-21T10:00:00Z"  # long past the CPU initialization period
NAMESPACE: Final = "test-namespace"

# horizontal_test.go's controller: tolerance 0.1, CPU initialization 2 min,
# readiness delay 10 s, downscale window 5 min, and scaleUpLimitFactor 8.
HORIZONTAL_SETTINGS: Final = {
    "cpuInitializationPeriod": "2m",
    "initialReadinessDelay": "10s",
    "tolerance": 0.1,
    "downscaleStabilization": "5m",
    "scaleUpLimitFactor": 8,
    "scaleUpLimitMinimum": 4,
}
OK: Final = (
    ("AbleToScale", "True", "SucceededRescale"),
    ("ScalingActive", "True", "ValidMetricFound"),
    ("ScalingLimited", "False", "DesiredWithinRange"),
)


def at(seconds_ago: float) -> str:
    return _format(NOW_SECONDS - seconds_ago)


def _format(seconds: float) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


HOT: Final = 0.0  # started now
COOL: Final = 180.0  # started three minutes ago


def milli(value: int) -> str:
    return f"{value}m"


def cpu_metric(target: int) -> dict[str, Any]:
    return {
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": target},
        },
    }


def container_cpu_metric(container: str, target: int) -> dict[str, Any]:
    return {
        "type": "ContainerResource",
        "containerResource": {
            "name": "cpu",
            "container": container,
            "target": {"type": "Utilization", "averageUtilization": target},
        },
    }


def pods_metric(average: str) -> dict[str, Any]:
    return {
        "type": "Pods",
        "pods": {
            "metric": {"name": "qps"},
            "target": {"type": "AverageValue", "averageValue": average},
        },
    }


def object_metric(target_type: str, quantity: str) -> dict[str, Any]:
    key = "value" if target_type == "Value" else "averageValue"
    return {
        "type": "Object",
        "object": {
            "describedObject": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "some-deployment",
            },
            "metric": {"name": "qps"},
            "target": {"type": target_type, key: quantity},
        },
    }


def external_metric(
    target_type: str, quantity: str, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    key = "value" if target_type == "Value" else "averageValue"
    selector = {"matchLabels": labels} if labels else {}
    return {
        "type": "External",
        "external": {
            "metric": {"name": "qps", "selector": selector},
            "target": {"type": target_type, key: quantity},
        },
    }


def scaling_rules(
    pods: int = 0, pods_period: int = 0, percent: int = 0, percent_period: int = 0, window: int = 0
) -> dict[str, Any]:
    """generateScalingRules."""
    policies = []
    if pods:
        policies.append({"type": "Pods", "value": pods, "periodSeconds": pods_period})
    if percent:
        policies.append({"type": "Percent", "value": percent, "periodSeconds": percent_period})
    rules: dict[str, Any] = {"stabilizationWindowSeconds": window, "selectPolicy": "Max"}
    if policies:
        rules["policies"] = policies
    return rules


def uniform(changes: list[int], period: int) -> list[dict[str, Any]]:
    """generateEventsUniformDistribution."""
    segment = period / len(changes)
    return [
        {"time": at(int(period - segment * (i + 1) + segment / 2)), "replicaChange": change}
        for i, change in enumerate(changes)
    ]


@dataclass
class Case:
    """One upstream test: the HPA, the scale, the pods and their metrics, and what upstream expects."""

    name: str
    source: str
    min_replicas: int
    max_replicas: int
    spec_replicas: int
    expected_replicas: int
    status_replicas: int | None = None
    metrics: list[dict[str, Any]] = field(default_factory=list)
    levels: list[int] = field(default_factory=list)
    # Per-pod CPU request (horizontal_test.go halves it over two containers); None: 1.0 each.
    requests: list[str] | None = None
    readiness: list[str] | None = None
    start: list[float] | None = None
    phases: list[str] | None = None
    deleting: list[bool] | None = None
    recommendations: list[tuple[int, float]] | None = None
    scale_up: dict[str, Any] | None = None
    scale_down: dict[str, Any] | None = None
    scale_up_events: list[dict[str, Any]] | None = None
    scale_down_events: list[dict[str, Any]] | None = None
    conditions: tuple[tuple[str, str, str], ...] = OK
    utilization: int | None = None
    metric_results: list[dict[str, Any]] | None = None
    no_selector: bool = False
    omit_pod_metrics: bool = False
    omit_custom_metrics: bool = False
    omit_external_metrics: bool = False
    settings: dict[str, Any] = field(default_factory=lambda: dict(HORIZONTAL_SETTINGS))
    # replica_calculator_test.go's fixture: each container requests the full
    # amount and reports its own level.
    per_container: list[list[int]] | None = None
    # Labels of the external metric's series, which its selector matches.
    metric_labels: dict[str, str] = field(default_factory=dict)
    kind: str = "Deployment"
    # Conditions the Hvpa's status holds before the decision (ScaledToZero=True: hvpa took
    # the target to zero itself).
    prior_conditions: tuple[tuple[str, str, str], ...] = ()
    # The target's selector instead of matchLabels {name: test-pod} (an unparsable one).
    selector: dict[str, Any] | None = None


def ok(*overrides: tuple[str, str, str]) -> tuple[tuple[str, str, str], ...]:
    """statusOkWithOverrides."""
    result = list(OK)
    for kind, status, reason in overrides:
        for index, (existing, _, _) in enumerate(result):
            if existing == kind:
                result[index] = (kind, status, reason)
                break
        else:
            result.append((kind, status, reason))
    return tuple(result)


def _pod(case: Case, index: int) -> dict[str, Any]:
    ready = case.readiness[index] if case.readiness else "True"
    start = at(case.start[index]) if case.start else OLD_START
    phase = case.phases[index] if case.phases else "Running"
    if case.per_container is not None:
        request = case.requests[index] if case.requests and index < len(case.requests) else None
        requests = [request, request]
    else:
        request = case.requests[index] if case.requests else "1"
        millicores = int(request[:-1]) if request.endswith("m") else int(float(request) * 1000)
        half = milli(millicores // 2)
        requests = [half, half]
    metadata: dict[str, Any] = {
        "name": f"test-pod-{index}",
        "namespace": NAMESPACE,
        "labels": {"name": "test-pod"},
    }
    if case.deleting and case.deleting[index]:
        metadata["deletionTimestamp"] = NOW
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "containers": [
                {
                    "name": name,
                    "image": "test:1",
                    **({"resources": {"requests": {"cpu": r}}} if r else {}),
                }
                for name, r in zip(("container1", "container2"), requests, strict=True)
            ]
        },
        "status": {
            "phase": phase,
            "startTime": start,
            "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": start}],
        },
    }


def _pod_metrics(case: Case) -> list[dict[str, Any]]:
    items = []
    per_pod = case.per_container or [[level // 2, level // 2] for level in case.levels]
    for index, containers in enumerate(per_pod):
        items.append(
            {
                "apiVersion": "metrics.k8s.io/v1beta1",
                "kind": "PodMetrics",
                "metadata": {"name": f"test-pod-{index}", "namespace": NAMESPACE},
                "timestamp": NOW,
                "window": "1m0s",
                "containers": [
                    {"name": name, "usage": {"cpu": milli(value), "memory": "512Ki"}}
                    for name, value in zip(("container1", "container2"), containers, strict=False)
                ],
            }
        )
    return items


def render(case: Case) -> tuple[dict[str, Any], dict[str, Any]]:
    template_spec: dict[str, Any] = {
        "minReplicas": case.min_replicas,
        "maxReplicas": case.max_replicas,
        "metrics": case.metrics,
    }
    behavior: dict[str, Any] = {}
    if case.scale_up is not None:
        behavior["scaleUp"] = case.scale_up
    if case.scale_down is not None:
        behavior["scaleDown"] = case.scale_down
    if behavior:
        template_spec["behavior"] = behavior
    hvpa: dict[str, Any] = {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": "test-hpa", "namespace": NAMESPACE},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": case.kind, "name": "test-dep"},
            "hpa": {"deploy": True, "template": {"spec": template_spec}},
            "vpa": {"deploy": False},
        },
    }
    history: dict[str, Any] = {}
    if case.recommendations is not None:
        history["recommendations"] = [
            {"time": at(ago), "replicas": replicas} for replicas, ago in case.recommendations
        ]
    if case.scale_up_events is not None:
        history["scaleUpEvents"] = case.scale_up_events
    if case.scale_down_events is not None:
        history["scaleDownEvents"] = case.scale_down_events
    status: dict[str, Any] = {}
    if history:
        status["history"] = history
    if case.prior_conditions:
        status["conditions"] = [
            {"type": t, "status": st, "reason": r, "message": r}
            for t, st, r in case.prior_conditions
        ]
    if status:
        hvpa["status"] = status

    status_replicas = case.spec_replicas if case.status_replicas is None else case.status_replicas
    target_spec: dict[str, Any] = {
        "replicas": case.spec_replicas,
        "template": {
            "metadata": {"labels": {"name": "test-pod"}},
            "spec": {
                "containers": [
                    {"name": "container1", "image": "test:1"},
                    {"name": "container2", "image": "test:1"},
                ]
            },
        },
    }
    if case.selector is not None:
        target_spec["selector"] = case.selector
    elif not case.no_selector:
        target_spec["selector"] = {"matchLabels": {"name": "test-pod"}}
    target = {
        "apiVersion": "apps/v1",
        "kind": case.kind,
        "metadata": {"name": "test-dep", "namespace": NAMESPACE, "generation": 1},
        "spec": target_spec,
        "status": {
            "observedGeneration": 1,
            "replicas": status_replicas,
            "updatedReplicas": status_replicas,
            "readyReplicas": status_replicas,
            "availableReplicas": status_replicas,
        },
    }
    count = len(case.requests) if case.requests is not None else status_replicas
    if case.phases:
        count = max(count, len(case.phases))
    scenario: dict[str, Any] = {
        "now": NOW,
        "settings": case.settings,
        "hvpa": hvpa,
        "target": target,
        "pods": [_pod(case, i) for i in range(count)],
    }
    kinds = {m["type"] for m in case.metrics}
    if kinds & {"Resource", "ContainerResource"} and not case.omit_pod_metrics:
        scenario["podMetrics"] = _pod_metrics(case)
    custom = []
    if "Pods" in kinds and not case.omit_custom_metrics:
        custom += [
            {
                "describedObject": {
                    "kind": "Pod",
                    "namespace": NAMESPACE,
                    "name": f"test-pod-{i}",
                    "apiVersion": "v1",
                },
                "metric": {"name": "qps"},
                "timestamp": NOW,
                "value": milli(level),
            }
            for i, level in enumerate(case.levels)
        ]
    if "Object" in kinds and not case.omit_custom_metrics:
        custom.append(
            {
                "describedObject": {
                    "kind": "Deployment",
                    "namespace": NAMESPACE,
                    "name": "some-deployment",
                    "apiVersion": "apps/v1",
                },
                "metric": {"name": "qps"},
                "timestamp": NOW,
                "value": milli(case.levels[0]),
            }
        )
    if custom:
        scenario["customMetrics"] = custom
    if "External" in kinds and not case.omit_external_metrics:
        scenario["externalMetrics"] = [
            {
                "metricName": "qps",
                "metricLabels": case.metric_labels,
                "timestamp": NOW,
                "value": milli(level),
            }
            for level in case.levels
        ]

    horizontal: dict[str, Any] = {"desiredReplicas": case.expected_replicas}
    if case.metric_results is not None:
        horizontal["metrics"] = case.metric_results
    elif case.utilization is not None:
        horizontal["metrics"] = [
            {"type": "Resource", "name": "cpu", "currentUtilization": case.utilization}
        ]
    expected: dict[str, Any] = {
        "replicas": {"current": case.spec_replicas, "desired": case.expected_replicas},
        "horizontal": horizontal,
    }
    # A condition the status held before keeps its place; a new one is appended.
    scaled = _scaled_to_zero(case)
    prior = any(c[0] == "ScaledToZero" for c in case.prior_conditions)
    conditions = scaled + case.conditions if prior else case.conditions + scaled
    if conditions:
        expected["conditions"] = [{"type": t, "status": s, "reason": r} for t, s, r in conditions]
    return scenario, expected


def _scaled_to_zero(case: Case) -> tuple[tuple[str, str, str], ...]:
    """The ScaledToZero condition a successful rescale sets (HPAScaleToZero, on by default).

    True when the HPA took the target from some replicas to zero, with
    minReplicas 0 and an Object or External metric; False after any other
    rescale. No rescale, no condition (unless one was there before).
    """
    if ("AbleToScale", "True", "SucceededRescale") not in case.conditions:
        return next(((c,) for c in case.prior_conditions if c[0] == "ScaledToZero"), ())
    kinds = {m.get("type") for m in case.metrics}
    if (
        case.spec_replicas > 0
        and case.expected_replicas == 0
        and case.min_replicas == 0
        and kinds & {"Object", "External"}
    ):
        return (("ScaledToZero", "True", "ScaledToZero"),)
    return (("ScaledToZero", "False", "NotScaledToZero"),)


def resource_case(
    name: str,
    source: str,
    current: int,
    target: int,
    requests: list[str],
    per_container: list[list[int]],
    expected: tuple[int, int, str],
    container: str = "",
    **fixture: Any,
) -> Case:
    """A GetResourceReplicas case, checked on the metric's own (raw) result."""
    replicas, utilization, average = expected
    metric = container_cpu_metric(container, target) if container else cpu_metric(target)
    result: dict[str, Any] = {"type": metric["type"], "name": "cpu"}
    if container:
        result["container"] = container
    return Case(
        name=name,
        source=source,
        min_replicas=1,
        max_replicas=100,
        spec_replicas=current,
        expected_replicas=replicas,
        metrics=[metric],
        requests=requests,
        per_container=per_container,
        recommendations=[],
        conditions=(),
        metric_results=[
            {
                **result,
                "desiredReplicas": replicas,
                "currentUtilization": utilization,
                "currentAverageValue": average,
            }
        ],
        **fixture,
    )


def _able_to_scale(current: int, prenormalized: int, stabilized: int, final: int) -> str:
    """The AbleToScale reason a reconcile with behavior leaves: normalizeDesiredReplicasWithBehaviors, then the rescale."""
    if final != current:
        return "SucceededRescale"
    if stabilized != prenormalized:
        return "ScaleUpStabilized" if prenormalized >= current else "ScaleDownStabilized"
    return "ReadyForNewScale"


def behavior_case(
    name: str,
    source: str,
    current: int,
    prenormalized: int,
    bounds: tuple[int, int],
    rules: tuple[dict[str, Any] | None, dict[str, Any] | None],
    events: tuple[list[dict[str, Any]], list[dict[str, Any]]],
    expected: tuple[int, str],
    recommendations: list[tuple[int, float]] | None = None,
    stabilized: int | None = None,
) -> Case:
    """A behavior case (TestScalingWithRules, TestNormalizeDesiredReplicasWithBehavior) run as a reconcile.

    Upstream calls the normalization with a prenormalized count; here an
    external metric with an average-value target of 1 proposes it
    (ceil(value / 1)), far enough from the current count to clear the
    tolerance, and the case's history and events come from the Hvpa's status.
    """
    replicas, limited = expected
    up, down = rules
    minimum, maximum = bounds
    status = "False" if limited == "DesiredWithinRange" else "True"
    able = _able_to_scale(
        current, prenormalized, prenormalized if stabilized is None else stabilized, replicas
    )
    return Case(
        name=name,
        source=source,
        min_replicas=minimum,
        max_replicas=maximum,
        spec_replicas=current,
        expected_replicas=replicas,
        metrics=[external_metric("AverageValue", "1")],
        levels=[prenormalized * 1000],
        requests=[],
        recommendations=[] if recommendations is None else recommendations,
        scale_up=up if up is not None else {},
        scale_down=down if down is not None else {},
        scale_up_events=events[0],
        scale_down_events=events[1],
        conditions=(
            ("AbleToScale", "True", able),
            ("ScalingActive", "True", "ValidMetricFound"),
            ("ScalingLimited", status, limited),
        ),
        metric_results=[{"type": "External", "name": "qps", "desiredReplicas": prenormalized}],
    )


def window(up: int, down: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Stabilization windows only: the API fills in the default policies."""
    return {"stabilizationWindowSeconds": up}, {"stabilizationWindowSeconds": down}


NO_EVENTS: Final[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = ([], [])
ROOM: Final = (1, 1000)


LABELS: Final = {"label": "value"}
_USAGE_KEY: Final = {
    ("Pods", "AverageValue"): "currentAverageValue",
    ("Object", "Value"): "currentValue",
    ("Object", "AverageValue"): "currentAverageValue",
    ("External", "Value"): "currentValue",
    ("External", "AverageValue"): "currentAverageValue",
}


def metric_case(
    name: str,
    source: str,
    current: int,
    expected: int,
    metric: dict[str, Any],
    levels: list[int],
    usage: int,
    up_tolerance: str | None = None,
    **fixture: Any,
) -> Case:
    """A GetMetricReplicas / GetObject* / GetExternal* case, checked on the metric's own result.

    `levels` and `usage` are in milli-units, as replica_calculator_test.go
    gives them; an `up_tolerance` is the case's scale-up tolerance (its
    scale-down one stays at the default), set in behavior as the API allows.
    """
    kind = metric["type"]
    source_spec = metric[kind[0].lower() + kind[1:]]
    key = _USAGE_KEY[(kind, source_spec["target"]["type"])]
    return Case(
        name=name,
        source=source,
        min_replicas=1,
        max_replicas=100,
        spec_replicas=current,
        expected_replicas=expected,
        metrics=[metric],
        levels=levels,
        recommendations=[],
        scale_up=None if up_tolerance is None else {"tolerance": up_tolerance},
        conditions=(),
        metric_labels=LABELS if kind == "External" else {},
        metric_results=[
            {"type": kind, "name": "qps", "desiredReplicas": expected, key: milli(usage)}
        ],
        **fixture,
    )


JITTERED: Final = [f"{300 + j}m" for j in (100, -100, 10, -10, 2, -2, 1, -1, 0, 0)]


def both(*values: int) -> list[list[int]]:
    return [[v, v] for v in values]


CASES: list[Case] = [
    Case(
        "scale-up",
        "horizontal_test.go TestScaleCPU/scale up (and /scale up deployment)",
        2,
        6,
        3,
        5,
        metrics=[cpu_metric(30)],
        levels=[300, 500, 700],
        utilization=50,
    ),
    Case(
        "scale-up-replica-set",
        "horizontal_test.go TestScaleCPU/scale up replicaset",
        2,
        6,
        3,
        5,
        metrics=[cpu_metric(30)],
        levels=[300, 500, 700],
        utilization=50,
        kind="ReplicaSet",
    ),
    Case(
        "scale-up-stateful-set",
        "hvpa's own: horizontal_test.go TestScaleCPU/scale up on a StatefulSet (the scale "
        "subresource is the same)",
        2,
        6,
        3,
        5,
        metrics=[cpu_metric(30)],
        levels=[300, 500, 700],
        utilization=50,
        kind="StatefulSet",
    ),
    Case(
        "scale-up-container",
        "horizontal_test.go TestScaleContainerResource/scale up container resource",
        2,
        6,
        3,
        5,
        metrics=[container_cpu_metric("container1", 30)],
        levels=[300, 500, 700],
    ),
    Case(
        "scale-up-unready-less-scale",
        "horizontal_test.go TestScaleCPU/scale up with unready pods results in less scale",
        2,
        6,
        3,
        4,
        metrics=[cpu_metric(30)],
        levels=[300, 500, 700],
        readiness=["False", "True", "True"],
        utilization=60,
    ),
    Case(
        "scale-up-hot-cpu-less-scale",
        "horizontal_test.go TestScaleCPU/scale up with hot cpu pods results in less scale",
        2,
        6,
        3,
        4,
        metrics=[cpu_metric(30)],
        levels=[300, 500, 700],
        start=[HOT, COOL, COOL],
        utilization=60,
    ),
    Case(
        "scale-up-unready-no-scale",
        "horizontal_test.go TestScaleCPU/no scale up when all unready pods bring utilization "
        "within target",
        2,
        6,
        3,
        3,
        metrics=[cpu_metric(30)],
        levels=[400, 500, 700],
        readiness=["True", "False", "False"],
        utilization=40,
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "scale-up-hot-cpu-no-scale",
        "horizontal_test.go TestScaleUpHotCpuNoScale",
        2,
        6,
        3,
        3,
        metrics=[cpu_metric(30)],
        levels=[400, 500, 700],
        readiness=["True", "False", "False"],
        start=[COOL, HOT, HOT],
        utilization=40,
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "scale-up-ignores-failed-pods",
        "horizontal_test.go TestScaleCPU/scale up ignores failed pods",
        2,
        6,
        2,
        4,
        metrics=[cpu_metric(30)],
        levels=[500, 700],
        requests=["1"] * 4,
        readiness=["True", "True", "False", "False"],
        phases=["Running", "Running", "Failed", "Failed"],
        utilization=60,
    ),
    Case(
        "scale-up-ignores-deletion-pods",
        "horizontal_test.go TestScaleCPU/scale up ignores deletion pods",
        2,
        6,
        2,
        4,
        metrics=[cpu_metric(30)],
        levels=[500, 700],
        requests=["1"] * 4,
        readiness=["True", "True", "False", "False"],
        deleting=[False, False, True, True],
        utilization=60,
    ),
    Case(
        "scale-up-cm",
        "horizontal_test.go TestScaleUpCM/scale up custom metric",
        2,
        6,
        3,
        4,
        metrics=[pods_metric("15")],
        levels=[20000, 10000, 30000],
    ),
    Case(
        "scale-up-cm-unready-and-hot-cpu-no-less-scale",
        "horizontal_test.go TestScaleUpCM/unready and hot cpu pods do not reduce scale for "
        "custom metric",
        2,
        6,
        3,
        6,
        metrics=[pods_metric("15")],
        levels=[50000, 10000, 30000],
        readiness=["True", "True", "False"],
        start=[COOL, COOL, HOT],
    ),
    Case(
        "scale-up-cm-unready-and-cpu-hot",
        "horizontal_test.go TestScaleUpCMUnreadyandCpuHot (and TestScaleUpCM/unready and hot "
        "cpu pods scale to max with scaling limited condition)",
        2,
        6,
        3,
        6,
        metrics=[pods_metric("15")],
        levels=[50000, 15000, 30000],
        readiness=["False", "True", "False"],
        start=[HOT, COOL, HOT],
        conditions=ok(("ScalingLimited", "True", "TooManyReplicas")),
    ),
    Case(
        "scale-up-hot-cpu-no-scale-would-scale-down",
        "horizontal_test.go TestScaleUpHotCpuNoScaleWouldScaleDown (an earlier release's case, "
        "not in 1.37.2)",
        2,
        6,
        3,
        6,
        metrics=[pods_metric("15")],
        levels=[50000, 15000, 30000],
        start=[HOT, COOL, HOT],
        conditions=ok(("ScalingLimited", "True", "TooManyReplicas")),
    ),
    Case(
        "scale-up-cm-object",
        "horizontal_test.go TestScaleUpCMObject/scale up object metric with value target",
        2,
        6,
        3,
        4,
        metrics=[object_metric("Value", "15")],
        levels=[20000],
    ),
    Case(
        "scale-up-per-pod-cm-object",
        "horizontal_test.go TestScaleUpCMObject/scale up per-pod object metric with average "
        "value target",
        2,
        6,
        3,
        4,
        metrics=[object_metric("AverageValue", "10")],
        levels=[40000],
    ),
    Case(
        "scale-up-cm-external",
        "horizontal_test.go TestScaleUpCM/scale up external metric with value target",
        2,
        6,
        3,
        4,
        metrics=[external_metric("Value", "6666m")],
        levels=[8600],
    ),
    Case(
        "scale-up-per-pod-cm-external",
        "horizontal_test.go TestScaleUpCM/scale up external metric with per-pod average value "
        "target",
        2,
        6,
        3,
        4,
        metrics=[external_metric("AverageValue", "2222m")],
        levels=[8600],
    ),
    Case(
        "scale-up-from-zero-cm-object",
        "horizontal_test.go TestScaleUpCMObject/scale up from zero with HPAScaleToZero enabled",
        0,
        6,
        0,
        2,
        metrics=[object_metric("Value", "15")],
        levels=[20000],
        prior_conditions=(("ScaledToZero", "True", "ScaledToZero"),),
    ),
    Case(
        "scale-up-from-zero-ignores-tolerance-cm-object",
        "horizontal_test.go TestScaleUpCMObject/scale up from zero ignores tolerance with "
        "HPAScaleToZero enabled",
        0,
        6,
        0,
        1,
        metrics=[object_metric("Value", "1")],
        levels=[1000],
        prior_conditions=(("ScaledToZero", "True", "ScaledToZero"),),
    ),
    Case(
        "zero-replicas-not-scaled-by-hvpa",
        "horizontal_test.go TestScaleToZeroBehavior/from zero without condition, "
        "HPAScaleToZero enabled",
        0,
        6,
        0,
        0,
        metrics=[object_metric("Value", "15")],
        levels=[20000],
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "ScalingDisabled"),
        ),
    ),
    Case(
        "zero-replicas-scaled-to-zero-min-raised",
        "horizontal_test.go TestScaleToZeroBehavior/minReplicas increased with ScaledToZero "
        "condition, HPAScaleToZero enabled",
        2,
        6,
        0,
        2,
        # 10 against a target of 15 from zero: ceil(0.667) = 1, raised to minReplicas 2.
        metrics=[object_metric("Value", "15")],
        levels=[10000],
        prior_conditions=(("ScaledToZero", "True", "ScaledToZero"),),
        conditions=ok(("ScalingLimited", "True", "TooFewReplicas")),
    ),
    Case(
        "scale-to-zero-min-raised-without-object-metric",
        "hvpa's own, read from horizontal.go shouldComputeMetricsForZeroReplicas: with "
        "ScaledToZero=True and minReplicas above zero the metrics are computed even without an "
        "Object or External metric; a CPU metric over zero pods cannot be read "
        "(FailedGetResourceMetric), so the count stays at 0",
        2,
        6,
        0,
        0,
        metrics=[cpu_metric(50)],
        requests=[],
        prior_conditions=(("ScaledToZero", "True", "ScaledToZero"),),
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "FailedGetResourceMetric"),
        ),
    ),
    Case(
        "scale-to-zero-stale-condition-cleared",
        "horizontal_test.go TestScaleToZeroBehavior/stale ScaledToZero condition cleared on "
        "normal rescale, HPAScaleToZero enabled",
        1,
        6,
        3,
        5,
        metrics=[cpu_metric(30)],
        levels=[300, 500, 700],
        prior_conditions=(("ScaledToZero", "True", "ScaledToZero"),),
    ),
    Case(
        "scale-to-zero-manual-scale-to-zero",
        "horizontal_test.go TestScaleToZeroBehavior/manual scale to zero disables HPA, "
        "HPAScaleToZero enabled",
        1,
        6,
        0,
        0,
        metrics=[cpu_metric(50)],
        requests=[],
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "ScalingDisabled"),
        ),
    ),
    Case(
        "scale-down",
        "horizontal_test.go TestScaleCPU/scale down",
        2,
        6,
        5,
        3,
        metrics=[cpu_metric(50)],
        levels=[100, 300, 500, 250, 250],
        recommendations=[],
        utilization=28,
    ),
    Case(
        "scale-down-container-resource",
        "horizontal_test.go TestScaleContainerResource/scale down container resource",
        2,
        6,
        5,
        3,
        metrics=[container_cpu_metric("container2", 50)],
        levels=[100, 300, 500, 250, 250],
        recommendations=[],
    ),
    Case(
        "scale-down-with-scaling-rules",
        "horizontal_test.go TestScaleDownWithScalingRules (an earlier release's case, not in "
        "1.37.2)",
        2,
        6,
        5,
        3,
        metrics=[cpu_metric(50)],
        levels=[100, 300, 500, 250, 250],
        recommendations=[],
        scale_up=scaling_rules(0, 0, 100, 15, 30),
        utilization=28,
    ),
    Case(
        "scale-down-stabilize-initial-size",
        "horizontal_test.go TestScaleDownStabilizeInitialSize",
        2,
        6,
        5,
        5,
        metrics=[cpu_metric(50)],
        levels=[100, 300, 500, 250, 250],
        utilization=28,
        conditions=ok(("AbleToScale", "True", "ScaleDownStabilized")),
    ),
    Case(
        "scale-down-cm",
        "horizontal_test.go TestScaleDownCM/scale down pods metric",
        2,
        6,
        5,
        3,
        metrics=[pods_metric("20")],
        levels=[12000] * 5,
        recommendations=[],
    ),
    Case(
        "scale-down-cm-object",
        "horizontal_test.go TestScaleDownCM/scale down object metric with value target",
        2,
        6,
        5,
        3,
        metrics=[object_metric("Value", "20")],
        levels=[12000],
        recommendations=[],
    ),
    Case(
        "scale-down-to-zero-cm-object",
        "horizontal_test.go TestScaleDownCM/scale down to zero object metric with "
        "HPAScaleToZero enabled",
        0,
        6,
        5,
        0,
        metrics=[object_metric("Value", "20")],
        levels=[0],
        recommendations=[],
    ),
    Case(
        "scale-down-per-pod-cm-object",
        "horizontal_test.go TestScaleDownCM/scale down per-pod object metric with average "
        "value target",
        2,
        6,
        5,
        3,
        metrics=[object_metric("AverageValue", "20")],
        levels=[60000],
        recommendations=[],
    ),
    Case(
        "scale-down-cm-external",
        "horizontal_test.go TestScaleDownCM/scale down external metric with value target",
        2,
        6,
        5,
        3,
        metrics=[external_metric("Value", "14400m")],
        levels=[8600],
        recommendations=[],
    ),
    Case(
        "scale-down-to-zero-cm-external",
        "horizontal_test.go TestScaleDownCM/scale down to zero external metric with "
        "HPAScaleToZero enabled",
        0,
        6,
        5,
        0,
        metrics=[external_metric("Value", "14400m")],
        levels=[0],
        recommendations=[],
    ),
    Case(
        "scale-down-per-pod-cm-external",
        "horizontal_test.go TestScaleDownCM/scale down per-pod external metric with average "
        "value target",
        2,
        6,
        5,
        3,
        metrics=[external_metric("AverageValue", "3")],
        levels=[8600],
        recommendations=[],
    ),
    Case(
        "scale-down-include-unready-pods",
        "horizontal_test.go TestScaleCPU/scale down includes unready pods",
        2,
        6,
        5,
        2,
        metrics=[cpu_metric(50)],
        levels=[100, 300, 500, 250, 250],
        readiness=["True", "True", "True", "False", "False"],
        recommendations=[],
        utilization=30,
    ),
    Case(
        "scale-down-ignore-hot-cpu-pods",
        "horizontal_test.go TestScaleCPU/scale down ignores hot cpu pods",
        2,
        6,
        5,
        2,
        metrics=[cpu_metric(50)],
        levels=[100, 300, 500, 250, 250],
        start=[COOL, COOL, COOL, HOT, HOT],
        recommendations=[],
        utilization=30,
    ),
    Case(
        "scale-down-ignores-failed-pods",
        "horizontal_test.go TestScaleCPU/scale down ignores failed pods",
        2,
        6,
        5,
        3,
        metrics=[cpu_metric(50)],
        levels=[100, 300, 500, 250, 250],
        requests=["1"] * 7,
        readiness=["True"] * 5 + ["False"] * 2,
        phases=["Running"] * 5 + ["Failed"] * 2,
        recommendations=[],
        utilization=28,
    ),
    Case(
        "scale-down-ignores-deletion-pods",
        "horizontal_test.go TestScaleCPU/scale down ignores deletion pods",
        2,
        6,
        5,
        3,
        metrics=[cpu_metric(50)],
        levels=[100, 300, 500, 250, 250],
        requests=["1"] * 7,
        readiness=["True"] * 5 + ["False"] * 2,
        deleting=[False] * 5 + [True] * 2,
        recommendations=[],
        utilization=28,
    ),
    Case(
        "tolerance",
        "horizontal_test.go TestTolerance/CPU resource metric within tolerance (and "
        "TestConfigurableTolerance/no scaling because of the large default tolerance)",
        1,
        5,
        3,
        3,
        metrics=[cpu_metric(100)],
        levels=[1010, 1030, 1020],
        requests=["0.9", "1.0", "1.1"],
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "configurable-tolerance-scale-up-1-percent",
        "horizontal_test.go TestConfigurableTolerance/scaling up because of a 1% configurable "
        "tolerance",
        1,
        5,
        3,
        4,
        metrics=[cpu_metric(100)],
        levels=[1010, 1030, 1020],
        requests=["0.9", "1.0", "1.1"],
        scale_up={"tolerance": "0.01"},
    ),
    Case(
        "configurable-tolerance-no-scale-down-90-percent",
        "horizontal_test.go TestConfigurableTolerance/no scale-down because of a 90% configurable "
        "tolerance",
        1,
        5,
        3,
        3,
        metrics=[cpu_metric(100)],
        levels=[300, 300, 300],
        scale_down={"tolerance": "0.9"},
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "tolerance-cm",
        "horizontal_test.go TestTolerance/pods metric within tolerance",
        1,
        5,
        3,
        3,
        metrics=[pods_metric("20")],
        levels=[20000, 20001, 21000],
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "tolerance-cm-object",
        "horizontal_test.go TestTolerance/object metric with value target within tolerance",
        1,
        5,
        3,
        3,
        metrics=[object_metric("Value", "20")],
        levels=[20050],
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "tolerance-cm-external",
        "horizontal_test.go TestTolerance/external metric with value target within tolerance",
        2,
        6,
        4,
        4,
        metrics=[external_metric("Value", "8666m")],
        levels=[8600],
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "tolerance-per-pod-cm-object",
        "horizontal_test.go TestTolerance/per-pod object metric with average value target "
        "within tolerance",
        2,
        6,
        4,
        4,
        metrics=[object_metric("AverageValue", "2200m")],
        levels=[8600],
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "tolerance-per-pod-cm-external",
        "horizontal_test.go TestTolerance/per-pod external metric with average value target "
        "within tolerance",
        2,
        6,
        4,
        4,
        metrics=[external_metric("AverageValue", "2200m")],
        levels=[8600],
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "min-replicas",
        "horizontal_test.go TestReplicaLimits/scale down clamped to min replicas",
        2,
        5,
        3,
        2,
        metrics=[cpu_metric(90)],
        levels=[10, 95, 10],
        requests=["0.9", "1.0", "1.1"],
        recommendations=[],
        conditions=ok(("ScalingLimited", "True", "TooFewReplicas")),
    ),
    Case(
        "min-replicas-desired-zero",
        "horizontal_test.go TestReplicaLimits/scale down clamped to min when desired is zero",
        2,
        5,
        3,
        2,
        metrics=[cpu_metric(90)],
        levels=[0, 0, 0],
        requests=["0.9", "1.0", "1.1"],
        recommendations=[],
        conditions=ok(("ScalingLimited", "True", "TooFewReplicas")),
    ),
    Case(
        "zero-replicas",
        "horizontal_test.go TestReplicaLimits/no scaling when spec replicas is zero",
        3,
        5,
        0,
        0,
        metrics=[cpu_metric(90)],
        requests=[],
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "ScalingDisabled"),
        ),
    ),
    Case(
        "too-few-replicas",
        "horizontal_test.go TestReplicaLimits/scale up to min when below min replicas",
        3,
        5,
        2,
        3,
        metrics=[cpu_metric(90)],
        requests=[],
        conditions=(("AbleToScale", "True", "SucceededRescale"),),
    ),
    Case(
        "too-many-replicas",
        "horizontal_test.go TestReplicaLimits/scale down to max when above max replicas",
        3,
        5,
        10,
        5,
        metrics=[cpu_metric(90)],
        requests=[],
        conditions=(("AbleToScale", "True", "SucceededRescale"),),
    ),
    Case(
        "max-replicas",
        "horizontal_test.go TestReplicaLimits/scale up clamped to max replicas",
        2,
        5,
        3,
        5,
        metrics=[cpu_metric(90)],
        levels=[8000, 9500, 1000],
        requests=["0.9", "1.0", "1.1"],
        conditions=ok(("ScalingLimited", "True", "TooManyReplicas")),
    ),
    Case(
        "superfluous-metrics",
        "horizontal_test.go TestMetricsEdgeCases/superfluous metrics reported",
        2,
        6,
        4,
        6,
        metrics=[cpu_metric(100)],
        levels=[4000, 9500, 3000, 7000, 3200, 2000],
        requests=["1"] * 4,
        conditions=ok(("ScalingLimited", "True", "TooManyReplicas")),
    ),
    Case(
        "missing-metrics",
        "horizontal_test.go TestMetricsEdgeCases/missing metrics from some pods",
        2,
        6,
        4,
        3,
        metrics=[cpu_metric(100)],
        levels=[400, 95],
        requests=["1"] * 4,
        recommendations=[],
    ),
    Case(
        "empty-metrics",
        "horizontal_test.go TestMetricsEdgeCases/empty metrics from all pods",
        2,
        6,
        4,
        4,
        metrics=[cpu_metric(100)],
        levels=[],
        requests=["1"] * 4,
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "FailedGetResourceMetric"),
        ),
    ),
    Case(
        "empty-cpu-request",
        "horizontal_test.go TestMetricsEdgeCases/empty CPU requests",
        1,
        5,
        1,
        1,
        metrics=[cpu_metric(100)],
        levels=[200],
        requests=[],
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "FailedGetResourceMetric"),
        ),
    ),
    Case(
        "event-created",
        "horizontal_test.go TestEventCreated (the decision; the Event is the controller's)",
        1,
        5,
        1,
        2,
        metrics=[cpu_metric(50)],
        levels=[200],
        requests=["0.2"],
    ),
    Case(
        "event-not-created",
        "horizontal_test.go TestEventNotCreated (the decision; the Event is the controller's)",
        1,
        5,
        2,
        2,
        metrics=[cpu_metric(50)],
        levels=[200, 200],
        requests=["0.4", "0.4"],
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "missing-reports",
        "horizontal_test.go TestMetricsEdgeCases/missing reports from some pods scales down",
        1,
        5,
        4,
        2,
        metrics=[cpu_metric(50)],
        levels=[200],
        requests=["0.2"],
        recommendations=[],
    ),
    Case(
        "upscale-cap",
        "horizontal_test.go TestUpscaleCap",
        1,
        100,
        3,
        24,
        metrics=[cpu_metric(10)],
        levels=[100, 200, 300],
        requests=["0.1"] * 3,
        scale_up=scaling_rules(0, 0, 700, 60, 0),
        conditions=ok(("ScalingLimited", "True", "ScaleUpLimit")),
    ),
    Case(
        "upscale-cap-greater-than-max-replicas",
        "horizontal_test.go TestUpscaleCapGreaterThanMaxReplicas",
        1,
        20,
        3,
        20,
        metrics=[cpu_metric(10)],
        levels=[100, 200, 300],
        requests=["0.1"] * 3,
        scale_up=scaling_rules(0, 0, 700, 60, 0),
        conditions=ok(("ScalingLimited", "True", "TooManyReplicas")),
    ),
    Case(
        "more-replicas-than-spec-no-scale",
        "horizontal_test.go TestMetricsEdgeCases/more replicas than spec no scale",
        1,
        8,
        4,
        4,
        status_replicas=5,
        metrics=[cpu_metric(50)],
        levels=[500] * 5,
        requests=["1"] * 5,
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "condition-invalid-selector-missing",
        "horizontal_test.go TestConditionInvalidSelectorMissing",
        1,
        100,
        3,
        3,
        metrics=[cpu_metric(10)],
        levels=[100, 200, 300],
        requests=["0.1"] * 3,
        no_selector=True,
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "InvalidSelector"),
        ),
    ),
    Case(
        "condition-failed-get-resource-metric",
        "horizontal_test.go TestConditionFailedGetMetrics (FailedGetResourceMetric)",
        1,
        100,
        3,
        3,
        metrics=[cpu_metric(10)],
        levels=[100, 200, 300],
        requests=["0.1"] * 3,
        omit_pod_metrics=True,
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "FailedGetResourceMetric"),
        ),
    ),
    Case(
        "condition-failed-get-pods-metric",
        "horizontal_test.go TestConditionFailedGetMetrics (FailedGetPodsMetric)",
        1,
        100,
        3,
        3,
        metrics=[pods_metric("15")],
        levels=[100, 200, 300],
        requests=["0.1"] * 3,
        omit_custom_metrics=True,
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "FailedGetPodsMetric"),
        ),
    ),
    Case(
        "condition-failed-get-object-metric",
        "horizontal_test.go TestConditionFailedGetMetrics (FailedGetObjectMetric)",
        1,
        100,
        3,
        3,
        metrics=[object_metric("Value", "15")],
        levels=[100, 200, 300],
        requests=["0.1"] * 3,
        omit_custom_metrics=True,
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "FailedGetObjectMetric"),
        ),
    ),
    Case(
        "condition-failed-get-external-metric",
        "horizontal_test.go TestConditionFailedGetMetrics (FailedGetExternalMetric)",
        1,
        100,
        3,
        3,
        metrics=[external_metric("Value", "300m")],
        levels=[100, 200, 300],
        requests=["0.1"] * 3,
        omit_external_metrics=True,
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "FailedGetExternalMetric"),
        ),
    ),
    Case(
        "no-backoff-upscale-cm",
        "horizontal_test.go TestNoBackoffUpscaleCM",
        1,
        5,
        3,
        4,
        metrics=[pods_metric("15")],
        levels=[20000, 10000, 30000],
    ),
    Case(
        "no-backoff-upscale-cm-no-backoff-cpu",
        "horizontal_test.go TestNoBackoffUpscaleCMNoBackoffCpu",
        1,
        5,
        3,
        5,
        metrics=[cpu_metric(10), pods_metric("15")],
        levels=[20000, 10000, 30000],
        conditions=ok(("ScalingLimited", "True", "TooManyReplicas")),
    ),
    Case(
        "stabilize-downscale",
        "horizontal_test.go TestStabilizeDownscale",
        1,
        5,
        4,
        4,
        metrics=[cpu_metric(100)],
        levels=[50, 50, 50],
        requests=["0.1"] * 3,
        recommendations=[(10, 600), (4, 60)],
        conditions=ok(("AbleToScale", "True", "ScaleDownStabilized")),
    ),
    Case(
        "computed-tolerance-alg-scales",
        "horizontal_test.go TestComputedToleranceAlgImplementation (its first half, just "
        "outside the band; minReplicas 1 where upstream's 0 would be refused by the API)",
        1,
        1000,
        10,
        9,
        metrics=[cpu_metric(56)],
        levels=[150] * 10,
        requests=JITTERED,
        recommendations=[],
    ),
    Case(
        "computed-tolerance-alg-holds",
        "horizontal_test.go TestComputedToleranceAlgImplementation (its second half, just "
        "inside the band; minReplicas 1 as above)",
        1,
        1000,
        10,
        10,
        metrics=[cpu_metric(55)],
        levels=[150] * 10,
        requests=JITTERED,
        recommendations=[],
        conditions=ok(("AbleToScale", "True", "ReadyForNewScale")),
    ),
    Case(
        "scale-up-rc-immediately",
        "horizontal_test.go TestReplicaLimits/scale up to min immediately even with recent "
        "scale time",
        2,
        6,
        1,
        2,
        metrics=[cpu_metric(80)],
        levels=[0, 0, 0, 0],
        requests=["1"] * 4,
        conditions=(("AbleToScale", "True", "SucceededRescale"),),
    ),
    Case(
        "scale-down-rc-immediately",
        "horizontal_test.go TestReplicaLimits/scale down to max immediately even with recent "
        "scale time",
        2,
        5,
        6,
        5,
        metrics=[cpu_metric(50)],
        levels=[8000, 9500, 1000],
        requests=["0.9", "1.0", "1.1"],
        conditions=(("AbleToScale", "True", "SucceededRescale"),),
    ),
    Case(
        "scale-up-one-metric-empty",
        "horizontal_test.go TestScaleUpOneMetricEmpty",
        2,
        6,
        3,
        4,
        metrics=[cpu_metric(30), external_metric("Value", "100m")],
        levels=[300, 400, 500],
        omit_external_metrics=True,
    ),
    Case(
        "no-scale-down-one-metric-empty",
        "horizontal_test.go TestNoScaleDownOneMetricEmpty",
        2,
        6,
        5,
        5,
        metrics=[cpu_metric(50), external_metric("Value", "1")],
        levels=[100, 300, 500, 250, 250],
        recommendations=[],
        omit_external_metrics=True,
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "FailedGetExternalMetric"),
        ),
    ),
    Case(
        "scale-up-one-metric-invalid",
        "horizontal_test.go TestScaleWithOneInvalidMetric/scale up with one invalid metric",
        2,
        6,
        3,
        4,
        metrics=[cpu_metric(30), {"type": "CheddarCheese"}],
        levels=[300, 400, 500],
        recommendations=[],
        metric_results=[
            {"type": "Resource", "name": "cpu", "desiredReplicas": 4, "currentUtilization": 40},
            {"type": "CheddarCheese", "desiredReplicas": None},
        ],
    ),
    Case(
        "condition-invalid-source-type",
        "horizontal_test.go TestConditionInvalidSourceType",
        2,
        6,
        3,
        3,
        metrics=[{"type": "CheddarCheese"}],
        requests=["1"] * 3,
        recommendations=[],
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "InvalidMetricSourceType"),
        ),
    ),
    Case(
        "no-scale-down-one-metric-invalid",
        "horizontal_test.go TestNoScaleDownOneMetricInvalid",
        2,
        6,
        5,
        5,
        metrics=[cpu_metric(50), {"type": "CheddarCheese"}],
        levels=[100, 300, 500, 250, 250],
        recommendations=[],
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "InvalidMetricSourceType"),
        ),
    ),
    Case(
        "condition-invalid-selector-unparsable",
        "horizontal_test.go TestConditionInvalidSelectorUnparsable (upstream's Scale carries "
        'the selector "cheddar cheese"; here the target\'s selector stringifies to one that '
        "does not parse either)",
        1,
        100,
        3,
        3,
        metrics=[cpu_metric(10)],
        levels=[100, 200, 300],
        requests=["0.1"] * 3,
        selector={"matchLabels": {"name": "cheddar cheese"}},
        conditions=(
            ("AbleToScale", "True", "SucceededGetScale"),
            ("ScalingActive", "False", "InvalidSelector"),
        ),
    ),
    Case(
        "multiple-hpas-scale-up-with-events",
        "hvpa's own, on horizontal_test.go TestMultipleHPAs's fixture (upstream checks only "
        "that every HPA is processed; 5 = ceil(500m / 1 core / 10 %) within the events' rate)",
        1,
        10,
        1,
        5,
        metrics=[cpu_metric(10)],
        levels=[500],
        scale_up=scaling_rules(100, 60, 0, 0, 0),
        scale_down=scaling_rules(2, 60, 1, 60, 300),
        scale_up_events=uniform([8, 12, 9, 11], 120),
        scale_down_events=uniform([10, 10, 10], 120),
    ),
    # TestScalingWithRules, where the current count is within [min, max]
    # (outside it the reconcile rescales to the bound before any behavior).
    behavior_case(
        "rules-within-range",
        "horizontal_test.go TestScalingWithRules/prenormalized desired replicas within range",
        5,
        7,
        (3, 8),
        (None, None),
        NO_EVENTS,
        (7, "DesiredWithinRange"),
    ),
    behavior_case(
        "rules-below-min",
        "horizontal_test.go TestScalingWithRules/prenormalized desired replicas < minReplicas",
        3,
        1,
        (2, 8),
        (None, None),
        NO_EVENTS,
        (2, "TooFewReplicas"),
    ),
    behavior_case(
        "rules-min-zero",
        "horizontal_test.go TestScalingWithRules/prenormalized desired replicas within range "
        "when minReplicas is 0",
        1,
        0,
        (0, 10),
        (None, None),
        NO_EVENTS,
        (0, "DesiredWithinRange"),
    ),
    behavior_case(
        "rules-above-max",
        "horizontal_test.go TestScalingWithRules/desired replica count is more than the "
        "maximum replica count",
        100,
        1000,
        (100, 150),
        (None, None),
        NO_EVENTS,
        (150, "TooManyReplicas"),
    ),
    behavior_case(
        "rules-up-limit-user-policy",
        "horizontal_test.go TestScalingWithRules/scaleUpLimit is the limit because "
        "scaleUpLimit < maxReplicas with user policies",
        3,
        1000,
        (1, 2000),
        (scaling_rules(0, 0, 1, 60), None),
        NO_EVENTS,
        (4, "ScaleUpLimit"),
    ),
    behavior_case(
        "rules-down-limit-user-policy",
        "hvpa's own, the scale-down mirror of horizontal_test.go "
        "TestScalingWithRules/scaleUpLimit is the limit because scaleUpLimit < maxReplicas "
        "with user policies",
        1000,
        3,
        (3, 2000),
        (None, scaling_rules(20, 60)),
        NO_EVENTS,
        (980, "ScaleDownLimit"),
    ),
    behavior_case(
        "rules-up-default",
        "horizontal_test.go TestScalingWithRules/scaleUp with default behavior",
        10,
        50,
        ROOM,
        (None, None),
        NO_EVENTS,
        (20, "ScaleUpLimit"),
    ),
    behavior_case(
        "rules-up-pods-over-percent",
        "horizontal_test.go TestScalingWithRules/scaleUp with pods policy larger than percent "
        "policy",
        10,
        500,
        ROOM,
        (scaling_rules(100, 60, 100, 60), None),
        NO_EVENTS,
        (110, "ScaleUpLimit"),
    ),
    behavior_case(
        "rules-up-percent-over-pods",
        "horizontal_test.go TestScalingWithRules/scaleUp with percent policy larger than pods "
        "policy",
        10,
        500,
        ROOM,
        (scaling_rules(2, 60, 100, 60), None),
        NO_EVENTS,
        (20, "ScaleUpLimit"),
    ),
    behavior_case(
        "rules-up-large-pods-policy",
        "horizontal_test.go TestScalingWithRules/scaleUp with spec MaxReplicas limitation with "
        "large pod policy",
        10,
        50,
        ROOM,
        (scaling_rules(100, 60), None),
        NO_EVENTS,
        (50, "DesiredWithinRange"),
    ),
    behavior_case(
        "rules-up-pods-limit",
        "horizontal_test.go TestScalingWithRules/scaleUp with pod policy limitation",
        10,
        50,
        ROOM,
        (scaling_rules(30, 60), None),
        NO_EVENTS,
        (40, "ScaleUpLimit"),
    ),
    behavior_case(
        "rules-up-percent-limit",
        "horizontal_test.go TestScalingWithRules/scaleUp with percent policy limitation",
        10,
        50,
        ROOM,
        (scaling_rules(0, 0, 200, 60), None),
        NO_EVENTS,
        (30, "ScaleUpLimit"),
    ),
    behavior_case(
        "rules-down-percent-over-pods",
        "horizontal_test.go TestScalingWithRules/scaleDown with percent policy larger than pod "
        "policy",
        100,
        2,
        ROOM,
        (None, scaling_rules(20, 60, 1, 60, 300)),
        NO_EVENTS,
        (80, "ScaleDownLimit"),
    ),
    behavior_case(
        "rules-down-pods-over-percent",
        "horizontal_test.go TestScalingWithRules/scaleDown with pod policy larger than percent "
        "policy",
        100,
        2,
        ROOM,
        (None, scaling_rules(2, 60, 1, 60, 300)),
        NO_EVENTS,
        (98, "ScaleDownLimit"),
    ),
    behavior_case(
        "rules-down-min-large-pods-policy",
        "horizontal_test.go TestScalingWithRules/scaleDown with spec MinReplicas limitation "
        "with large pod policy",
        10,
        0,
        ROOM,
        (None, scaling_rules(100, 60, 0, 0, 300)),
        NO_EVENTS,
        (1, "TooFewReplicas"),
    ),
    behavior_case(
        "rules-down-min-large-percent-policy",
        "horizontal_test.go TestScalingWithRules/scaleDown with spec MinReplicas limitation "
        "with large percent policy",
        10,
        2,
        (5, 1000),
        (None, scaling_rules(0, 0, 100, 60, 300)),
        NO_EVENTS,
        (5, "TooFewReplicas"),
    ),
    behavior_case(
        "rules-down-pods-limit",
        "horizontal_test.go TestScalingWithRules/scaleDown with pod policy limitation",
        10,
        2,
        ROOM,
        (None, scaling_rules(5, 60, 0, 0, 300)),
        NO_EVENTS,
        (5, "ScaleDownLimit"),
    ),
    behavior_case(
        "rules-down-percent-limit",
        "horizontal_test.go TestScalingWithRules/scaleDown with percent policy limitation",
        10,
        5,
        ROOM,
        (None, scaling_rules(0, 0, 50, 60, 300)),
        NO_EVENTS,
        (5, "DesiredWithinRange"),
    ),
    behavior_case(
        "rules-up-max-with-events",
        "horizontal_test.go TestScalingWithRules/scaleUp with spec MaxReplicas limitation with "
        "large pod policy and events",
        100,
        500,
        (1, 200),
        (scaling_rules(300, 60), None),
        (uniform([1, 5, 9], 120), []),
        (200, "TooManyReplicas"),
    ),
    behavior_case(
        "rules-up-many-recent-events",
        "horizontal_test.go TestScalingWithRules/scaleUp with currentReplicas limitation with "
        "rate.PeriodSeconds with a lot of recent scale up events",
        100,
        500,
        ROOM,
        (scaling_rules(5, 120), None),
        (uniform([1, 5, 9], 120), []),
        (100, "ScaleUpLimit"),
    ),
    behavior_case(
        "rules-up-pods-with-events",
        "horizontal_test.go TestScalingWithRules/scaleUp with pod policy and previous scale up "
        "events",
        100,
        500,
        ROOM,
        (scaling_rules(150, 120), None),
        (uniform([1, 5, 9], 120), []),
        (235, "ScaleUpLimit"),
    ),
    behavior_case(
        "rules-up-percent-with-events",
        "horizontal_test.go TestScalingWithRules/scaleUp with percent policy and previous "
        "scale up events",
        100,
        500,
        ROOM,
        (scaling_rules(0, 0, 200, 120), None),
        (uniform([1, 5, 9], 120), []),
        (255, "ScaleUpLimit"),
    ),
    behavior_case(
        "rules-up-percent-with-up-and-down-events",
        "horizontal_test.go TestScalingWithRules/scaleUp with percent policy and previous "
        "scale up and down events",
        6,
        24,
        ROOM,
        (scaling_rules(0, 0, 300, 300), None),
        (uniform([4], 120), uniform([2], 120)),
        (16, "ScaleUpLimit"),
    ),
    behavior_case(
        "rules-down-default-with-events",
        "horizontal_test.go TestScalingWithRules/scaleDown with default policy and previous events",
        10,
        5,
        ROOM,
        (None, None),
        ([], uniform([1, 5, 9], 120)),
        (5, "DesiredWithinRange"),
    ),
    behavior_case(
        "rules-up-outdated-events-one-policy",
        "horizontal_test.go TestScalingWithRules/check 'outdated' flag for events for one "
        "behavior for up",
        100,
        200,
        ROOM,
        (scaling_rules(1000, 60), None),
        (uniform([8, 12, 9, 11], 120), []),
        (200, "DesiredWithinRange"),
    ),
    behavior_case(
        "rules-down-outdated-events-two-policies",
        "horizontal_test.go TestScalingWithRules/check that events were marked 'outdated' for "
        "two different policies in the behavior for down",
        100,
        5,
        ROOM,
        (None, scaling_rules(1000, 30, 100, 60, 300)),
        ([], uniform([8, 12, 9, 11], 120)),
        (5, "DesiredWithinRange"),
    ),
    # TestNormalizeDesiredReplicasWithBehavior, where the default policies
    # leave the stabilized count alone.
    behavior_case(
        "stabilize-simple-scale-down",
        "horizontal_test.go TestNormalizeDesiredReplicasWithBehavior/simple scale down "
        "stabilization",
        100,
        3,
        ROOM,
        window(0, 180),
        NO_EVENTS,
        (5, "DesiredWithinRange"),
        recommendations=[(4, 120), (5, 60)],
        stabilized=5,
    ),
    behavior_case(
        "stabilize-simple-scale-up",
        "horizontal_test.go TestNormalizeDesiredReplicasWithBehavior/simple scale up stabilization",
        1,
        7,
        ROOM,
        window(300, 0),
        NO_EVENTS,
        (4, "DesiredWithinRange"),
        recommendations=[(4, 120), (5, 60)],
        stabilized=4,
    ),
    behavior_case(
        "stabilize-no-scale-down-stabilization",
        "horizontal_test.go TestNormalizeDesiredReplicasWithBehavior/no scale down stabilization",
        100,
        3,
        ROOM,
        window(300, 0),
        NO_EVENTS,
        (3, "DesiredWithinRange"),
        recommendations=[(1, 120), (2, 60)],
    ),
    behavior_case(
        "stabilize-no-scale-up-stabilization",
        "horizontal_test.go TestNormalizeDesiredReplicasWithBehavior/no scale up stabilization",
        1,
        3,
        ROOM,
        window(0, 300),
        NO_EVENTS,
        (3, "DesiredWithinRange"),
        recommendations=[(4, 120), (5, 60)],
    ),
    behavior_case(
        "stabilize-scale-down-reuse-obsolete",
        "horizontal_test.go TestNormalizeDesiredReplicasWithBehavior/scale down stabilization, "
        "reuse one of obsolete recommendation element",
        100,
        3,
        ROOM,
        window(0, 180),
        NO_EVENTS,
        (5, "DesiredWithinRange"),
        recommendations=[(10, 600), (4, 60), (5, 120), (9, 540)],
        stabilized=5,
    ),
    behavior_case(
        "stabilize-scale-up-reuse-obsolete",
        "horizontal_test.go TestNormalizeDesiredReplicasWithBehavior/scale up stabilization, "
        "reuse one of obsolete recommendation element",
        1,
        100,
        ROOM,
        window(300, 300),
        NO_EVENTS,
        (5, "DesiredWithinRange"),
        recommendations=[(10, 6000), (6, 60), (5, 120), (9, 180)],
        stabilized=5,
    ),
    behavior_case(
        "stabilize-no-up-when-going-down",
        "horizontal_test.go TestNormalizeDesiredReplicasWithBehavior/scale up and down "
        "stabilization, do not scale up when prenormalized rec goes down",
        2,
        1,
        ROOM,
        window(300, 300),
        NO_EVENTS,
        (2, "DesiredWithinRange"),
        recommendations=[(2, 6000), (3, 180)],
        stabilized=2,
    ),
    behavior_case(
        "stabilize-no-down-when-going-up",
        "horizontal_test.go TestNormalizeDesiredReplicasWithBehavior/scale up and down "
        "stabilization, do not scale down when prenormalized rec goes up",
        2,
        3,
        ROOM,
        window(300, 300),
        NO_EVENTS,
        (2, "DesiredWithinRange"),
        recommendations=[(2, 6000), (1, 180)],
        stabilized=2,
    ),
    # TestPartialBehaviors: one direction given, the other left to the defaults.
    Case(
        "partial-behavior-no-scale-down-rules",
        "horizontal_test.go TestPartialBehaviors/ensure no panic if scaleDown rules are "
        "missing (an earlier release's case, not in 1.37.2)",
        2,
        6,
        3,
        5,
        metrics=[cpu_metric(30)],
        levels=[300, 500, 700],
        scale_up={},
        utilization=50,
    ),
    Case(
        "partial-behavior-no-scale-up-rules",
        "horizontal_test.go TestPartialBehaviors/ensure no panic if scaleUp rules are missing "
        "(an earlier release's case, not in 1.37.2)",
        2,
        6,
        5,
        3,
        metrics=[cpu_metric(50)],
        levels=[100, 300, 500, 250, 250],
        recommendations=[],
        scale_down={},
        utilization=28,
    ),
    # replica_calculator_test.go: custom, object and external metrics.
    metric_case(
        "calc-scale-up-cm",
        "replica_calculator_test.go TestReplicaCalcPodMetric/scale up",
        3,
        4,
        pods_metric("15"),
        [20000, 10000, 30000],
        20000,
    ),
    metric_case(
        "calc-scale-up-cm-unready-hot-cpu-no-less-scale",
        "replica_calculator_test.go TestReplicaCalcPodMetric/scale up: unready hot-CPU pod "
        "scales less",
        3,
        6,
        pods_metric("15"),
        [50000, 10000, 30000],
        30000,
        readiness=["True", "True", "False"],
        start=[COOL, COOL, HOT],
    ),
    metric_case(
        "calc-scale-up-cm-unready-hot-cpu-scale-would-scale-down",
        "replica_calculator_test.go TestReplicaCalcPodMetric/scale up: unready hot-CPU pods "
        "avoid scale-down",
        3,
        7,
        pods_metric("15"),
        [50000, 15000, 30000],
        31666,
        readiness=["False", "True", "False"],
        start=[HOT, COOL, HOT],
    ),
    metric_case(
        "calc-scale-up-cm-object",
        "replica_calculator_test.go TestReplicaCalcObjectMetric/scale up",
        3,
        4,
        object_metric("Value", "15"),
        [20000],
        20000,
    ),
    metric_case(
        "calc-scale-up-cm-per-pod-object",
        "replica_calculator_test.go TestReplicaCalcObjectPerPodMetric/scale up",
        3,
        4,
        object_metric("AverageValue", "5"),
        [20000],
        6667,
    ),
    metric_case(
        "calc-scale-up-cm-object-ignores-unready-pods",
        "replica_calculator_test.go TestReplicaCalcObjectMetric/scale up: ignores unready pods",
        3,
        5,
        object_metric("Value", "10"),
        [50000],
        50000,
        readiness=["False", "True", "False"],
    ),
    metric_case(
        "calc-scale-up-cm-external-ignores-unready-pods",
        "replica_calculator_test.go TestReplicaCalcExternalMetric/scale down: ignores unready "
        "pods (would otherwise scale up)",
        3,
        2,
        external_metric("Value", "4400m", LABELS),
        [8600],
        8600,
        readiness=["False", "True", "False"],
    ),
    metric_case(
        "calc-scale-up-per-pod-cm-external",
        "replica_calculator_test.go TestReplicaCalcExternalPerPodMetric/scale up",
        3,
        4,
        external_metric("AverageValue", "2150m", LABELS),
        [8600],
        2867,
    ),
    metric_case(
        "calc-scale-down-cm",
        "replica_calculator_test.go TestReplicaCalcPodMetric/scale down",
        5,
        3,
        pods_metric("20"),
        [12000] * 5,
        12000,
    ),
    metric_case(
        "calc-scale-down-per-pod-cm-object",
        "replica_calculator_test.go TestReplicaCalcObjectPerPodMetric/scale down",
        5,
        3,
        object_metric("AverageValue", "2"),
        [6000],
        1200,
    ),
    metric_case(
        "calc-scale-down-cm-object",
        "replica_calculator_test.go TestReplicaCalcObjectMetric/scale down",
        5,
        3,
        object_metric("Value", "20"),
        [12000],
        12000,
    ),
    metric_case(
        "calc-scale-down-cm-external",
        "replica_calculator_test.go TestReplicaCalcExternalMetric/scale down",
        5,
        3,
        external_metric("Value", "14334m", LABELS),
        [8600],
        8600,
    ),
    metric_case(
        "calc-scale-down-per-pod-cm-external",
        "replica_calculator_test.go TestReplicaCalcExternalPerPodMetric/scale down",
        5,
        3,
        external_metric("AverageValue", "2867m", LABELS),
        [8600],
        1720,
    ),
    metric_case(
        "calc-tolerance-cm",
        "replica_calculator_test.go TestReplicaCalcPodMetric/within default tolerance",
        3,
        3,
        pods_metric("20"),
        [20000, 21000, 21000],
        20666,
    ),
    metric_case(
        "calc-tolerance-cm-object",
        "replica_calculator_test.go TestReplicaCalcObjectMetric/within default tolerance",
        3,
        3,
        object_metric("Value", "20"),
        [20666],
        20666,
    ),
    metric_case(
        "calc-tolerance-per-pod-cm-object",
        "replica_calculator_test.go TestReplicaCalcObjectPerPodMetric/within default tolerance",
        4,
        4,
        object_metric("AverageValue", "5"),
        [20166],
        5042,
    ),
    metric_case(
        "calc-tolerance-cm-external",
        "replica_calculator_test.go TestReplicaCalcExternalMetric/within default tolerance",
        3,
        3,
        external_metric("Value", "8888m", LABELS),
        [8600],
        8600,
    ),
    metric_case(
        "calc-tolerance-per-pod-cm-external",
        "replica_calculator_test.go TestReplicaCalcExternalPerPodMetric/within default tolerance",
        3,
        3,
        external_metric("AverageValue", "2900m", LABELS),
        [8600],
        2867,
    ),
    metric_case(
        "calc-configurable-tolerance-cm",
        "replica_calculator_test.go TestReplicaCalcPodMetric/outside configurable 1% tolerance",
        3,
        4,
        pods_metric("20"),
        [20000, 21000, 21000],
        20666,
        up_tolerance="0.01",
    ),
    metric_case(
        "calc-configurable-tolerance-cm-object",
        "replica_calculator_test.go TestReplicaCalcObjectMetric/outside configurable 1% tolerance",
        3,
        4,
        object_metric("Value", "20"),
        [20666],
        20666,
        up_tolerance="0.01",
    ),
    metric_case(
        "calc-configurable-tolerance-per-pod-cm-object",
        "replica_calculator_test.go TestReplicaCalcObjectPerPodMetric/outside configurable 1% "
        "tolerance",
        4,
        5,
        object_metric("AverageValue", "5"),
        [20208],
        5052,
        up_tolerance="0.01",
    ),
    metric_case(
        "calc-configurable-tolerance-cm-external",
        "replica_calculator_test.go TestReplicaCalcExternalMetric/outside configurable 1% "
        "tolerance",
        3,
        4,
        external_metric("Value", "8800m", LABELS),
        [8900],
        8900,
        up_tolerance="0.01",
    ),
    metric_case(
        "calc-configurable-tolerance-per-pod-cm-external",
        "replica_calculator_test.go TestReplicaCalcExternalPerPodMetric/outside configurable "
        "1% tolerance",
        3,
        4,
        external_metric("AverageValue", "2800m", LABELS),
        [8600],
        2867,
        up_tolerance="0.01",
    ),
    metric_case(
        "calc-plain-missing-metrics-no-change-eq",
        "replica_calculator_test.go TestReplicaCalcPodMetric/no change: missing metrics",
        5,
        5,
        pods_metric("20"),
        [20000, 19000, 21000],
        20000,
    ),
    metric_case(
        "calc-rolling-update-with-max-surge-cm",
        "replica_calculator_test.go TestReplicaCalcPodMetric/rolling update with maxSurge: "
        "extra pod missing metric",
        2,
        2,
        pods_metric("17"),
        [10000, 10000],
        10000,
        phases=["Running", "Running", "Running"],
    ),
    # replica_calculator_test.go: the metric's own result.
    resource_case(
        "calc-scale-up",
        "replica_calculator_test.go TestReplicaCalcResourceScale/scale up",
        3,
        30,
        ["1"] * 3,
        both(300, 500, 700),
        (5, 50, "1"),
    ),
    resource_case(
        "calc-scale-up-container",
        "replica_calculator_test.go TestReplicaCalcResourceScale/scale up: container metric",
        3,
        30,
        ["1"] * 3,
        [[1000, 300], [1000, 500], [1000, 700]],
        (5, 50, "500m"),
        container="container2",
    ),
    resource_case(
        "calc-scale-up-unready-scales-less",
        "replica_calculator_test.go TestReplicaCalcResourceScale/scale up: unready pod scales less",
        3,
        30,
        ["1"] * 3,
        both(300, 500, 700),
        (4, 60, "1200m"),
        readiness=["False", "True", "True"],
    ),
    resource_case(
        "calc-scale-up-hot-cpu-scales-less",
        "replica_calculator_test.go TestReplicaCalcResourceScale/scale up: hot-CPU pod scales less",
        3,
        30,
        ["1"] * 3,
        both(300, 500, 700),
        (4, 60, "1200m"),
        start=[HOT, COOL, COOL],
    ),
    resource_case(
        "calc-no-scale-unready-ignored",
        "replica_calculator_test.go TestReplicaCalcResourceScale/no scale: unready pods ignored",
        3,
        30,
        ["1"] * 3,
        both(400, 500, 700),
        (3, 40, "800m"),
        readiness=["True", "False", "False"],
    ),
    resource_case(
        "calc-scale-down",
        "replica_calculator_test.go TestReplicaCalcResourceScale/scale down",
        5,
        50,
        ["1"] * 5,
        both(100, 300, 500, 250, 250),
        (3, 28, "560m"),
    ),
    resource_case(
        "calc-scale-down-exclude-unready",
        "replica_calculator_test.go TestReplicaCalcResourceScale/scale down: exclude unready pods",
        5,
        50,
        ["1"] * 5,
        both(100, 300, 500, 250, 250),
        (2, 30, "600m"),
        readiness=["True", "True", "True", "False", "False"],
    ),
    resource_case(
        "calc-scale-down-exclude-unscheduled",
        "replica_calculator_test.go TestReplicaCalcResourceScale/scale down: exclude "
        "unscheduled pods",
        5,
        50,
        ["1"] * 5,
        both(100),
        (1, 10, "200m"),
        readiness=["True"] + ["False"] * 4,
        phases=["Running"] + ["Pending"] * 4,
    ),
    resource_case(
        "calc-tolerance",
        "replica_calculator_test.go TestReplicaCalcResourceTolerance/within default tolerance",
        3,
        100,
        ["0.9", "1.0", "1.1"],
        both(1010, 1030, 1020),
        (3, 102, "2040m"),
    ),
    resource_case(
        "calc-missing-metrics",
        "replica_calculator_test.go TestReplicaCalcResourceMissingMetrics/some pods missing "
        "metrics scales down",
        4,
        100,
        ["1"] * 4,
        both(400, 95),
        (3, 24, "495m"),
    ),
    resource_case(
        "calc-missing-metrics-no-change-eq",
        "replica_calculator_test.go TestReplicaCalcResourceMissingMetrics/no change: metric "
        "equal to target",
        2,
        100,
        ["1"] * 2,
        both(1000),
        (2, 100, "2"),
    ),
    resource_case(
        "calc-missing-metrics-no-change-gt",
        "replica_calculator_test.go TestReplicaCalcResourceMissingMetrics/no change: metric "
        "above target",
        2,
        100,
        ["1"] * 2,
        both(1900),
        (2, 190, "3800m"),
    ),
    resource_case(
        "calc-missing-metrics-no-change-lt",
        "replica_calculator_test.go TestReplicaCalcResourceMissingMetrics/no change: metric "
        "below target",
        2,
        100,
        ["1"] * 2,
        both(600),
        (2, 60, "1200m"),
    ),
    resource_case(
        "calc-missing-metrics-unready-change",
        "replica_calculator_test.go TestReplicaCalcResourceMissingMetrics/no change: unready "
        "pod metric missing",
        3,
        50,
        ["1"] * 3,
        both(100, 450),
        (3, 45, "900m"),
        readiness=["False", "True", "True"],
    ),
    resource_case(
        "calc-missing-metrics-unready-scale-up",
        "replica_calculator_test.go TestReplicaCalcResourceMissingMetrics/scale up: unready "
        "pod metric missing",
        3,
        50,
        ["1"] * 3,
        both(100, 2000),
        (4, 200, "4"),
        readiness=["False", "True", "True"],
    ),
    resource_case(
        "calc-missing-metrics-unready-scale-down",
        "replica_calculator_test.go TestReplicaCalcResourceMissingMetrics/scale down: unready "
        "pod metric missing",
        4,
        50,
        ["1"] * 4,
        both(100, 100, 100),
        (3, 10, "200m"),
        readiness=["False", "True", "True", "True"],
    ),
    resource_case(
        "calc-missing-metrics-scale-down-target-over-100",
        "replica_calculator_test.go TestReplicaCalcResourceMissingMetrics/scale down: target "
        "over 100",
        4,
        300,
        ["1", "1", "2", "2"],
        both(200, 100, 100),
        (2, 6, "200m"),
        readiness=["False", "True", "True", "True"],
    ),
    resource_case(
        "calc-rolling-update-with-max-surge",
        "replica_calculator_test.go TestReplicaCalcResourceMissingMetrics/rolling update with "
        "maxSurge: extra pod missing metric",
        2,
        50,
        ["1"] * 3,
        both(100, 100),
        (2, 10, "200m"),
    ),
]


@dataclass
class ProportionalCase:
    """A cluster-proportional-autoscaler case: the nodes, the parameters, and CPA's replica count.

    The figures come from CPA's linear and ladder controller tests and its
    README examples; `hpa` adds a CPU metric (levels per pod against a 50 %
    target) so the HPA and CPA results combine by max.
    """

    name: str
    source: str
    spec: dict[str, Any]
    nodes: list[NodeShape]
    current: int
    # CPA's result; None where the parameters are refused (no result, an invalid spec).
    cpa: int | None
    expected: int
    bounds: tuple[int, int] = (1, 100)
    levels: list[int] | None = None
    config_maps: list[dict[str, Any]] = field(default_factory=list)
    conditions: tuple[tuple[str, str, str], ...] = ()
    # What the last of `conditions`' messages must contain.
    message: str | None = None


# A node: allocatable CPU, cordoned, labels, and its Ready condition's status.
NodeShape = tuple[str, bool, dict[str, str], str]


def _node(
    name: str, cpu: str, unschedulable: bool, labels: dict[str, str], ready: str
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {
            "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
            "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": ready}],
        },
    }


def render_proportional(case: ProportionalCase) -> tuple[dict[str, Any], dict[str, Any]]:
    minimum, maximum = case.bounds
    template: dict[str, Any] = {"minReplicas": minimum, "maxReplicas": maximum}
    base = Case(
        name=case.name,
        source=case.source,
        min_replicas=minimum,
        max_replicas=maximum,
        spec_replicas=case.current,
        expected_replicas=case.expected,
        metrics=[cpu_metric(50)] if case.levels else [],
        levels=case.levels or [],
        requests=["1"] * len(case.levels) if case.levels else [],
        recommendations=[],
        conditions=(),
    )
    scenario, _ = render(base)
    if not case.levels:
        scenario["hvpa"]["spec"]["hpa"]["template"]["spec"] = template
    scenario["hvpa"]["spec"]["clusterProportional"] = case.spec
    scenario["nodes"] = [
        _node(f"node-{i}", cpu, unschedulable, labels, ready)
        for i, (cpu, unschedulable, labels, ready) in enumerate(case.nodes)
    ]
    if case.config_maps:
        scenario["configMaps"] = case.config_maps
    expected: dict[str, Any] = {
        "replicas": {"current": case.current, "desired": case.expected},
        "horizontal": {} if case.cpa is None else {"clusterProportional": case.cpa},
    }
    if case.conditions:
        conditions = [{"type": t, "status": s, "reason": r} for t, s, r in case.conditions]
        if case.message is not None:
            conditions[-1]["message"] = case.message
        expected["conditions"] = conditions
    return scenario, expected


def nodes(
    count: int, cpu: str = "4", unschedulable: bool = False, ready: str = "True", **labels: str
) -> list[NodeShape]:
    return [(cpu, unschedulable, dict(labels), ready)] * count


def dns_autoscaler(data: dict[str, str]) -> list[dict[str, Any]]:
    """The ConfigMap a configMapRef to `dns-autoscaler` reads."""
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "dns-autoscaler", "namespace": NAMESPACE},
            "data": data,
        }
    ]


def linear(**params: Any) -> dict[str, Any]:
    return {"linear": params}


def ladder(**params: Any) -> dict[str, Any]:
    return {"ladder": params}


PROPORTIONAL_CASES: list[ProportionalCase] = [
    ProportionalCase(
        "cpa-linear-cores-and-nodes",
        "CPA linear_controller_test.go TestScaleFromMultipleParams (cores 4 per replica, nodes 2)",
        linear(coresPerReplica=4, nodesPerReplica=2),
        nodes(4, "4"),
        1,
        4,
        4,
    ),
    ProportionalCase(
        "cpa-linear-prevent-single-point-failure",
        "CPA README: preventSinglePointFailure asks for 2 with more than one node",
        linear(coresPerReplica=256, nodesPerReplica=16, preventSinglePointFailure=True),
        nodes(2, "4"),
        1,
        2,
        2,
    ),
    ProportionalCase(
        "cpa-linear-single-node-single-replica",
        "CPA linear_controller_test.go: one node, one replica even with preventSinglePointFailure",
        linear(coresPerReplica=256, nodesPerReplica=16, preventSinglePointFailure=True),
        nodes(1, "4"),
        1,
        1,
        1,
    ),
    ProportionalCase(
        "cpa-linear-unschedulable-left-out",
        "CPA k8sclient: cordoned nodes are not schedulable",
        linear(nodesPerReplica=1),
        nodes(3) + nodes(2, unschedulable=True),
        1,
        3,
        3,
    ),
    ProportionalCase(
        "cpa-linear-unschedulable-included",
        "CPA linear_controller_test.go: includeUnschedulableNodes counts every node",
        linear(nodesPerReplica=1, includeUnschedulableNodes=True),
        nodes(3) + nodes(2, unschedulable=True),
        1,
        5,
        5,
    ),
    ProportionalCase(
        "cpa-linear-cores-rounded-up",
        "CPA k8sclient: allocatable CPU summed, then rounded up (3 x 1500m = 4.5 -> 5 cores)",
        linear(coresPerReplica=1),
        nodes(3, "1500m"),
        1,
        5,
        5,
    ),
    ProportionalCase(
        "cpa-linear-node-selector",
        "CPA k8sclient: --nodelabels selects the nodes counted",
        {**linear(nodesPerReplica=1), "nodeSelector": {"pool": "dns"}},
        nodes(2, pool="dns") + nodes(4, pool="other"),
        1,
        2,
        2,
    ),
    ProportionalCase(
        "cpa-linear-own-min-and-max",
        "CPA linear_controller_test.go: min and max of the parameters bound the result",
        linear(nodesPerReplica=1, min=2, max=3),
        nodes(10),
        2,
        3,
        3,
    ),
    ProportionalCase(
        "cpa-ladder-cores",
        "CPA ladder_controller_test.go TestControllerWithCoresAndNodes (cores 10 -> step 8)",
        ladder(
            coresToReplicas=[[1, 1], [3, 3], [256, 4], [512, 5], [1024, 7]],
            nodesToReplicas=[[1, 1], [2, 2]],
        ),
        nodes(1, "300"),
        1,
        4,
        4,
    ),
    ProportionalCase(
        "cpa-ladder-zero-without-hpa-metrics",
        "CPA ladder_controller_test.go: a ladder may ask for zero replicas (both ladders at 0)",
        ladder(coresToReplicas=[[0, 0], [16, 1], [64, 3]], nodesToReplicas=[[0, 0], [4, 1]]),
        nodes(2, "4"),
        2,
        0,
        0,
    ),
    ProportionalCase(
        "cpa-ladder-missing-ladder-asks-zero",
        "CPA ladder_controller.go getExpectedReplicasFromEntries: an absent ladder yields 0 "
        "(since CPA 1.8.5; 1 before), so 8 cores at [0, 0] scale to 0",
        ladder(coresToReplicas=[[0, 0], [16, 1], [64, 3]]),
        nodes(2, "4"),
        2,
        0,
        0,
    ),
    ProportionalCase(
        "cpa-linear-not-ready-left-out",
        "CPA k8sclient_test.go TestNewK8sClient: a NotReady node is not schedulable",
        linear(nodesPerReplica=1),
        nodes(3) + nodes(2, ready="False"),
        1,
        3,
        3,
    ),
    ProportionalCase(
        "cpa-ladder-schedulable-only",
        "CPA ladder_controller_test.go TestScaleFromUnschedulableNodes (includeUnschedulableNodes "
        "false): 1 schedulable node of 3 (one cordoned, one NotReady), 4 of 12 cores -> 1",
        ladder(
            coresToReplicas=[[0, 0], [4, 1], [8, 2], [12, 3]],
            nodesToReplicas=[[0, 0], [1, 1], [2, 2], [3, 3]],
        ),
        nodes(1) + nodes(1, unschedulable=True) + nodes(1, ready="False"),
        3,
        1,
        1,
    ),
    ProportionalCase(
        "cpa-ladder-unschedulable-included",
        "CPA ladder_controller_test.go TestScaleFromUnschedulableNodes (includeUnschedulableNodes "
        "true): 3 nodes, 12 cores -> 3",
        ladder(
            coresToReplicas=[[0, 0], [4, 1], [8, 2], [12, 3]],
            nodesToReplicas=[[0, 0], [1, 1], [2, 2], [3, 3]],
            includeUnschedulableNodes=True,
        ),
        nodes(1) + nodes(1, unschedulable=True) + nodes(1, ready="False"),
        1,
        3,
        3,
    ),
    ProportionalCase(
        "cpa-configmap-invalid-parameters",
        "CPA linear_controller_test.go TestControllerParser (neither coresPerReplica nor "
        "nodesPerReplica): refused parameters in a ConfigMap are an invalid spec",
        {"configMapRef": {"name": "dns-autoscaler"}},
        nodes(3),
        2,
        None,
        2,
        config_maps=dns_autoscaler({"linear": '{"min": 1, "max": 100}'}),
        conditions=(("ScalingActive", "False", "InvalidSpec"),),
        message="spec.clusterProportional.configMapRef: ConfigMap test-namespace/dns-autoscaler: "
        "linear: set coresPerReplica or nodesPerReplica",
    ),
    ProportionalCase(
        "cpa-configmap-too-many-entries",
        "CPA plugin_test.go TestEnsureController (too many entries): an invalid spec",
        {"configMapRef": {"name": "dns-autoscaler"}},
        nodes(3),
        2,
        None,
        2,
        config_maps=dns_autoscaler({"linear": '{"nodesPerReplica": 1}', "extra": "x"}),
        conditions=(("ScalingActive", "False", "InvalidSpec"),),
        message="it has extra (1 bytes), linear (22 bytes)",
    ),
    ProportionalCase(
        "cpa-ladder-from-configmap",
        "CPA plugin: parameters read from the ConfigMap's single key",
        {"configMapRef": {"name": "dns-autoscaler"}},
        nodes(5),
        1,
        3,
        3,
        config_maps=[
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "dns-autoscaler", "namespace": NAMESPACE},
                "data": {"ladder": '{"nodesToReplicas": [[1, 1], [3, 2], [5, 3], [10, 5]]}'},
            }
        ],
    ),
    ProportionalCase(
        "cpa-above-hpa",
        "CPA with the HPA: the larger result wins, unbounded by the HPA scale-up limit",
        linear(nodesPerReplica=1),
        nodes(20),
        2,
        20,
        20,
        bounds=(1, 50),
        levels=[500, 500],
    ),
    ProportionalCase(
        "cpa-below-hpa",
        "CPA with the HPA: the HPA's scale-up (2 pods at 100 % of a 50 % target) wins",
        linear(nodesPerReplica=1),
        nodes(3),
        2,
        3,
        4,
        bounds=(1, 50),
        levels=[1000, 1000],
    ),
    ProportionalCase(
        "cpa-clamped-to-hvpa-max",
        "CPA with the HPA: the combined result is clamped to maxReplicas",
        linear(nodesPerReplica=1),
        nodes(30),
        2,
        30,
        10,
        bounds=(1, 10),
        levels=[500, 500],
    ),
]


def write_all(directory: Path) -> None:
    """Every case's scenario and expected output into `directory`, replacing what is there.

    tests/engine/test_scenarios.py writes them to a fresh directory and
    compares with the files committed here, so an edited case whose files
    were not regenerated (or a file no case makes any more) fails.
    """
    for old in (*directory.glob("*.yaml"), *directory.glob("*.expected.json")):
        old.unlink()
    names = set()
    for case in CASES:
        assert case.name not in names, case.name
        names.add(case.name)
        scenario, expected = render(case)
        header = f"# {case.source}\n"
        (directory / f"{case.name}.yaml").write_text(
            header + yaml.safe_dump(scenario, sort_keys=False, default_flow_style=None, width=100)
        )
        (directory / f"{case.name}.expected.json").write_text(json.dumps(expected, indent=2) + "\n")
    for proportional in PROPORTIONAL_CASES:
        assert proportional.name not in names, proportional.name
        names.add(proportional.name)
        scenario, expected = render_proportional(proportional)
        (directory / f"{proportional.name}.yaml").write_text(
            f"# {proportional.source}\n"
            + yaml.safe_dump(scenario, sort_keys=False, default_flow_style=None, width=100)
        )
        (directory / f"{proportional.name}.expected.json").write_text(
            json.dumps(expected, indent=2) + "\n"
        )


def main() -> None:
    write_all(HERE)


if __name__ == "__main__":
    main()
