"""Write the scenario files of this directory from Gardener's hvpa-controller tests.

Each case is one entry of gardener/hvpa-controller's test tables, rendered
as the objects its test builds (suite_test.go's newHvpa, newTarget,
newVpaStatus) in an `hvpa recommend` scenario, with Gardener's expected
result beside it, never hvpa's output:

- controllers/autoscaling/hvpa_controller_test.go "##ScaleTestScenarios"
  (the v1alpha1 line), plus "Initial HPA scaling" and "Initial VPA scaling"
  of the api/v1alpha1 line's table (controllers/hvpa_controller_test.go);
- utils/timewindow_test.go "#Contains" and "#ParseMaintenanceTime", as
  whole decisions of an Hvpa whose vertical scale-up waits for its
  maintenance window.

Gardener's tests hand its functions the HPA's status (current and desired
replicas) and a vpaWeight; hvpa computes the horizontal recommendation
itself, so each case gets pods and pod metrics that make upstream's HPA
arithmetic give the same desired count (CPU below the request, so the
starvation guard stays out of it), and one weight interval holding the
test's vpaWeight. Where Gardener's expectation is one of its documented
faults, the scenario expects the corrected behaviour and names the point of
docs/gardener-compatibility.md. The expected resources are Gardener's, with
hvpa's one documented difference in what is written applied to them by
`as_written`: memory that changes is rounded up to a whole MiB (Gardener:
1000 bytes; hvpa/engine/vertical/limits.py says why). Regenerate after
editing a case:

    .venv/bin/python tests/engine/scenarios/gardener/generate.py
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

import yaml

from hvpa.quantity import parse_bytes

HERE: Final = Path(__file__).parent
DAY: Final = "2026-11-21"
NOW: Final = f"{DAY}T12:00:00Z"
STARTED: Final = f"{DAY}T10:00:00Z"
NAMESPACE: Final = "default"
NAME: Final = "deployment"  # newTarget("deployment", ...): also the container's name
SOURCE: Final = "gardener/hvpa-controller"

# hvpa_controller_test.go's minChange and limitScale.
MIN_CHANGE: Final = {
    "cpu": {"value": "100m", "percentage": 80},
    "memory": {"value": "100M", "percentage": 80},
}
LIMIT_SCALE: Final = {
    "cpu": {"value": "1", "percentage": 80},
    "memory": {"value": "1G", "percentage": 80},
}
# newHvpa's HPA metric: 70% average CPU utilization (autoscaling/v2beta1 form).
UTILIZATION_70: Final = {
    "type": "Resource",
    "resource": {"name": "cpu", "targetAverageUtilization": 70},
}


def resources(
    requests: dict[str, str], limits: dict[str, str] | None = None
) -> dict[str, dict[str, str]]:
    out = {"requests": requests}
    if limits:
        out["limits"] = limits
    return out


UNSCALED: Final = resources({"cpu": "300m", "memory": "200M"}, {"cpu": "2", "memory": "5G"})
SCALED_BY_WEIGHT_40: Final = resources(
    {"cpu": "300m", "memory": "1320000k"}, {"cpu": "2", "memory": "2376000k"}
)
PROPORTIONAL_SCALED: Final = resources(
    {"cpu": "300m", "memory": "1320000k"}, {"cpu": "2", "memory": "33000000k"}
)
LIMIT_EQUALLY_SCALED: Final = resources({"cpu": "200m", "memory": "340000k"}, {"memory": "340000k"})
REQUESTS_CAPPED_TO_LIMIT: Final = resources({"cpu": "500m", "memory": "600M"}, {"memory": "600M"})
SCALED_BY_WEIGHT_100: Final = resources(
    {"cpu": "500m", "memory": "3000000k"}, {"cpu": "3333m", "memory": "75000000k"}
)


MEBIBYTE: Final = 1 << 20


def as_written(
    before: dict[str, dict[str, str]], gardener: dict[str, dict[str, str]]
) -> dict[str, dict[str, str]]:
    """Gardener's expected resources as hvpa writes them: each memory amount that is none
    of `before`'s (so was computed, not kept: a request lowered to its unchanged limit is
    that limit) rounded up to a whole MiB."""
    kept = {amounts.get("memory") for amounts in before.values()}
    out: dict[str, dict[str, str]] = {}
    for kind, amounts in gardener.items():
        out[kind] = dict(amounts)
        memory = amounts.get("memory")
        if memory is not None and memory not in kept:
            mebibytes = -(-parse_bytes(memory) // MEBIBYTE)
            out[kind]["memory"] = f"{mebibytes}Mi"
    return out


@dataclass(frozen=True)
class Case:
    """One Gardener test entry, and what Gardener expects of it."""

    name: str
    entry: str
    source: str
    replicas: int
    usage_percent: int  # each pod's CPU usage, in percent of its request (or of 1 core)
    vpa_cpu: str
    vpa_memory: str
    desired: int
    expected: dict[str, dict[str, str]]
    blocked: tuple[tuple[str, str, str], ...] = ()
    intervals: tuple[dict[str, int], ...] = ()
    vpa_weight: int = 40
    resources: dict[str, dict[str, str]] = field(default_factory=lambda: UNSCALED)
    limit_scale: dict[str, Any] | None = None
    update_mode: str | None = None
    window: tuple[str, str] | None = None
    now: str = NOW
    vpa_conditions: tuple[dict[str, str], ...] = ()
    policy: dict[str, Any] | None = None
    metric: dict[str, Any] = field(default_factory=lambda: UTILIZATION_70)
    history: dict[str, Any] | None = None
    note: str = ""


def _hvpa(case: Case) -> dict[str, Any]:
    """suite_test.go's newHvpa("hvpa-2", "deployment", "label-2", minChange) and the entry's action."""

    def scale(min_change: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "updatePolicy": {"updateMode": case.update_mode or "Auto"},
            "stabilizationDuration": "3m",
        }
        if min_change:
            out["minChange"] = MIN_CHANGE
        return out

    vpa: dict[str, Any] = {
        "selector": {"matchLabels": {"vpaKey": "label-2"}},
        "deploy": True,
        "scaleUp": scale(True),
        "scaleDown": scale(True),
        "template": {"metadata": {"labels": {"vpaKey": "label-2"}}},
    }
    if case.policy is not None:
        vpa["template"]["spec"] = {"resourcePolicy": {"containerPolicies": [case.policy]}}
    if case.limit_scale is not None:
        vpa["limitsRequestsGapScaleParams"] = case.limit_scale
    spec: dict[str, Any] = {
        "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": NAME},
        "hpa": {
            "selector": {"matchLabels": {"hpaKey": "label-2"}},
            "deploy": True,
            "scaleUp": scale(False),
            "scaleDown": scale(False),
            "template": {
                "metadata": {"labels": {"hpaKey": "label-2"}},
                "spec": {"minReplicas": 1, "maxReplicas": 3, "metrics": [case.metric]},
            },
        },
        "vpa": vpa,
        "weightBasedScalingIntervals": list(case.intervals) or [{"vpaWeight": case.vpa_weight}],
    }
    if case.window is not None:
        spec["maintenanceTimeWindow"] = {"begin": case.window[0], "end": case.window[1]}
    obj: dict[str, Any] = {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {
            "name": "hvpa-2",
            "namespace": NAMESPACE,
            "generation": 1,
            "annotations": {"hpa-controller": "hvpa"},
        },
        "spec": spec,
    }
    if case.history is not None:
        obj["status"] = {"history": case.history}
    return obj


def _container(case: Case) -> dict[str, Any]:
    return {"name": NAME, "image": "k8s.gcr.io/pause-amd64:3.0", "resources": case.resources}


def _target(case: Case) -> dict[str, Any]:
    """newTarget(name, resources, replicas), as the API returns it once rolled out."""
    n = case.replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "generation": 1},
        "spec": {
            "replicas": n,
            "selector": {"matchLabels": {"name": NAME}},
            "template": {
                "metadata": {"labels": {"name": NAME}},
                "spec": {"containers": [_container(case)]},
            },
        },
        "status": {
            "observedGeneration": 1,
            "replicas": n,
            "updatedReplicas": n,
            "readyReplicas": n,
            "availableReplicas": n,
        },
    }


def _pods(case: Case) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{NAME}-{index}",
                "namespace": NAMESPACE,
                "labels": {"name": NAME},
            },
            "spec": {"nodeName": "test-node", "containers": [_container(case)]},
            "status": {
                "phase": "Running",
                "startTime": STARTED,
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": STARTED}],
            },
        }
        for index in range(case.replicas)
    ]


def _usage(case: Case) -> str:
    """Each pod's CPU usage: a percentage of its CPU request, or of one core without one."""
    request = case.resources["requests"].get("cpu")
    base = int(request.removesuffix("m")) if request else 1000
    return f"{base * case.usage_percent // 100}m"


