"""Properties of every decision, over random specs and snapshots (hypothesis).

Whatever the strategy, weights, update modes, windows, MinChange, container
policies, limits, VPA state, pod usage, OOMKills, history and other writers:
decide never raises; no request it sets is above its limit, below
minAllowed or above maxAllowed; and the replica count stays within
[minReplicas, maxReplicas] while the horizontal axis acts. The exceptions
are upstream's: with the horizontal axis off the count is left as it is,
and a target at 0 replicas is not scaled (upstream's "scaling is disabled");
another HPA on the target holds the count wherever it is; and a Capacity
Hvpa with nothing to measure demand from (NoDemand) holds it too.
The random objects go through the scenario loader, as `hvpa recommend`
reads them; specs the API would reject are skipped.
"""

from __future__ import annotations

from typing import Any

from decide_kit import NAMESPACE, NOW, at
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from hvpa.engine.decide import decide
from hvpa.engine.decision import Decision
from hvpa.quantity import parse_milli
from hvpa.records import ContainerSpec
from hvpa.scenario import ScenarioError, parse_scenario

CONTAINERS = ("app", "sidecar")
RESOURCES = ("cpu", "memory")
STRATEGIES = ("Weighted", "HpaPreferred", "HpaBiased", "VpaBiased", "Mixed", "Capacity")

often = st.sampled_from([True, True, True, True, False])
rarely = st.sampled_from([True, False, False, False, False])
cpu = st.integers(1, 8000).map(lambda m: f"{m}m")
memory = st.one_of(
    st.integers(1, 16_000).map(lambda m: f"{m}M"),
    st.integers(1, 16_000).map(lambda m: f"{m}Mi"),
    st.integers(1_000, 9_999_999).map(lambda k: f"{k}k"),
)
AMOUNTS = {"cpu": cpu, "memory": memory}


def ordered(low: str | None, high: str | None) -> tuple[str | None, str | None]:
    if low is not None and high is not None and parse_milli(high) < parse_milli(low):
        return high, low
    return low, high


@st.composite
def container_resources(draw: st.DrawFn) -> dict[str, dict[str, str]]:
    """Requests and limits as the API accepts them: no request above its limit."""
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    for resource in RESOURCES:
        request, limit = ordered(
            draw(st.none() | AMOUNTS[resource]), draw(st.none() | AMOUNTS[resource])
        )
        if request is not None:
            requests[resource] = request
        if limit is not None:
            limits[resource] = limit
    return {"requests": requests, "limits": limits}


@st.composite
def policy(draw: st.DrawFn, name: str) -> dict[str, Any]:
    out: dict[str, Any] = {"containerName": name}
    low: dict[str, str] = {}
    high: dict[str, str] = {}
    for resource in RESOURCES:
        a, b = ordered(draw(st.none() | AMOUNTS[resource]), draw(st.none() | AMOUNTS[resource]))
        if a is not None:
            low[resource] = a
        if b is not None:
            high[resource] = b
    if low:
        out["minAllowed"] = low
    if high:
        out["maxAllowed"] = high
    out["mode"] = draw(st.sampled_from(["Auto", "Auto", "Auto", "Off"]))
    out["controlledValues"] = draw(st.sampled_from(["RequestsAndLimits", "RequestsOnly"]))
    controlled = draw(st.sampled_from([None, ["cpu"], ["memory"], ["cpu", "memory"]]))
    if controlled is not None:
        out["controlledResources"] = controlled
    return out


def change_params(amount: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={"value": amount, "percentage": st.integers(0, 200)})


@st.composite
def scale(draw: st.DrawFn, vertical: bool) -> dict[str, Any] | None:
    if draw(st.booleans()):
        return None
    out: dict[str, Any] = {
        "updatePolicy": {
            "updateMode": draw(st.sampled_from(["Auto", "Auto", "Off", "MaintenanceWindow"]))
        }
    }
    window = draw(st.sampled_from([None, "0s", "1m", "3m", "1h"]))
    if window is not None:
        out["stabilizationDuration"] = window
    if vertical and draw(st.booleans()):
        out["minChange"] = {"cpu": draw(change_params(cpu)), "memory": draw(change_params(memory))}
    return out


@st.composite
def capacity(draw: st.DrawFn, minimum: int, maximum: int) -> dict[str, Any]:
    """A curve validation accepts: points within min..max, nothing shrinking, overhead below it."""
    count = draw(st.integers(1, 4))
    replicas = sorted(draw(st.lists(st.integers(minimum, maximum), min_size=count, max_size=count)))
    resources = draw(st.sampled_from([("cpu",), ("memory",), ("cpu", "memory")]))
    points: list[dict[str, Any]] = [{"replicas": r} for r in replicas]
    base: dict[str, str] = {}
    for resource in resources:
        unit = "m" if resource == "cpu" else "M"
        amounts = sorted(draw(st.lists(st.integers(1, 8000), min_size=count, max_size=count)))
        for point, amount in zip(points, amounts, strict=True):
            point[resource] = f"{amount}{unit}"
        if draw(st.booleans()):
            base[resource] = f"{draw(st.integers(0, amounts[0] - 1))}{unit}"
    out: dict[str, Any] = {"curve": points, "tolerance": draw(st.sampled_from([0, 5, 10, 25]))}
    if base:
        out["baseResourcesPerReplica"] = base
    return out


