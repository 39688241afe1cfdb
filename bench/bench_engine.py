"""How fast `decide` is, and how it grows with the number of pods.

One target with two metrics (CPU utilization and a Pods custom metric), its
pods ready and reporting; `decide` runs on an already-built snapshot, so
this measures the engine alone. The growth from 10 to 1,000 pods should be
about 10x per 10x pods (linear): the reference for each step is 10.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

from hvpa.api import parse_hvpa
from hvpa.api.resource import Hvpa
from hvpa.engine.decide import decide
from hvpa.engine.decision import Snapshot
from hvpa.engine.metrics import (
    MetricValue,
    MetricValueList,
    PodMetricsList,
    PodsMetricQuery,
    ResourceMetricsQuery,
)
from hvpa.engine.settings import Settings
from hvpa.labels import LabelSelector
from hvpa.records import (
    ContainerMetrics,
    ContainerSpec,
    PodMetricsRecord,
    PodRecord,
    Resources,
    TargetRecord,
)

NOW = 1_800_000_000.0
SELECTOR = LabelSelector.from_dict({"matchLabels": {"app": "web"}})


def _hvpa() -> Hvpa:
    return parse_hvpa(
        {
            "apiVersion": "autoscaling.k8s.io/v1alpha1",
            "kind": "Hvpa",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {
                "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "hpa": {
                    "deploy": True,
                    "template": {
                        "spec": {
                            "minReplicas": 1,
                            "maxReplicas": 5000,
                            "metrics": [
                                {
                                    "type": "Resource",
                                    "resource": {
                                        "name": "cpu",
                                        "target": {"type": "Utilization", "averageUtilization": 60},
                                    },
                                },
                                {
                                    "type": "Pods",
                                    "pods": {
                                        "metric": {"name": "qps"},
                                        "target": {"type": "AverageValue", "averageValue": "100"},
                                    },
                                },
                            ],
                        }
                    },
                },
                "vpa": {"deploy": False},
            },
            "status": {"history": {"recommendations": []}},
        }
    )


def _snapshot(count: int) -> Snapshot:
    containers = (ContainerSpec("app", requests=Resources(cpu=1000, memory=512_000_000_000)),)
    pods = tuple(
        PodRecord(
            namespace="shop",
            name=f"web-{i}",
            labels={"app": "web"},
            phase="Running",
            deleting=False,
            start_time=NOW - 3600,
            ready="True",
            ready_transition=NOW - 3500,
            containers=containers,
        )
        for i in range(count)
    )
    usage = tuple(
        PodMetricsRecord(
            "shop",
            f"web-{i}",
            NOW - 30,
            60.0,
            (ContainerMetrics("app", Resources(cpu=500 + i % 300, memory=1)),),
        )
        for i in range(count)
    )
    qps = tuple(MetricValue(f"web-{i}", 80_000 + i % 50, NOW - 30) for i in range(count))
    target = TargetRecord(
        api_version="apps/v1",
        kind="Deployment",
        namespace="shop",
        name="web",
        uid="uid",
        generation=1,
        resource_version="1",
        replicas=count,
        selector=SELECTOR,
        containers=containers,
        status_replicas=count,
    )
    return Snapshot(
        target=target,
        pods=pods,
        metrics={
            ResourceMetricsQuery("shop", SELECTOR): PodMetricsList(usage),
            PodsMetricQuery("shop", SELECTOR, "qps", None): MetricValueList(qps),
        },
    )


def _median_seconds(count: int, repeats: int) -> float:
    hvpa, snapshot, settings = _hvpa(), _snapshot(count), Settings()
    decide(hvpa, snapshot, NOW, settings)  # warm up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        decide(hvpa, snapshot, NOW, settings)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def run() -> list[dict[str, Any]]:
    at_100 = _median_seconds(100, 200)
    rows: list[dict[str, Any]] = [
        {
            "name": "decide: 100 pods, 2 metrics (median)",
            "value": at_100 * 1000,
            "unit": "ms",
            "reference": None,
            "ratio": None,
        }
    ]
    timings = {
        count: _median_seconds(count, repeats)
        for count, repeats in ((10, 300), (100, 200), (1000, 40))
    }
    for low, high in ((10, 100), (100, 1000)):
        growth = timings[high] / timings[low]
        rows.append(
            {
                "name": f"decide growth {low} -> {high} pods",
                "value": growth,
                "unit": "x",
                "reference": 10,
                "ratio": growth / 10,
            }
        )
    return rows
