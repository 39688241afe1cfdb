"""Builders for the horizontal engine's tests, shaped like upstream's test fixtures.

Upstream's replica calculator tests build pods named test-pod-N with two
containers, a Ready condition without a transition time, and a start time
that is Go's zero time unless the case says "hot" (now) or "cool" (three
minutes ago); their metrics have Go's zero time as timestamp and a one-minute
window. These builders give the same records, so a case reads like its Go
original.
"""

from __future__ import annotations

from collections.abc import Sequence

from hvpa.engine.explain import Explanation
from hvpa.engine.horizontal.replica_calculator import ReplicaCalculator
from hvpa.engine.metrics import MetricValue, MetricValueList, PodMetricsList
from hvpa.records import ContainerMetrics, ContainerSpec, PodMetricsRecord, PodRecord, Resources

NOW = 1_800_000_000.0
HOT = NOW  # a pod that just started
COOL = NOW - 180.0  # a pod three minutes old
ZERO = -62_135_596_800.0  # Go's zero time, 0001-01-01
# Upstream's testing settings (replica_calculator.go's defaultTesting* constants).
CPU_INITIALIZATION_PERIOD = 120.0
INITIAL_READINESS_DELAY = 10.0
CONTAINERS = ("container1", "container2")


def pod(
    name: str,
    *,
    phase: str = "Running",
    ready: str | None = "True",
    start: float | None = ZERO,
    transition: float | None = None,
    deleting: bool = False,
    cpu_request: int | None = None,
    containers: Sequence[ContainerSpec] | None = None,
    pod_requests: Resources | None = None,
) -> PodRecord:
    """A pod; `cpu_request` (millicores) goes on each of its two containers.

    `pod_requests`: pod-level `spec.resources.requests` (PodLevelResources).
    """
    if containers is None:
        requests = Resources(cpu=cpu_request)
        containers = tuple(ContainerSpec(c, requests=requests) for c in CONTAINERS)
    return PodRecord(
        namespace="test-namespace",
        name=name,
        labels={"name": "test-pod"},
        phase=phase,
        deleting=deleting,
        start_time=start,
        ready=ready,
        ready_transition=transition,
        containers=tuple(containers),
        requests=pod_requests if pod_requests is not None else Resources(),
    )


def pods(
    count: int,
    *,
    readiness: Sequence[str] | None = None,
    start_times: Sequence[float] | None = None,
    phases: Sequence[str] | None = None,
    deleting: Sequence[bool] | None = None,
    cpu_requests: Sequence[int] | None = None,
) -> tuple[PodRecord, ...]:
    """Upstream's fake pod list: `count` pods, or as many as there are phases."""
    total = max(count, len(phases or ()))
    return tuple(
        pod(
            f"test-pod-{i}",
            ready=readiness[i] if readiness is not None and i < len(readiness) else "True",
            start=start_times[i] if start_times is not None else ZERO,
            phase=phases[i] if phases is not None else "Running",
            deleting=deleting[i] if deleting is not None else False,
            cpu_request=cpu_requests[i]
            if cpu_requests is not None and i < len(cpu_requests)
            else None,
        )
        for i in range(total)
    )


def pod_metrics(
    levels: Sequence[Sequence[int]],
    *,
    names: Sequence[str] = (),
    timestamp: float | None = ZERO,
    window: float = 60.0,
) -> PodMetricsList:
    """PodMetrics for test-pod-N (or `names`), two container entries each as upstream's fake has.

    A pod with fewer levels than containers gets an entry without usage, so
    a whole-pod CPU sum finds it missing, as upstream's does.
    """
    items = []
    for i, per_container in enumerate(levels):
        containers = tuple(
            ContainerMetrics(CONTAINERS[j], Resources(cpu=per_container[j]))
            if j < len(per_container)
            else ContainerMetrics("", Resources())
            for j in range(len(CONTAINERS))
        )
        items.append(
            PodMetricsRecord(
                namespace="test-namespace",
                name=names[i] if i < len(names) else f"test-pod-{i}",
                timestamp=timestamp,
                window_seconds=window,
                containers=containers,
            )
        )
    return PodMetricsList(tuple(items))


def levels(*per_pod: int) -> list[list[int]]:
    """makePodMetricLevels: every container of pod i reports per_pod[i]."""
    return [[value] * len(CONTAINERS) for value in per_pod]


def custom_metrics(*values: int) -> MetricValueList:
    return MetricValueList(
        tuple(MetricValue(f"test-pod-{i}", value, ZERO) for i, value in enumerate(values))
    )


def calculator(
    pod_list: Sequence[PodRecord], explain: Explanation | None = None
) -> ReplicaCalculator:
    return ReplicaCalculator(
        pod_list, CPU_INITIALIZATION_PERIOD, INITIAL_READINESS_DELAY, NOW, explain or Explanation()
    )