def _pod_metrics(case: Case) -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": "metrics.k8s.io/v1beta1",
            "kind": "PodMetrics",
            "metadata": {"name": f"{NAME}-{index}", "namespace": NAMESPACE},
            "timestamp": "2026-11-21T11:59:30Z",
            "window": "30s",
            "containers": [{"name": NAME, "usage": {"cpu": _usage(case), "memory": "100M"}}],
        }
        for index in range(case.replicas)
    ]


def _vpa(case: Case) -> dict[str, Any]:
    """The VPA hvpa made from the template (updateMode Off), with newVpaStatus(name, mem, cpu)."""
    return {
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": {"name": "hvpa-2-vpa", "namespace": NAMESPACE},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": NAME},
            "updatePolicy": {"updateMode": "Off"},
        },
        "status": {
            "conditions": [
                *case.vpa_conditions,
                {"type": "RecommendationProvided", "status": "True"},
            ],
            "recommendation": {
                "containerRecommendations": [
                    {
                        "containerName": NAME,
                        "target": {"cpu": case.vpa_cpu, "memory": case.vpa_memory},
                    }
                ]
            },
        },
    }


def render(case: Case) -> tuple[dict[str, Any], dict[str, Any]]:
    scenario = {
        "now": case.now,
        "hvpa": _hvpa(case),
        "target": _target(case),
        "pods": _pods(case),
        "podMetrics": _pod_metrics(case),
        "vpa": _vpa(case),
    }
    reasons = list(dict.fromkeys(reason for _, _, reason in case.blocked))
    expected = {
        "replicas": {"current": case.replicas, "desired": case.desired},
        "containers": [{"name": NAME, **as_written(case.resources, case.expected)}],
        "blocked": [
            {"axis": axis, "direction": direction, "reason": reason}
            for axis, direction, reason in case.blocked
        ],
        "status": {"lastBlockedScaling": [{"reason": reason} for reason in reasons]},
    }
    return scenario, expected


