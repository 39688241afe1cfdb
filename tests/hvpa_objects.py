"""Hvpa and VPA-status bodies shared by the integration and the e2e tests.

Both suites create the same Hvpa (an HPA on CPU utilization, a child VPA
optionally) and write the same recommendation a VPA recommender would; they
differ only in how they send them (the in-repo server's object store, or
HTTP to a real kube-apiserver).
"""

from __future__ import annotations

from typing import Any


def hvpa_body(
    name: str,
    *,
    target: str,
    target_kind: str = "Deployment",
    metadata: dict[str, Any] | None = None,
    min_replicas: int = 1,
    max_replicas: int = 10,
    utilization: int = 50,
    hpa: bool = True,
    vpa: bool = False,
    vpa_weight: int = 0,
    **spec: Any,
) -> dict[str, Any]:
    """An Hvpa in the current form: HPA on CPU utilization, optionally a child VPA."""
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": name, **(metadata or {})},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": target_kind, "name": target},
            "hpa": {
                "deploy": hpa,
                "selector": {"matchLabels": {"role": f"{name}-hpa"}},
                "template": {
                    "metadata": {"labels": {"role": f"{name}-hpa"}},
                    "spec": {
                        "minReplicas": min_replicas,
                        "maxReplicas": max_replicas,
                        "metrics": [
                            {
                                "type": "Resource",
                                "resource": {
                                    "name": "cpu",
                                    "target": {
                                        "type": "Utilization",
                                        "averageUtilization": utilization,
                                    },
                                },
                            }
                        ],
                    },
                },
            },
            "vpa": {
                "deploy": vpa,
                "selector": {"matchLabels": {"role": f"{name}-vpa"}},
                "template": {"metadata": {"labels": {"role": f"{name}-vpa"}}},
            },
            "weightBasedScalingIntervals": [{"vpaWeight": vpa_weight}],
            **spec,
        },
    }


def recommendation_status(container: str, *, cpu: str, memory: str) -> dict[str, Any]:
    """The status a VPA recommender writes: one container, target and bounds alike."""
    bounds = {"cpu": cpu, "memory": memory}
    return {
        "status": {
            "conditions": [{"type": "RecommendationProvided", "status": "True"}],
            "recommendation": {
                "containerRecommendations": [
                    {
                        "containerName": container,
                        "target": bounds,
                        "lowerBound": bounds,
                        "upperBound": bounds,
                    }
                ]
            },
        }
    }
