"""hvpa.scenario: a scenario is read by the controller's rules, through its cache and snapshot.

Each test changes one thing about the example scenario and checks the rule
the controller applies: nodes only for a cluster-proportional Hvpa, the VPA
the Hvpa owns and selects, other autoscalers found in the cache (not listed
by hand), metric series chosen as the metrics APIs choose them, and what the
API server would refuse refused here too.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from hvpa.engine.decide import decide
from hvpa.engine.metrics import ExternalMetricValueList, MetricValueList, PodMetricsList
from hvpa.scenario import Scenario, ScenarioError, parse_scenario

ROOT = Path(__file__).parents[1]
EXAMPLE = yaml.safe_load((ROOT / "examples" / "scenarios" / "hpa-cpu-scale-up.yaml").read_text())
VERTICAL = yaml.safe_load((ROOT / "examples" / "scenarios" / "weighted-vertical.yaml").read_text())


def example(base: dict[str, Any] = EXAMPLE) -> dict[str, Any]:
    return copy.deepcopy(base)


def node(name: str) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name},
        "status": {
            "allocatable": {"cpu": "4"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def readings(loaded: Scenario) -> list[Any]:
    return list(loaded.snapshot.metrics.values())


def test_nodes_only_for_a_cluster_proportional_hvpa() -> None:
    raw = example()
    raw["nodes"] = [node("n1"), node("n2")]
    assert parse_scenario(raw).snapshot.nodes == ()
    raw["hvpa"]["spec"]["clusterProportional"] = {"linear": {"nodesPerReplica": 1}}
    assert [n.name for n in parse_scenario(raw).snapshot.nodes] == ["n1", "n2"]


def test_the_vpa_is_the_one_the_hvpa_owns() -> None:
    """`vpa` without an owner is hvpa's child; one owned by something else is not read, and
    the condition says whose it is rather than that there is none."""
    raw = example(VERTICAL)
    assert parse_scenario(raw).snapshot.vpa is not None
    raw["vpa"]["metadata"]["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "x", "uid": "u", "controller": True}
    ]
    loaded = parse_scenario(raw)
    assert loaded.snapshot.vpa is None
    decision = decide(loaded.hvpa, loaded.snapshot, loaded.now, loaded.settings)
    active = next(c for c in decision.conditions if c.type == "VerticalScalingActive")
    assert (active.status, active.reason) == ("False", "VerticalPodAutoscalerNotOwned")
    assert "Deployment x" in active.message or "Deployment/x" in active.message, active.message


def test_the_owned_vpa_must_be_selected_by_vpa_selector() -> None:
    raw = example(VERTICAL)
    raw["vpa"]["metadata"]["labels"] = {"role": "someone-else"}
    raw["hvpa"]["spec"]["vpa"]["selector"] = {"matchLabels": {"role": "etcd-vpa"}}
    assert parse_scenario(raw).snapshot.vpa is None


def test_other_autoscalers_come_from_the_cache() -> None:
    """Writers are those that target the target; an invalid other Hvpa is ignored, as cached."""
    raw = example()
    raw["autoscalers"] = [
        {
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "api"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "api"}},
        },
        {
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}},
        },
    ]
    raw["otherHvpas"] = [{"kind": "Hvpa", "metadata": {"name": "broken"}, "spec": {}}]
    writers = parse_scenario(raw).snapshot.writers
    assert [(w.kind, w.name) for w in writers] == [("HorizontalPodAutoscaler", "web")]


def test_pod_metrics_only_of_existing_selected_pods() -> None:
    """metrics-server answers for pods that exist and that the selector selects."""
    raw = example()
    stale = copy.deepcopy(raw["podMetrics"][0])
    stale["metadata"]["name"] = "web-gone"
    raw["podMetrics"].append(stale)
    other = copy.deepcopy(raw["pods"][0])
    other["metadata"] = {"name": "api-0", "namespace": "shop", "labels": {"app": "api"}}
    raw["pods"].append(other)
    api_metrics = copy.deepcopy(raw["podMetrics"][0])
    api_metrics["metadata"]["name"] = "api-0"
    raw["podMetrics"].append(api_metrics)
    (reading,) = readings(parse_scenario(raw))
    assert isinstance(reading, PodMetricsList)
    assert sorted(item.name for item in reading.items) == ["web-0", "web-1", "web-2"]


def test_custom_metric_selector_matches_series_labels() -> None:
    """metricLabelSelector selects the series whose labels match (not a selector spelled alike)."""
    raw = example()
    raw["hvpa"]["spec"]["hpa"]["template"]["spec"]["metrics"] = [
        {
            "type": "Object",
            "object": {
                "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"},
                "metric": {
                    "name": "rps",
                    "selector": {
                        "matchExpressions": [{"key": "code", "operator": "In", "values": ["2xx"]}]
                    },
                },
                "target": {"type": "Value", "value": "100"},
            },
        }
    ]
    raw["customMetrics"] = [
        {
            "describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"},
            "metric": {"name": "rps", "selector": {"matchLabels": {"code": code}}},
            "value": value,
        }
        for code, value in (("2xx", "120"), ("5xx", "900"))
    ]
    (reading,) = readings(parse_scenario(raw))
    assert isinstance(reading, MetricValueList)
    assert [item.value_milli for item in reading.items] == [120_000]


def test_external_metric_names_match_in_any_case() -> None:
    raw = example()
    raw["hvpa"]["spec"]["hpa"]["template"]["spec"]["metrics"] = [
        {
            "type": "External",
            "external": {
                "metric": {"name": "Queue_Depth"},
                "target": {"type": "Value", "value": "10"},
            },
        }
    ]
    raw["externalMetrics"] = [{"metricName": "queue_depth", "value": "30"}]
    (reading,) = readings(parse_scenario(raw))
    assert isinstance(reading, ExternalMetricValueList)
    assert [item.value_milli for item in reading.items] == [30_000]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param(
            lambda raw: raw["target"]["status"].update(replicas=-1),
            "status.replicas must not be negative",
            id="status replicas",
        ),
        pytest.param(
            lambda raw: raw["pods"][0]["spec"].update(resources={"requests": {"memory": "-1"}}),
            "pod web-0: spec.resources.requests must not be negative",
            id="pod-level request",
        ),
    ],
)
def test_what_the_api_server_refuses(change: Any, message: str) -> None:
    raw = example()
    raw["pods"][0] = copy.deepcopy(raw["pods"][0])
    change(raw)
    with pytest.raises(ScenarioError, match=message):
        parse_scenario(raw)