SCALE_TESTS: Final = "controllers/autoscaling/hvpa_controller_test.go ##ScaleTestScenarios"
ALPHA1_TESTS: Final = "controllers/hvpa_controller_test.go ##ScaleTestScenarios (api/v1alpha1 line)"
MIN_CHANGE_UP: Final = ("vertical", "up", "MinChange")

# HPA 2 -> 3 at 70% utilization: 90% of the request gives ceil(2 x 90/70) = 3; each case
# below is this one with its own fields.
SCALE_UP: Final = Case(
    name="",
    entry="",
    source=SCALE_TESTS,
    replicas=2,
    usage_percent=90,
    vpa_cpu="500m",
    vpa_memory="3G",
    desired=3,
    expected=UNSCALED,
)
SCALE_CASES: Final = (
    replace(
        SCALE_UP,
        name="scale-only-memory",
        entry="UpdateMode Auto, Should Scale only memory",
        expected=SCALED_BY_WEIGHT_40,
        blocked=(MIN_CHANGE_UP,),
        limit_scale=LIMIT_SCALE,
    ),
    replace(
        SCALE_UP,
        name="blocked-scaling",
        entry="UpdateMode Auto, blocked Scaling",
        vpa_cpu="350m",
        vpa_memory="250M",
        vpa_weight=90,
        expected=UNSCALED,
        blocked=(MIN_CHANGE_UP,),
    ),
    replace(
        SCALE_UP,
        name="maintenance-window-blocked-scaling",
        entry="UpdateMode maintenanceWindow, blocked scaling",
        # HPA 2 -> 1: ceil(2 x 30/70) = 1, hpaWeight 10 gives floor(1.9) = 1, outside the window.
        usage_percent=30,
        history={"recommendations": []},
        vpa_cpu="50m",
        vpa_memory="50M",
        vpa_weight=90,
        update_mode="MaintenanceWindow",
        window=("150000+0000", "160000+0000"),
        desired=2,
        expected=UNSCALED,
        blocked=(
            ("horizontal", "down", "MaintenanceWindow"),
            ("vertical", "down", "MaintenanceWindow"),
        ),
        note="the window is now+3h..now+4h, as the test builds it",
    ),
    replace(
        SCALE_UP,
        name="maintenance-window-scale-only-memory",
        entry="UpdateMode maintenanceWindow, Should Scale only memory",
        vpa_cpu="200m",
        update_mode="MaintenanceWindow",
        window=("110000+0000", "130000+0000"),
        limit_scale=LIMIT_SCALE,
        expected=SCALED_BY_WEIGHT_40,
        blocked=(("vertical", "down", "MinChange"),),
        note="the window is now-1h..now+1h, as the test builds it",
    ),
    replace(
        SCALE_UP,
        name="hpa-scaling-not-limited",
        entry="UpdateMode Auto, HPA scaling not limited",
        expected=PROPORTIONAL_SCALED,
        blocked=(MIN_CHANGE_UP,),
        note=(
            "Gardener expects the memory scale-up blocked by UpdatePolicy because its HPA was "
            "not ScalingLimited; hvpa applies the weight in both directions "
            "(docs/gardener-compatibility.md point 8), as Gardener's api/v1alpha1 table does: "
            "proportionalScaled, CPU held by MinChange"
        ),
    ),
    replace(
        SCALE_UP,
        name="proportional-scaling",
        entry="UpdateMode Auto, Proportional scaling",
        expected=PROPORTIONAL_SCALED,
        blocked=(MIN_CHANGE_UP,),
    ),
    replace(
        SCALE_UP,
        name="requests-set-equal-to-limits",
        entry="UpdateMode Auto, Requests set equal to limits",
        resources=resources({"memory": "500M"}, {"memory": "500M"}),
        # No CPU request to take a utilization of: an average of 130m against 100m gives 3.
        metric={
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageValue": "100m"}},
        },
        usage_percent=13,
        vpa_memory="100M",
        expected=LIMIT_EQUALLY_SCALED,
        note="the container requests no CPU, so the HPA metric is an AverageValue",
    ),
    replace(
        SCALE_UP,
        name="requests-only-request-above-fixed-limit",
        entry="UpdateMode Auto, ControlledValues RequestsOnly, Request higher than fixed limit",
        replicas=3,
        resources=resources({"memory": "500M"}, {"memory": "600M"}),
        metric={
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageValue": "100m"}},
        },
        usage_percent=10,
        vpa_memory="800M",
        vpa_weight=100,
        policy={"containerName": NAME, "controlledValues": "RequestsOnly"},
        expected=REQUESTS_CAPPED_TO_LIMIT,
        note="the container requests no CPU, so the HPA metric is an AverageValue",
    ),
    replace(
        SCALE_UP,
        name="vpa-unsupported-condition",
        entry="VPA unsupported condition",
        vpa_conditions=({"type": "ConfigUnsupported", "status": "True"},),
        expected=UNSCALED,
    ),
    replace(
        SCALE_UP,
        name="initial-hpa-scaling",
        entry="UpdateMode Auto, Initial HPA scaling",
        source=ALPHA1_TESTS,
        replicas=1,
        # HPA 1 -> 2: ceil(1 x 90/70) = 2.
        intervals=(
            {"startReplicaCount": 1, "lastReplicaCount": 1, "vpaWeight": 0},
            {"startReplicaCount": 2, "lastReplicaCount": 2, "vpaWeight": 100},
            {"startReplicaCount": 3, "lastReplicaCount": 4, "vpaWeight": 0},
        ),
        desired=2,
        expected=UNSCALED,
        blocked=(("vertical", "up", "Weight"),),
    ),
    replace(
        SCALE_UP,
        name="initial-vpa-scaling",
        entry="UpdateMode Auto, Initial VPA scaling",
        source=ALPHA1_TESTS,
        replicas=1,
        usage_percent=70,
        intervals=(
            {"startReplicaCount": 1, "lastReplicaCount": 1, "vpaWeight": 100},
            {"startReplicaCount": 2, "lastReplicaCount": 4, "vpaWeight": 40},
        ),
        desired=1,
        expected=SCALED_BY_WEIGHT_100,
        note=(
            "that table's upTransitionResourceThresholdPercentage is not part of v1alpha1; "
            "the HPA is content at 1 replica, so the interval's vpaWeight 100 applies"
        ),
    ),
)

