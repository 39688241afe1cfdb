"""Watch events and metrics answers from a hostile or broken API server, decoded as the
controller decodes them.

A watch line is decoded into the resource's wire struct (msgspec, as the reflector does) and
converted to its record (as the informer does); the only errors allowed are the ones the
reflector catches and skips an object for: hvpa.records.DECODING_ERRORS (msgspec's DecodeError,
the UnicodeDecodeError msgspec raises for a string that is not UTF-8, and RecordError).
Lines are valid objects (from the scenario files and the example Hvpas) mutated as documents,
or their bytes cut, spliced and flipped. A metrics answer, however broken, is a reading: the
reader never raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import msgspec
import yaml
from fuzz_strategies import EXAMPLES, fuzz_settings, mutated
from hypothesis import given
from hypothesis import strategies as st

from hvpa.controller.metricsapi import MetricsReader
from hvpa.controller.resources import HPAS, HVPAS, OWNED_VPAS
from hvpa.engine.metrics import (
    ExternalMetricQuery,
    MetricQuery,
    MetricReadError,
    ObjectMetricQuery,
    PodsMetricQuery,
    ResourceMetricsQuery,
)
from hvpa.kube.resources import CONFIGMAPS, DEPLOYMENTS, NODES, PODS, Resource
from hvpa.kube.wire import ObjectList, WatchEvent
from hvpa.labels import LabelSelector
from hvpa.records import DECODING_ERRORS, RecordError
from hvpa.scenario import read_document

ROOT: Final = Path(__file__).parents[2]
SCENARIOS: Final = [
    read_document(p.name, p.read_bytes())
    for p in sorted(
        [
            *(ROOT / "examples/scenarios").glob("*.yaml"),
            *(ROOT / "tests/engine/scenarios").glob("*.yaml"),
        ]
    )
]


def _objects(key: str) -> list[Any]:
    found: list[Any] = []
    for scenario in SCENARIOS:
        value = scenario.get(key)
        found += value if isinstance(value, list) else [value] if value else []
    return found


HVPA_MANIFESTS: Final = [
    document
    for path in sorted((ROOT / "manifests/examples").glob("*.yaml"))
    for document in yaml.safe_load_all(path.read_text(encoding="utf-8"))
    if isinstance(document, dict) and document.get("kind") == "Hvpa"
]
HPA: Final = {
    "metadata": {"name": "other", "namespace": "default", "resourceVersion": "7"},
    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
}
# Each resource the controller watches, with objects of its kind to mutate.
WATCHED: Final[list[tuple[Resource[Any, Any], list[Any]]]] = [
    (PODS, _objects("pods")),
    (DEPLOYMENTS, _objects("target")),
    (NODES, _objects("nodes")),
    (OWNED_VPAS, _objects("vpa")),
    (CONFIGMAPS, _objects("configMaps")),
    (HVPAS, HVPA_MANIFESTS),
    (HPAS, [HPA]),
]
DECODERS: Final = {
    resource.plural: msgspec.json.Decoder(WatchEvent[resource.wire_type])  # type: ignore[name-defined]
    for resource, _ in WATCHED
}
EVENT_TYPES: Final = ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR", "")


def test_every_watched_resource_has_objects_to_mutate() -> None:
    assert all(objects for _, objects in WATCHED)


def convert_line(resource: Resource[Any, Any], line: bytes) -> None:
    """The reflector's decoding of one watch line: bytes to wire struct to record."""
    event = DECODERS[resource.plural].decode(line)
    resource.convert(event.object)


@st.composite
def watch_lines(draw: st.DrawFn) -> tuple[Resource[Any, Any], bytes]:
    index = draw(st.integers(min_value=0, max_value=len(WATCHED) - 1))
    resource, objects = WATCHED[index]
    event = {"type": draw(st.sampled_from(EVENT_TYPES)), "object": draw(mutated(objects))}
    return resource, json.dumps(event).encode()


def broken(draw: st.DrawFn, line: bytes) -> bytes:
    """`line` with random bytes written over it (most often inside a string), maybe cut short."""
    edits = draw(st.lists(st.tuples(st.integers(0, len(line)), st.binary(max_size=8)), max_size=3))
    for position, insert in edits:
        line = line[:position] + insert + line[position + len(insert) :]
    return line[: draw(st.integers(0, len(line)))] if draw(st.booleans()) else line


@st.composite
def broken_bytes(draw: st.DrawFn) -> tuple[Resource[Any, Any], bytes]:
    resource, line = draw(watch_lines())
    return resource, broken(draw, line)


@fuzz_settings(EXAMPLES * 3)
@given(case=watch_lines() | broken_bytes())
def test_a_watch_line_fails_only_with_the_decoding_errors(case: tuple[Any, bytes]) -> None:
    resource, line = case
    with contextlib.suppress(*DECODING_ERRORS):
        convert_line(resource, line)


@fuzz_settings(EXAMPLES)
@given(
    index=st.integers(min_value=0, max_value=len(WATCHED) - 1),
    items=st.data(),
)
def test_a_list_page_fails_only_with_the_decoding_errors(index: int, items: st.DataObject) -> None:
    """A page decodes as a whole or not at all; each object then converts or fails alone."""
    resource, objects = WATCHED[index]
    page = {
        "metadata": {"resourceVersion": "1"},
        "items": items.draw(st.lists(mutated(objects), max_size=4)),
    }
    page_type: Any = ObjectList[resource.wire_type]  # type: ignore[name-defined]
    try:
        decoded = msgspec.json.decode(json.dumps(page).encode(), type=page_type)
    except DECODING_ERRORS:
        return
    for wire in decoded.items or ():
        with contextlib.suppress(RecordError):
            resource.convert(wire)


# -- metrics answers ---------------------------------------------------------------------------


class Answering:
    """Stands in for the API client at the metrics reader's one call: every GET gets `body`."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def request(self, method: str, path: str, **_: Any) -> bytes:
        return self.body


SELECTOR: Final = LabelSelector.parse("app=web")
QUERIES: Final[tuple[MetricQuery, ...]] = (
    ResourceMetricsQuery("default", SELECTOR),
    PodsMetricQuery("default", SELECTOR, "qps", None),
    ObjectMetricQuery("default", "v1", "Service", "web", "qps", None),
    ExternalMetricQuery("default", "queue", None),
)


def _answers() -> Iterator[Any]:
    for scenario in SCENARIOS:
        if scenario.get("podMetrics"):
            yield {"kind": "PodMetricsList", "items": scenario["podMetrics"]}
        for key in ("customMetrics", "externalMetrics"):
            if scenario.get(key):
                yield {"items": scenario[key]}


ANSWERS: Final = list(_answers())


@st.composite
def metrics_answers(draw: st.DrawFn) -> bytes:
    body = json.dumps(draw(mutated(ANSWERS))).encode()
    return broken(draw, body) if draw(st.booleans()) else body


@fuzz_settings(EXAMPLES)
@given(answer=metrics_answers())
def test_a_metrics_answer_is_a_reading_however_broken(answer: bytes) -> None:
    reader = MetricsReader(client=Answering(answer), timeout_seconds=5)  # type: ignore[arg-type]
    readings = asyncio.run(reader.read(QUERIES))
    assert set(readings) == set(QUERIES)
    for reading in readings.values():
        assert reading is not None
        if isinstance(reading, MetricReadError):
            assert reading.message
