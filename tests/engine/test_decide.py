"""`decide` on the horizontal axis: history in status, conditions, cluster-proportional, explanation.

The per-metric arithmetic is covered by test_replica_calculator and the
upstream scenarios; this module covers what decide adds around it: the
history read from and written to the Hvpa status (new Hvpa, empty history,
pruning, scale events only with behavior and only on change), condition
transition times, the CPA combined with the HPA, and the reconcile-level
rules.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from horizontal_kit import pod, pod_metrics

from hvpa.api import parse_hvpa
from hvpa.api.resource import Hvpa
from hvpa.engine.decide import decide
from hvpa.engine.decision import Decision, Snapshot, decision_to_dict
from hvpa.engine.metrics import ResourceMetricsQuery, metric_queries
from hvpa.engine.settings import Settings
from hvpa.labels import LabelSelector
from hvpa.records import ContainerSpec, NodeRecord, Resources, TargetRecord

NOW = 1_800_000_000.0
SELECTOR = LabelSelector.from_dict({"matchLabels": {"name": "test-pod"}})
CPU = {
    "type": "Resource",
    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
}


def at(seconds_ago: float) -> str:
    return datetime.fromtimestamp(int(NOW - seconds_ago), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def hvpa(
    *,
    metrics: list[dict[str, Any]] | None = None,
    minimum: int = 1,
    maximum: int = 10,
    behavior: dict[str, Any] | None = None,
    history: dict[str, Any] | None = None,
    conditions: list[dict[str, Any]] | None = None,
    proportional: dict[str, Any] | None = None,
    deploy: bool = True,
    intervals: list[dict[str, Any]] | None = None,
) -> Hvpa:
    template: dict[str, Any] = {
        "minReplicas": minimum,
        "maxReplicas": maximum,
        "metrics": [CPU] if metrics is None else metrics,
    }
    if behavior is not None:
        template["behavior"] = behavior
    spec: dict[str, Any] = {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "hpa": {"deploy": deploy, "template": {"spec": template}},
        "vpa": {"deploy": False},
    }
    if proportional is not None:
        spec["clusterProportional"] = proportional
    if intervals is not None:
        spec["weightBasedScalingIntervals"] = intervals
    obj: dict[str, Any] = {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": "web", "namespace": "test-namespace", "generation": 3},
        "spec": spec,
    }
    status: dict[str, Any] = {}
    if history is not None:
        status["history"] = history
    if conditions is not None:
        status["conditions"] = conditions
    if status:
        obj["status"] = status
    return parse_hvpa(obj)


def target(replicas: int) -> TargetRecord:
    return TargetRecord(
        api_version="apps/v1",
        kind="Deployment",
        namespace="test-namespace",
        name="web",
        uid="uid-1",
        generation=1,
        resource_version="1",
        replicas=replicas,
        selector=SELECTOR,
        containers=(
            ContainerSpec("app", requests=Resources(cpu=1000, memory=512 * 1024**2 * 1000)),
        ),
        status_replicas=replicas,
    )


def snapshot(replicas: int, usage: list[int], nodes: tuple[NodeRecord, ...] = ()) -> Snapshot:
    """`replicas` pods requesting 1 CPU (500m per container) using `usage` millicores each."""
    pods = tuple(pod(f"test-pod-{i}", cpu_request=500) for i in range(replicas))
    reading = pod_metrics([[u // 2, u // 2] for u in usage], timestamp=NOW - 30)
    return Snapshot(
        target=target(replicas),
        pods=pods,
        nodes=nodes,
        metrics={ResourceMetricsQuery("test-namespace", SELECTOR): reading},
    )


def run(h: Hvpa, s: Snapshot, now: float = NOW, **settings: Any) -> Decision:
    return decide(h, s, now, Settings(**settings))


def history_of(decision: Decision) -> dict[str, Any]:
    status = decision_to_dict(decision)["status"]
    return status.get("history", {})  # type: ignore[no-any-return]


def reasons(decision: Decision) -> list[tuple[str, str, str]]:
    return [(c.type, c.status, c.reason) for c in decision.conditions]


# ---------------------------------------------------------------------------
# History in status


def test_a_new_hvpa_seeds_its_history_with_the_current_count() -> None:
    """No status.history at all: upstream's recordInitialRecommendation, so a scale-down is stabilized."""
    decision = run(hvpa(), snapshot(4, [100] * 4))
    assert decision.desired_replicas == 4
    assert ("AbleToScale", "True", "ScaleDownStabilized") in reasons(decision)
    assert [r["replicas"] for r in history_of(decision)["recommendations"]] == [4, 1]


def test_an_empty_history_is_not_seeded() -> None:
    decision = run(hvpa(history={"recommendations": []}), snapshot(4, [100] * 4))
    assert decision.desired_replicas == 1
    assert [r["replicas"] for r in history_of(decision)["recommendations"]] == [1]


