"""Metric reads: which ones a spec needs, what they return, and how upstream's client reads them.

The engine does no I/O. `metric_queries` says which reads the horizontal
recommendation needs (metrics.k8s.io pod metrics, custom metrics per Pods or
Object metric, external metrics), plus the pod metrics the vertical axis'
starvation guard reads; the live controller performs them against
the metrics APIs and `hvpa recommend` answers them from the scenario, and
both hand `decide` the same mapping from query to reading (or read error).

The `get_*` functions are upstream's metrics client (pkg/controller/
podautoscaler/metrics/client.go) minus the HTTP: they turn a reading into
the per-pod values the replica calculator works on, with the client's error
messages, so a failing read is reported in upstream's words. Upstream holds
every value as an int64 of milli-units; a quantity beyond that range (a
metric of `1e30`) saturates at the int64 end here, as the calculator's
arithmetic does after it (docs/engine.md, "Large numbers").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from hvpa.api.autoscaling import MetricSpec
from hvpa.api.spec import HvpaSpec
from hvpa.engine.gomath import int64
from hvpa.labels import LabelSelector, SelectorError
from hvpa.records import PodMetricsRecord

__all__ = [
    "DEFAULT_METRIC_WINDOW_SECONDS",
    "ExternalMetricQuery",
    "ExternalMetricValue",
    "ExternalMetricValueList",
    "MetricError",
    "MetricQuery",
    "MetricReadError",
    "MetricReading",
    "MetricReadings",
    "MetricValue",
    "MetricValueList",
    "ObjectMetricQuery",
    "PodMetric",
    "PodMetricsInfo",
    "PodMetricsList",
    "PodsMetricQuery",
    "ResourceMetricsQuery",
    "get_external_metric",
    "get_object_metric",
    "get_raw_metric",
    "get_resource_metric",
    "metric_queries",
    "metric_selector",
    "needs_pod_usage",
    "query_for",
]

# A custom metric without windowSeconds is taken as a one-minute average (upstream's default).
DEFAULT_METRIC_WINDOW_SECONDS: Final = 60.0


class MetricError(Exception):
    """A metric that cannot be used; the message is the one upstream would report."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# ---------------------------------------------------------------------------
# Queries


@dataclass(frozen=True, slots=True)
class ResourceMetricsQuery:
    """metrics.k8s.io: the PodMetrics of the pods the selector selects (Resource, ContainerResource)."""

    namespace: str
    selector: LabelSelector


@dataclass(frozen=True, slots=True)
class PodsMetricQuery:
    """custom.metrics.k8s.io: `metric` for every pod the selector selects."""

    namespace: str
    selector: LabelSelector
    metric: str
    metric_selector: LabelSelector | None


@dataclass(frozen=True, slots=True)
class ObjectMetricQuery:
    """custom.metrics.k8s.io: `metric` of one object (a Namespace kind is the Hvpa's namespace)."""

    namespace: str
    api_version: str | None
    kind: str
    name: str
    metric: str
    metric_selector: LabelSelector | None


@dataclass(frozen=True, slots=True)
class ExternalMetricQuery:
    """external.metrics.k8s.io: every series of `metric` whose labels the selector selects."""

    namespace: str
    metric: str
    metric_selector: LabelSelector | None


MetricQuery = ResourceMetricsQuery | PodsMetricQuery | ObjectMetricQuery | ExternalMetricQuery


# ---------------------------------------------------------------------------
# Readings


@dataclass(frozen=True, slots=True)
class MetricReadError:
    """A read that failed; `message` is what the metrics API (or the transport) said."""

    message: str


@dataclass(frozen=True, slots=True)
class PodMetricsList:
    items: tuple[PodMetricsRecord, ...]


@dataclass(frozen=True, slots=True)
class MetricValue:
    """A custom.metrics.k8s.io MetricValue, reduced to what the HPA reads."""

    described_name: str
    value_milli: int
    timestamp: float | None = None
    window_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class MetricValueList:
    items: tuple[MetricValue, ...]


@dataclass(frozen=True, slots=True)
class ExternalMetricValue:
    value_milli: int
    timestamp: float | None = None


@dataclass(frozen=True, slots=True)
class ExternalMetricValueList:
    items: tuple[ExternalMetricValue, ...]


MetricReading = PodMetricsList | MetricValueList | ExternalMetricValueList | MetricReadError
MetricReadings = Mapping[MetricQuery, MetricReading]


def metric_selector(raw: Mapping[str, object] | None) -> LabelSelector | None:
    """A metric's `selector` (None: no restriction); raise SelectorError for a bad one."""
    if raw is None:
        return None
    return LabelSelector.from_dict(raw)


