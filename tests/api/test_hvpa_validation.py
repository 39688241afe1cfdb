"""parse_hvpa's checks: each rule, by a one-edit change to a valid Hvpa, with the exact problems it reports.

Exact lists, so a rule that also reports noise (a second problem caused by
the first) fails here too.
"""

from __future__ import annotations

from typing import Any

import pytest
from hvpa_samples import DELETE, base, edited

from hvpa.api import InvalidHvpa, Problem, parse_hvpa

T = "spec.hpa.template.spec"
M = f"{T}.metrics.0"
MM = f"{T}.metrics[0]"
B = f"{T}.behavior"
P = "spec.vpa.template.spec.resourcePolicy.containerPolicies"
CAP = {
    "spec.strategy": "Capacity",
    "spec.capacity": {
        "curve": [
            {"replicas": 1, "cpu": "1", "memory": "1Gi"},
            {"replicas": 10, "cpu": "4", "memory": "4Gi"},
        ]
    },
}


def problems_of(manifest: Any) -> list[str]:
    try:
        parse_hvpa(manifest)
    except InvalidHvpa as error:
        return [str(problem) for problem in error.problems]
    return []


def metric(**source: Any) -> list[dict[str, Any]]:
    return [source]


ROWS = [
    # targetRef
    pytest.param({"spec.targetRef": DELETE}, ["spec.targetRef: required"], id="targetRef-required"),
    pytest.param(
        {"spec.targetRef.kind": "Pod"},
        ['spec.targetRef.kind: must be one of Deployment, StatefulSet, ReplicaSet (got "Pod")'],
        id="targetRef-kind",
    ),
    pytest.param(
        {"spec.targetRef.apiVersion": "extensions/v1beta1"},
        ['spec.targetRef.apiVersion: must be apps/v1 (got "extensions/v1beta1")'],
        id="targetRef-apiVersion",
    ),
    pytest.param(
        {"spec.targetRef.apiVersion": DELETE}, [], id="targetRef-apiVersion-may-be-absent"
    ),
    pytest.param(
        {"spec.targetRef.name": DELETE}, ["spec.targetRef.name: required"], id="targetRef-name"
    ),
    # replicas bounds
    pytest.param(
        {f"{T}.maxReplicas": DELETE}, [f"{T}.maxReplicas: required"], id="maxReplicas-required"
    ),
    pytest.param(
        {f"{T}.maxReplicas": 0},
        [f"{T}.maxReplicas: must be >= 1 (got 0)"],
        id="maxReplicas-positive",
    ),
    pytest.param(
        {f"{T}.minReplicas": 3, f"{T}.maxReplicas": 2},
        [f"{T}.maxReplicas: must be >= minReplicas (3)"],
        id="maxReplicas-below-minReplicas",
    ),
    pytest.param(
        {f"{T}.minReplicas": DELETE, f"{T}.maxReplicas": 1}, [], id="minReplicas-defaults-to-1"
    ),
    pytest.param(
        {f"{T}.minReplicas": 0},
        [
            f"{T}.minReplicas: must be >= 1 unless an Object or External metric is set (scaling to zero needs one)"
        ],
        id="minReplicas-zero-without-object-metric",
    ),
    pytest.param(
        {
            f"{T}.minReplicas": 0,
            f"{T}.metrics": metric(
                type="External",
                external={"metric": {"name": "queue"}, "target": {"type": "Value", "value": "30"}},
            ),
        },
        [],
        id="minReplicas-zero-with-external-metric",
    ),
    pytest.param(
        {f"{T}.minReplicas": -1},
        [f"{T}.minReplicas: must be >= 0 (got -1)"],
        id="minReplicas-negative",
    ),
    pytest.param(
        {"spec.hpa.template.spec": DELETE},
        [f"{T}: required when spec.hpa.deploy is true (it holds minReplicas and maxReplicas)"],
        id="hpa-template-required-when-deployed",
    ),
    pytest.param(
        {"spec.hpa.template.spec": DELETE, "spec.hpa.deploy": False},
        [],
        id="hpa-template-optional-when-off",
    ),
    # metrics, as upstream HPA validation
    pytest.param(
        {f"{M}.type": DELETE},
        [f"{MM}.type: must specify a metric source type"],
        id="metric-type-required",
    ),
    pytest.param(
        # The engine answers it (ScalingActive=False, InvalidMetricSourceType), as upstream's
        # controller does; the source it populates is still checked.
        {f"{M}.type": "Memory"},
        [],
        id="metric-type-unknown",
    ),
    pytest.param(
        {f"{M}.type": "Pods"},
        # As upstream: the missing source is reported, the extra one only when several are given.
        [f"{MM}.pods: must populate information for the given metric source"],
        id="metric-source-missing",
    ),
    pytest.param(
        {
            f"{M}.pods": {
                "metric": {"name": "qps"},
                "target": {"type": "AverageValue", "averageValue": "10"},
            }
        },
        [f"{MM}.pods: must populate the given metric source only"],
        id="metric-two-sources",
    ),
    pytest.param(
        {f"{M}.resource.name": ""},
        [f"{MM}.resource.name: must specify a resource name"],
        id="resource-name",
    ),
    pytest.param(
        {f"{M}.resource.target.averageUtilization": 0},
        [f"{MM}.resource.target.averageUtilization: must be greater than 0"],
        id="resource-utilization-positive",
    ),
    pytest.param(
        {f"{M}.resource.target": {"type": "AverageValue", "averageValue": "-1"}},
        [f"{MM}.resource.target.averageValue: must be positive"],
        id="resource-average-value-positive",
    ),
    pytest.param(
        {f"{M}.resource.target.averageValue": "100m"},
        [
            f"{MM}.resource.target.averageValue: may not set both a target raw value and a target utilization"
        ],
        id="resource-both-targets",
    ),
    pytest.param(
        {f"{M}.resource.target": {"type": "Utilization"}},
        [
            f"{MM}.resource.target.averageUtilization: must set either a target raw value or a target utilization"
        ],
        id="resource-no-target",
    ),
    pytest.param(
        {f"{M}.resource.target": {"type": "Value", "value": "1"}},
        [
            f"{MM}.resource.target.type: must be Utilization or AverageValue for a Resource metric (got Value)",
            f"{MM}.resource.target.averageUtilization: must set either a target raw value or a target utilization",
        ],
        id="resource-target-type-not-allowed",
    ),
    pytest.param(
        {f"{M}.resource.target": {"averageUtilization": 50}},
        [f"{MM}.resource.target.type: must specify a metric target type"],
        id="target-type-required",
    ),
    pytest.param(
        {f"{M}.resource.target": {"type": "Utilization", "averageValue": "1"}},
        [f"{MM}.resource.target.averageUtilization: required by target type Utilization"],
        id="target-type-field-mismatch",
    ),
    pytest.param(
        {
            f"{T}.metrics": metric(
                type="ContainerResource",
                containerResource={
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60},
                },
            )
        },
        [f"{MM}.containerResource.container: must specify a container"],
        id="container-resource-container",
    ),
    pytest.param(
        {
            f"{T}.metrics": metric(
                type="Pods", pods={"metric": {"name": "qps"}, "target": {"type": "AverageValue"}}
            )
        },
        [f"{MM}.pods.target.averageValue: must specify a positive target averageValue"],
        id="pods-average-value",
    ),
    pytest.param(
        {
            f"{T}.metrics": metric(
                type="Pods",
                pods={"metric": {}, "target": {"type": "AverageValue", "averageValue": "5"}},
            )
        },
        [f"{MM}.pods.metric.name: must specify a metric name"],
        id="pods-metric-name",
    ),
    pytest.param(
        {
            f"{T}.metrics": metric(
                type="Object",
                object={
                    "describedObject": {"kind": "Ingress", "name": "web"},
                    "metric": {"name": "rps"},
                    "target": {"type": "Value"},
                },
            )
        },
        [f"{MM}.object.target.averageValue: must set either a target value or averageValue"],
        id="object-target",
    ),
    pytest.param(
        {
            f"{T}.metrics": metric(
                type="Object",
                object={"metric": {"name": "rps"}, "target": {"type": "Value", "value": "10"}},
            )
        },
        [
            f"{MM}.object.describedObject.kind: required",
            f"{MM}.object.describedObject.name: required",
        ],
        id="object-described-object",
    ),
    pytest.param(
        {
            f"{T}.metrics": metric(
                type="External",
                external={
                    "metric": {"name": "q"},
                    "target": {"type": "Value", "value": "1", "averageValue": "1"},
                },
            )
        },
        [
            f"{MM}.external.target.value: may not set both a target value for metric and a per-pod target"
        ],
        id="external-both-targets",
    ),
    pytest.param(
        {
            f"{T}.metrics": metric(
                type="External",
                external={
                    "metric": {
                        "name": "q",
                        "selector": {"matchExpressions": [{"key": "a", "operator": "Is"}]},
                    },
                    "target": {"type": "Value", "value": "1"},
                },
            )
        },
        [
            f"{MM}.external.metric.selector: matchExpressions[0].operator: 'Is' is not one of In, NotIn, Exists, DoesNotExist"
        ],
        id="metric-selector",
    ),
    pytest.param(
        {f"{M}.resource": {"name": "cpu", "targetAverageUtilization": 0}},
        [f"{MM}.resource.targetAverageUtilization: must be greater than 0"],
        id="v2beta1-problem-named-as-written",
    ),
    pytest.param(
        {
            f"{M}.resource": {
                "name": "cpu",
                "targetAverageUtilization": 80,
                "target": {"type": "Utilization"},
            }
        },
        [
            f"{MM}.resource: mixes autoscaling/v2 fields (metric, target, describedObject) with autoscaling/v2beta1 "
            "fields (metricName, targetAverageValue, ...); write one or the other"
        ],
        id="v2-and-v2beta1-mixed",
    ),
    pytest.param(
        {f"{M}.resource": {"name": "cpu", "targetAverageUtilisation": 80}},
        # the typo is the one problem: the field it means is missing only because of it
        [
            f'{MM}.resource.targetAverageUtilisation: unknown field (did you mean "targetAverageUtilization"?)',
        ],
        id="v2beta1-typo",
    ),
    # one unreadable value is one problem, not also the target it leaves unset
    pytest.param(
        {f"{M}.resource": {"name": "cpu", "targetAverageUtilization": "x"}},
        [f'{MM}.resource.targetAverageUtilization: must be an integer (got "x")'],
        id="v2beta1-unreadable-utilization-once",
    ),
    pytest.param(
        {f"{M}.resource": {"name": "cpu", "targetAverageValue": "x"}},
        [f'{MM}.resource.targetAverageValue: must be a quantity such as "250m" or "1Gi" (got "x")'],
        id="v2beta1-unreadable-value-once",
    ),
    pytest.param(
        {f"{M}": {"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "x"}}},
        [f'{MM}.pods.targetAverageValue: must be a quantity such as "250m" or "1Gi" (got "x")'],
        id="v2beta1-pods-unreadable-value-once",
    ),
    pytest.param(
        {
            f"{M}": {
                "type": "External",
                "external": {
                    "metric": {"name": "queue"},
                    "target": {"type": "Value", "value": "x"},
                },
            }
        },
        [f'{MM}.external.target.value: must be a quantity such as "250m" or "1Gi" (got "x")'],
        id="external-unreadable-value-once",
    ),
    pytest.param(
        {
            f"{M}.resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilisation": 5},
            }
        },
        [
            f'{MM}.resource.target.averageUtilisation: unknown field (did you mean "averageUtilization"?)'
        ],
        id="v2-typo-once",
    ),
    # behavior, as upstream HPA validation
    pytest.param(
        {f"{B}.scaleUp": {"policies": []}},
        [f"{B}.scaleUp.policies: must specify at least one Policy"],
        id="behavior-empty-policies",
    ),
    pytest.param(
        {f"{B}.scaleUp": {"selectPolicy": "Max"}}, [], id="behavior-policies-may-be-absent"
    ),
    pytest.param(
        {f"{B}.scaleDown": {"policies": [{"type": "Pods", "value": 0, "periodSeconds": 60}]}},
        [f"{B}.scaleDown.policies[0].value: must be greater than zero"],
        id="behavior-policy-value",
    ),
    pytest.param(
        {f"{B}.scaleDown": {"policies": [{"type": "Percent", "value": 10, "periodSeconds": 1801}]}},
        [f"{B}.scaleDown.policies[0].periodSeconds: must be less than or equal to 1800"],
        id="behavior-period-max",
    ),
    pytest.param(
        {f"{B}.scaleDown": {"policies": [{"type": "Percent", "value": 10, "periodSeconds": 0}]}},
        [f"{B}.scaleDown.policies[0].periodSeconds: must be greater than zero"],
        id="behavior-period-positive",
    ),
    pytest.param(
        {f"{B}.scaleDown": {"policies": [{"type": "Replicas", "value": 1, "periodSeconds": 15}]}},
        [f'{B}.scaleDown.policies[0].type: must be one of Pods, Percent (got "Replicas")'],
        id="behavior-policy-type",
    ),
    pytest.param(
        {f"{B}.scaleDown": {"stabilizationWindowSeconds": 3601}},
        [f"{B}.scaleDown.stabilizationWindowSeconds: must be less than or equal to 3600"],
        id="behavior-window-max",
    ),
    pytest.param(
        {f"{B}.scaleDown": {"stabilizationWindowSeconds": -1}},
        [f"{B}.scaleDown.stabilizationWindowSeconds: must be greater than or equal to zero"],
        id="behavior-window-negative",
    ),
    pytest.param(
        {f"{B}.scaleUp": {"selectPolicy": "Average"}},
        [f'{B}.scaleUp.selectPolicy: must be one of Max, Min, Disabled (got "Average")'],
        id="behavior-select-policy",
    ),
    pytest.param(
        {f"{B}.scaleUp": {"tolerance": "-0.05"}},
        [f"{B}.scaleUp.tolerance: must be greater than or equal to 0"],
        id="behavior-tolerance",
    ),
    pytest.param(
        {f"{B}.scaleUp": {"tolerance": 0.05}},
        [
            f'{B}.scaleUp.tolerance: must be a quantity string or an integer; write "0.05" in quotes (got 0.05)'
        ],
        id="quantity-float-refused-like-the-api-server",
    ),
    # weights and intervals
    pytest.param(
        {"spec.weightBasedScalingIntervals.0.vpaWeight": 101},
        ["spec.weightBasedScalingIntervals[0].vpaWeight: must be <= 100 (got 101)"],
        id="vpaWeight-max",
    ),
    pytest.param(
        {
            "spec.weightBasedScalingIntervals.0.startReplicaCount": 5,
            "spec.weightBasedScalingIntervals.0.lastReplicaCount": 4,
        },
        ["spec.weightBasedScalingIntervals[0].lastReplicaCount: must be >= startReplicaCount (5)"],
        id="interval-start-after-last",
    ),
    pytest.param(
        {"spec.weightBasedScalingIntervals.0.startReplicaCount": 0},
        [],
        id="interval-start-zero-means-minReplicas",
    ),
    # gates
    pytest.param(
        {"spec.maintenanceTimeWindow": {"begin": "22:00", "end": "230000+0100"}},
        [
            'spec.maintenanceTimeWindow.begin: must be a time of day with its zone offset, HHMMSS+ZZZZ, e.g. "220000+0100" (got "22:00")'
        ],
        id="maintenance-window-format",
    ),
    pytest.param(
        {"spec.maintenanceTimeWindow": {"begin": "220000+0100"}},
        ["spec.maintenanceTimeWindow.end: required"],
        id="maintenance-window-end",
    ),
    pytest.param(
        {"spec.vpa.scaleUp": {"updatePolicy": {"updateMode": "auto"}}},
        [
            'spec.vpa.scaleUp.updatePolicy.updateMode: must be one of Auto, MaintenanceWindow, Off (got "auto")'
        ],
        id="update-mode",
    ),
    pytest.param(
        {"spec.hpa.scaleDown": {"stabilizationDuration": "3 minutes"}},
        [
            'spec.hpa.scaleDown.stabilizationDuration: must be a Go duration such as "3m" or "90s" (got "3 minutes")'
        ],
        id="stabilization-duration",
    ),
    pytest.param(
        {"spec.vpa.scaleUp": {"minChange": {"cpu": {"value": "lots", "percentage": -1}}}},
        [
            "spec.vpa.scaleUp.minChange.cpu.percentage: must be >= 0 (got -1)",
            'spec.vpa.scaleUp.minChange.cpu.value: must be a quantity such as "100m" or "1Gi" (got "lots")',
        ],
        id="min-change",
    ),
    pytest.param(
        # An integer is a quantity too; one past what hvpa reads (1e38) was let through and
        # failed the engine's arithmetic at decide time (found by tests/fuzz).
        {"spec.strategy": "Mixed", "spec.mixed": {"cpuThreshold": 10**38, "prefer": "Vpa"}},
        [f'spec.mixed.cpuThreshold: must be a quantity such as "250m" or "1Gi" (got {10**38})'],
        id="min-change-integer-too-large",
    ),
    pytest.param(
        {"spec.vpa.limitsRequestsGapScaleParams": {"memory": {"value": "-1Gi"}}},
        ["spec.vpa.limitsRequestsGapScaleParams.memory.value: must not be negative"],
        id="limits-requests-gap",
    ),
    # how resizes reach the pods
    pytest.param({"spec.vpa.resizeMode": "InPlaceOrRollout"}, [], id="resize-mode-in-place"),
    pytest.param({"spec.vpa.resizeMode": "InPlace"}, [], id="resize-mode-in-place-only"),
    pytest.param(
        {"spec.vpa.resizeMode": "InPlaceOrRecreate"},
        [
            'spec.vpa.resizeMode: must be one of InPlace, InPlaceOrRollout, Rollout (got "InPlaceOrRecreate")'
        ],
        id="resize-mode-enum",
    ),
    pytest.param(
        {"spec.vpa.resizeMode": "inplace"},
        ['spec.vpa.resizeMode: must be one of InPlace, InPlaceOrRollout, Rollout (got "inplace")'],
        id="resize-mode-case",
    ),
    # strategies
    pytest.param(
        {"spec.strategy": "Balanced"},
        [
            'spec.strategy: must be one of Capacity, HpaBiased, HpaPreferred, Mixed, VpaBiased, Weighted (got "Balanced")'
        ],
        id="strategy-enum",
    ),
    pytest.param(
        {"spec.strategy": "Mixed"},
        ["spec.mixed: required when strategy is Mixed"],
        id="mixed-required",
    ),
    pytest.param(
        {"spec.strategy": "Mixed", "spec.mixed": {"cpuThreshold": 0.5, "prefer": "Vpa"}},
        [
            'spec.mixed.cpuThreshold: must be a quantity string or an integer; write "0.5" in quotes (got 0.5)'
        ],
        id="mixed-threshold-quantity",
    ),
    pytest.param(
        {"spec.strategy": "Capacity"},
        ["spec.capacity: required when strategy is Capacity"],
        id="capacity-required",
    ),
    pytest.param(CAP, [], id="capacity-valid"),
    pytest.param(
        {**CAP, "spec.capacity.curve": []},
        ["spec.capacity.curve: must have at least 1 item"],
        id="capacity-curve-empty",
    ),
    pytest.param(
        {**CAP, "spec.capacity.curve.1.cpu": "500m"},
        [
            "spec.capacity.curve[1].cpu: must be >= curve[0].cpu (1): per-pod size must not shrink as replicas grow (flat and vertical segments are allowed)"
        ],
        id="capacity-curve-decreasing",
    ),
    pytest.param(
        {**CAP, "spec.capacity.curve.1.replicas": 12},
        [
            "spec.capacity.curve[1].replicas: must be within minReplicas..maxReplicas (1..10); a point outside them can never be reached"
        ],
        id="capacity-curve-beyond-max",
    ),
    pytest.param(
        {**CAP, "spec.capacity.curve.0.replicas": 0},
        ["spec.capacity.curve[0].replicas: must be >= 1 (got 0)"],
        id="capacity-curve-replicas-positive",
    ),
    pytest.param(
        {**CAP, "spec.capacity.curve.1.memory": DELETE},
        ["spec.capacity.curve[1].memory: required: other points give memory, so every point must"],
        id="capacity-curve-resource-on-every-point",
    ),
    pytest.param(
        {**CAP, "spec.capacity.baseResourcesPerReplica": {"cpu": "1"}},
        [
            "spec.capacity.baseResourcesPerReplica.cpu: must be below the curve's smallest cpu (1): a pod needs room for load beyond its fixed overhead"
        ],
        id="capacity-overhead-below-curve",
    ),
    pytest.param(
        {**CAP, "spec.capacity.demandPercentile": 0},
        ["spec.capacity.demandPercentile: must be > 0 (got 0)"],
        id="capacity-percentile",
    ),
    pytest.param(
        {**CAP, "spec.capacity.resizeTolerance": 101},
        ["spec.capacity.resizeTolerance: must be <= 100 (got 101)"],
        id="capacity-resize-tolerance-a-percent",
    ),
    pytest.param(
        {**CAP, "spec.capacity.headroom": -1},
        ["spec.capacity.headroom: must be >= 0 (got -1)"],
        id="capacity-headroom-not-negative",
    ),
    pytest.param(
        {**CAP, "spec.capacity.headroom": 101},
        ["spec.capacity.headroom: must be <= 100 (got 101)"],
        id="capacity-headroom-a-percent",
    ),
    # cluster-proportional: CPA's rules, reported at the parameter
    pytest.param(
        {"spec.clusterProportional": {"linear": {"coresPerReplica": 16, "min": -1}}},
        ["spec.clusterProportional.linear.min: must not be negative"],
        id="cpa-linear",
    ),
    pytest.param(
        {
            "spec.clusterProportional": {
                "linear": {"nodesPerReplica": 1},
                "ladder": {"nodesToReplicas": [[1, 1]]},
            }
        },
        ["spec.clusterProportional: exactly one of linear, ladder or configMapRef must be set"],
        id="cpa-one-mode",
    ),
    pytest.param(
        {"spec.clusterProportional": {"ladder": {"coresToReplicas": [[1, 1], [64]]}}},
        [
            "spec.clusterProportional.ladder.coresToReplicas[1]: must be a list of 2 items (got a list)"
        ],
        id="cpa-ladder-step",
    ),
    # selectors and templates
    pytest.param(
        {"spec.hpa.selector": {"matchLabels": {"app": "api"}}},
        ["spec.hpa.template.metadata.labels: `selector` does not match template `labels`"],
        id="selector-matches-template",
    ),
    pytest.param(
        {"spec.vpa.selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}},
        ["spec.vpa.selector: matchExpressions[0].values: must be non-empty for In"],
        id="selector-invalid",
    ),
    pytest.param(
        {"spec.vpa.selector": {}},
        ["spec.vpa.selector: must not be empty (leave it out to use the template's labels)"],
        id="selector-empty",
    ),
    pytest.param(
        {"spec.hpa.template.metadata.labels": {"replicas": 3}},
        ["spec.hpa.template.metadata.labels: must be a map of strings to strings"],
        id="template-labels-strings",
    ),
    # VPA container policies
    pytest.param(
        {
            "spec.vpa.template": {
                "spec": {
                    "resourcePolicy": {
                        "containerPolicies": [
                            {
                                "containerName": "web",
                                "minAllowed": {"cpu": "2"},
                                "maxAllowed": {"cpu": "1"},
                            }
                        ]
                    }
                }
            }
        },
        [f"{P}[0].maxAllowed.cpu: must be >= minAllowed.cpu (2)"],
        id="policy-min-above-max",
    ),
    pytest.param(
        {
            "spec.vpa.template": {
                "spec": {
                    "resourcePolicy": {
                        "containerPolicies": [
                            {"containerName": "web", "maxAllowed": {"nvidia.com/gpu": "1"}}
                        ]
                    }
                }
            }
        },
        [f"{P}[0].maxAllowed.nvidia.com/gpu: must be cpu or memory: the VPA recommends only these"],
        id="policy-resource",
    ),
    pytest.param(
        {
            "spec.vpa.template": {
                "spec": {
                    "resourcePolicy": {
                        "containerPolicies": [
                            {"containerName": "web"},
                            {"containerName": "web", "mode": "Off"},
                        ]
                    }
                }
            }
        },
        [f'{P}[1].containerName: duplicate policy for container "web"'],
        id="policy-duplicate",
    ),
    pytest.param(
        {
            "spec.vpa.template": {
                "spec": {"resourcePolicy": {"containerPolicies": [{"mode": "Auto"}]}}
            }
        },
        [f"{P}[0].containerName: required"],
        id="policy-container-name",
    ),
    # structure
    pytest.param(
        {"spec.hpa.tempalte": {}},
        ['spec.hpa.tempalte: unknown field (did you mean "template"?)'],
        id="unknown-field",
    ),
    pytest.param(
        {"specs": {}}, ['specs: unknown field (did you mean "spec"?)'], id="unknown-top-level-field"
    ),
    pytest.param(
        {"spec.replicas": "three"},
        ['spec.replicas: must be an integer (got "three")'],
        id="wrong-type",
    ),
    pytest.param(
        {"spec.hpa.deploy": "yes"},
        ['spec.hpa.deploy: must be true or false (got "yes")'],
        id="wrong-type-bool",
    ),
    pytest.param({"spec.vpa": None}, [], id="null-is-absent"),
    pytest.param(
        {"kind": "HorizontalPodAutoscaler"},
        ['kind: must be Hvpa (got "HorizontalPodAutoscaler")'],
        id="kind",
    ),
    pytest.param({"spec": DELETE}, ["spec: required"], id="spec-required"),
    # status
    pytest.param(
        {"status": {"conditions": [{"type": "ScalingActive", "status": "Maybe"}]}},
        ['status.conditions[0].status: must be one of False, True, Unknown (got "Maybe")'],
        id="status-condition",
    ),
    pytest.param(
        {"status": {"history": {"recommendations": [{"time": "yesterday", "replicas": 3}]}}},
        [
            'status.history.recommendations[0].time: must be an RFC 3339 time with a zone, e.g. "2024-05-01T10:00:00Z" (got "yesterday")'
        ],
        id="status-history-time",
    ),
    pytest.param(
        {
            "status": {
                "lastBlockedScaling": [
                    {"reason": "Weight", "scalingStatus": {"hpaStatus": {"desiredReplicas": 4}}}
                ]
            }
        },
        [],
        id="status-gardener-blocked-scaling",
    ),
    # several at once
    pytest.param(
        {
            "spec.targetRef.kind": "Job",
            f"{T}.maxReplicas": 0,
            "spec.hpa.tempalte": {},
            "spec.weightBasedScalingIntervals.0.vpaWeight": -5,
        },
        [
            'spec.targetRef.kind: must be one of Deployment, StatefulSet, ReplicaSet (got "Job")',
            f"{T}.maxReplicas: must be >= 1 (got 0)",
            'spec.hpa.tempalte: unknown field (did you mean "template"?)',
            "spec.weightBasedScalingIntervals[0].vpaWeight: must be >= 0 (got -5)",
        ],
        id="every-problem-reported",
    ),
]


