"""Scenario files for `hvpa recommend`: real object shapes in, a Snapshot and an Hvpa out.

A scenario (ENGINE.md §6) is what `kubectl get -o json` would print for the
Hvpa, its target, pods, metrics, nodes and friends, plus `now` and optional
controller `settings`. The loader answers the engine's metric queries the
way the metrics APIs would: PodMetrics of the target's pods (the target's
selector in the Hvpa's namespace), custom metrics by metric name, described
object and selector, external metrics by name and label selector. So a
scenario exercises the same code the live controller does.

Every problem is a ScenarioError whose message names the key at fault; a
scenario never ends in a traceback. JSON is parsed with orjson (a scenario of
tens of thousands of nodes must stay fast), YAML with PyYAML's C loader when
available, with timestamps kept as strings as the API writes them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec
import orjson
import yaml

from hvpa.api import InvalidHvpa, apply_defaults, parse_hvpa
from hvpa.api.resource import Hvpa
from hvpa.durations import DurationError, parse_duration
from hvpa.engine.decision import Snapshot
from hvpa.engine.guards import Writer, decode_writer
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
    metric_queries,
    needs_pod_usage,
)
from hvpa.engine.settings import SETTING_KEYS, Settings
from hvpa.labels import LabelSelector, SelectorError
from hvpa.quantity import QuantityError, parse
from hvpa.records import (
    PodMetricsRecord,
    PodRecord,
    RecordError,
    decode_configmap,
    decode_node,
    decode_pod,
    decode_pod_metrics,
    decode_target,
    decode_vpa,
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
_T = TypeVar("_T")


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
        text: str | bytes = sys.stdin.read()
    else:
        try:
            text = Path(path).read_bytes()
        except OSError as error:
            raise ScenarioError(f"cannot read {path}: {error.strerror or error}") from error
    return parse_scenario(read_document(path, text), path)


# ---------------------------------------------------------------------------
# Helpers


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


def _decoded(
    items: Sequence[Mapping[str, Any]], key: str, decode: Callable[[Mapping[str, Any]], _T]
) -> list[_T]:
    decoded: list[_T] = []
    for index, item in enumerate(items):
        try:
            decoded.append(decode(item))
        except (RecordError, SelectorError, QuantityError, msgspec.ValidationError) as error:
            raise ScenarioError(f"{key}[{index}] ({_name(item)}): {error}") from error
    return decoded


def _one(item: Mapping[str, Any], key: str, decode: Callable[[Mapping[str, Any]], _T]) -> _T:
    try:
        return decode(item)
    except (RecordError, SelectorError, QuantityError, msgspec.ValidationError) as error:
        raise ScenarioError(f"{key} ({_name(item)}): {error}") from error


def _name(item: Mapping[str, Any]) -> str:
    metadata = item.get("metadata")
    if isinstance(metadata, Mapping) and metadata.get("name"):
        return str(metadata["name"])
    return "unnamed"


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
            values[field] = float(value)
    try:
        return Settings(**values)
    except ValueError as error:
        raise ScenarioError(f"settings.{error}") from error


# ---------------------------------------------------------------------------
# The metrics APIs, answered from the scenario


def _pod_metrics(
    raw: Sequence[Mapping[str, Any]], namespace: str, selector: LabelSelector, pod_names: set[str]
) -> tuple[PodMetricsRecord, ...]:
    """metrics.k8s.io lists PodMetrics by the pods' labels; without labels, by the selected pods' names."""
    selected: list[PodMetricsRecord] = []
    for index, item in enumerate(raw):
        metadata = item.get("metadata") or {}
        if (metadata.get("namespace") or namespace) != namespace:
            continue
        labels = metadata.get("labels")
        if isinstance(labels, Mapping) and labels:
            chosen = selector.matches({str(k): str(v) for k, v in labels.items()})
        else:
            chosen = str(metadata.get("name", "")) in pod_names
        if chosen:
            selected.append(_one(item, f"podMetrics[{index}]", decode_pod_metrics))
    return tuple(selected)


@dataclass(frozen=True, slots=True)
class _CustomValue:
    kind: str
    api_group: str | None
    namespace: str | None
    name: str
    metric: str
    selector: LabelSelector | None
    value: MetricValue


def _group(api_version: Any) -> str | None:
    if not api_version:
        return None
    text = str(api_version)
    return text.split("/", 1)[0] if "/" in text else ""


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
        values.append(
            _CustomValue(
                kind=str(described.get("kind", "")),
                api_group=_group(described.get("apiVersion")),
                namespace=described.get("namespace"),
                name=str(described["name"]),
                metric=str(metric["name"]),
                selector=_selector(metric.get("selector"), f"{where}.metric.selector"),
                value=MetricValue(
                    described_name=str(described["name"]),
                    value_milli=_milli(item.get("value"), f"{where}.value"),
                    timestamp=_time(item.get("timestamp"), f"{where}.timestamp"),
                    window_seconds=None if window is None else float(window),
                ),
            )
        )
    return values


def _same_selector(value: LabelSelector | None, wanted: LabelSelector | None) -> bool:
    return value is None or wanted is None or str(value) == str(wanted)


def _external_values(
    raw: Sequence[Mapping[str, Any]],
) -> list[tuple[str, dict[str, str], ExternalMetricValue]]:
    values = []
    for index, item in enumerate(raw):
        where = f"externalMetrics[{index}]"
        name = item.get("metricName")
        if not name:
            raise ScenarioError(f"{where}.metricName: required")
        labels = item.get("metricLabels") or {}
        if not isinstance(labels, Mapping):
            raise ScenarioError(f"{where}.metricLabels: must be a map of strings")
        values.append(
            (
                str(name),
                {str(k): str(v) for k, v in labels.items()},
                ExternalMetricValue(
                    _milli(item.get("value"), f"{where}.value"),
                    _time(item.get("timestamp"), f"{where}.timestamp"),
                ),
            )
        )
    return values


def _answer(
    query: MetricQuery,
    pod_metrics: tuple[PodMetricsRecord, ...],
    pod_names: set[str],
    custom: list[_CustomValue],
    external: list[tuple[str, dict[str, str], ExternalMetricValue]],
) -> MetricReading:
    if isinstance(query, ResourceMetricsQuery):
        return PodMetricsList(pod_metrics)
    if isinstance(query, PodsMetricQuery):
        return MetricValueList(
            tuple(
                c.value
                for c in custom
                if c.kind.lower() in ("pod", "pods")
                and (c.namespace or query.namespace) == query.namespace
                and c.name in pod_names
                and c.metric == query.metric
                and _same_selector(c.selector, query.metric_selector)
            )
        )
    if isinstance(query, ObjectMetricQuery):
        group = _group(query.api_version)
        namespace_kind = query.kind == "Namespace"
        return MetricValueList(
            tuple(
                c.value
                for c in custom
                if c.kind == query.kind
                and c.name == (query.namespace if namespace_kind else query.name)
                and (group is None or c.api_group is None or c.api_group == group)
                and (namespace_kind or (c.namespace or query.namespace) == query.namespace)
                and c.metric == query.metric
                and _same_selector(c.selector, query.metric_selector)
            )
        )
    assert isinstance(query, ExternalMetricQuery)
    return ExternalMetricValueList(
        tuple(
            value
            for name, labels, value in external
            if name == query.metric
            and (query.metric_selector is None or query.metric_selector.matches(labels))
        )
    )


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
    assert now is not None
    settings = _settings(raw.get("settings"))
    try:
        hvpa = apply_defaults(parse_hvpa(raw["hvpa"]))
    except InvalidHvpa as error:
        raise ScenarioError("hvpa: " + "; ".join(str(p) for p in error.problems)) from error
    namespace = hvpa.namespace or "default"
    if not hvpa.namespace:
        hvpa = msgspec.structs.replace(hvpa, metadata={**hvpa.metadata, "namespace": namespace})

    target = _one(raw["target"], "target", decode_target)
    target_name = f"target ({target.kind} {target.name})"
    ref = hvpa.spec.target_ref
    if (target.kind, target.name) != (ref.kind, ref.name):
        raise ScenarioError(
            f"{target_name}: does not match hvpa spec.targetRef ({ref.kind} {ref.name})"
        )
    if target.namespace and target.namespace != namespace:
        raise ScenarioError(
            f"{target_name}: in namespace {target.namespace}, the Hvpa in {namespace}"
        )
    if not target.namespace:
        target = msgspec.structs.replace(target, namespace=namespace)

    pods: list[PodRecord] = []
    for pod in _decoded(_list(raw, "pods"), "pods", decode_pod):
        if not pod.namespace:
            pod = msgspec.structs.replace(pod, namespace=namespace)
        if pod.namespace == namespace and target.selector.matches(pod.labels):
            pods.append(pod)
    pod_names = {pod.name for pod in pods}

    pod_metrics = _pod_metrics(_list(raw, "podMetrics"), namespace, target.selector, pod_names)
    custom = _custom_values(_list(raw, "customMetrics"))
    external = _external_values(_list(raw, "externalMetrics"))
    template = hvpa.spec.hpa.template.spec
    queries = metric_queries(
        template.metrics if template else (),
        namespace,
        target.selector,
        pod_usage=needs_pod_usage(hvpa.spec),
    )
    readings = {q: _answer(q, pod_metrics, pod_names, custom, external) for q in queries}

    vpa = raw.get("vpa")
    if vpa is not None and not isinstance(vpa, Mapping):
        raise ScenarioError("vpa: must be a VerticalPodAutoscaler object")
    snapshot = Snapshot(
        target=target,
        pods=tuple(pods),
        nodes=tuple(_decoded(_list(raw, "nodes"), "nodes", decode_node)),
        config_maps=tuple(_decoded(_list(raw, "configMaps"), "configMaps", decode_configmap)),
        metrics=readings,
        vpa=_one(vpa, "vpa", decode_vpa) if vpa is not None else None,
        writers=tuple(
            writer
            for key in ("autoscalers", "otherHvpas")
            for writer in _writers(_list(raw, key), key, namespace)
        ),
    )
    return Scenario(name=name, now=now, settings=settings, hvpa=hvpa, snapshot=snapshot)


def _writers(items: Sequence[Mapping[str, Any]], key: str, namespace: str) -> list[Writer]:
    """Other autoscalers as conflict checks see them; an object without a namespace is in the Hvpa's."""
    return [
        writer if writer.namespace else replace(writer, namespace=namespace)
        for writer in _decoded(items, key, decode_writer)
    ]