def test_history_written_is_read_back_by_the_next_decision() -> None:
    """A high recommendation written at t keeps a scale-down away until the window has passed."""
    first = run(
        hvpa(history={"recommendations": []}), snapshot(2, [1500, 1500]), scale_up_limit_factor=8
    )
    assert first.desired_replicas == 6
    written = msgspec.structs.replace(hvpa(), status=first.status)
    held = run(written, snapshot(6, [100] * 6), now=NOW + 120)
    assert held.desired_replicas == 6
    assert [r["replicas"] for r in history_of(held)["recommendations"]] == [6, 2]
    later = msgspec.structs.replace(hvpa(), status=held.status)
    released = run(later, snapshot(6, [100] * 6), now=NOW + 301)
    assert released.desired_replicas == 2


def test_outdated_recommendations_are_replaced_then_pruned() -> None:
    """Upstream reuses the last outdated slot for the new recommendation; the other outdated ones go."""
    history = {
        "recommendations": [
            {"time": at(900), "replicas": 9},
            {"time": at(600), "replicas": 8},
            {"time": at(60), "replicas": 3},
        ]
    }
    decision = run(hvpa(history=history), snapshot(3, [750] * 3))
    assert [r["replicas"] for r in history_of(decision)["recommendations"]] == [5, 3]


