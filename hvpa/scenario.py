"""Scenario files for `hvpa recommend`: real objects in, the controller's own cache and snapshot out.

A scenario is what `kubectl get -o json` would print for the Hvpa, its
target, pods, metrics, nodes and friends, plus `now` and optional controller
`settings` (docs/engine.md, "Scenarios"). It is decided on exactly as the
controller would decide on the same cluster: every object goes through the
record decoders the informers use into the same `Cache`, with the same
indexes; the snapshot is built by `hvpa.controller.snapshot` (the one
builder the controller and `hvpa explain` use: nodes only for a
cluster-proportional Hvpa, the VPA the Hvpa owns and selects, other
autoscalers of the target found in the cache); the metric reads the snapshot
asks for are answered from the scenario's metric objects by the rules of
`hvpa.metric_series`, which the in-repo API server answers the controller by.

The scenario's own conveniences, each something a real cluster always has:
an object without a namespace is in the Hvpa's; an Hvpa without a uid gets
one; `vpa` is the VPA hvpa made for the Hvpa, so one that names no owner is
given the ownership and labels the controller gives its child VPA (a VPA
owned by something else belongs in `autoscalers`). What the API server would
refuse, a scenario refuses too: negative requests, limits or replicas.

Every problem is a ScenarioError whose message names the key at fault; a
scenario never ends in a traceback. JSON is parsed with orjson (a scenario of
tens of thousands of nodes must stay fast), YAML with PyYAML's C loader when
available, with timestamps kept as strings as the API writes them. Nothing
here imports a Kubernetes client or an HTTP library: `hvpa recommend` starts
fast (a test and an import contract keep it so).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec
import orjson
import yaml

from hvpa.api.resource import Hvpa
from hvpa.controller.cache import Cache
from hvpa.controller.resources import (
    HPAS,
    HVPAS,
    OWNED_VPAS,
    HpaRecord,
    HvpaRecord,
    VpaObject,
)
from hvpa.controller.snapshot import complete, prepare
from hvpa.controller.vpa import owner_reference
from hvpa.durations import DurationError, parse_duration
from hvpa.engine.decision import Snapshot
from hvpa.engine.metrics import (
    ExternalMetricQuery,
    ExternalMetricValue,
    ExternalMetricValueList,
    MetricQuery,
    MetricReading,
    MetricValue,
    MetricValueList,
    ObjectMetricQuery,
    PodMetricsList,
    PodsMetricQuery,
    ResourceMetricsQuery,
)
from hvpa.engine.settings import SETTING_KEYS, Settings
from hvpa.kube.resources import CONFIGMAPS, NODES, PODS, TARGETS, Resource
from hvpa.labels import LabelSelector, SelectorError
from hvpa.metric_series import ANY_OBJECT, custom_value_selected, external_value_selected, selects
from hvpa.quantity import QuantityError, parse
from hvpa.records import (
    ContainerSpec,
    PodMetricsRecord,
    PodRecord,
    RecordError,
    Resources,
    TargetRecord,
    decode_pod_metrics,
    parse_time,
)

__all__ = [
    "SCENARIO_KEYS",
    "Scenario",
    "ScenarioError",
    "load_scenario",
    "parse_scenario",
    "read_document",
]

SCENARIO_KEYS: Final = (
    "now",
    "settings",
    "hvpa",
    "target",
    "pods",
    "podMetrics",
    "customMetrics",
    "externalMetrics",
    "nodes",
    "vpa",
    "configMaps",
    "autoscalers",
    "otherHvpas",
)
R = TypeVar("R")


class ScenarioError(ValueError):
    """A scenario that cannot be read; the message names the key (and item) at fault."""


@dataclass(frozen=True, slots=True)
class Scenario:
    name: str
    now: float
    settings: Settings
    hvpa: Hvpa
    snapshot: Snapshot


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, with timestamps left as the strings the API writes."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def read_document(name: str, text: str | bytes) -> Any:
    """A scenario file's content: JSON for `.json` (or text that starts like JSON), else YAML."""
    stripped = text.lstrip()[:1]
    is_json = name.endswith(".json") or stripped in (b"{", "{")
    try:
        if is_json:
            return orjson.loads(text)
        return yaml.load(text, Loader=_Loader)
    except orjson.JSONDecodeError as error:
        raise ScenarioError(f"not valid JSON: {error}") from error
    except yaml.YAMLError as error:
        raise ScenarioError(f"not valid YAML: {error}") from error


