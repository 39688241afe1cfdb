"""One reconcile's decision on hostile objects, without I/O: mutated scenario objects (the
Hvpa, its target, pods, nodes, VPA, PodMetrics) decoded as the informers decode them, the
cache built from the records, then the controller's own `prepare`, `complete` and `decide`.

Whatever the objects hold, the only exception allowed is UnreadableInput from `prepare` (the
reconciler turns it into a condition); an object that does not decode is skipped, as the
informer skips it. Otherwise the reconciler would fail every attempt at that Hvpa.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Final, TypeVar

import msgspec
from fuzz_strategies import EXAMPLES, fuzz_settings, mutated
from hypothesis import given

from hvpa.controller.cache import Cache
from hvpa.controller.resources import HVPAS, OWNED_VPAS
from hvpa.controller.snapshot import complete, prepare
from hvpa.engine.decide import decide
from hvpa.engine.metrics import MetricReadError, MetricReading, PodMetricsList
from hvpa.engine.settings import Settings
from hvpa.kube.resources import CONFIGMAPS, NODES, PODS, TARGETS, Resource
from hvpa.records import (
    DECODING_ERRORS,
    PodMetricsWire,
    RecordError,
    UnreadableInput,
    parse_time,
    pod_metrics_from_wire,
)
from hvpa.scenario import read_document

ROOT: Final = Path(__file__).parents[2]
# Scenarios without settings of their own: the controller decides with its defaults.
SCENARIOS: Final = [
    scenario
    for path in sorted(
        [
            *(ROOT / "examples/scenarios").glob("*.yaml"),
            *(ROOT / "tests/engine/scenarios").glob("*.yaml"),
        ]
    )
    if isinstance(scenario := read_document(path.name, path.read_bytes()), dict)
]
R = TypeVar("R")


def informed(resource: Resource[Any, R], objects: Any) -> list[R]:
    """What an informer would hold: each object decoded from JSON, the undecodable skipped."""
    if not isinstance(objects, list):
        objects = [objects]
    decoder = msgspec.json.Decoder(resource.wire_type)
    records: list[R] = []
    for obj in objects:
        with contextlib.suppress(*DECODING_ERRORS):
            records.append(resource.convert(decoder.decode(json.dumps(obj).encode())))
    return records


def pod_usage(objects: Any) -> MetricReading:
    """The metrics.k8s.io answer the scenario's PodMetrics make, as the reader turns it."""
    try:
        items = msgspec.convert(objects or [], list[PodMetricsWire], strict=False)
        return PodMetricsList(tuple(pod_metrics_from_wire(item) for item in items))
    except (*DECODING_ERRORS, TypeError) as error:
        return MetricReadError(f"cannot read the answer: {error}")


def decide_on(scenario: dict[str, Any]) -> None:
    hvpas = informed(HVPAS, scenario.get("hvpa"))
    if not hvpas or hvpas[0].hvpa is None:
        return  # an invalid Hvpa is a condition before any decision
    record = hvpas[0]
    target = scenario.get("target")
    kind = target.get("kind") if isinstance(target, dict) else None
    cache = Cache.of_records(
        hvpas=hvpas,
        targets=informed(TARGETS[kind], target)
        if isinstance(kind, str) and kind in TARGETS
        else [],
        pods=informed(PODS, scenario.get("pods") or []),
        nodes=informed(NODES, scenario.get("nodes") or []),
        vpas=informed(OWNED_VPAS, scenario.get("vpa") or []),
        config_maps=informed(CONFIGMAPS, scenario.get("configMaps") or []),
    )
    try:
        prepared = prepare(record, cache)
    except UnreadableInput:
        return
    usage = pod_usage(scenario.get("podMetrics"))
    readings = {query: usage for query in prepared.queries}
    now = parse_time(scenario["now"]) if isinstance(scenario.get("now"), str) else None
    decide(prepared.hvpa, complete(prepared, readings), now or 1.8e9, Settings())


def test_the_seeds_decide() -> None:
    for scenario in SCENARIOS[:10]:
        decide_on(scenario)


@fuzz_settings(EXAMPLES)
@given(scenario=mutated(SCENARIOS).filter(lambda s: isinstance(s, dict)))
def test_a_decision_on_hostile_objects_raises_nothing_but_unreadable_input(
    scenario: dict[str, Any],
) -> None:
    with contextlib.suppress(RecordError):  # a `now` that is not a time: not the controller's
        decide_on(scenario)
