"""Objects the end-to-end tests create (workloads, Hvpas, VPA recommendations) and what they
read back (replicas, requests, conditions, Events), as plain JSON over the admin Api.
"""

from __future__ import annotations

from typing import Any

from e2e_api import Api
from hvpa_objects import hvpa_body, recommendation_status

__all__ = [
    "condition",
    "deployment",
    "events",
    "hvpa",
    "hvpa_path",
    "recommend",
    "statefulset",
    "workload_path",
]

HVPA_GROUP = "/apis/autoscaling.k8s.io/v1alpha1"
VPA_GROUP = "/apis/autoscaling.k8s.io/v1"
CONTAINER = "app"


def _pod_template(name: str, requests: dict[str, str]) -> dict[str, Any]:
    return {
        "metadata": {"labels": {"app": name}},
        "spec": {
            "containers": [
                {
                    "name": CONTAINER,
                    "image": "registry.invalid/app:1",
                    "resources": {"requests": requests},
                }
            ],
        },
    }


def deployment(name: str, *, replicas: int, requests: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": _pod_template(name, requests),
        },
    }


def statefulset(name: str, *, replicas: int, requests: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            # Parallel: pods start together, as the HPA tests want them (the default
            # OrderedReady waits for each in turn).
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": name}},
            "template": _pod_template(name, requests),
        },
    }


def workload_path(namespace: str, kind: str, name: str = "") -> str:
    plural = {"Deployment": "deployments", "StatefulSet": "statefulsets"}[kind]
    return f"/apis/apps/v1/namespaces/{namespace}/{plural}" + (f"/{name}" if name else "")


def hvpa_path(namespace: str, name: str = "") -> str:
    return f"{HVPA_GROUP}/namespaces/{namespace}/hvpas" + (f"/{name}" if name else "")


def vpa_path(namespace: str, name: str = "") -> str:
    return f"{VPA_GROUP}/namespaces/{namespace}/verticalpodautoscalers" + (
        f"/{name}" if name else ""
    )


def hvpa(
    name: str, *, target_kind: str = "Deployment", max_replicas: int = 6, **options: Any
) -> dict[str, Any]:
    """The shared Hvpa body (tests/hvpa_objects.py) targeting a workload of its own name."""
    return hvpa_body(
        name, target=name, target_kind=target_kind, max_replicas=max_replicas, **options
    )


def recommend(api: Api, namespace: str, vpa_name: str, *, cpu: str, memory: str) -> None:
    """What the VPA recommender would write into the child VPA's status."""
    api.patch(
        vpa_path(namespace, vpa_name) + "/status",
        recommendation_status(CONTAINER, cpu=cpu, memory=memory),
    )


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    for item in obj.get("status", {}).get("conditions", []) or []:
        if item.get("type") == kind:
            return dict(item)
    return None


def events(api: Api, namespace: str, *, reason: str | None = None) -> list[dict[str, Any]]:
    listed = api.get(f"/api/v1/namespaces/{namespace}/events")["items"]
    return [e for e in listed if reason is None or e.get("reason") == reason]


def ready_pods(api: Api, namespace: str, app: str) -> int:
    pods = api.get(f"/api/v1/namespaces/{namespace}/pods", params={"labelSelector": f"app={app}"})
    return sum(
        1
        for pod in pods["items"]
        if pod.get("status", {}).get("phase") == "Running"
        and any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in pod["status"].get("conditions", [])
        )
    )
