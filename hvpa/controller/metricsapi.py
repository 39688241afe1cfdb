"""Reads of the three metrics APIs, one per query the engine asked for, as the HPA controller makes them.

`hvpa.engine.metrics.metric_queries` says which reads a decision needs; this
module performs them against the API server's aggregated metrics APIs
(metrics.k8s.io, custom.metrics.k8s.io, external.metrics.k8s.io), all at
once, each under its own timeout, and returns one reading per query.

A read that fails for any reason - the adapter is not installed (404), the
server errs after the client's retries, the connection breaks, the timeout
passes, the answer is longer than its bound (`max_response_bytes`, read no
further), the answer does not decode - becomes a `MetricReadError` carrying
the reason, never an exception: the engine skips a failed metric (or holds
the axis when all fail) and says why, exactly as the HPA controller does.
Cancellation is not a failure and passes through.

Every name a tenant writes into an Hvpa (metric names, the described
object's kind and name, the namespace) becomes one path segment, built by
`path_segment` and checked once more as a whole path (`_api_path`): a name
that would change the path's shape (`..`, `/`, `%`) is refused before any
request is made, the rest is percent-encoded, and the path must stay under
the API it was meant for. Without this a metric named
`../../../../../../../api/v1/pods` made the controller list every pod of the
cluster with its own credentials. An answer is taken only when it is the
list asked for (its kind and apiVersion) and every item has a value, as the
HPA controller's typed clients take it: a missing value is an error, never 0.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Final, Generic, TypeVar
from urllib.parse import quote

import msgspec

from hvpa.controller.shared_pod_metrics import (
    Fetched,
    PodName,
    SharedPodMetrics,
    Unshareable,
    own_name,
    read_by_selector,
)
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
    PodsMetricQuery,
    ResourceMetricsQuery,
)
from hvpa.kube.client import KubeClient, Params
from hvpa.kube.errors import KubeError, ResponseTooLarge
from hvpa.labels import LabelSelector
from hvpa.logs import fields
from hvpa.records import (
    DECODING_ERRORS,
    PodMetricsWire,
    RecordError,
    parse_time,
    quantity_milli,
)
from hvpa.settings import DEFAULT_METRICS_MAX_RESPONSE_BYTES

__all__ = [
    "MetricsReader",
    "RefusedQuery",
    "external_metric_path",
    "object_metric_path",
    "path_segment",
    "pods_metric_path",
]

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
    """A MetricValue; `value` has no default: an item without one is no reading of 0."""

    value: str | int | float
    described_object: _Described = msgspec.field(default_factory=_Described)
    timestamp: str | None = None
    window_seconds: float | None = None


class _ExternalValueWire(msgspec.Struct, rename="camel"):
    value: str | int | float
    timestamp: str | None = None


T = TypeVar("T")


class _TypeMeta(msgspec.Struct, rename="camel"):
    """What an answer says it is: any kind but the list asked for is refused, whatever it holds.

    The HPA controller's metrics clients decode an answer by its kind, so
    anything but the list they asked for (a PodList, a Status, an empty
    object) is an error there, never a list of zeros; the same check here.
    """

    kind: str = ""
    api_version: str = ""


class _Items(_TypeMeta, Generic[T]):
    """An answer with its items, and what it says it is, read in one pass."""

    items: list[T] | None = None


_decode_type: Final = msgspec.json.Decoder(_TypeMeta).decode
_decode_pod_metrics: Final = msgspec.json.Decoder(_Items[PodMetricsWire]).decode
# A namespace's answer, its items left for shared_pod_metrics to decode one at a time.
_decode_raw_pod_metrics: Final = msgspec.json.Decoder(_Items[msgspec.Raw]).decode
_decode_values: Final = msgspec.json.Decoder(_Items[_MetricValueWire]).decode
_decode_external: Final = msgspec.json.Decoder(_Items[_ExternalValueWire]).decode


class RefusedQuery(ValueError):
    """A query whose path would not be the one the metrics API serves for it; nothing is sent."""


def _plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    if lower.endswith(("s", "x", "ch", "sh")):
        return lower + "es"
    return lower + "s"


def path_segment(value: str, what: str) -> str:
    """`value` as one segment of a request path, percent-encoded; RefusedQuery if it cannot be.

    Refused as client-go's request builder refuses them (IsValidPathSegmentName):
    an empty segment, `.` and `..` (a server or proxy resolves them, so the
    request would go elsewhere), and any `/` or `%`. Encoding those two is not
    enough: the API server decodes the path before it routes the request, and
    an aggregated metrics adapter behind it may decode it once more. Everything
    else (`?`, `#`, spaces, non-ASCII) is percent-encoded, so it stays in the
    segment instead of starting a query or a fragment.
    """
    if value in ("", ".", ".."):
        raise RefusedQuery(f"{what} {value!r} cannot be a path segment: may not be {value!r}")
    for char in _NEVER_IN_SEGMENT:
        if char in value:
            raise RefusedQuery(
                f"{what} {value!r} cannot be a path segment: may not contain {char!r}"
            )
    return quote(value, safe="")


_NEVER_IN_SEGMENT: Final = ("/", "%")


# One segment of a path: a literal of the API (`pods`, `*`), or (value, what it is) for a
# value taken from an Hvpa, which is checked and encoded.
_Segment = str | tuple[str, str]


def _api_path(api: tuple[str, str], namespace: str, *segments: _Segment) -> str:
    """/apis/GROUP/VERSION/namespaces/NAMESPACE/..., each value encoded, checked to stay under the API.

    The final check does not trust the encoding above it: a path that holds an
    empty or dot segment, a query or a fragment is refused whatever built it.
    """
    group, version = api
    prefix = f"/apis/{group}/{version}/namespaces/"
    encoded = [
        segment if isinstance(segment, str) else path_segment(*segment)
        for segment in ((namespace, "namespace"), *segments)
    ]
    path = prefix + "/".join(encoded)
    parts = path.split("/")[1:]
    if any(part in ("", ".", "..") for part in parts) or "?" in path or "#" in path:
        raise RefusedQuery(f"the path {path!r} is not a plain path under {prefix}")
    return path


def pods_metric_path(query: PodsMetricQuery) -> str:
    """custom.metrics.k8s.io's `metric` of every pod the label selector selects (`pods/*`)."""
    return _api_path(
        CUSTOM_METRICS,
        query.namespace,
        "pods",
        "*",
        (query.metric, "metric name"),
    )


