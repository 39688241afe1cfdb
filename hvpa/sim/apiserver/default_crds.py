"""The CRDs a new server has installed: hvpa's own, and the VerticalPodAutoscaler's.

The Hvpa CRD is hvpa.api.crd's, the one `manifests/crd.yaml` holds, so the
server validates Hvpas exactly as a cluster with hvpa installed would.

The VerticalPodAutoscaler CRD is written here from what the VPA's v1 API
documents (kubernetes/autoscaler's vertical-pod-autoscaler), reduced to the
fields hvpa and the simulator's recommender write and read, with the
printer columns `kubectl get vpa` shows. Fields it does not declare are
kept (x-kubernetes-preserve-unknown-fields) rather than pruned, so a client
writing more of the VPA API than this schema names loses nothing here,
where the real CRD would check those fields too.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, Final

from hvpa.api.crd import crd as hvpa_crd

__all__ = ["VPA_CRD", "default_crds"]

_QUANTITY: Final = {
    "anyOf": [{"type": "integer"}, {"type": "string"}],
    "x-kubernetes-int-or-string": True,
}
_RESOURCES: Final = {
    "type": "object",
    "additionalProperties": _QUANTITY,
}
_CONDITION: Final = {
    "type": "object",
    "required": ["type", "status"],
    "properties": {
        "type": {"type": "string", "description": "The condition, e.g. RecommendationProvided."},
        "status": {"type": "string", "description": "True, False or Unknown."},
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "reason": {"type": "string"},
        "message": {"type": "string"},
    },
}
_RECOMMENDATION: Final = {
    "type": "object",
    "properties": {
        "containerName": {"type": "string", "description": "The container recommended for."},
        "target": {**_RESOURCES, "description": "The recommended requests."},
        "lowerBound": {**_RESOURCES, "description": "The least the container should get."},
        "upperBound": {**_RESOURCES, "description": "The most the container should get."},
        "uncappedTarget": {
            **_RESOURCES,
            "description": "The recommendation before the container policy's bounds.",
        },
    },
}
_CONTAINER_POLICY: Final = {
    "type": "object",
    "x-kubernetes-preserve-unknown-fields": True,
    "properties": {
        "containerName": {
            "type": "string",
            "description": "The container this policy is for; `*` for every other one.",
        },
        "mode": {"type": "string", "enum": ["Auto", "Off"]},
        "minAllowed": {**_RESOURCES, "description": "The least a recommendation may be."},
        "maxAllowed": {**_RESOURCES, "description": "The most a recommendation may be."},
        "controlledResources": {"type": "array", "items": {"type": "string"}},
        "controlledValues": {"type": "string", "enum": ["RequestsAndLimits", "RequestsOnly"]},
    },
}
_VPA_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "description": "Recommends (and may apply) container resources for a workload.",
    "required": ["spec"],
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "description": "The workload and how its recommendations are used.",
            "required": ["targetRef"],
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {
                "targetRef": {
                    "type": "object",
                    "description": "The workload (its /scale subresource) to recommend for.",
                    "required": ["kind", "name"],
                    "properties": {
                        "apiVersion": {"type": "string"},
                        "kind": {"type": "string"},
                        "name": {"type": "string"},
                    },
                },
                "updatePolicy": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {
                        "updateMode": {
                            "type": "string",
                            "description": "Off: recommend only (what hvpa's VPAs use).",
                            "enum": ["Off", "Initial", "Recreate", "Auto", "InPlaceOrRecreate"],
                        },
                        "minReplicas": {"type": "integer", "format": "int32"},
                    },
                },
                "resourcePolicy": {
                    "type": "object",
                    "properties": {
                        "containerPolicies": {"type": "array", "items": _CONTAINER_POLICY}
                    },
                },
                "recommenders": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
            },
        },
        "status": {
            "type": "object",
            "description": "The recommender's latest recommendation and conditions.",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {
                "recommendation": {
                    "type": "object",
                    "properties": {
                        "containerRecommendations": {"type": "array", "items": _RECOMMENDATION}
                    },
                },
                "conditions": {"type": "array", "items": _CONDITION},
            },
        },
    },
}

VPA_CRD: Final[dict[str, Any]] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {
        "name": "verticalpodautoscalers.autoscaling.k8s.io",
        "annotations": {
            "api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/63797"
        },
    },
    "spec": {
        "group": "autoscaling.k8s.io",
        "names": {
            "kind": "VerticalPodAutoscaler",
            "listKind": "VerticalPodAutoscalerList",
            "plural": "verticalpodautoscalers",
            "singular": "verticalpodautoscaler",
            "shortNames": ["vpa"],
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": _VPA_SCHEMA},
                "additionalPrinterColumns": [
                    {"name": "Mode", "type": "string", "jsonPath": ".spec.updatePolicy.updateMode"},
                    {
                        "name": "CPU",
                        "type": "string",
                        "jsonPath": ".status.recommendation.containerRecommendations[0].target.cpu",
                    },
                    {
                        "name": "Mem",
                        "type": "string",
                        "jsonPath": ".status.recommendation.containerRecommendations[0].target.memory",
                    },
                    {
                        "name": "Provided",
                        "type": "string",
                        "jsonPath": ".status.conditions[?(@.type=='RecommendationProvided')].status",
                    },
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
            }
        ],
    },
}


def default_crds() -> list[dict[str, Any]]:
    """Fresh copies (the server takes ownership of what it is given)."""
    return [copy.deepcopy(_hvpa_crd()), copy.deepcopy(VPA_CRD)]


@lru_cache(maxsize=1)
def _hvpa_crd() -> dict[str, Any]:
    """Rendered once per process: it takes a fifth of a second, and every server needs it."""
    return hvpa_crd()
