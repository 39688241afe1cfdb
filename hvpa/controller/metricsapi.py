"""Reads of the three metrics APIs, one per query the engine asked for, as the HPA controller makes them.

`hvpa.engine.metrics.metric_queries` says which reads a decision needs; this
module performs them against the API server's aggregated metrics APIs
(metrics.k8s.io, custom.metrics.k8s.io, external.metrics.k8s.io), all at
once, each under its own timeout, and returns one reading per query.

A read that fails for any reason - the adapter is not installed (404), the
server errs after the client's retries, the connection breaks, the timeout
passes, the answer does not decode - becomes a `MetricReadError` carrying
the reason, never an exception: the engine skips a failed metric (or holds
the axis when all fail) and says why, exactly as the HPA controller does.
Cancellation is not a failure and passes through.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import Final

import msgspec

from hvpa.engine.metrics import (
    ExternalMetricQuery,
    ExternalMetricValue,
    ExternalMetricValueList,
    MetricQuery,
    MetricReadError,
    MetricReading,
    MetricValue,
    MetricValueList,
    ObjectMetricQuery,
    PodMetricsList,
    PodsMetricQuery,
    ResourceMetricsQuery,
)
from hvpa.kube.client import KubeClient, Params
from hvpa.kube.errors import KubeError
from hvpa.kube.resources import api_path
from hvpa.kube.wire import ObjectList
from hvpa.logs import fields
from hvpa.records import (
    PodMetricsWire,
    RecordError,
    parse_time,
    pod_metrics_from_wire,
    quantity_milli,
)

__all__ = ["MetricsReader", "object_metric_path"]

_logger = logging.getLogger(__name__)

RESOURCE_METRICS: Final = ("metrics.k8s.io", "v1beta1")
CUSTOM_METRICS: Final = ("custom.metrics.k8s.io", "v1beta2")
EXTERNAL_METRICS: Final = ("external.metrics.k8s.io", "v1beta1")

# Kinds a described object commonly has, and their resources; any other kind is
# pluralised by the usual English rules, as a REST mapper would for most kinds.
_KNOWN_RESOURCES: Final[Mapping[str, tuple[str, str]]] = {
    "Pod": ("", "pods"),
    "Service": ("", "services"),
    "Node": ("", "nodes"),
    "ConfigMap": ("", "configmaps"),
    "Endpoints": ("", "endpoints"),
    "ReplicationController": ("", "replicationcontrollers"),
    "Deployment": ("apps", "deployments"),
    "StatefulSet": ("apps", "statefulsets"),
    "ReplicaSet": ("apps", "replicasets"),
    "DaemonSet": ("apps", "daemonsets"),
    "Ingress": ("networking.k8s.io", "ingresses"),
    "Job": ("batch", "jobs"),
    "CronJob": ("batch", "cronjobs"),
}


class _Described(msgspec.Struct):
    name: str = ""


class _MetricValueWire(msgspec.Struct, rename="camel"):
    described_object: _Described = msgspec.field(default_factory=_Described)
    timestamp: str | None = None
    window_seconds: float | None = None
    value: str | int | float = "0"


class _ExternalValueWire(msgspec.Struct, rename="camel"):
    timestamp: str | None = None
    value: str | int | float = "0"


_decode_pod_metrics: Final = msgspec.json.Decoder(ObjectList[PodMetricsWire]).decode
_decode_values: Final = msgspec.json.Decoder(ObjectList[_MetricValueWire]).decode
_decode_external: Final = msgspec.json.Decoder(ObjectList[_ExternalValueWire]).decode


def _plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    return lower + "s"


def object_metric_path(query: ObjectMetricQuery) -> str:
    """custom.metrics.k8s.io's path for one object's metric (a Namespace's: `.../metrics/NAME`)."""
    group, version = CUSTOM_METRICS
    if query.kind == "Namespace":
        return api_path(
            group=group,
            version=version,
            plural="metrics",
            namespace=query.namespace,
            name=query.metric,
        )
    known = _KNOWN_RESOURCES.get(query.kind)
    if query.api_version:
        object_group = query.api_version.split("/", 1)[0] if "/" in query.api_version else ""
    else:
        object_group = known[0] if known else ""
    plural = known[1] if known else _plural(query.kind)
    return api_path(
        group=group,
        version=version,
        plural=f"{plural}.{object_group}" if object_group else plural,
        namespace=query.namespace,
        name=query.name,
        subresource=query.metric,
    )


class MetricsReader:
    """Performs metric queries against the metrics APIs of one API server."""

    def __init__(self, *, client: KubeClient, timeout_seconds: float) -> None:
        self._client = client
        self._timeout = timeout_seconds

    async def read(self, queries: Iterable[MetricQuery]) -> dict[MetricQuery, MetricReading]:
        """Every query's reading, read concurrently; failures are MetricReadErrors."""
        unique = list(dict.fromkeys(queries))
        readings = await asyncio.gather(*(self._read_one(query) for query in unique))
        return dict(zip(unique, readings, strict=True))

    async def _read_one(self, query: MetricQuery) -> MetricReading:
        try:
            async with asyncio.timeout(self._timeout):
                return await self._fetch(query)
        except TimeoutError:
            message = f"no answer within {self._timeout:g}s"
        except KubeError as error:
            message = str(error)
        except (msgspec.DecodeError, RecordError) as error:
            message = f"cannot read the answer: {error}"
        # Every reconcile of an Hvpa whose adapter is missing fails the same way: the
        # condition and /debug/state say so; the log says it only at debug level.
        _logger.debug("metric read failed", extra=fields(query=type(query).__name__, error=message))
        return MetricReadError(message)

    async def _get(self, path: str, params: Params) -> bytes:
        return await self._client.request("GET", path, params=params)

    async def _fetch(self, query: MetricQuery) -> MetricReading:
        if isinstance(query, ResourceMetricsQuery):
            group, version = RESOURCE_METRICS
            path = api_path(group=group, version=version, plural="pods", namespace=query.namespace)
            body = await self._get(path, {"labelSelector": str(query.selector)})
            return PodMetricsList(
                tuple(pod_metrics_from_wire(item) for item in _decode_pod_metrics(body).items or ())
            )
        if isinstance(query, PodsMetricQuery):
            group, version = CUSTOM_METRICS
            base = api_path(group=group, version=version, plural="pods", namespace=query.namespace)
            params: dict[str, str] = {"labelSelector": str(query.selector)}
            if query.metric_selector is not None:
                params["metricLabelSelector"] = str(query.metric_selector)
            body = await self._get(f"{base}/*/{query.metric}", params)
            return self._values(body)
        if isinstance(query, ObjectMetricQuery):
            params = {}
            if query.metric_selector is not None:
                params["metricLabelSelector"] = str(query.metric_selector)
            return self._values(await self._get(object_metric_path(query), params))
        assert isinstance(query, ExternalMetricQuery)
        group, version = EXTERNAL_METRICS
        path = api_path(
            group=group, version=version, plural=query.metric.lower(), namespace=query.namespace
        )
        params = {}
        if query.metric_selector is not None:
            params["labelSelector"] = str(query.metric_selector)
        items = _decode_external(await self._get(path, params)).items or ()
        return ExternalMetricValueList(
            tuple(
                ExternalMetricValue(quantity_milli(item.value, "value"), parse_time(item.timestamp))
                for item in items
            )
        )

    @staticmethod
    def _values(body: bytes) -> MetricValueList:
        items = _decode_values(body).items or ()
        return MetricValueList(
            tuple(
                MetricValue(
                    described_name=item.described_object.name,
                    value_milli=quantity_milli(item.value, f"{item.described_object.name} value"),
                    timestamp=parse_time(item.timestamp),
                    window_seconds=item.window_seconds,
                )
                for item in items
            )
        )
