"""Which resources Capacity counts as having an HPA target, and what that spares the count.

A resource with a per-pod target in the HPA template (Utilization, or
AverageValue as Gardener's kube-apiserver has for CPU and memory) is not
asked to carry its load with one pod out: the target is the owner's word on
how much a pod may carry (capacity_inputs.targeted). Only a resource with
no target keeps that rule (capacity_curve.Room.spares).
"""

from __future__ import annotations

from typing import Any

import pytest
from capacity_kit import Workload, capacity_hvpa

from hvpa.api import parse_hvpa
from hvpa.engine.capacity_inputs import targeted
from hvpa.engine.decision import Decision


def metric(resource: str, target: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Resource", "resource": {"name": resource, "target": target}}


UTILIZATION = {"type": "Utilization", "averageUtilization": 50}
AVERAGE_CPU = {"type": "AverageValue", "averageValue": "1"}
AVERAGE_MEMORY = {"type": "AverageValue", "averageValue": "2G"}


def with_metrics(*metrics: dict[str, Any]) -> dict[str, Any]:
    hvpa = capacity_hvpa()
    hvpa["spec"]["hpa"]["template"]["spec"]["metrics"] = list(metrics)
    return hvpa


@pytest.mark.parametrize(
    ("metrics", "expected"),
    [
        ([metric("cpu", UTILIZATION)], {"cpu"}),
        ([metric("cpu", AVERAGE_CPU), metric("memory", AVERAGE_MEMORY)], {"cpu", "memory"}),
        ([metric("cpu", UTILIZATION), metric("memory", AVERAGE_MEMORY)], {"cpu", "memory"}),
        ([metric("memory", AVERAGE_MEMORY)], {"memory"}),
        (
            [{"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": AVERAGE_CPU}}],
            set(),
        ),
    ],
    ids=[
        "utilization",
        "average-value-both",
        "utilization-and-average-value",
        "average-value-memory-only",
        "a-pods-metric-targets-no-resource",
    ],
)
def test_targeted_resources(metrics: list[dict[str, Any]], expected: set[str]) -> None:
    assert targeted(parse_hvpa(with_metrics(*metrics)).spec) == expected


def shape(decision: Decision) -> tuple[int, int | None]:
    """Replicas and CPU millicores of the first container."""
    return decision.desired_replicas, decision.containers[0].requests.cpu


# The flat curve: 1 CPU and 2G per pod at any count. 4 pods of 920m using 800m each: demand
# 3200m x 1.15 = 3680m, which the 4 pods cover exactly (4 x 920m). With one of 4 pods out
# the other 3, even at the 1-CPU ceiling, carry 3000m < 3200m of load, so the one-pod-out
# rule, were CPU without a target, would ask a fifth pod (5 x 736m). Memory (500MB a pod,
# 2300MB of demand, 575MB a pod) fits either way.
LOADED = Workload(replicas=4, cpu=920, memory=575_000_000_000, cpu_usage=800)


def test_an_average_value_target_keeps_no_pod_spare() -> None:
    hvpa = with_metrics(metric("cpu", AVERAGE_CPU), metric("memory", AVERAGE_MEMORY))
    assert shape(LOADED.decide(hvpa)) == (4, 920)