# utils/timewindow_test.go: a vertical scale-up that waits for the window (vpaWeight 100,
# no horizontal scaling) is applied exactly when Gardener's Contains says now is inside.
WINDOWS: Final = {
    "16-19": ("160000+0000", "190000+0000"),
    "0-1": ("000000+0000", "010000+0000"),
    "23-1": ("230000+0000", "010000+0000"),
    "23-0": ("230000+0000", "000000+0000"),
}
CONTAINS: Final = (
    ("16-19", "15:59:59.000009999", False),
    ("16-19", "19:01:00", False),
    ("16-19", "16:00:00", True),
    ("16-19", "19:00:00", True),
    ("16-19", "17:00:00", True),
    ("0-1", "23:59:59.000009999", False),
    ("0-1", "02:00:00", False),
    ("0-1", "00:00:00", True),
    ("0-1", "01:00:00", True),
    ("0-1", "00:30:00", True),
    ("23-1", "22:59:59.000009999", False),
    ("23-1", "02:00:00", False),
    ("23-1", "23:00:00", True),
    ("23-1", "01:00:00", True),
    ("23-1", "00:59:00", True),
    ("23-0", "22:59:59.000009999", False),
    ("23-0", "01:00:00", False),
    ("23-0", "23:00:00", True),
    ("23-0", "00:00:00", True),
    ("23-0", "23:45:00", True),
)
# #ParseMaintenanceTime: 16:05:54+02:00 is 14:05:54 UTC.
OFFSET_WINDOW: Final = ("160554+0200", "170554+0200")
OFFSET_CASES: Final = (("14:05:54", True), ("16:30:00", False), ("14:05:53", False))
WINDOW_REQUESTS: Final = resources({"cpu": "300m", "memory": "200M"})
WINDOW_SCALED: Final = resources({"cpu": "600m", "memory": "600M"})