def query_for(
    metric: MetricSpec, namespace: str, pod_selector: LabelSelector
) -> MetricQuery | None:
    """The read one metric needs; None for a metric that cannot be read (it fails on its own)."""
    try:
        if metric.type in ("Resource", "ContainerResource"):
            return ResourceMetricsQuery(namespace, pod_selector)
        if metric.type == "Pods" and metric.pods is not None:
            return PodsMetricQuery(
                namespace,
                pod_selector,
                metric.pods.metric.name,
                metric_selector(metric.pods.metric.selector),
            )
        if metric.type == "Object" and metric.object is not None:
            described = metric.object.described_object
            return ObjectMetricQuery(
                namespace,
                described.api_version,
                described.kind,
                described.name,
                metric.object.metric.name,
                metric_selector(metric.object.metric.selector),
            )
        if metric.type == "External" and metric.external is not None:
            return ExternalMetricQuery(
                namespace,
                metric.external.metric.name,
                metric_selector(metric.external.metric.selector),
            )
    except SelectorError:
        return None
    return None


def needs_pod_usage(spec: HvpaSpec) -> bool:
    """Whether a decision reads the target's PodMetrics beyond what its HPA metrics ask for."""
    return spec.vpa.deploy or spec.strategy == "Capacity"


def metric_queries(
    metrics: Sequence[MetricSpec],
    namespace: str,
    pod_selector: LabelSelector,
    *,
    pod_usage: bool = False,
) -> tuple[MetricQuery, ...]:
    """Every read the metrics need, each once, in spec order.

    `pod_usage` (pass `needs_pod_usage(spec)`) adds the target's PodMetrics
    even when no HPA metric reads them: the starvation guard compares each
    container's CPU usage with its request, and without that reading it
    cannot tell a throttled container from an idle one; the Capacity
    strategy sums them into its demand.
    """
    queries: dict[MetricQuery, None] = {}
    for metric in metrics:
        query = query_for(metric, namespace, pod_selector)
        if query is not None:
            queries.setdefault(query, None)
    if pod_usage:
        queries.setdefault(ResourceMetricsQuery(namespace, pod_selector), None)
    return tuple(queries)


# ---------------------------------------------------------------------------
# Upstream's metrics client, without the HTTP.


@dataclass(frozen=True, slots=True)
class PodMetric:
    """One pod's value (milli-units), and when and over which window it was measured."""

    value: int
    timestamp: float | None = None
    window_seconds: float = DEFAULT_METRIC_WINDOW_SECONDS


PodMetricsInfo = dict[str, PodMetric]


def get_resource_metric(
    reading: MetricReading | None, resource: str, container: str
) -> PodMetricsInfo:
    """GetResourceMetric: each pod's usage of `resource`, summed over containers or of one container.

    A pod that lacks the resource in any container (or lacks `container`) is
    left out, so the calculator counts it as missing.
    """
    if isinstance(reading, MetricReadError):
        raise MetricError(f"unable to fetch metrics from resource metrics API: {reading.message}")
    if not isinstance(reading, PodMetricsList):
        raise MetricError("unable to fetch metrics from resource metrics API: not read")
    if not reading.items:
        raise MetricError("no metrics returned from resource metrics API")
    info: PodMetricsInfo = {}
    for pod in reading.items:
        if container:
            found = next((c for c in pod.containers if c.name == container), None)
            value = found.usage.get(resource) if found is not None else None
        elif not pod.containers:
            value = None
        else:
            values = [c.usage.get(resource) for c in pod.containers]
            value = None if None in values else sum(v for v in values if v is not None)
        if value is not None:
            info[pod.name] = PodMetric(int64(value), pod.timestamp, pod.window_seconds)
    return info


def get_raw_metric(reading: MetricReading | None) -> PodMetricsInfo:
    """GetRawMetric: a custom metric per pod, keyed by the described pod's name."""
    if isinstance(reading, MetricReadError):
        raise MetricError(f"unable to fetch metrics from custom metrics API: {reading.message}")
    if not isinstance(reading, MetricValueList):
        raise MetricError("unable to fetch metrics from custom metrics API: not read")
    if not reading.items:
        raise MetricError("no metrics returned from custom metrics API")
    return {
        value.described_name: PodMetric(
            int64(value.value_milli),
            value.timestamp,
            DEFAULT_METRIC_WINDOW_SECONDS if value.window_seconds is None else value.window_seconds,
        )
        for value in reading.items
    }


def get_object_metric(reading: MetricReading | None, query: ObjectMetricQuery) -> int:
    """GetObjectMetric: the one value of the described object."""
    if isinstance(reading, MetricReadError):
        raise MetricError(f"unable to fetch metrics from custom metrics API: {reading.message}")
    if not isinstance(reading, MetricValueList):
        raise MetricError("unable to fetch metrics from custom metrics API: not read")
    if not reading.items:
        raise MetricError(
            "unable to fetch metrics from custom metrics API: the server could not find the "
            f"metric {query.metric} for {query.kind} {query.name}"
        )
    return int64(reading.items[0].value_milli)


def get_external_metric(reading: MetricReading | None) -> list[int]:
    """GetExternalMetric: every matching series' value."""
    if isinstance(reading, MetricReadError):
        raise MetricError(f"unable to fetch metrics from external metrics API: {reading.message}")
    if not isinstance(reading, ExternalMetricValueList):
        raise MetricError("unable to fetch metrics from external metrics API: not read")
    if not reading.items:
        raise MetricError("no metrics returned from external metrics API")
    return [int64(value.value_milli) for value in reading.items]