def test_scale_events_only_with_behavior_and_only_on_change() -> None:
    behavior = {"scaleUp": {"policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]}}
    scaled = run(
        hvpa(behavior=behavior, history={"recommendations": []}), snapshot(2, [1500, 1500])
    )
    assert scaled.desired_replicas == 4
    assert history_of(scaled)["scaleUpEvents"] == [{"time": at(0), "replicaChange": 2}]

    still = run(hvpa(behavior=behavior, history={"recommendations": []}), snapshot(2, [500, 500]))
    assert still.desired_replicas == 2
    assert "scaleUpEvents" not in history_of(still)

    without = run(
        hvpa(history={"recommendations": []}), snapshot(2, [1500, 1500]), scale_up_limit_factor=8
    )
    assert without.desired_replicas == 6
    assert "scaleUpEvents" not in history_of(without)


def test_scale_events_limit_the_next_scale_up() -> None:
    behavior = {"scaleUp": {"policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]}}
    history = {"recommendations": [], "scaleUpEvents": [{"time": at(30), "replicaChange": 2}]}
    decision = run(hvpa(behavior=behavior, history=history), snapshot(4, [1500] * 4))
    # The period started at 2 replicas: 2 + 2 = 4, no growth this time.
    assert decision.desired_replicas == 4
    assert ("ScalingLimited", "True", "ScaleUpLimit") in reasons(decision)


def test_default_scale_up_limit_is_a_setting() -> None:
    decision = run(hvpa(maximum=100, history={"recommendations": []}), snapshot(2, [5000, 5000]))
    assert decision.desired_replicas == 4
    assert ("ScalingLimited", "True", "ScaleUpLimit") in reasons(decision)
    wide = run(
        hvpa(maximum=100, history={"recommendations": []}),
        snapshot(2, [5000, 5000]),
        scale_up_limit_factor=8,
    )
    assert wide.desired_replicas == 16


# ---------------------------------------------------------------------------
# Conditions


def test_condition_keeps_its_transition_time_while_its_status_holds() -> None:
    conditions = [
        {
            "type": "ScalingActive",
            "status": "True",
            "reason": "ValidMetricFound",
            "message": "old",
            "lastTransitionTime": at(3600),
        },
        {
            "type": "AbleToScale",
            "status": "False",
            "reason": "FailedGetScale",
            "message": "old",
            "lastTransitionTime": at(3600),
        },
    ]
    decision = run(
        hvpa(conditions=conditions, history={"recommendations": []}), snapshot(2, [500, 500])
    )
    by_type = {c.type: c for c in decision.conditions}
    assert by_type["ScalingActive"].last_transition_time == NOW - 3600
    assert by_type["AbleToScale"].last_transition_time == NOW
    assert [c.type for c in decision.conditions] == [
        "ScalingActive",
        "AbleToScale",
        "ScalingLimited",
    ]


def test_target_not_found() -> None:
    decision = run(hvpa(), Snapshot(target=None))
    assert reasons(decision) == [("AbleToScale", "False", "FailedGetScale")]
    assert decision.desired_replicas == decision.current_replicas


def test_horizontal_scaling_off() -> None:
    decision = run(hvpa(deploy=False), snapshot(2, [1500, 1500]))
    assert decision.desired_replicas == 2
    assert not decision.horizontal.enabled
    assert decision.conditions == ()
    assert "horizontal scaling is off (spec.hpa.deploy is false)" in decision.explanation


# ---------------------------------------------------------------------------
# Cluster-proportional with and without HPA metrics


def nodes(count: int, cpu: int = 4000, unschedulable: int = 0) -> tuple[NodeRecord, ...]:
    return tuple(
        NodeRecord(f"n{i}", {}, i < unschedulable, "True", Resources(cpu=cpu)) for i in range(count)
    )


@pytest.mark.parametrize(
    ("usage", "node_count", "maximum", "factor", "desired", "cpa", "limited"),
    [
        pytest.param([500, 500], 6, 10, 8, 6, 6, "DesiredWithinRange", id="CPA above the HPA wins"),
        pytest.param(
            [1500, 1500], 3, 10, 8, 6, 3, "DesiredWithinRange", id="HPA above the CPA wins"
        ),
        pytest.param(
            [500, 500], 20, 10, 8, 10, 20, "TooManyReplicas", id="the CPA stays within maxReplicas"
        ),
        pytest.param(
            [500, 500], 9, 100, 2, 9, 9, "DesiredWithinRange", id="the CPA is not rate-limited"
        ),
        pytest.param(
            [1500, 1500], 3, 100, 2, 4, 3, "ScaleUpLimit", id="the HPA is, even next to a CPA"
        ),
    ],
)
def test_cpa_combined_with_hpa(
    usage: list[int],
    node_count: int,
    maximum: int,
    factor: int,
    desired: int,
    cpa: int,
    limited: str,
) -> None:
    h = hvpa(
        proportional={"linear": {"nodesPerReplica": 1}},
        maximum=maximum,
        history={"recommendations": []},
    )
    decision = run(h, snapshot(2, usage, nodes(node_count)), scale_up_limit_factor=factor)
    assert (decision.desired_replicas, decision.horizontal.cluster_proportional) == (desired, cpa)
    assert (
        "ScalingLimited",
        "False" if limited == "DesiredWithinRange" else "True",
        limited,
    ) in reasons(decision)


def test_cpa_alone_may_ask_for_zero() -> None:
    h = hvpa(
        metrics=[],
        proportional={"ladder": {"nodesToReplicas": [[0, 0], [2, 1]], "coresToReplicas": [[0, 0]]}},
    )
    decision = run(h, snapshot(1, [100], nodes(1)))
    assert (decision.desired_replicas, decision.horizontal.cluster_proportional) == (0, 0)


def test_cpa_scales_up_while_the_metrics_cannot_be_read() -> None:
    h = hvpa(proportional={"linear": {"nodesPerReplica": 1}}, history={"recommendations": []})
    blind = Snapshot(target=target(2), pods=(), nodes=nodes(5))
    decision = run(h, blind)
    assert decision.desired_replicas == 5
    assert ("ScalingActive", "False", "FailedGetResourceMetric") in reasons(decision)


def test_an_unreadable_cpa_blocks_a_scale_down() -> None:
    h = hvpa(proportional={"configMapRef": {"name": "missing"}}, history={"recommendations": []})
    decision = run(h, snapshot(4, [100] * 4, nodes(3)))
    assert decision.desired_replicas == 4
    assert ("ScalingActive", "False", "FailedGetClusterProportional") in reasons(decision)


# ---------------------------------------------------------------------------
# Explanation and interfaces


def test_explanation_names_every_figure_and_rule() -> None:
    decision = run(hvpa(history={"recommendations": []}), snapshot(3, [600, 900, 1200]))
    text = "\n".join(decision.explanation)
    for fragment in (
        "current replicas 3",
        "3 pods: 3 ready with metrics",
        "utilization 90% of requests",
        "target 50%",
        "ceil(1.8 x 3 ready pods) = 6 replicas",
        "decision: 3 -> 6 replicas",
    ):
        assert fragment in text


def test_a_vpa_weight_is_named_in_the_explanation() -> None:
    decision = run(
        hvpa(intervals=[{"vpaWeight": 60}], history={"recommendations": []}),
        snapshot(2, [500, 500]),
    )
    assert any("vpaWeight 60" in line for line in decision.explanation)


def test_metric_queries_for_a_spec() -> None:
    h = hvpa(
        metrics=[
            CPU,
            {
                "type": "ContainerResource",
                "containerResource": {
                    "name": "memory",
                    "container": "app",
                    "target": {"type": "AverageValue", "averageValue": "1Gi"},
                },
            },
            {
                "type": "Pods",
                "pods": {
                    "metric": {"name": "qps"},
                    "target": {"type": "AverageValue", "averageValue": "10"},
                },
            },
            {
                "type": "External",
                "external": {
                    "metric": {"name": "queue", "selector": {"matchLabels": {"q": "a"}}},
                    "target": {"type": "Value", "value": "5"},
                },
            },
        ]
    )
    template = h.spec.hpa.template.spec
    assert template is not None
    queries = metric_queries(template.metrics, "test-namespace", SELECTOR)
    assert [type(q).__name__ for q in queries] == [
        "ResourceMetricsQuery",
        "PodsMetricQuery",
        "ExternalMetricQuery",
    ]


def test_no_history_is_written_while_the_horizontal_axis_is_off() -> None:
    """An empty history object would make a later decision take the Hvpa for an old one."""
    decision = run(hvpa(deploy=False), snapshot(2, [1500, 1500]))
    assert decision.status.history is None