@st.composite
def hvpa_document(draw: st.DrawFn, containers: tuple[str, ...]) -> dict[str, Any]:
    strategy = draw(st.sampled_from(STRATEGIES))
    minimum = draw(st.integers(1, 5))
    maximum = draw(st.integers(minimum, 10))
    intervals = []
    for _ in range(draw(st.integers(0, 3))):
        interval: dict[str, int] = {"vpaWeight": draw(st.integers(0, 100))}
        start = draw(st.none() | st.integers(1, 10))
        last = draw(st.none() | st.integers(start or 1, 10))
        if start is not None:
            interval["startReplicaCount"] = start
        if last is not None:
            interval["lastReplicaCount"] = last
        intervals.append(interval)
    metric = {
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": draw(st.integers(10, 150))},
        },
    }
    hpa: dict[str, Any] = {
        "deploy": draw(often),
        "template": {"spec": {"minReplicas": minimum, "maxReplicas": maximum, "metrics": [metric]}},
    }
    vpa: dict[str, Any] = {"deploy": draw(often)}
    for part, vertical in ((hpa, False), (vpa, True)):
        for key in ("scaleUp", "scaleDown"):
            value = draw(scale(vertical))
            if value is not None:
                part[key] = value
    names = draw(st.lists(st.sampled_from([*containers, "*"]), unique=True, max_size=3))
    if names:
        policies = [draw(policy(name)) for name in names]
        vpa["template"] = {"spec": {"resourcePolicy": {"containerPolicies": policies}}}
    if draw(st.booleans()):
        vpa["limitsRequestsGapScaleParams"] = {
            "cpu": draw(change_params(cpu)),
            "memory": draw(change_params(memory)),
        }
    spec: dict[str, Any] = {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "strategy": strategy,
        "hpa": hpa,
        "vpa": vpa,
        "weightBasedScalingIntervals": intervals,
    }
    if strategy == "Mixed":
        spec["mixed"] = {
            "replicaThreshold": draw(st.integers(0, 3)),
            "cpuThreshold": draw(cpu),
            "memoryThreshold": draw(memory),
            "prefer": draw(st.sampled_from(["Hpa", "Vpa"])),
        }
    if strategy == "Capacity":
        spec["capacity"] = draw(capacity(minimum, maximum))
    if draw(st.booleans()):
        begin, end = draw(st.integers(0, 23)), draw(st.integers(0, 23))
        spec["maintenanceTimeWindow"] = {
            "begin": f"{begin:02}0000+0000",
            "end": f"{end:02}0000+0000",
        }
    status: dict[str, Any] = {
        "overrideScaleUpStabilization": draw(st.booleans()),
        "history": {"recommendations": []},
    }
    if draw(st.booleans()):
        status["lastScaling"] = {"lastScaleTime": at(draw(st.integers(0, 7200)))}
    if draw(st.booleans()):
        keys = ("horizontalUp", "horizontalDown", "verticalUp", "verticalDown")
        status["history"]["lastScaleTimes"] = {
            key: at(draw(st.integers(0, 7200))) for key in keys if draw(st.booleans())
        }
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": "web", "namespace": NAMESPACE, "generation": 1},
        "spec": spec,
        "status": status,
    }


VPA_CONDITIONS: tuple[list[dict[str, str]], ...] = (
    [{"type": "RecommendationProvided", "status": "True"}],
    [{"type": "RecommendationProvided", "status": "True"}],
    [{"type": "RecommendationProvided", "status": "True"}],
    [{"type": "RecommendationProvided", "status": "True"}],
    [],
    [{"type": "RecommendationProvided", "status": "False"}],
    [{"type": "LowConfidence", "status": "True"}],
    [{"type": "ConfigDeprecated", "status": "True"}],
)