@pytest.mark.parametrize(("changes", "expected"), ROWS)
def test_rule(changes: dict[str, Any], expected: list[str]) -> None:
    assert sorted(problems_of(edited(changes))) == sorted(expected)


THREE_STAGE = {
    "apiVersion": "autoscaling.k8s.io/v1alpha1",
    "kind": "Hvpa",
    "metadata": {"name": "sample"},
    "spec": {
        "stageTwoStartReplicaCount": 3,
        "stageTwoStopReplicaCount": 7,
        "secondStageVpaWeight": 0.4,
        "hpaSpec": {
            "minReplicas": 2,
            "maxReplicas": 10,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        },
    },
}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        pytest.param({}, [], id="valid"),
        pytest.param(
            {"spec.secondStageVpaWeight": 1.5},
            ["spec.secondStageVpaWeight: must be <= 1 (got 1.5)"],
            id="weight-fraction",
        ),
        pytest.param(
            {"spec.stageTwoStopReplicaCount": 2},
            ["spec.stageTwoStopReplicaCount: must be >= stageTwoStartReplicaCount (3)"],
            id="stop-before-start",
        ),
        pytest.param(
            {"spec.stageTwoStartReplicaCount": 1},
            ["spec.stageTwoStartReplicaCount: must be >= hpaSpec.minReplicas (2)"],
            id="start-below-min",
        ),
        pytest.param(
            {"spec.stageTwoStopReplicaCount": 12},
            ["spec.stageTwoStopReplicaCount: must be <= hpaSpec.maxReplicas (10)"],
            id="stop-above-max",
        ),
        pytest.param(
            {"spec.hpaSpec": DELETE},
            ["spec.hpaSpec: required by the three-stage form"],
            id="hpaSpec-required",
        ),
        pytest.param(
            {"spec.hpaSpec.maxReplicas": 1},
            [
                "spec.hpaSpec.maxReplicas: must be >= minReplicas (2)",
                "spec.stageTwoStartReplicaCount: must be <= hpaSpec.maxReplicas (1)",
                "spec.stageTwoStopReplicaCount: must be <= hpaSpec.maxReplicas (1)",
            ],
            id="hpaSpec-problem-named-as-written",
        ),
        pytest.param(
            {"spec.hpaSpec.scaleTargetRef.kind": "CronJob"},
            [
                'spec.hpaSpec.scaleTargetRef.kind: must be one of Deployment, StatefulSet, ReplicaSet (got "CronJob")'
            ],
            id="scaleTargetRef-named-as-written",
        ),
        pytest.param(
            {"spec.hpaSpec.targetCPUUtilizationPercentage": 0},
            ["spec.hpaSpec.targetCPUUtilizationPercentage: must be >= 1 (got 0)"],
            id="target-cpu",
        ),
        pytest.param(
            {"spec.hpa": {"deploy": True}},
            [
                "spec.hpa: cannot be combined with the three-stage form (hpaSpec, stageTwoStartReplicaCount, ...), "
                "which sets it itself"
            ],
            id="not-with-gardener-form",
        ),
        pytest.param(
            {"spec.vpaSpec": {"updatePolicy": {"updateMode": "Auto"}}},
            [
                "spec.vpaSpec.updatePolicy.updateMode: must be Off: hvpa applies the VPA's recommendations itself, "
                "and a VPA updater would fight it"
            ],
            id="vpa-update-mode-off",
        ),
        pytest.param(
            {
                "spec.vpaSpec": {
                    "ResourcePolicy": {
                        "ContainerPolicies": [{"ContainerName": "web", "MaxAllowed": {"cpu": 2}}]
                    }
                }
            },
            [],
            id="vpaSpec-keys-case-insensitive",
        ),
        pytest.param(
            {
                "spec.vpaSpec": {
                    "resourcePolicy": {
                        "containerPolicies": [
                            {
                                "containerName": "web",
                                "MinAllowed": {"cpu": "1"},
                                "minAllowed": {"cpu": "2"},
                            }
                        ]
                    }
                }
            },
            [
                "spec.vpaSpec.resourcePolicy.containerPolicies[0].minAllowed: duplicate of MinAllowed"
            ],
            id="vpaSpec-duplicate-key",
        ),
        pytest.param(
            {"spec.StageTwoStartReplicaCount": 3},
            ["spec.StageTwoStartReplicaCount: unknown field"],
            id="case-insensitive-only-inside-hpaSpec-vpaSpec",
        ),
    ],
)
def test_three_stage_rule(changes: dict[str, Any], expected: list[str]) -> None:
    assert sorted(problems_of(edited(changes, THREE_STAGE))) == sorted(expected)


def test_problem_renders_as_path_colon_message() -> None:
    with pytest.raises(InvalidHvpa) as raised:
        parse_hvpa(edited({f"{T}.minReplicas": 4, f"{T}.maxReplicas": 2}))
    assert raised.value.problems == (Problem(f"{T}.maxReplicas", "must be >= minReplicas (4)"),)
    assert str(raised.value) == f"{T}.maxReplicas: must be >= minReplicas (4)"


@pytest.mark.parametrize(
    "document",
    [
        pytest.param(None, id="null"),
        pytest.param([base()], id="list"),
        pytest.param("Hvpa", id="string"),
    ],
)
def test_not_an_object(document: Any) -> None:
    assert problems_of(document) == ["an Hvpa must be an object"]
