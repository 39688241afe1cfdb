"""Scenario objects for decide's tests of both axes: one Deployment `web`, its pods, metrics and VPA.

The defaults describe a settled workload the HPA is content with: 2 replicas
of one container `app` requesting 500m CPU and 1G memory (limits 1 CPU,
2G), each using 250m against a 50% utilization target, and a VPA whose
target is 1 CPU and 2G. Tests change what they are about and decide through
the scenario loader, so the objects are the ones `hvpa recommend` reads.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from hvpa.engine.decide import decide
from hvpa.engine.decision import Decision
from hvpa.quantity import parse_bytes
from hvpa.scenario import parse_scenario

NOW: Final = "2026-11-21T12:00:00Z"
NOW_SECONDS: Final = 1_795_262_400
NAMESPACE: Final = "shop"
STARTED: Final = "2026-11-21T10:00:00Z"


def at(seconds_ago: float) -> str:
    return datetime.fromtimestamp(int(NOW_SECONDS - seconds_ago), UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def hvpa_object(
    *,
    strategy: str | None = None,
    intervals: list[dict[str, Any]] | None = None,
    hpa: bool = True,
    vpa: bool = True,
    minimum: int = 1,
    maximum: int = 10,
    hpa_scale_up: dict[str, Any] | None = None,
    hpa_scale_down: dict[str, Any] | None = None,
    vpa_scale_up: dict[str, Any] | None = None,
    vpa_scale_down: dict[str, Any] | None = None,
    policies: list[dict[str, Any]] | None = None,
    limits_gap: dict[str, Any] | None = None,
    mixed: dict[str, Any] | None = None,
    window: tuple[str, str] | None = None,
    status: dict[str, Any] | None = None,
    created: str | None = None,
    name: str = "web",
) -> dict[str, Any]:
    metric = {
        "type": "Resource",
        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
    }
    hpa_spec: dict[str, Any] = {
        "deploy": hpa,
        "template": {"spec": {"minReplicas": minimum, "maxReplicas": maximum, "metrics": [metric]}},
    }
    vpa_spec: dict[str, Any] = {"deploy": vpa}
    for key, value in (("scaleUp", hpa_scale_up), ("scaleDown", hpa_scale_down)):
        if value is not None:
            hpa_spec[key] = value
    for key, value in (("scaleUp", vpa_scale_up), ("scaleDown", vpa_scale_down)):
        if value is not None:
            vpa_spec[key] = value
    if policies is not None:
        vpa_spec["template"] = {"spec": {"resourcePolicy": {"containerPolicies": policies}}}
    if limits_gap is not None:
        vpa_spec["limitsRequestsGapScaleParams"] = limits_gap
    spec: dict[str, Any] = {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "hpa": hpa_spec,
        "vpa": vpa_spec,
        "weightBasedScalingIntervals": [{"vpaWeight": 50}] if intervals is None else intervals,
    }
    if strategy is not None:
        spec["strategy"] = strategy
    if mixed is not None:
        spec["mixed"] = mixed
    if window is not None:
        spec["maintenanceTimeWindow"] = {"begin": window[0], "end": window[1]}
    metadata: dict[str, Any] = {"name": name, "namespace": NAMESPACE, "generation": 1}
    if created is not None:
        metadata["creationTimestamp"] = created
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": metadata,
        "spec": spec,
        "status": {"history": {"recommendations": []}} if status is None else status,
    }


def resources(
    cpu: str | None = "500m",
    memory: str | None = "1G",
    cpu_limit: str | None = "1",
    memory_limit: str | None = "2G",
) -> dict[str, dict[str, str]]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    limits = {k: v for k, v in (("cpu", cpu_limit), ("memory", memory_limit)) if v is not None}
    return {"requests": requests, "limits": limits}


def scenario(
    hvpa: dict[str, Any] | None = None,
    *,
    replicas: int = 2,
    usage: str = "250m",
    container: dict[str, dict[str, str]] | None = None,
    vpa_target: dict[str, str] | None = None,
    vpa_conditions: list[dict[str, str]] | None = None,
    vpa_mode: str = "Off",
    with_vpa: bool = True,
    rolling: bool = False,
    oom_killed_at: str | None = None,
    autoscalers: list[dict[str, Any]] | None = None,
    other_hvpas: list[dict[str, Any]] | None = None,
    now: str = NOW,
) -> dict[str, Any]:
    """A scenario document; `usage` is each pod's CPU usage."""
    box = {"name": "app", "image": "shop:1", "resources": container or resources()}
    status = {
        "observedGeneration": 1,
        "replicas": replicas,
        "updatedReplicas": replicas - 1 if rolling else replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
    }
    raw: dict[str, Any] = {
        "now": now,
        "hvpa": hvpa or hvpa_object(),
        "target": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": NAMESPACE, "generation": 1},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [box]}},
            },
            "status": status,
        },
        "pods": [_pod(index, box, oom_killed_at) for index in range(replicas)],
        "podMetrics": [
            {
                "apiVersion": "metrics.k8s.io/v1beta1",
                "kind": "PodMetrics",
                "metadata": {"name": f"web-{index}", "namespace": NAMESPACE},
                "timestamp": at(30),
                "window": "30s",
                "containers": [{"name": "app", "usage": {"cpu": usage, "memory": "500M"}}],
            }
            for index in range(replicas)
        ],
        "autoscalers": autoscalers or [],
        "otherHvpas": other_hvpas or [],
    }
    if with_vpa:
        raw["vpa"] = {
            "apiVersion": "autoscaling.k8s.io/v1",
            "kind": "VerticalPodAutoscaler",
            "metadata": {"name": "web-vpa", "namespace": NAMESPACE},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "updatePolicy": {"updateMode": vpa_mode},
            },
            "status": {
                "conditions": vpa_conditions
                if vpa_conditions is not None
                else [{"type": "RecommendationProvided", "status": "True"}],
                "recommendation": {
                    "containerRecommendations": [
                        {
                            "containerName": "app",
                            "target": vpa_target or {"cpu": "1", "memory": "2G"},
                        }
                    ]
                },
            },
        }
    return raw


