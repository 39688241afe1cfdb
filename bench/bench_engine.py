"""How fast `decide` is, and how it grows with the number of pods.

One target with two metrics (CPU utilization and a Pods custom metric), its
pods ready and reporting; `decide` runs on an already-built snapshot, so
this measures the engine alone (median of many runs). The growth from 10 to
1,000 pods should be about 10x per 10x pods (linear): the reference for
each step is 10, and its ratio is 10 / growth (at 10 pods the fixed cost
dominates, so that step grows less). No other engine computes this
decision, so the throughput at 10 pods is set against its target, 5,000/s.

A second row decides for a `Capacity` Hvpa as a running one stands between
decisions: its status keeps a 10-minute usage history of 15 s readings (40
samples) and the demands of its down window, which every decision reads back
and writes again (the strategy that costs the most per decision: docs/benchmarks.md).

A third decides for such Hvpas as a controller of 10,000 meets them: the
same spec object each time (the controller keeps it while the spec is
unchanged), but a status of its own for each decision, with a full history
(40 usage samples and a falling run of 120 demands over a 30-minute down
window) spelled as hvpa writes it (`19.52`, `41.913172725G`). Nearly every
spelling is new, as in a round over 10,000 Hvpas' own histories, so nothing
keyed by a spelling or by a status object can spare the work.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import msgspec

from bench.harness import Row, Size, pick
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
from hvpa.quantity import format_human, format_human_memory
from hvpa.records import (
    ContainerMetrics,
    ContainerSpec,
    PodMetricsRecord,
    PodRecord,
    Resources,
    TargetRecord,
)

NOW = 1_800_000_000.0
TARGET_AT_10 = 5_000
# Growth counts as linear when 10x the pods costs at most this much more than 10x the time.
LINEAR_SLACK = 1.5
SELECTOR = LabelSelector.from_dict({"matchLabels": {"app": "web"}})


def _hvpa() -> Hvpa:
    return parse_hvpa(_weighted())


def _weighted() -> dict[str, Any]:
    return {
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


# The usage history a Capacity Hvpa keeps: 600 s (the default window) of 15 s readings.
HISTORY_SAMPLES = 40
READING_SECONDS = 15


def _stamp(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _capacity_hvpa() -> Hvpa:
    """Capacity on a flat curve (1 CPU, 2Gi per pod up to 5,000 pods), with the history a run
    keeps: loads of 5.000 to 5.039 cores and 10Gi plus a few MiB, and a falling run of
    demands in the down window."""
    raw = _weighted()
    spec = raw["spec"]
    spec["strategy"] = "Capacity"
    spec["vpa"] = {"deploy": True}
    spec["capacity"] = {
        "curve": [
            {"replicas": 1, "cpu": "1", "memory": "2Gi"},
            {"replicas": 5000, "cpu": "1", "memory": "2Gi"},
        ]
    }
    first = NOW - 30 - READING_SECONDS * (HISTORY_SAMPLES - 1)
    usage = [
        {
            "time": _stamp(first + READING_SECONDS * i),
            "cpu": f"{5000 + i}m",
            "memory": f"{10240 + i}Mi",
        }
        for i in range(HISTORY_SAMPLES)
    ]
    demands = [
        {
            "time": _stamp(NOW - 290 + 60 * i),
            "cpu": f"{9000 - 100 * i}m",
            "memory": f"{12000 - 10 * i}Mi",
        }
        for i in range(4)
    ]
    raw["status"] = _history_status(usage, demands)
    return parse_hvpa(raw)


def _history_status(usage: list[dict[str, str]], demands: list[dict[str, str]]) -> dict[str, Any]:
    """A status whose history holds `usage` and `demands`, the demand raised an hour ago."""
    return {
        "history": {
            "recommendations": [],
            "usage": usage,
            "demands": demands,
            "demandSince": _stamp(NOW - 3600),
        }
    }


# The history of the third row: a down window of 30 minutes of 15 s decisions on a falling
# demand keeps every one of them (engine/demand.py, _record_for_the_largest).
DOWN_WINDOW_SECONDS = 1800
FALLING_DEMANDS = DOWN_WINDOW_SECONDS // READING_SECONDS
# Distinct statuses decided in turn: 1,000 x 160 samples of two amounts, far more spellings
# than any of hvpa.quantity's caches keeps (4,096 each).
DISTINCT_STATUSES = 1000


def _spelled_statuses(count: int) -> list[Hvpa]:
    """`count` Capacity Hvpas sharing one spec object, each with its own full history."""
    raw = _weighted()
    raw["spec"]["strategy"] = "Capacity"
    raw["spec"]["vpa"] = {"deploy": True}
    raw["spec"]["capacity"] = {
        "curve": [
            {"replicas": 1, "cpu": "1", "memory": "2Gi"},
            {"replicas": 5000, "cpu": "1", "memory": "2Gi"},
        ],
        "scaleDownStabilizationSeconds": DOWN_WINDOW_SECONDS,
    }
    spec = parse_hvpa(raw).spec
    first = NOW - 30 - READING_SECONDS * (HISTORY_SAMPLES - 1)
    older = NOW - READING_SECONDS * FALLING_DEMANDS
    hvpas = []
    for n in range(count):
        # A few cores and tens of GB, nearly all different (the CPU of a usage sample and
        # of a demand can meet).
        usage = [
            {
                "time": _stamp(first + READING_SECONDS * i),
                "cpu": format_human(19_520 + 7 * i + 1_000 * n),
                "memory": format_human_memory((41_913_172_725 + 13_000 * i + 10**7 * n) * 1000),
            }
            for i in range(HISTORY_SAMPLES)
        ]
        demands = [
            {
                "time": _stamp(older + READING_SECONDS * i),
                "cpu": format_human(29_000 - 11 * i + 1_000 * n),
                "memory": format_human_memory((49_392_124_000 - 17_000 * i + 10**7 * n) * 1000),
            }
            for i in range(FALLING_DEMANDS)
        ]
        raw["status"] = _history_status(usage, demands)
        hvpas.append(msgspec.structs.replace(parse_hvpa(raw), spec=spec))
    return hvpas


def _seconds_each(hvpas: list[Hvpa], rounds: int) -> float:
    """The median over `rounds` of a round deciding each Hvpa once, per decision."""
    snapshot, settings = _snapshot(10), Settings()
    decide(hvpas[0], snapshot, NOW, settings)  # warm up the spec's own memos
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for hvpa in hvpas:
            decide(hvpa, snapshot, NOW, settings)
        samples.append((time.perf_counter() - start) / len(hvpas))
    return statistics.median(samples)


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


def _median_seconds(count: int, repeats: int, hvpa: Hvpa | None = None) -> float:
    hvpa, snapshot, settings = hvpa or _hvpa(), _snapshot(count), Settings()
    decide(hvpa, snapshot, NOW, settings)  # warm up
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        decide(hvpa, snapshot, NOW, settings)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def run(size: Size = "full") -> list[Row]:
    repeats = {
        10: pick(size, 5, 1000, 3000),
        100: pick(size, 5, 300, 1000),
        1000: pick(size, 3, 30, 100),
    }
    seconds = {count: _median_seconds(count, times) for count, times in repeats.items()}
    capacity = _median_seconds(10, repeats[10], _capacity_hvpa())
    spelled = _seconds_each(
        _spelled_statuses(pick(size, 5, DISTINCT_STATUSES, DISTINCT_STATUSES)),
        pick(size, 1, 3, 5),
    )
    rows = [
        Row.compared(
            "decide: decisions/s at 10 pods, 2 metrics (ref: the target)",
            1 / seconds[10],
            "decisions/s",
            TARGET_AT_10,
            ratio_at_least=1.0,
            target=f">= {TARGET_AT_10:,}/s",
        )
    ]
    rows += [
        Row(f"decide: decisions/s at {count:,} pods", 1 / seconds[count], "decisions/s")
        for count in (100, 1000)
    ]
    rows.append(
        Row(
            f"decide: decisions/s at 10 pods, Capacity, {HISTORY_SAMPLES} usage samples kept",
            1 / capacity,
            "decisions/s",
        )
    )
    rows.append(
        Row(
            f"decide: decisions/s at 10 pods, Capacity, {HISTORY_SAMPLES} usage and "
            f"{FALLING_DEMANDS} demand samples, nearly every spelling new (as at 10,000 Hvpas)",
            1 / spelled,
            "decisions/s",
        )
    )
    for low, high in ((10, 100), (100, 1000)):
        growth = seconds[high] / seconds[low]
        rows.append(
            Row.compared(
                f"decide: time growth {low} -> {high:,} pods (ref: linear, 10x)",
                growth,
                "x",
                10.0,
                invert=True,
                ratio_at_least=1 / LINEAR_SLACK,
                target=f"<= {LINEAR_SLACK:g}x linear",
            )
        )
    return rows