@st.composite
def scenario_document(draw: st.DrawFn) -> dict[str, Any]:
    containers = CONTAINERS[: draw(st.integers(1, 2))]
    boxes = [
        {"name": name, "image": "shop:1", "resources": draw(container_resources())}
        for name in containers
    ]
    replicas = draw(st.integers(1, 12) | st.just(0))
    rolling = draw(rarely)
    pods = []
    metrics = []
    for index in range(replicas):
        status: dict[str, Any] = {
            "phase": "Running",
            "startTime": at(7200),
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": at(7200)}],
        }
        if draw(rarely):
            status["containerStatuses"] = [
                {
                    "name": draw(st.sampled_from(containers)),
                    "lastState": {
                        "terminated": {
                            "reason": "OOMKilled",
                            "finishedAt": at(draw(st.integers(0, 7200))),
                        }
                    },
                }
            ]
        pods.append(
            {
                "metadata": {
                    "name": f"web-{index}",
                    "namespace": NAMESPACE,
                    "labels": {"app": "web"},
                },
                "spec": {"containers": boxes},
                "status": status,
            }
        )
        metrics.append(
            {
                "metadata": {"name": f"web-{index}", "namespace": NAMESPACE},
                "timestamp": at(30),
                "window": "30s",
                "containers": [
                    {"name": name, "usage": {"cpu": draw(cpu), "memory": draw(memory)}}
                    for name in containers
                ],
            }
        )
    raw: dict[str, Any] = {
        "now": NOW,
        "hvpa": draw(hvpa_document(containers)),
        "target": {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": NAMESPACE, "generation": 1},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": boxes}},
            },
            "status": {
                "observedGeneration": 1,
                "replicas": replicas,
                "updatedReplicas": max(0, replicas - 1) if rolling else replicas,
                "availableReplicas": replicas,
            },
        },
        "pods": pods,
        "podMetrics": metrics,
    }
    if draw(often):
        raw["vpa"] = {
            "kind": "VerticalPodAutoscaler",
            "metadata": {"name": "web-vpa", "namespace": NAMESPACE},
            "spec": {
                "targetRef": {"kind": "Deployment", "name": "web"},
                "updatePolicy": {"updateMode": "Off"},
            },
            "status": {
                "conditions": draw(st.sampled_from(VPA_CONDITIONS)),
                "recommendation": {
                    "containerRecommendations": [
                        {
                            "containerName": name,
                            "target": {"cpu": draw(cpu), "memory": draw(memory)},
                        }
                        for name in containers
                        if draw(often)
                    ]
                },
            },
        }
    if draw(rarely):
        raw["autoscalers"] = [
            {
                "kind": draw(st.sampled_from(["HorizontalPodAutoscaler", "VerticalPodAutoscaler"])),
                "metadata": {"name": "other"},
                "spec": {
                    "scaleTargetRef": {"kind": "Deployment", "name": "web"},
                    "targetRef": {"kind": "Deployment", "name": "web"},
                    "updatePolicy": {"updateMode": draw(st.sampled_from(["Off", "Auto"]))},
                },
            }
        ]
    return raw


def policy_for(raw: dict[str, Any], name: str) -> dict[str, Any]:
    """The container's policy as the engine picks it: its own name over `*`."""
    template = raw["hvpa"]["spec"]["vpa"].get("template", {})
    policies = template.get("spec", {}).get("resourcePolicy", {}).get("containerPolicies", [])
    own: list[dict[str, Any]] = [p for p in policies if p["containerName"] == name]
    default: list[dict[str, Any]] = [p for p in policies if p["containerName"] == "*"]
    return (own or default or [{}])[0]


def check(raw: dict[str, Any], before: tuple[ContainerSpec, ...], decision: Decision) -> None:
    spec = raw["hvpa"]["spec"]
    current = raw["target"]["spec"]["replicas"]
    template = spec["hpa"]["template"]["spec"]
    writers = {writer["kind"] for writer in raw.get("autoscalers", [])}
    held = "HorizontalPodAutoscaler" in writers
    no_demand = any(c.reason == "NoDemand" for c in decision.conditions)
    if not spec["hpa"]["deploy"] or current == 0 or held or no_demand:
        assert decision.desired_replicas == current
    else:
        assert template["minReplicas"] <= decision.desired_replicas <= template["maxReplicas"]
    old = {c.name: c for c in before}
    for result in decision.containers:
        bounds = policy_for(raw, result.name)
        for resource in RESOURCES:
            request, limit = result.requests.get(resource), result.limits.get(resource)
            if request is not None and limit is not None:
                assert request <= limit, (result.name, resource)
            if request == old[result.name].requests.get(resource):
                continue
            assert request is not None
            low = bounds.get("minAllowed", {}).get(resource)
            high = bounds.get("maxAllowed", {}).get(resource)
            if low is not None:
                assert request >= parse_milli(low), (result.name, resource, "minAllowed")
            if high is not None:
                assert request <= parse_milli(high), (result.name, resource, "maxAllowed")


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(scenario_document())
def test_every_decision_keeps_requests_and_replicas_within_their_bounds(
    raw: dict[str, Any],
) -> None:
    try:
        loaded = parse_scenario(raw)
    except ScenarioError:
        assume(False)
        raise
    assert loaded.snapshot.target is not None
    decision = decide(loaded.hvpa, loaded.snapshot, loaded.now, loaded.settings)
    check(raw, loaded.snapshot.target.containers, decision)
    event(f"strategy: {raw['hvpa']['spec']['strategy']}, rescaled or resized: {decision.scales}")
    event(f"resized: {any(c.changed for c in decision.containers)}")
    event(f"rescaled: {decision.desired_replicas != decision.current_replicas}")
    for blocked in decision.blocked:
        event(f"blocked: {blocked.reason}")
    assert decision.explanation[-1].startswith("decision:")
