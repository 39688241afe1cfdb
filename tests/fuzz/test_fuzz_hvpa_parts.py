"""Hypothesis' mutations of Hvpas and of the statuses the engine writes, as watch events: the
controller's record (hvpa.controller.resources.hvpa_from_wire, which parses the spec once
per content and the status on its own, hvpa.api.parts) holds what `parse_hvpa` reads from
the whole object: the same Hvpa, or the same problems in the same order. The parse of the
whole is what the controller made of every event before (tests/api/test_hvpa_parts.py holds
the unmutated documents to the same)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import msgspec
import yaml
from fuzz_strategies import fuzz_settings, mutated
from hypothesis import given

from hvpa.api import InvalidHvpa, parse_hvpa
from hvpa.api.resource import Hvpa
from hvpa.controller.resources import HvpaWire, hvpa_from_wire
from hvpa.engine.decide import decide
from hvpa.engine.decision import decision_to_dict
from hvpa.scenario import load_scenario

TESTS: Final = Path(__file__).parents[1]
SCENARIOS: Final = TESTS.parent / "examples" / "scenarios"
FIXTURES: Final = TESTS / "api" / "fixtures"


def _status(path: Path) -> Any:
    scenario = load_scenario(str(path))
    decision = decide(scenario.hvpa, scenario.snapshot, scenario.now, scenario.settings)
    return decision_to_dict(decision)["status"]


STATUSES: Final = [_status(path) for path in sorted(SCENARIOS.glob("*.yaml"))]
MANIFESTS: Final = [
    *(yaml.safe_load(path.read_text()) for path in sorted(FIXTURES.glob("*.yaml"))),
    *yaml.safe_load_all((FIXTURES / "invalid" / "hvpas.yaml").read_text()),
]
DOCUMENTS: Final = [
    {**manifest, "status": STATUSES[index % len(STATUSES)]}
    for index, manifest in enumerate(MANIFESTS)
]


_decode_event: Final = msgspec.json.Decoder(HvpaWire).decode


Read = tuple[Any, ...]  # (apiVersion, kind, spec, status) of a valid one, or its problems


def _read(hvpa: Hvpa) -> Read:
    return (hvpa.api_version, hvpa.kind, hvpa.spec, hvpa.status)


def _whole(wire: HvpaWire) -> Read:
    """The whole object as the controller read it before: one `parse_hvpa` per event."""
    raw: dict[str, Any] = {
        "apiVersion": wire.api_version or "autoscaling.k8s.io/v1alpha1",
        "kind": wire.kind or "Hvpa",
        "metadata": {"name": wire.metadata.name, "namespace": wire.metadata.namespace},
        "spec": wire.spec,
    }
    if wire.status is not None:
        raw["status"] = wire.status
    try:
        return _read(parse_hvpa(raw))
    except InvalidHvpa as error:
        return tuple(map(str, error.problems))


def _recorded(wire: HvpaWire) -> Read:
    record = hvpa_from_wire(wire)
    return _read(record.hvpa) if record.hvpa is not None else record.problems


def _check(document: Any) -> None:
    """`document` as a watch event's object; one the wire struct refuses the reflector skips."""
    try:
        wire = _decode_event(json.dumps(document).encode())
    except (msgspec.DecodeError, ValueError):
        return
    for _ in range(2):  # the second time, the spec's part comes from the cache
        recorded = _recorded(wire)
        assert recorded == _whole(wire)


@fuzz_settings()
@given(mutated(DOCUMENTS))
def test_the_record_holds_the_whole_for_any_document(document: Any) -> None:
    _check(document)


@fuzz_settings()
@given(mutated(STATUSES))
def test_any_status_reads_as_in_the_whole(status: Any) -> None:
    """Mutations of the engine's own statuses: wrong types, long strings, nulls, floats."""
    _check({**DOCUMENTS[0], "status": status})