def _pod(index: int, box: dict[str, Any], oom_killed_at: str | None) -> dict[str, Any]:
    status: dict[str, Any] = {
        "phase": "Running",
        "startTime": STARTED,
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": STARTED}],
    }
    if oom_killed_at is not None and index == 0:
        status["containerStatuses"] = [
            {
                "name": "app",
                "restartCount": 1,
                "lastState": {
                    "terminated": {
                        "reason": "OOMKilled",
                        "exitCode": 137,
                        "finishedAt": oom_killed_at,
                    }
                },
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"web-{index}", "namespace": NAMESPACE, "labels": {"app": "web"}},
        "spec": {"nodeName": "node-1", "containers": [box]},
        "status": status,
    }


MEBIBYTE: Final = 1 << 20


def written(count: int) -> int:
    """Bytes the arithmetic gives (Gardener's, 1000-byte steps) as hvpa writes them: rounded
    up to a whole MiB (hvpa/engine/vertical/limits.py says why)."""
    return -(-count // MEBIBYTE) * MEBIBYTE


def written_memory(gardener: str) -> str:
    """A memory quantity Gardener's arithmetic gives (`1320000k`) as hvpa writes it (`1259Mi`)."""
    return f"{written(parse_bytes(gardener)) // MEBIBYTE}Mi"


def run(raw: dict[str, Any]) -> Decision:
    loaded = parse_scenario(raw)
    return decide(loaded.hvpa, loaded.snapshot, loaded.now, loaded.settings)


def requests_of(decision: Decision) -> tuple[int | None, int | None]:
    """The first container's CPU (millicores) and memory (bytes) requests."""
    resources = decision.containers[0].requests
    memory = resources.memory
    return resources.cpu, None if memory is None else memory // 1000


def limits_of(decision: Decision) -> tuple[int | None, int | None]:
    resources = decision.containers[0].limits
    memory = resources.memory
    return resources.cpu, None if memory is None else memory // 1000


def blocked_of(decision: Decision) -> list[tuple[str, str, str]]:
    return [(b.axis, b.direction, b.reason) for b in decision.blocked]


def condition(decision: Decision, kind: str) -> tuple[str, str] | None:
    found = next((c for c in decision.conditions if c.type == kind), None)
    return None if found is None else (found.status, found.reason)