def load_scenario(path: str) -> Scenario:
    """Read and parse one scenario file; `-` reads standard input."""
    if path == "-":
        # Bytes, not text: a document that is not UTF-8 is then the parser's error to report
        # (a ScenarioError), not a UnicodeDecodeError from reading the stream.
        stream = getattr(sys.stdin, "buffer", None)
        text: str | bytes = stream.read() if stream is not None else sys.stdin.read()
    else:
        try:
            text = Path(path).read_bytes()
        except OSError as error:
            raise ScenarioError(f"cannot read {path}: {error.strerror or error}") from error
    return parse_scenario(read_document(path, text), path)


# ---------------------------------------------------------------------------
# Reading objects through the informers' decoders


def _list(raw: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ScenarioError(f"{key}: must be a list of objects")
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise ScenarioError(f"{key}[{index}]: must be an object")
    return value


def _name(item: Mapping[str, Any]) -> str:
    metadata = item.get("metadata")
    if isinstance(metadata, Mapping) and metadata.get("name"):
        return str(metadata["name"])
    return "unnamed"


def _with_metadata(item: Mapping[str, Any], **defaults: Any) -> dict[str, Any]:
    """The object with metadata fields it lacks filled in (a namespace, a uid)."""
    metadata = item.get("metadata")
    metadata = dict(metadata) if isinstance(metadata, Mapping) else {}
    for key, value in defaults.items():
        if not metadata.get(key):
            metadata[key] = value
    return {**item, "metadata": metadata}


def _record(resource: Resource[Any, R], item: Mapping[str, Any], where: str) -> R:
    """One object as an informer would store it: its wire type, then the resource's converter."""
    try:
        return resource.convert(msgspec.convert(item, resource.wire_type, strict=False))
    except (msgspec.ValidationError, RecordError, SelectorError, QuantityError) as error:
        raise ScenarioError(f"{where} ({_name(item)}): {error}") from error


def _records(
    resource: Resource[Any, R], raw: Mapping[str, Any], key: str, namespace: str | None
) -> list[R]:
    items = _list(raw, key)
    if namespace is not None:
        items = [_with_metadata(item, namespace=namespace) for item in items]
    return [_record(resource, item, f"{key}[{index}]") for index, item in enumerate(items)]


def _time(value: Any, where: str) -> float | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ScenarioError(f"{where}: {value!r} is not an RFC 3339 time")
    try:
        return parse_time(value)
    except RecordError as error:
        raise ScenarioError(f"{where}: {error}") from error


def _milli(value: Any, where: str) -> int:
    if value is None or isinstance(value, bool):
        raise ScenarioError(f"{where}: a quantity is required")
    try:
        return parse(value).milli()
    except QuantityError as error:
        raise ScenarioError(f"{where}: {error}") from error


def _selector(value: Any, where: str) -> LabelSelector | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ScenarioError(f"{where}: must be a label selector object")
    try:
        return LabelSelector.from_dict(value)
    except SelectorError as error:
        raise ScenarioError(f"{where}: {error}") from error


def _settings(raw: Any) -> Settings:
    if raw is None:
        return Settings()
    if not isinstance(raw, Mapping):
        raise ScenarioError("settings: must be an object")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        field = SETTING_KEYS.get(key)
        if field is None:
            raise ScenarioError(
                f"settings.{key}: unknown setting (expected one of {', '.join(SETTING_KEYS)})"
            )
        if isinstance(value, bool):
            raise ScenarioError(f"settings.{key}: {value!r} is not a number")
        if key in ("cpuInitializationPeriod", "initialReadinessDelay", "downscaleStabilization"):
            try:
                values[field] = parse_duration(value)
            except (DurationError, TypeError) as error:
                raise ScenarioError(f"settings.{key}: {error}") from error
        elif key == "scaleUpLimitMinimum":
            if not isinstance(value, int):
                raise ScenarioError(f"settings.{key}: {value!r} is not an integer")
            values[field] = value
        else:
            if not isinstance(value, int | float):
                raise ScenarioError(f"settings.{key}: {value!r} is not a number")
            try:
                values[field] = float(value)
            except OverflowError:
                raise ScenarioError(f"settings.{key}: {value!r} is too large") from None
    try:
        return Settings(**values)
    except ValueError as error:
        raise ScenarioError(f"settings.{error}") from error


# ---------------------------------------------------------------------------
# The objects of a scenario


def _hvpa(raw: Mapping[str, Any]) -> HvpaRecord:
    """The Hvpa as the controller caches it; an invalid one is an error listing every problem."""
    item = _with_metadata(raw, namespace="default")
    metadata = item["metadata"]
    item = _with_metadata(item, uid=f"scenario-{metadata['namespace']}-{_name(item)}")
    record = _record(HVPAS, item, "hvpa")
    if record.hvpa is None:
        raise ScenarioError("hvpa: " + "; ".join(record.problems))
    return record


def _target(raw: Mapping[str, Any], record: HvpaRecord) -> TargetRecord:
    hvpa = record.hvpa
    assert hvpa is not None
    ref = hvpa.spec.target_ref
    kind = raw.get("kind")
    resource = TARGETS.get(str(kind))
    if resource is None:
        raise ScenarioError(f"target: kind {kind!r} is not one of {', '.join(TARGETS)}")
    target = _record(resource, _with_metadata(raw, namespace=record.namespace), "target")
    name = f"target ({target.kind} {target.name})"
    if (target.kind, target.name) != (ref.kind, ref.name):
        raise ScenarioError(f"{name}: does not match hvpa spec.targetRef ({ref.kind} {ref.name})")
    if target.namespace != record.namespace:
        raise ScenarioError(
            f"{name}: in namespace {target.namespace}, the Hvpa in {record.namespace}"
        )
    return target


def _owned_vpa(raw: Any, record: HvpaRecord) -> list[VpaObject]:
    """`vpa`: the VPA hvpa made for this Hvpa; without an owner it gets the child's ownership."""
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        raise ScenarioError("vpa: must be a VerticalPodAutoscaler object")
    hvpa = record.hvpa
    assert hvpa is not None
    item = _with_metadata(raw, namespace=record.namespace)
    metadata = item["metadata"]
    if not metadata.get("ownerReferences"):
        metadata["ownerReferences"] = [owner_reference(hvpa, record.uid)]
        template_labels = (hvpa.spec.vpa.template.metadata or {}).get("labels") or {}
        if not metadata.get("labels") and template_labels:
            metadata["labels"] = dict(template_labels)
    return [_record(OWNED_VPAS, item, "vpa")]


def _autoscalers(raw: Mapping[str, Any], namespace: str) -> tuple[list[HpaRecord], list[VpaObject]]:
    """`autoscalers`: other HPAs and VPAs in the namespace, as the controller's informers see them."""
    hpas: list[HpaRecord] = []
    vpas: list[VpaObject] = []
    for index, item in enumerate(_list(raw, "autoscalers")):
        item = _with_metadata(item, namespace=namespace)
        where = f"autoscalers[{index}]"
        kind = item.get("kind")
        if kind == HPAS.kind:
            hpas.append(_record(HPAS, item, where))
        elif kind == OWNED_VPAS.kind:
            vpas.append(_record(OWNED_VPAS, item, where))
        else:
            raise ScenarioError(
                f"{where} ({_name(item)}): kind {kind!r} is not {HPAS.kind} or {OWNED_VPAS.kind}"
            )
    return hpas, vpas


def _other_hvpas(raw: Mapping[str, Any], namespace: str) -> list[HvpaRecord]:
    """`otherHvpas`: as cached, invalid ones included (the controller ignores those)."""
    records = []
    for index, item in enumerate(_list(raw, "otherHvpas")):
        item = _with_metadata(item, namespace=namespace)
        item = _with_metadata(item, uid=f"scenario-{namespace}-{_name(item)}")
        records.append(_record(HVPAS, item, f"otherHvpas[{index}]"))
    return records


def _refuse_negative(target: TargetRecord, pods: Iterable[PodRecord]) -> None:
    """What the API server refuses to store: negative replicas, requests or limits."""
    where = f"target ({target.kind} {target.name})"
    if target.spec_replicas < 0:
        raise ScenarioError(f"{where}: spec.replicas must not be negative")
    if target.status_replicas < 0:
        raise ScenarioError(f"{where}: status.replicas must not be negative")
    for container in target.containers:
        _refuse_negative_resources(container, f"{where} container {container.name}")
    for pod in pods:
        for container in pod.containers:
            _refuse_negative_resources(container, f"pod {pod.name} container {container.name}")
        if _negative(pod.requests):
            raise ScenarioError(f"pod {pod.name}: spec.resources.requests must not be negative")


def _refuse_negative_resources(container: ContainerSpec, where: str) -> None:
    if _negative(container.requests):
        raise ScenarioError(f"{where}: resources.requests must not be negative")
    if _negative(container.limits):
        raise ScenarioError(f"{where}: resources.limits must not be negative")


def _negative(resources: Resources) -> bool:
    return any(amount is not None and amount < 0 for amount in (resources.cpu, resources.memory))


# ---------------------------------------------------------------------------
# The metrics APIs, answered from the scenario by hvpa.metric_series' rules


@dataclass(frozen=True, slots=True)
class _CustomValue:
    """A custom.metrics.k8s.io MetricValue of the scenario: its object, series labels and value."""

    kind: str
    api_group: str | None
    namespace: str | None
    name: str
    metric: str
    labels: Mapping[str, str]
    value: MetricValue


@dataclass(frozen=True, slots=True)
class _ExternalValue:
    metric: str
    labels: Mapping[str, str]
    value: ExternalMetricValue


def _group(api_version: Any) -> str | None:
    if not api_version:
        return None
    text = str(api_version)
    return text.split("/", 1)[0] if "/" in text else ""


def _labels(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ScenarioError(f"{where}: must be a map of strings")
    return {str(k): str(v) for k, v in value.items()}


def _custom_values(raw: Sequence[Mapping[str, Any]]) -> list[_CustomValue]:
    values: list[_CustomValue] = []
    for index, item in enumerate(raw):
        where = f"customMetrics[{index}]"
        described = item.get("describedObject")
        metric = item.get("metric")
        if not isinstance(described, Mapping) or not described.get("name"):
            raise ScenarioError(
                f"{where}.describedObject: an object with kind and name is required"
            )
        if not isinstance(metric, Mapping) or not metric.get("name"):
            raise ScenarioError(f"{where}.metric.name: required")
        window = item.get("windowSeconds")
        if window is not None and (isinstance(window, bool) or not isinstance(window, int | float)):
            raise ScenarioError(f"{where}.windowSeconds: {window!r} is not a number")
        # A MetricValue shows its series' labels as `metric.selector.matchLabels`.
        series = _selector(metric.get("selector"), f"{where}.metric.selector")
        labels = {str(r.key): r.values[0] for r in series.requirements} if series else {}
        values.append(
            _CustomValue(
                kind=str(described.get("kind", "")),
                api_group=_group(described.get("apiVersion")),
                namespace=described.get("namespace"),
                name=str(described["name"]),
                metric=str(metric["name"]),
                labels=labels,
                value=MetricValue(
                    described_name=str(described["name"]),
                    value_milli=_milli(item.get("value"), f"{where}.value"),
                    timestamp=_time(item.get("timestamp"), f"{where}.timestamp"),
                    window_seconds=None if window is None else float(window),
                ),
            )
        )
    return values


def _external_values(raw: Sequence[Mapping[str, Any]]) -> list[_ExternalValue]:
    values = []
    for index, item in enumerate(raw):
        where = f"externalMetrics[{index}]"
        name = item.get("metricName")
        if not name:
            raise ScenarioError(f"{where}.metricName: required")
        values.append(
            _ExternalValue(
                str(name),
                _labels(item.get("metricLabels"), f"{where}.metricLabels"),
                ExternalMetricValue(
                    _milli(item.get("value"), f"{where}.value"),
                    _time(item.get("timestamp"), f"{where}.timestamp"),
                ),
            )
        )
    return values


class _MetricsApis:
    """The three metrics APIs over the scenario's metric objects and its cached pods."""

    def __init__(self, raw: Mapping[str, Any], namespace: str, cache: Cache) -> None:
        self._cache = cache
        self._pod_metrics = [
            _record_pod_metrics(item, f"podMetrics[{index}]")
            for index, item in enumerate(
                _with_metadata(item, namespace=namespace) for item in _list(raw, "podMetrics")
            )
        ]
        self._custom = _custom_values(_list(raw, "customMetrics"))
        self._external = _external_values(_list(raw, "externalMetrics"))

    def answer(self, query: MetricQuery) -> MetricReading:
        if isinstance(query, ResourceMetricsQuery):
            return self._resource(query)
        if isinstance(query, PodsMetricQuery):
            return self._pods(query)
        if isinstance(query, ObjectMetricQuery):
            return self._object(query)
        return self._external_metric(query)

    def _pod_labels(self, namespace: str, name: str) -> Mapping[str, str] | None:
        pod = self._cache.pods.get(f"{namespace}/{name}")
        return None if pod is None else pod.labels

    def _resource(self, query: ResourceMetricsQuery) -> PodMetricsList:
        """metrics.k8s.io: PodMetrics of existing pods whose labels the selector selects."""
        selected = []
        for item in self._pod_metrics:
            labels = self._pod_labels(item.namespace, item.name)
            mine = item.namespace == query.namespace and labels is not None
            if mine and labels is not None and selects(query.selector, labels):
                selected.append(item)
        return PodMetricsList(tuple(selected))

    def _pods(self, query: PodsMetricQuery) -> MetricValueList:
        """custom.metrics.k8s.io `pods/*/metric`: every existing pod the selector selects."""
        selected = []
        for value in self._custom:
            if value.kind != "Pod" or (value.namespace or query.namespace) != query.namespace:
                continue
            labels = self._pod_labels(query.namespace, value.name)
            if labels is not None and value.metric == query.metric:
                chosen = custom_value_selected(
                    object_name=value.name,
                    object_labels=labels,
                    metric_labels=value.labels,
                    name=ANY_OBJECT,
                    selector=query.selector,
                    metric_selector=query.metric_selector,
                )
                if chosen:
                    selected.append(value.value)
        return MetricValueList(tuple(selected))

    def _object(self, query: ObjectMetricQuery) -> MetricValueList:
        """custom.metrics.k8s.io for one object (a Namespace kind: the Hvpa's namespace)."""
        group = _group(query.api_version)
        namespace_kind = query.kind == "Namespace"
        selected = []
        for value in self._custom:
            same_object = (
                value.kind == query.kind
                and (group is None or value.api_group is None or value.api_group == group)
                and (namespace_kind or (value.namespace or query.namespace) == query.namespace)
                and value.metric == query.metric
            )
            if same_object and custom_value_selected(
                object_name=value.name,
                object_labels={},
                metric_labels=value.labels,
                name=query.namespace if namespace_kind else query.name,
                selector=None,
                metric_selector=query.metric_selector,
            ):
                selected.append(value.value)
        return MetricValueList(tuple(selected))

    def _external_metric(self, query: ExternalMetricQuery) -> ExternalMetricValueList:
        return ExternalMetricValueList(
            tuple(
                series.value
                for series in self._external
                if external_value_selected(
                    metric=series.metric,
                    labels=series.labels,
                    wanted=query.metric,
                    selector=query.metric_selector,
                )
            )
        )


def _record_pod_metrics(item: Mapping[str, Any], where: str) -> PodMetricsRecord:
    try:
        return decode_pod_metrics(item)
    except (RecordError, QuantityError, msgspec.ValidationError) as error:
        raise ScenarioError(f"{where} ({_name(item)}): {error}") from error


# ---------------------------------------------------------------------------


def parse_scenario(raw: Any, name: str = "scenario") -> Scenario:
    """A Scenario from a decoded document; raise ScenarioError naming what is wrong."""
    if not isinstance(raw, Mapping):
        raise ScenarioError("a scenario must be an object with at least `hvpa` and `target`")
    unknown = [str(key) for key in raw if key not in SCENARIO_KEYS]
    if unknown:
        raise ScenarioError(
            f"unknown key {', '.join(sorted(unknown))} (expected {', '.join(SCENARIO_KEYS)})"
        )
    for required in ("hvpa", "target"):
        if not isinstance(raw.get(required), Mapping):
            raise ScenarioError(f"{required}: required (an object)")
    now = time.time() if raw.get("now") is None else _time(raw["now"], "now")
    if now is None:
        raise ScenarioError(
            "now: an empty string is not a time; leave `now` out for the current time"
        )
    settings = _settings(raw.get("settings"))

    record = _hvpa(raw["hvpa"])
    namespace = record.namespace
    target = _target(raw["target"], record)
    pods = _records(PODS, raw, "pods", namespace)
    _refuse_negative(target, pods)
    hpas, other_vpas = _autoscalers(raw, namespace)
    cache = Cache.of_records(
        hvpas=[record, *_other_hvpas(raw, namespace)],
        pods=pods,
        nodes=_records(NODES, raw, "nodes", None),
        targets=[target],
        vpas=[*_owned_vpa(raw.get("vpa"), record), *other_vpas],
        hpas=hpas,
        config_maps=_records(CONFIGMAPS, raw, "configMaps", namespace),
    )
    try:
        prepared = prepare(record, cache)
    except RecordError as error:  # UnreadableInput: a quantity hvpa cannot read, named
        raise ScenarioError(str(error)) from error
    apis = _MetricsApis(raw, namespace, cache)
    snapshot = complete(prepared, {query: apis.answer(query) for query in prepared.queries})
    hvpa: Hvpa = prepared.hvpa
    return Scenario(name=name, now=now, settings=settings, hvpa=hvpa, snapshot=snapshot)