def _window_hvpa(window: tuple[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": "hvpa-window", "namespace": NAMESPACE, "generation": 1},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": NAME},
            "maintenanceTimeWindow": {"begin": window[0], "end": window[1]},
            "weightBasedScalingIntervals": [{"vpaWeight": 100}],
            "hpa": {"deploy": False, "template": {"spec": {"minReplicas": 1, "maxReplicas": 1}}},
            "vpa": {
                "deploy": True,
                "scaleUp": {"updatePolicy": {"updateMode": "MaintenanceWindow"}},
            },
        },
    }


def render_window(window: tuple[str, str], moment: str, inside: bool) -> tuple[Any, Any]:
    case = Case(
        name="",
        entry="",
        source="",
        replicas=1,
        usage_percent=10,
        vpa_cpu="600m",
        vpa_memory="600M",
        desired=1,
        expected=WINDOW_REQUESTS,
        resources=WINDOW_REQUESTS,
    )
    scenario = {
        "now": f"{DAY}T{moment}Z",
        "hvpa": _window_hvpa(window),
        "target": _target(case),
        "vpa": _vpa(case),
    }
    expected = {
        "replicas": {"current": 1, "desired": 1},
        "containers": [
            {
                "name": NAME,
                **as_written(WINDOW_REQUESTS, WINDOW_SCALED if inside else WINDOW_REQUESTS),
            }
        ],
        "blocked": []
        if inside
        else [{"axis": "vertical", "direction": "up", "reason": "MaintenanceWindow"}],
        "status": {"lastBlockedScaling": [] if inside else [{"reason": "MaintenanceWindow"}]},
    }
    return scenario, expected


def _write(directory: Path, name: str, header: str, scenario: Any, expected: Any) -> None:
    text = yaml.safe_dump(scenario, sort_keys=False, default_flow_style=None, width=100)
    (directory / f"{name}.yaml").write_text(header + text)
    (directory / f"{name}.expected.json").write_text(json.dumps(expected, indent=2) + "\n")


def write_all(directory: Path) -> None:
    """Every case into `directory`, replacing what is there (tests/engine/test_scenarios.py
    writes them to a fresh directory and compares with the committed files)."""
    for old in (*directory.glob("*.yaml"), *directory.glob("*.expected.json")):
        old.unlink()
    for case in SCALE_CASES:
        header = f'# {SOURCE} {case.source}: "{case.entry}".\n'
        if case.note:
            header += f"# Note: {case.note}.\n"
        _write(directory, case.name, header, *render(case))
    for label, moment, inside in CONTAINS:
        window = WINDOWS[label]
        clock = moment.split(".")[0].replace(":", "")
        name = f"window-{label}-at-{clock}"
        header = (
            f"# {SOURCE} utils/timewindow_test.go #Contains: window {label} contains "
            f"{moment}: {str(inside).lower()}.\n"
        )
        _write(directory, name, header, *render_window(window, moment, inside))
    for moment, inside in OFFSET_CASES:
        name = f"window-offset-at-{moment.replace(':', '')}"
        header = (
            f"# {SOURCE} utils/timewindow_test.go #ParseMaintenanceTime: 160554+0200 is "
            f"14:05:54 UTC; window {OFFSET_WINDOW[0]}-{OFFSET_WINDOW[1]} at {moment} UTC: "
            f"{'inside' if inside else 'outside'}.\n"
        )
        _write(directory, name, header, *render_window(OFFSET_WINDOW, moment, inside))


def main() -> None:
    write_all(HERE)


if __name__ == "__main__":
    main()
