"""apply_defaults: what an Hvpa means where its author wrote nothing, kept apart from parsing."""

from __future__ import annotations

from typing import Any

import pytest
from hvpa_samples import DELETE, edited, fixture

from hvpa.api import Hvpa, apply_defaults, parse_hvpa, to_dict
from hvpa.api.autoscaling import MetricSpec, MetricTarget, ResourceMetricSource

T = "spec.hpa.template.spec"


def defaulted(changes: dict[str, Any]) -> Hvpa:
    return apply_defaults(parse_hvpa(edited(changes)))


CPU_80 = MetricSpec(
    type="Resource",
    resource=ResourceMetricSource(
        name="cpu", target=MetricTarget(type="Utilization", average_utilization=80)
    ),
)


@pytest.mark.parametrize(
    ("changes", "read", "expected"),
    [
        pytest.param({}, lambda h: h.spec.strategy, "Weighted", id="strategy"),
        pytest.param(
            {"spec.strategy": "HpaBiased"},
            lambda h: h.spec.strategy,
            "HpaBiased",
            id="strategy-kept",
        ),
        pytest.param(
            {f"{T}.minReplicas": DELETE},
            lambda h: h.spec.hpa.template.spec.min_replicas,
            1,
            id="minReplicas",
        ),
        pytest.param(
            {f"{T}.minReplicas": 3},
            lambda h: h.spec.hpa.template.spec.min_replicas,
            3,
            id="minReplicas-kept",
        ),
        pytest.param(
            {},
            lambda h: [
                s.update_policy.update_mode
                for s in (
                    h.spec.hpa.scale_up,
                    h.spec.hpa.scale_down,
                    h.spec.vpa.scale_up,
                    h.spec.vpa.scale_down,
                )
            ],
            ["Auto"] * 4,
            id="update-modes",
        ),
        pytest.param(
            {
                "spec.vpa.scaleDown": {
                    "updatePolicy": {"updateMode": "Off"},
                    "stabilizationDuration": "5m",
                }
            },
            lambda h: (
                h.spec.vpa.scale_down.update_policy.update_mode,
                h.spec.vpa.scale_down.stabilization_duration,
            ),
            ("Off", "5m"),
            id="update-mode-kept",
        ),
        pytest.param(
            {},
            lambda h: h.spec.hpa.selector.match_labels,
            {"app": "web"},
            id="hpa-selector-from-template-labels",
        ),
        pytest.param(
            {"spec.hpa.selector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}},
            lambda h: h.spec.hpa.selector.match_labels,
            None,
            id="hpa-selector-kept",
        ),
        pytest.param(
            {"spec.vpa": {"template": {"metadata": {"labels": {"role": "vpa"}}}}},
            lambda h: h.spec.vpa.selector.match_labels,
            {"role": "vpa"},
            id="vpa-selector-from-template-labels",
        ),
        pytest.param({}, lambda h: h.spec.vpa.selector, None, id="no-labels-no-selector"),
        pytest.param(
            {
                f"{T}.minReplicas": 2,
                "spec.weightBasedScalingIntervals": [
                    {"vpaWeight": 100, "lastReplicaCount": 3},
                    {"vpaWeight": 0, "startReplicaCount": 0},
                ],
            },
            lambda h: [
                (i.start_replica_count, i.last_replica_count)
                for i in h.spec.weight_based_scaling_intervals
            ],
            [(2, 3), (2, 10)],
            id="interval-bounds-from-min-max",
        ),
        pytest.param(
            {f"{T}.metrics": []},
            lambda h: h.spec.hpa.template.spec.metrics,
            (CPU_80,),
            id="metric-cpu-80",
        ),
        pytest.param(
            {f"{T}.metrics": [], "spec.hpa.deploy": False},
            lambda h: h.spec.hpa.template.spec.metrics,
            (),
            id="no-metric-when-hpa-off",
        ),
        pytest.param(
            {f"{T}.metrics": [], "spec.clusterProportional": {"linear": {"nodesPerReplica": 4}}},
            lambda h: h.spec.hpa.template.spec.metrics,
            (),
            id="no-metric-with-cluster-proportional",
        ),
        pytest.param(
            {"spec.strategy": "Mixed", "spec.mixed": {"cpuThreshold": "200m"}},
            lambda h: (
                h.spec.mixed.replica_threshold,
                h.spec.mixed.cpu_threshold,
                h.spec.mixed.memory_threshold,
                h.spec.mixed.prefer,
            ),
            (0, "200m", "0", "Hpa"),
            id="mixed",
        ),
        pytest.param(
            {
                "spec.strategy": "Capacity",
                "spec.capacity": {"curve": [{"replicas": 1, "cpu": "1"}], "tolerance": 5},
            },
            lambda h: (
                h.spec.capacity.tolerance,
                h.spec.capacity.resize_tolerance,
                h.spec.capacity.headroom,
                h.spec.capacity.scale_down_stabilization_seconds,
                h.spec.capacity.demand_percentile,
                h.spec.capacity.demand_window_seconds,
            ),
            # The scale-down window stays unset: the engine reads the HPA template's then
            # (tests/engine/test_capacity_down_window.py).
            (5, 30, 25, None, 90, 600),
            id="capacity",
        ),
        pytest.param({}, lambda h: h.spec.vpa.resize_mode, "Rollout", id="resize-mode"),
        pytest.param(
            {"spec.vpa.resizeMode": "InPlace"},
            lambda h: h.spec.vpa.resize_mode,
            "InPlace",
            id="resize-mode-kept",
        ),
    ],
)
def test_default(changes: dict[str, Any], read: Any, expected: Any) -> None:
    assert read(defaulted(changes)) == expected


@pytest.mark.parametrize(
    "name",
    ["gardener-kube-apiserver.yaml", "proposal-example-2.yaml", "cluster-proportional-dns.yaml"],
)
def test_defaults_are_a_separate_idempotent_step(name: str) -> None:
    parsed = parse_hvpa(fixture(name))
    once = apply_defaults(parsed)
    assert apply_defaults(once) == once
    assert "strategy" not in to_dict(parsed)["spec"]
    assert to_dict(once)["spec"]["strategy"] == "Weighted"
    # A defaulted Hvpa is still valid and still stable through serialise and parse.
    assert parse_hvpa(to_dict(once)) == once
