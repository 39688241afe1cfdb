"""The three metrics APIs, fed by whatever the simulator or a test sets.

- metrics.k8s.io/v1beta1 answers like metrics-server: PodMetrics only for
  pods that exist, carrying the pod's labels (so `labelSelector=` selects by
  them); NodeMetrics likewise for nodes.
- custom.metrics.k8s.io/v1beta2 answers like an adapter: one object
  (`/namespaces/ns/pods/web-1/rps`) or every object of a resource matching a
  label selector (`/namespaces/ns/pods/*/rps?labelSelector=`), optionally
  narrowed by `metricLabelSelector=`. Objects of served resources are matched
  on their live labels; others on the labels given when the value was set.
- external.metrics.k8s.io/v1beta1: series per namespace and metric name,
  selected on their labels. Metric names are matched case-insensitively, as
  the HPA controller lower-cases them.
A metric nobody set answers 404 NotFound, as adapters do. Which series a
read selects follows `hvpa.metric_series`, the rules `hvpa recommend`'s
scenarios are read by too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import InvalidOperation
from functools import lru_cache
from typing import Any

from hvpa.durations import format_duration
from hvpa.labels import LabelSelector
from hvpa.metric_series import custom_value_selected, external_value_selected, selects
from hvpa.quantity import QuantityError, parse
from hvpa.records import format_time
from hvpa.sim.apiserver.errors import NotFound
from hvpa.sim.apiserver.resources import ResourceTable
from hvpa.sim.apiserver.storage import Storage

__all__ = ["Metrics"]

Value = str | int | float


@lru_cache(maxsize=8192, typed=True)
def _quantity(value: Value) -> str:
    """The canonical spelling of a usage. Cached: the simulated metrics server publishes
    every pod's and node's usage each period, and the same few hundred values recur."""
    try:
        return str(parse(value))
    except (QuantityError, InvalidOperation) as error:
        raise ValueError(f"{value!r} is not a quantity") from error


@lru_cache(maxsize=1024)
def _time_text(seconds: float) -> str:
    """format_time, once per reading of the clock: every PodMetrics of a read is stamped
    with the same now and, within a metrics window, the same timestamp."""
    return format_time(seconds)


@lru_cache(maxsize=64, typed=True)
def _window_text(seconds: float) -> str:
    """format_duration of a window length: one or two lengths recur at every read."""
    return format_duration(seconds)


@dataclass(frozen=True, slots=True)
class _Usage:
    usage: Any  # {container: {resource: quantity}} for pods, {resource: quantity} for nodes
    timestamp: float
    window_seconds: float


@dataclass(frozen=True, slots=True)
class _Series:
    value: str
    timestamp: float
    window_seconds: int | None
    metric_labels: Mapping[str, str] = field(default_factory=dict)
    object_labels: Mapping[str, str] = field(default_factory=dict)


class Metrics:
    def __init__(
        self, table: ResourceTable, storage: Storage, *, clock: Callable[[], float]
    ) -> None:
        self._table = table
        self._storage = storage
        self._clock = clock
        self._pods: dict[tuple[str, str], _Usage] = {}
        # Pod names with metrics, by namespace: a namespaced read looks at its own
        # namespace only (scanning every pod's key made each read O(cluster)).
        self._pod_names: dict[str, set[str]] = {}
        self._nodes: dict[str, _Usage] = {}
        # (group resource, namespace or "", object name, metric) -> series by metric labels
        self._custom: dict[
            tuple[str, str, str, str], dict[frozenset[tuple[str, str]], _Series]
        ] = {}
        # (namespace, lower-cased metric) -> series by labels
        self._external: dict[tuple[str, str], dict[frozenset[tuple[str, str]], _Series]] = {}

    # ------------------------------------------------------------------ setters

    def set_pod_metrics(
        self,
        namespace: str,
        name: str,
        containers: Mapping[str, Mapping[str, Value]],
        *,
        timestamp: float | None = None,
        window_seconds: float = 30.0,
    ) -> None:
        """Usage per container, e.g. `{"app": {"cpu": "250m", "memory": "200Mi"}}`."""
        usage = {
            container: {resource: _quantity(value) for resource, value in values.items()}
            for container, values in containers.items()
        }
        self._pods[(namespace, name)] = _Usage(usage, self._at(timestamp), window_seconds)
        self._pod_names.setdefault(namespace, set()).add(name)

    def remove_pod_metrics(self, namespace: str, name: str) -> None:
        self._pods.pop((namespace, name), None)
        names = self._pod_names.get(namespace)
        if names is not None:
            names.discard(name)
            if not names:
                del self._pod_names[namespace]

    def set_node_metrics(
        self,
        name: str,
        usage: Mapping[str, Value],
        *,
        timestamp: float | None = None,
        window_seconds: float = 30.0,
    ) -> None:
        values = {resource: _quantity(value) for resource, value in usage.items()}
        self._nodes[name] = _Usage(values, self._at(timestamp), window_seconds)

    def remove_node_metrics(self, name: str) -> None:
        self._nodes.pop(name, None)

    def set_custom_metric(
        self,
        resource: str,
        name: str,
        metric: str,
        value: Value,
        *,
        namespace: str | None = None,
        metric_labels: Mapping[str, str] | None = None,
        object_labels: Mapping[str, str] | None = None,
        timestamp: float | None = None,
        window_seconds: int | None = None,
    ) -> None:
        """A value of `metric` for one object (`resource` as `pods`, `deployments.apps`,
        `services`, `namespaces` for namespace metrics). `object_labels` matter only
        for resources this server does not serve."""
        labels = dict(metric_labels or {})
        series = _Series(
            _quantity(value), self._at(timestamp), window_seconds, labels, dict(object_labels or {})
        )
        key = (self._group_resource(resource), namespace or "", name, metric)
        self._custom.setdefault(key, {})[frozenset(labels.items())] = series

    def set_external_metric(
        self,
        namespace: str,
        metric: str,
        value: Value,
        *,
        labels: Mapping[str, str] | None = None,
        timestamp: float | None = None,
        window_seconds: int | None = None,
    ) -> None:
        series_labels = dict(labels or {})
        series = _Series(_quantity(value), self._at(timestamp), window_seconds, series_labels)
        key = (namespace, metric.lower())
        self._external.setdefault(key, {})[frozenset(series_labels.items())] = series

    def clear(self) -> None:
        self._pods.clear()
        self._pod_names.clear()
        self._nodes.clear()
        self._custom.clear()
        self._external.clear()

    def _at(self, timestamp: float | None) -> float:
        return self._clock() if timestamp is None else timestamp

    def _group_resource(self, resource: str) -> str:
        rtype = self._table.named(resource)
        return rtype.group_resource if rtype is not None else resource.lower()

    # ------------------------------------------------------------------ metrics.k8s.io

    def pod_metrics(
        self, namespace: str | None, name: str | None, selector: LabelSelector
    ) -> list[dict[str, Any]]:
        """PodMetrics of existing pods; `name` given: that one pod or 404."""
        pods = self._table.at("", "v1", "pods")
        assert pods is not None
        entries = self._storage.store(pods).entries
        found: list[tuple[str, dict[str, Any]]] = []
        if name is not None:
            candidates = [(namespace, name)] if namespace is not None else []
        elif namespace is not None:
            candidates = [(namespace, n) for n in sorted(self._pod_names.get(namespace, ()))]
        else:
            candidates = sorted(self._pods)
        created = _time_text(self._clock())  # one read's objects are made at one time
        for pod_namespace, pod_name in candidates:
            usage = self._pods.get((pod_namespace, pod_name))
            entry = entries.get(f"{pod_namespace}/{pod_name}")
            if usage is None or entry is None or not selects(selector, entry.labels):
                continue
            containers = [{"name": c, "usage": dict(u)} for c, u in usage.usage.items()]
            item = self._metrics_object(
                "PodMetrics", pod_name, pod_namespace, entry.labels, usage, created
            )
            item["containers"] = containers
            found.append((entry.key, item))
        if name is not None and not found:
            raise NotFound(
                f'podmetrics.metrics.k8s.io "{name}" not found',
                details={"name": name, "group": "metrics.k8s.io", "kind": "pods"},
            )
        return [item for _, item in found]

    def node_metrics(self, name: str | None, selector: LabelSelector) -> list[dict[str, Any]]:
        nodes = self._table.at("", "v1", "nodes")
        assert nodes is not None
        entries = self._storage.store(nodes).entries
        found: list[dict[str, Any]] = []
        created = _time_text(self._clock())
        for node_name in sorted([name] if name is not None else self._nodes):
            usage = self._nodes.get(node_name)
            entry = entries.get(node_name)
            if usage is None or entry is None or not selector.matches(entry.labels):
                continue
            item = self._metrics_object(
                "NodeMetrics", node_name, None, entry.labels, usage, created
            )
            item["usage"] = dict(usage.usage)
            found.append(item)
        if name is not None and not found:
            raise NotFound(
                f'nodemetrics.metrics.k8s.io "{name}" not found',
                details={"name": name, "group": "metrics.k8s.io", "kind": "nodes"},
            )
        return found

    def _metrics_object(
        self,
        kind: str,
        name: str,
        namespace: str | None,
        labels: Mapping[str, str],
        usage: _Usage,
        created: str,
    ) -> dict[str, Any]:
        """`created`: the read's time, spelled (the clock is read once per read: under a
        real clock each item's own reading missed the spelling's cache)."""
        metadata: dict[str, Any] = {"name": name}
        if namespace is not None:
            metadata["namespace"] = namespace
        metadata["creationTimestamp"] = created
        if labels:
            metadata["labels"] = dict(labels)
        return {
            "kind": kind,
            "apiVersion": "metrics.k8s.io/v1beta1",
            "metadata": metadata,
            "timestamp": _time_text(usage.timestamp),
            "window": _window_text(usage.window_seconds),
        }

    # ------------------------------------------------------------------ custom.metrics.k8s.io

    def custom_metric_values(
        self,
        resource: str,
        namespace: str | None,
        name: str,
        metric: str,
        selector: LabelSelector,
        metric_selector: LabelSelector,
    ) -> list[dict[str, Any]]:
        """MetricValue items for one object, or for `*` every object matching `selector`."""
        group_resource = self._group_resource(resource)
        rtype = self._table.named(group_resource)
        served = rtype is not None and not rtype.metrics and group_resource == rtype.group_resource
        entries = self._storage.store(rtype).entries if served and rtype is not None else None
        items: list[dict[str, Any]] = []
        known = False
        for (res, ns, obj_name, obj_metric), series_by_labels in sorted(self._custom.items()):
            if res != group_resource or ns != (namespace or "") or obj_metric != metric:
                continue
            if name != "*" and obj_name != name:
                continue
            known = True
            if entries is not None and rtype is not None:
                entry = entries.get(rtype.key(namespace, obj_name))
                if entry is None:
                    continue
                object_labels: Mapping[str, str] = entry.labels
            else:
                object_labels = {}
            for series in series_by_labels.values():
                selected = custom_value_selected(
                    object_name=obj_name,
                    object_labels=object_labels if entries is not None else series.object_labels,
                    metric_labels=series.metric_labels,
                    name=name,
                    selector=selector,
                    metric_selector=metric_selector,
                )
                if not selected:
                    continue
                items.append(
                    self._metric_value(group_resource, namespace, obj_name, metric, series)
                )
        if not known:
            target = name if name != "*" else "matching selector"
            raise NotFound(
                f"the server could not find the metric {metric} for {group_resource} {target}",
                details={"name": metric, "group": "custom.metrics.k8s.io", "kind": group_resource},
            )
        return items

    def _metric_value(
        self, group_resource: str, namespace: str | None, name: str, metric: str, series: _Series
    ) -> dict[str, Any]:
        rtype = self._table.named(group_resource)
        described: dict[str, Any] = {}
        if rtype is not None:
            described["kind"] = rtype.kind
        if namespace:
            described["namespace"] = namespace
        described["name"] = name
        if rtype is not None:
            described["apiVersion"] = rtype.api_version if rtype.group else f"/{rtype.version}"
        identifier: dict[str, Any] = {"name": metric}
        if series.metric_labels:
            identifier["selector"] = {"matchLabels": dict(series.metric_labels)}
        value: dict[str, Any] = {
            "describedObject": described,
            "metric": identifier,
            "timestamp": format_time(series.timestamp),
        }
        if series.window_seconds is not None:
            value["windowSeconds"] = series.window_seconds
        value["value"] = series.value
        return value

    def custom_resources(self) -> list[str]:
        """`pods/rps`-style names for discovery."""
        return sorted({f"{res}/{metric}" for res, _, _, metric in self._custom})

    # ------------------------------------------------------------------ external.metrics.k8s.io

    def external_metric_values(
        self, namespace: str, metric: str, selector: LabelSelector
    ) -> list[dict[str, Any]]:
        series_by_labels = self._external.get((namespace, metric.lower()))
        if series_by_labels is None:
            raise NotFound(
                f"the server could not find the requested resource (external metric {metric})",
                details={"name": metric, "group": "external.metrics.k8s.io"},
            )
        items = []
        for series in series_by_labels.values():
            selected = external_value_selected(
                metric=metric, labels=series.metric_labels, wanted=metric, selector=selector
            )
            if not selected:
                continue
            item: dict[str, Any] = {
                "metricName": metric,
                "metricLabels": dict(series.metric_labels),
                "timestamp": format_time(series.timestamp),
            }
            if series.window_seconds is not None:
                item["windowSeconds"] = series.window_seconds
            item["value"] = series.value
            items.append(item)
        return items

    def external_names(self) -> list[str]:
        return sorted({metric for _, metric in self._external})