def object_metric_path(query: ObjectMetricQuery) -> str:
    """custom.metrics.k8s.io's path for one object's metric (a Namespace's: `.../metrics/NAME`)."""
    if query.kind == "Namespace":
        return _api_path(CUSTOM_METRICS, query.namespace, "metrics", (query.metric, "metric name"))
    known = _KNOWN_RESOURCES.get(query.kind)
    if query.api_version:
        object_group = query.api_version.split("/", 1)[0] if "/" in query.api_version else ""
    else:
        object_group = known[0] if known else ""
    plural = known[1] if known else _plural(query.kind)
    return _api_path(
        CUSTOM_METRICS,
        query.namespace,
        (f"{plural}.{object_group}" if object_group else plural, "describedObject kind"),
        (query.name, "describedObject name"),
        (query.metric, "metric name"),
    )


def external_metric_path(query: ExternalMetricQuery) -> str:
    """external.metrics.k8s.io's series of `metric` (a resource name, lower-cased) in a namespace."""
    return _api_path(EXTERNAL_METRICS, query.namespace, (query.metric.lower(), "metric name"))


def _checked_list(
    body: bytes, decode: Callable[[bytes], _Items[T]], kind: str, api: tuple[str, str]
) -> list[T]:
    """The items of a list answer that is the list asked for; RecordError for anything else.

    Read in one pass. For an answer that does not decode, what it says it is
    is read first, so that its error stays the one a reading reports: the
    wrong kind's RecordError, else the items' own error."""
    api_version = "/".join(api)
    try:
        answer = decode(body)
    except msgspec.DecodeError:
        _check_kind(_decode_type(body), kind, api_version)
        raise
    _check_kind(answer, kind, api_version)
    return answer.items or []


def _check_kind(found: _TypeMeta, kind: str, api_version: str) -> None:
    if (found.kind, found.api_version) != (kind, api_version):
        got = f"{found.api_version or '(no apiVersion)'} {found.kind or '(no kind)'}"
        raise RecordError(f"the metrics API answered with {got}, not {api_version} {kind}")


