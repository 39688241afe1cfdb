"""parse_hvpa and to_dict: the example manifests, serialise/parse stability, conversions, absent vs empty."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hvpa_samples import FIXTURE_NAMES, FIXTURES, base, edited, fixture
from hypothesis import given, settings
from hypothesis import strategies as st

from hvpa.api import History, Hvpa, parse_hvpa, to_dict
from hvpa.api.threestage import stage_weight_percent

EXAMPLES = Path(__file__).parents[2] / "manifests" / "examples"


def stable(manifest: Any) -> Hvpa:
    """Parse, serialise, parse again: equal models and byte-identical JSON; returns the model."""
    first = parse_hvpa(manifest)
    written = to_dict(first)
    second = parse_hvpa(written)
    assert second == first
    assert json.dumps(to_dict(second)) == json.dumps(written)
    return first


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_examples_parse_and_serialise_stably(name: str) -> None:
    stable(fixture(name))


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_manifest_examples_are_the_fixtures(name: str) -> None:
    assert (EXAMPLES / name).read_text() == (FIXTURES / name).read_text()


def test_gardener_form_is_written_back_as_written() -> None:
    manifest = fixture("gardener-kube-apiserver.yaml")
    written = to_dict(parse_hvpa(manifest))
    # Nothing is added (no defaults, no empty objects). The v2beta1 metrics change shape, and
    # a field at its zero default is left out, as Gardener's `omitempty` left it out.
    written_metrics = written["spec"]["hpa"]["template"]["spec"].pop("metrics")
    manifest["spec"]["hpa"]["template"]["spec"].pop("metrics")
    assert manifest["spec"]["weightBasedScalingIntervals"][1].pop("vpaWeight") == 0
    assert written == manifest
    assert written_metrics == [
        {
            "type": "Resource",
            "resource": {"name": name, "target": {"type": "Utilization", "averageUtilization": 80}},
        }
        for name in ("cpu", "memory")
    ]


@pytest.mark.parametrize(
    ("spec", "intervals"),
    [
        pytest.param(
            {
                "stageTwoStartReplicaCount": 3,
                "stageTwoStopReplicaCount": 7,
                "secondStageVpaWeight": 0.4,
            },
            [(0, 1, 3), (40, 3, 7), (0, 7, 10)],
            id="proposal-example-1",
        ),
        pytest.param(
            {
                "stageTwoStartReplicaCount": 1,
                "stageTwoStopReplicaCount": 4,
                "firstStageVpaWeight": 1,
                "secondStageVpaWeight": 0.4,
            },
            [(100, 1, 1), (40, 1, 4), (0, 4, 10)],
            id="proposal-example-2-boundary-belongs-to-first-stage",
        ),
        pytest.param(
            {
                "stageTwoStartReplicaCount": 3,
                "secondStageVpaWeight": 0.4,
                "thirdStageVpaWeight": 0.9,
            },
            [(0, 1, 3), (40, 3, 10)],
            id="proposal-example-3-no-x2-no-third-stage",
        ),
        pytest.param(
            {
                "stageTwoStopReplicaCount": 5,
                "secondStageVpaWeight": 0.5,
                "thirdStageVpaWeight": 0.25,
            },
            [(50, 1, 5), (25, 5, 10)],
            id="no-x1-no-first-stage",
        ),
        pytest.param({"secondStageVpaWeight": 0.7}, [(70, 1, 10)], id="no-x1-no-x2-one-stage"),
        pytest.param(
            {
                "stageTwoStartReplicaCount": 2,
                "firstStageVpaWeight": 0.333,
                "secondStageVpaWeight": 0.005,
            },
            [(33, 1, 2), (1, 2, 10)],
            id="whole-percent-rounded-half-up",
        ),
        pytest.param(
            {"stageTwoStartReplicaCount": 4}, [(0, 1, 4), (0, 4, 10)], id="weights-absent-are-zero"
        ),
    ],
)
def test_three_stage_intervals(spec: dict[str, Any], intervals: list[tuple[int, int, int]]) -> None:
    manifest = {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": "sample"},
        "spec": {
            **spec,
            "hpaSpec": {"maxReplicas": 10, "scaleTargetRef": {"kind": "Deployment", "name": "web"}},
        },
    }
    hvpa = stable(manifest)
    got = [
        (i.vpa_weight, i.start_replica_count, i.last_replica_count)
        for i in hvpa.spec.weight_based_scaling_intervals
    ]
    assert got == intervals


@pytest.mark.parametrize(
    ("weight", "percent"),
    [(0, 0), (1, 100), (0.4, 40), (0.07, 7), (0.125, 13), (0.3333, 33), (None, 0)],
)
def test_stage_weight_percent(weight: float | None, percent: int) -> None:
    assert stage_weight_percent(weight) == percent


def test_three_stage_hpa_and_vpa_specs() -> None:
    written = to_dict(parse_hvpa(fixture("proposal-example-1.yaml")))
    spec = written["spec"]
    assert spec["targetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "resource-consumer",
    }
    assert spec["hpa"] == {
        "deploy": True,
        "template": {
            "spec": {
                "minReplicas": 1,
                "maxReplicas": 10,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {
                            "name": "cpu",
                            "target": {"type": "Utilization", "averageUtilization": 60},
                        },
                    }
                ],
            }
        },
    }
    # `MinAllowed` as the proposal wrote it, matched case-insensitively as Go did.
    assert spec["vpa"] == {
        "deploy": True,
        "template": {
            "spec": {
                "resourcePolicy": {
                    "containerPolicies": [
                        {
                            "containerName": "resource-consumer",
                            "minAllowed": {"memory": "400Mi"},
                            "maxAllowed": {"memory": "3000Mi"},
                        }
                    ]
                }
            }
        },
    }


REF = {"kind": "Ingress", "name": "web", "apiVersion": "networking.k8s.io/v1"}


@pytest.mark.parametrize(
    ("v2beta1", "v2"),
    [
        pytest.param(
            {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "1Gi"}},
            {
                "type": "Resource",
                "resource": {
                    "name": "memory",
                    "target": {"type": "AverageValue", "averageValue": "1Gi"},
                },
            },
            id="resource-average-value",
        ),
        pytest.param(
            {
                "type": "ContainerResource",
                "containerResource": {
                    "name": "cpu",
                    "container": "app",
                    "targetAverageUtilization": 50,
                },
            },
            {
                "type": "ContainerResource",
                "containerResource": {
                    "name": "cpu",
                    "container": "app",
                    "target": {"type": "Utilization", "averageUtilization": 50},
                },
            },
            id="container-resource",
        ),
        pytest.param(
            {
                "type": "Pods",
                "pods": {
                    "metricName": "qps",
                    "targetAverageValue": "10",
                    "selector": {"matchLabels": {"a": "b"}},
                },
            },
            {
                "type": "Pods",
                "pods": {
                    "metric": {"name": "qps", "selector": {"matchLabels": {"a": "b"}}},
                    "target": {"type": "AverageValue", "averageValue": "10"},
                },
            },
            id="pods",
        ),
        pytest.param(
            {
                "type": "Object",
                "object": {"target": REF, "metricName": "rps", "targetValue": "100"},
            },
            {
                "type": "Object",
                "object": {
                    "describedObject": REF,
                    "metric": {"name": "rps"},
                    "target": {"type": "Value", "value": "100"},
                },
            },
            id="object-value",
        ),
        pytest.param(
            {
                "type": "Object",
                "object": {
                    "target": REF,
                    "metricName": "rps",
                    "targetValue": "100",
                    "averageValue": "5",
                },
            },
            {
                "type": "Object",
                "object": {
                    "describedObject": REF,
                    "metric": {"name": "rps"},
                    "target": {"type": "AverageValue", "value": "100", "averageValue": "5"},
                },
            },
            id="object-average-value",
        ),
        pytest.param(
            {
                "type": "External",
                "external": {
                    "metricName": "queue",
                    "metricSelector": {"matchLabels": {"q": "jobs"}},
                    "targetAverageValue": "30",
                },
            },
            {
                "type": "External",
                "external": {
                    "metric": {"name": "queue", "selector": {"matchLabels": {"q": "jobs"}}},
                    "target": {"type": "AverageValue", "averageValue": "30"},
                },
            },
            id="external-average-value",
        ),
        pytest.param(
            {"type": "External", "external": {"metricName": "queue", "targetValue": "30"}},
            {
                "type": "External",
                "external": {
                    "metric": {"name": "queue"},
                    "target": {"type": "Value", "value": "30"},
                },
            },
            id="external-value",
        ),
    ],
)
def test_v2beta1_metrics_become_v2(v2beta1: dict[str, Any], v2: dict[str, Any]) -> None:
    path = "spec.hpa.template.spec.metrics"
    hvpa = stable(edited({path: [v2beta1], "spec.hpa.template.spec.minReplicas": 1}))
    assert to_dict(hvpa)["spec"]["hpa"]["template"]["spec"]["metrics"] == [v2]
    # The v2 form parses to the same model.
    assert parse_hvpa(edited({path: [v2]})) == hvpa


T0 = "2024-05-01T10:00:00Z"


@pytest.mark.parametrize(
    ("status", "history"),
    [
        pytest.param(None, None, id="no-status"),
        pytest.param({"replicas": 3}, None, id="no-history-means-new"),
        pytest.param({"history": {}}, History(), id="empty-history"),
        pytest.param(
            {"history": {"recommendations": [], "scaleUpEvents": []}},
            History(recommendations=(), scale_up_events=()),
            id="empty-lists-kept-apart-from-absent",
        ),
    ],
)
def test_history_absent_is_not_empty(
    status: dict[str, Any] | None, history: History | None
) -> None:
    manifest = base() if status is None else edited({"status": status})
    hvpa = stable(manifest)
    assert (hvpa.status.history if hvpa.status else None) == history
    assert to_dict(hvpa).get("status") == status


def test_history_entries_are_typed() -> None:
    hvpa = stable(
        edited(
            {
                "status": {
                    "history": {
                        "recommendations": [{"time": T0, "replicas": 4}],
                        "scaleDownEvents": [
                            {"time": "2024-05-01T12:00:00+02:00", "replicaChange": 2}
                        ],
                        "lastScaleTimes": {"verticalUp": T0},
                        "usage": [{"time": T0, "cpu": "3500m", "memory": "6Gi"}],
                    }
                }
            }
        )
    )
    assert hvpa.status is not None and hvpa.status.history is not None
    history = hvpa.status.history
    at = datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert history.recommendations is not None and history.recommendations[0].time == at
    assert history.scale_down_events is not None and history.scale_down_events[0].time == at
    assert history.last_scale_times is not None and history.last_scale_times.vertical_up == at
    assert history.usage is not None and history.usage[0].cpu == "3500m"
    assert history.demands is None


def test_yaml_timestamps_are_times() -> None:
    """PyYAML reads an unquoted timestamp as a datetime; it means the same as the string."""
    as_text = edited({"status": {"lastScaling": {"lastScaleTime": T0}}})
    as_datetime = edited(
        {"status": {"lastScaling": {"lastScaleTime": datetime(2024, 5, 1, 10, tzinfo=UTC)}}}
    )
    assert parse_hvpa(as_datetime) == parse_hvpa(as_text)


def test_user_written_empty_object_survives() -> None:
    written = to_dict(stable(edited({"spec.vpa": {}})))
    assert written["spec"]["vpa"] == {}
    assert "vpa" not in to_dict(parse_hvpa(edited({"spec.vpa": None})))["spec"]


# Valid Hvpas drawn at random, to check that serialise(parse(x)) is stable whatever is set.
quantities = st.sampled_from(["100m", "1", "2", "1500m", "512Mi", "1Gi", "2G", 3])
times = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)
).map(lambda t: t.isoformat().replace("+00:00", "Z"))
change_params = st.fixed_dictionaries(
    {},
    optional={"value": st.sampled_from(["100m", "200M", "1"]), "percentage": st.integers(0, 100)},
)
scale_type = st.fixed_dictionaries(
    {},
    optional={
        "updatePolicy": st.fixed_dictionaries(
            {"updateMode": st.sampled_from(["Auto", "Off", "MaintenanceWindow"])}
        ),
        "stabilizationDuration": st.sampled_from(["3m", "90s", "1h30m"]),
        "minChange": st.fixed_dictionaries(
            {}, optional={"cpu": change_params, "memory": change_params}
        ),
    },
)
metric = st.one_of(
    st.integers(1, 100).map(
        lambda u: {
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": u}},
        }
    ),
    st.integers(1, 100).map(
        lambda u: {
            "type": "Resource",
            "resource": {"name": "memory", "targetAverageUtilization": u},
        }
    ),
    quantities.map(
        lambda q: {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": q}}
    ),
)
samples = st.lists(
    st.fixed_dictionaries({"time": times}, optional={"cpu": quantities, "memory": quantities}),
    max_size=3,
)
history = st.fixed_dictionaries(
    {},
    optional={
        "recommendations": st.lists(
            st.fixed_dictionaries({"time": times, "replicas": st.integers(0, 50)}), max_size=3
        ),
        "scaleUpEvents": st.lists(
            st.fixed_dictionaries({"time": times, "replicaChange": st.integers(1, 9)}), max_size=3
        ),
        "lastScaleTimes": st.fixed_dictionaries(
            {}, optional={"horizontalUp": times, "verticalDown": times}
        ),
        "usage": samples,
        "demands": samples,
    },
)


@st.composite
def hvpas(draw: st.DrawFn) -> dict[str, Any]:
    low = draw(st.integers(1, 5))
    high = draw(st.integers(low, 20))
    spec: dict[str, Any] = {
        "targetRef": {"kind": draw(st.sampled_from(["Deployment", "StatefulSet"])), "name": "web"},
        "hpa": {
            "deploy": draw(st.booleans()),
            "template": {
                "spec": {
                    "minReplicas": low,
                    "maxReplicas": high,
                    "metrics": draw(st.lists(metric, max_size=2)),
                }
            },
        },
        "weightBasedScalingIntervals": [
            {
                "vpaWeight": draw(st.integers(0, 100)),
                "startReplicaCount": low,
                "lastReplicaCount": high,
            }
        ],
    }
    for axis in ("hpa", "vpa"):
        for direction in ("scaleUp", "scaleDown"):
            if draw(st.booleans()):
                spec.setdefault(axis, {})[direction] = draw(scale_type)
    if draw(st.booleans()):
        spec["strategy"] = draw(st.sampled_from(["Weighted", "HpaPreferred", "VpaBiased"]))
    if draw(st.booleans()):
        spec["maintenanceTimeWindow"] = {"begin": "220000+0100", "end": "230000+0100"}
    manifest: dict[str, Any] = {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": "web"},
        "spec": spec,
    }
    if draw(st.booleans()):
        manifest["status"] = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "replicas": st.integers(0, 20),
                    "overrideScaleUpStabilization": st.booleans(),
                    "conditions": st.lists(
                        st.fixed_dictionaries(
                            {
                                "type": st.sampled_from(["AbleToScale", "ScalingActive"]),
                                "status": st.sampled_from(["True", "False"]),
                            },
                            optional={
                                "reason": st.just("InvalidSpec"),
                                "lastTransitionTime": times,
                            },
                        ),
                        max_size=2,
                    ),
                    "history": history,
                },
            )
        )
    return manifest


@settings(max_examples=150, deadline=None)
@given(hvpas())
def test_serialise_parse_is_stable(manifest: dict[str, Any]) -> None:
    stable(manifest)
