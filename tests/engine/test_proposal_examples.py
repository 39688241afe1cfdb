"""The HVPA proposal's three examples, replayed at rising load through decide, have the shapes its pictures show.

Each example is the manifest as the proposal writes it
(manifests/examples/proposal-example-{1,2,3}.yaml: the three-stage form, an
HPA at 60% CPU utilization, replicas 1..10, a memory policy). A small driver
stands in for the cluster: one container whose pods share a total CPU usage
`load`, a VPA whose CPU target is the request that would put the pods at
60% (memory steady at its request), and a Deployment that takes each
decision at once: the next step starts from the decided replicas and
requests, with the status the decision wrote (history, scale times). The
test then reads the proposal's "request vs replicas" picture off the steps,
stage by stage; the stage bounds are the manifest's, the first interval
listing a count owning it (stage one of example 1 is 1..3, stage two 4..7).

The proposal's pictures have no MinChange (Gardener added it later, 200m
CPU by default); with it, a 40% step of a VPA target that the HPA keeps
within 10% of the request never clears 200m, and stage two would draw
flat. The replay sets MinChange to 0 so every weighted step shows; its own
effect is covered by the gates' and Gardener's tests.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from hvpa.api import parse_hvpa
from hvpa.api.resource import Hvpa
from hvpa.api.spec import ChangeParams, ScaleParams, ScaleType
from hvpa.engine.decide import decide
from hvpa.engine.decision import Decision, Snapshot
from hvpa.engine.metrics import PodMetricsList, metric_queries
from hvpa.records import decode_pod, decode_pod_metrics, decode_target, decode_vpa, format_time

EXAMPLES = Path(__file__).parents[2] / "manifests" / "examples"
NAMESPACE = "default"
NAME = "resource-consumer"
UTILIZATION = 0.6
MAX_REPLICAS = 10
START = 1_795_262_400.0
STEP_SECONDS = 60.0
MEMORY = "500Mi"


@dataclass(frozen=True)
class Step:
    load: float
    replicas_before: int
    request_before: int
    replicas_after: int
    request_after: int
    wants_more: bool

    @property
    def request_moved(self) -> int:
        return self.request_after - self.request_before


def example(number: int) -> Hvpa:
    """The manifest as written, in a namespace, with MinChange 0 (see above)."""
    raw = yaml.safe_load((EXAMPLES / f"proposal-example-{number}.yaml").read_text())
    raw["metadata"]["namespace"] = NAMESPACE
    hvpa = parse_hvpa(raw)
    none = ScaleParams(cpu=ChangeParams(value="0"), memory=ChangeParams(value="0"))
    vpa = msgspec.structs.replace(
        hvpa.spec.vpa,
        scale_up=ScaleType(min_change=none),
        scale_down=ScaleType(min_change=none),
    )
    return msgspec.structs.replace(hvpa, spec=msgspec.structs.replace(hvpa.spec, vpa=vpa))


def _container(request: int) -> dict[str, Any]:
    return {
        "name": NAME,
        "image": "resource-consumer:1",
        "resources": {"requests": {"cpu": f"{request}m", "memory": MEMORY}},
    }


def snapshot(hvpa: Hvpa, replicas: int, request: int, load: float, now: float) -> Snapshot:
    """The cluster after the last decision: `replicas` pods of `request` sharing `load` millicores."""
    settled = {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas}
    target = decode_target(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "generation": 1},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": NAME}},
                "template": {
                    "metadata": {"labels": {"app": NAME}},
                    "spec": {"containers": [_container(request)]},
                },
            },
            "status": {**settled, "readyReplicas": replicas, "availableReplicas": replicas},
        }
    )
    started = format_time(START - 3600)
    pods = tuple(
        decode_pod(
            {
                "metadata": {
                    "name": f"{NAME}-{i}",
                    "namespace": NAMESPACE,
                    "labels": {"app": NAME},
                },
                "spec": {"containers": [_container(request)]},
                "status": {
                    "phase": "Running",
                    "startTime": started,
                    "conditions": [
                        {"type": "Ready", "status": "True", "lastTransitionTime": started}
                    ],
                },
            }
        )
        for i in range(replicas)
    )
    per_pod = math.ceil(load / replicas)
    usage = PodMetricsList(
        tuple(
            decode_pod_metrics(
                {
                    "metadata": {"name": f"{NAME}-{i}", "namespace": NAMESPACE},
                    "timestamp": format_time(now - 30),
                    "window": "30s",
                    "containers": [
                        {"name": NAME, "usage": {"cpu": f"{per_pod}m", "memory": "400Mi"}}
                    ],
                }
            )
            for i in range(replicas)
        )
    )
    template = hvpa.spec.hpa.template.spec
    assert template is not None
    queries = metric_queries(template.metrics, NAMESPACE, target.selector, pod_usage=True)
    vpa = decode_vpa(
        {
            "metadata": {"name": f"{NAME}-vpa", "namespace": NAMESPACE},
            "spec": {
                "targetRef": {"kind": "Deployment", "name": NAME},
                "updatePolicy": {"updateMode": "Off"},
            },
            "status": {
                "conditions": [{"type": "RecommendationProvided", "status": "True"}],
                "recommendation": {
                    "containerRecommendations": [
                        {
                            "containerName": NAME,
                            "target": {
                                "cpu": f"{math.ceil(per_pod / UTILIZATION)}m",
                                "memory": MEMORY,
                            },
                        }
                    ]
                },
            },
        }
    )
    return Snapshot(target=target, pods=pods, metrics=dict.fromkeys(queries, usage), vpa=vpa)


def replay(hvpa: Hvpa, loads: Sequence[float]) -> list[Step]:
    """One decision per load, each applied before the next: replicas, requests and status."""
    replicas, request = 1, 1000
    steps = []
    for index, load in enumerate(loads):
        now = START + index * STEP_SECONDS
        decision: Decision = decide(hvpa, snapshot(hvpa, replicas, request, load, now), now)
        after = decision.containers[0].requests.cpu
        assert after is not None
        # The HPA metric's own count, before min/max: whether it wants more than there are.
        wants = max(m.desired_replicas or 0 for m in decision.horizontal.metrics)
        wants_more = wants > replicas
        steps.append(Step(load, replicas, request, decision.desired_replicas, after, wants_more))
        replicas, request = decision.desired_replicas, after
        hvpa = msgspec.structs.replace(hvpa, status=decision.status)
    return steps


def ramp(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**index for index in range(count)]


def starting_in(steps: list[Step], low: int, high: int) -> list[Step]:
    return [s for s in steps if low <= s.replicas_before <= high]


def assert_flat(steps: list[Step]) -> None:
    """Replicas grow while the request stays: a horizontal segment of the picture."""
    assert steps
    assert all(s.request_moved == 0 for s in steps)
    assert steps[-1].replicas_after > steps[0].replicas_before


def assert_rising(steps: list[Step]) -> None:
    """Both grow across the stage: a rising segment."""
    assert steps
    assert steps[-1].request_after > steps[0].request_before
    assert steps[-1].replicas_after > steps[0].replicas_before
    assert any(s.request_moved > 0 and s.replicas_after > s.replicas_before for s in steps)


def assert_vertical(steps: list[Step], replicas: int) -> None:
    """The request grows at a fixed count: a vertical segment."""
    assert steps
    assert all(s.replicas_after == replicas and s.request_moved > 0 for s in steps)


def at_max(steps: list[Step]) -> list[Step]:
    return [s for s in steps if s.replicas_before == MAX_REPLICAS and s.wants_more]


def test_example_1_flat_rising_flat() -> None:
    """Stage one [1, 3] horizontal only, stage two 40% vertical up to 7, stage three horizontal only."""
    steps = replay(example(1), ramp(500, 1.15, 40))
    assert_flat(starting_in(steps, 1, 3))
    assert_rising(starting_in(steps, 4, 7))
    assert_flat(starting_in(steps, 8, 9))
    assert_vertical(at_max(steps), MAX_REPLICAS)


def test_example_2_vertical_rising_flat() -> None:
    """Vertical only at 1 replica while the HPA is content; a jump it cannot absorb moves on."""
    slow = ramp(650, 1.05, 12)
    steps = replay(example(2), slow + ramp(slow[-1] * 1.3, 1.3, 15))
    at_one = [s for s in steps if s.replicas_before == 1 and not s.wants_more]
    moved = [s for s in at_one if s.request_moved]
    assert moved
    assert_vertical(moved, 1)
    leaving = next(s for s in steps if s.replicas_before == 1 and s.wants_more)
    assert leaving.replicas_after > 1 and leaving.request_moved > 0
    assert_rising(starting_in(steps, 2, 4))
    assert_flat(starting_in(steps, 5, 9))
    assert_vertical(at_max(steps), MAX_REPLICAS)


def test_example_3_flat_rising_then_vertical_at_max() -> None:
    """No stageTwoStopReplicaCount: stage two runs to maxReplicas, then only vertical is left."""
    steps = replay(example(3), ramp(500, 1.15, 40))
    assert_flat(starting_in(steps, 1, 3))
    assert_rising(starting_in(steps, 4, 9))
    assert_vertical(at_max(steps), MAX_REPLICAS)
    assert steps[-1].replicas_after == MAX_REPLICAS


@pytest.mark.parametrize("number", [1, 2, 3])
def test_every_step_is_explained(number: int) -> None:
    steps = ramp(500, 1.3, 8)
    hvpa = example(number)
    decision = decide(hvpa, snapshot(hvpa, 1, 1000, steps[-1], START), START)
    lines = "\n".join(decision.explanation)
    assert "strategy Weighted" in lines and "weight: interval" in lines
    assert lines.splitlines()[-1].startswith("decision:")