class MetricsReader:
    """Performs metric queries against the metrics APIs of one API server."""

    def __init__(
        self,
        *,
        client: KubeClient,
        timeout_seconds: float,
        max_response_bytes: int = DEFAULT_METRICS_MAX_RESPONSE_BYTES,
        share_pod_metrics_seconds: float = 0.0,
        hvpas_in: Callable[[str], int] = lambda namespace: 1,
        pod_name: PodName = own_name,
    ) -> None:
        """An answer longer than `max_response_bytes` is a failed reading, not read further.

        `share_pod_metrics_seconds` above 0: PodMetrics answers are kept that long and
        shared between queries, one namespace-wide read where several Hvpas of the namespace
        read metrics (`hvpas_in`), as `hvpa.controller.shared_pod_metrics` describes (the kept
        items share `pod_name`'s copy of each name); 0 reads every query afresh (`hvpa explain`
        decides once)."""
        self._client = client
        self._timeout = timeout_seconds
        self._max_response_bytes = max_response_bytes
        self.shared: SharedPodMetrics | None = None
        if share_pod_metrics_seconds > 0:
            self.shared = SharedPodMetrics(
                fetch=self._fetch_pod_metrics,
                max_age_seconds=share_pod_metrics_seconds,
                hvpas_in=hvpas_in,
                pod_name=pod_name,
            )

    async def close(self) -> None:
        """End the reads a shared answer started in the background (the caller is stopping)."""
        if self.shared is not None:
            await self.shared.close()

    async def read(self, queries: Iterable[MetricQuery]) -> dict[MetricQuery, MetricReading]:
        """Every query's reading, read concurrently; failures are MetricReadErrors."""
        unique = list(dict.fromkeys(queries))
        if len(unique) == 1:
            # Most Hvpas read one metric: read in the reconcile's own task, which goes on
            # at once when the answer is kept, not a loop's turn later as a gathered task.
            return {unique[0]: await self._read_one(unique[0])}
        readings = await asyncio.gather(*(self._read_one(query) for query in unique))
        return dict(zip(unique, readings, strict=True))

    async def _read_one(self, query: MetricQuery) -> MetricReading:
        try:
            async with asyncio.timeout(self._timeout):
                if isinstance(query, ResourceMetricsQuery):
                    return await self._read_pod_metrics(query)
                return await self._fetch(query)
        except (RefusedQuery, TimeoutError, KubeError, *DECODING_ERRORS) as error:
            return MetricReadError(self._failure(error, query))

    def _failure(self, error: Exception, query: MetricQuery | None) -> str:
        """What a failed read tells the engine (and, at debug level, the log)."""
        if isinstance(error, RefusedQuery):
            message = f"not requested: {error}"
        elif isinstance(error, TimeoutError):
            message = f"no answer within {self._timeout:g}s"
        elif isinstance(error, KubeError):
            message = str(error)
        else:
            message = f"cannot read the answer: {error}"
        # Every reconcile of an Hvpa whose adapter is missing fails the same way: the
        # condition and /debug/state say so; the log says it only at debug level.
        what = type(query).__name__ if query is not None else ResourceMetricsQuery.__name__
        _logger.debug("metric read failed", extra=fields(query=what, error=message))
        return message

    async def _read_pod_metrics(self, query: ResourceMetricsQuery) -> MetricReading:
        """PodMetrics come by one path, shared or not: `_fetch_pod_metrics` makes the
        request, shared_pod_metrics turns its answer into the query's reading."""
        if self.shared is not None:
            return await self.shared.read(query.namespace, query.selector)
        return await read_by_selector(self._fetch_pod_metrics, query.namespace, query.selector)

    async def _fetch_pod_metrics(
        self, namespace: str, selector: LabelSelector | None
    ) -> Fetched | Unshareable:
        """One namespace's PodMetrics, all (selector None) or by selector: a failure is its
        message, as a read of one query would have reported it."""
        params: dict[str, str] = {} if selector is None else {"labelSelector": str(selector)}
        try:
            async with asyncio.timeout(self._timeout):
                # metrics.k8s.io's PodMetrics of one namespace.
                path = _api_path(RESOURCE_METRICS, namespace, "pods")
                body = await self._get(path, params)
            kind = "PodMetricsList"
            if selector is None:
                return Fetched(_checked_list(body, _decode_raw_pod_metrics, kind, RESOURCE_METRICS))
            return Fetched(_checked_list(body, _decode_pod_metrics, kind, RESOURCE_METRICS))
        except ResponseTooLarge as error:
            if selector is None:
                return Unshareable.TOO_LARGE
            return Fetched(failure=self._failure(error, None))
        except msgspec.ValidationError as error:
            if selector is None:
                return Unshareable.MISFIT
            return Fetched(failure=self._failure(error, None))
        except (RefusedQuery, TimeoutError, KubeError, *DECODING_ERRORS) as error:
            return Fetched(failure=self._failure(error, None))

    async def _get(self, path: str, params: Params) -> bytes:
        return await self._client.request(
            "GET", path, params=params, max_response_bytes=self._max_response_bytes
        )

    async def _fetch(
        self, query: PodsMetricQuery | ObjectMetricQuery | ExternalMetricQuery
    ) -> MetricReading:
        if isinstance(query, PodsMetricQuery):
            params: dict[str, str] = {"labelSelector": str(query.selector)}
            if query.metric_selector is not None:
                params["metricLabelSelector"] = str(query.metric_selector)
            return self._values(await self._get(pods_metric_path(query), params), one=False)
        if isinstance(query, ObjectMetricQuery):
            params = {}
            if query.metric_selector is not None:
                params["metricLabelSelector"] = str(query.metric_selector)
            return self._values(await self._get(object_metric_path(query), params), one=True)
        assert isinstance(query, ExternalMetricQuery)
        params = {}
        if query.metric_selector is not None:
            params["labelSelector"] = str(query.metric_selector)
        body = await self._get(external_metric_path(query), params)
        items = _checked_list(body, _decode_external, "ExternalMetricValueList", EXTERNAL_METRICS)
        return ExternalMetricValueList(
            tuple(
                ExternalMetricValue(quantity_milli(item.value, "value"), parse_time(item.timestamp))
                for item in items
            )
        )

    @staticmethod
    def _values(body: bytes, *, one: bool) -> MetricValueList:
        """A MetricValueList; `one`: an object's metric, of which upstream's client takes one item."""
        items = _checked_list(body, _decode_values, "MetricValueList", CUSTOM_METRICS)
        if one and len(items) > 1:
            raise RecordError(
                f"the custom metrics API server returned {len(items)} results "
                "when we asked for exactly one"
            )
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
