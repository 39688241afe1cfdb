"""An Hvpa parsed in two parts (hvpa.api.parts) is the Hvpa `parse_hvpa` reads from the whole
object, or the same problems in the same order: for the fixtures, the invalid manifests, the
statuses the engine writes (tests/fuzz/test_fuzz_hvpa_parts.py: mutations of them). The status's fast decode
(hvpa.api.exact_decode) is taken for the statuses the engine writes, and declines each rule
msgspec does not know, so the walk names the problem."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Final

import orjson
import pytest
import yaml
from hvpa_samples import FIXTURE_NAMES, FIXTURES, base, fixture

from hvpa.api import InvalidHvpa, parse_hvpa
from hvpa.api.exact_decode import ExactDecoder
from hvpa.api.parts import join_parts, parse_spec_part, parse_status_part
from hvpa.api.resource import Hvpa
from hvpa.api.status import HvpaStatus
from hvpa.engine.decide import decide
from hvpa.engine.decision import decision_to_dict
from hvpa.scenario import load_scenario

SCENARIOS: Final = Path(__file__).parents[2] / "examples" / "scenarios"


def _engine_statuses() -> list[dict[str, Any]]:
    """The status each example scenario's decision would write: conditions, blocks, the last
    scaling, history with recommendations, usage and demand samples."""
    statuses = []
    for path in sorted(SCENARIOS.glob("*.yaml")):
        scenario = load_scenario(str(path))
        decision = decide(scenario.hvpa, scenario.snapshot, scenario.now, scenario.settings)
        statuses.append(decision_to_dict(decision)["status"])
    return statuses


STATUSES: Final = _engine_statuses()
INVALID: Final = list(yaml.safe_load_all((FIXTURES / "invalid" / "hvpas.yaml").read_text()))
DOCUMENTS: Final = [
    *(
        {**fixture(name), "status": STATUSES[i % len(STATUSES)]}
        for i, name in enumerate(FIXTURE_NAMES)
    ),
    *({**document, "status": STATUSES[0]} for document in INVALID),
]


def _whole(document: Any) -> Hvpa | tuple[str, ...]:
    try:
        return parse_hvpa(document)
    except InvalidHvpa as error:
        return tuple(map(str, error.problems))


def _in_parts(document: dict[str, Any]) -> Hvpa | tuple[str, ...]:
    """As the controller reads an object: apiVersion, kind and spec as one part (kept while the
    spec is unchanged), the status from its JSON."""
    spec = parse_spec_part(document["apiVersion"], document["kind"], document.get("spec"))
    status = document.get("status")
    part = parse_status_part(None if status is None else orjson.dumps(status))
    try:
        return join_parts(spec, part, document.get("metadata", {}))
    except InvalidHvpa as error:
        return tuple(map(str, error.problems))


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_parts_make_the_whole(document: dict[str, Any]) -> None:
    assert _in_parts(document) == _whole(document)


def test_a_missing_spec_is_named_after_a_bad_status() -> None:
    """The walk names a missing required field after every field present (status included);
    found by tests/fuzz/test_fuzz_hvpa_parts.py."""
    document = {"apiVersion": base()["apiVersion"], "kind": "Hvpa", "status": "1e51"}
    assert _whole(document) == ('status: must be an object (got "1e51")', "spec: required")
    assert _in_parts(document) == _whole(document)


def test_the_documents_cover_valid_and_invalid() -> None:
    results = [_whole(document) for document in DOCUMENTS]
    assert sum(isinstance(r, Hvpa) for r in results) >= 4
    assert sum(isinstance(r, tuple) for r in results) >= 20


# -- the fast decode ---------------------------------------------------------------------------

DECODE: Final = ExactDecoder(HvpaStatus)


@pytest.mark.parametrize("status", STATUSES)
def test_the_engines_statuses_take_the_fast_decode(status: dict[str, Any]) -> None:
    fast = DECODE.decode(orjson.dumps(status))
    assert fast is not None
    assert fast == parse_hvpa({**base(), "status": status}).status


def _edited(path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    status = copy.deepcopy(STATUSES[0])
    node: Any = status
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return status


# Each is a status msgspec decodes but the walk refuses (or reads differently): the fast decode
# must decline it. The bounds: a string without its own bound holds 253 characters, a list 64
# items, a map 64 entries, a quantity 64 characters (hvpa.api.structure).
DECLINED: Final = [
    pytest.param(_edited(("conditions", 0, "type"), "T" * 254), id="string-past-253"),
    pytest.param(_edited(("conditions",), [STATUSES[0]["conditions"][0]] * 65), id="list-past-64"),
    pytest.param(
        _edited(
            ("lastScaling", "vpaStatus", "recommendation", "containerRecommendations", 0, "target"),
            {f"r{i}": "1" for i in range(65)},
        ),
        id="map-past-64",
    ),
    pytest.param(
        _edited(
            (
                "lastScaling",
                "vpaStatus",
                "recommendation",
                "containerRecommendations",
                0,
                "target",
                "cpu",
            ),
            1.5,
        ),
        id="float-quantity",
    ),
    pytest.param(
        _edited(
            (
                "lastScaling",
                "vpaStatus",
                "recommendation",
                "containerRecommendations",
                0,
                "target",
                "cpu",
            ),
            "2 cores",
        ),
        id="not-a-quantity",
    ),
    pytest.param(
        _edited(
            (
                "lastScaling",
                "vpaStatus",
                "recommendation",
                "containerRecommendations",
                0,
                "target",
                "cpu",
            ),
            "1" * 65,
        ),
        id="quantity-past-64",
    ),
    pytest.param(_edited(("conditions", 0, "reason"), None), id="null-for-absent"),
]


@pytest.mark.parametrize("status", DECLINED)
def test_the_fast_decode_declines_what_the_walk_reads_otherwise(status: dict[str, Any]) -> None:
    assert DECODE.decode(orjson.dumps(status)) is None
    whole = {**base(), "status": status}
    assert _in_parts(whole) == _whole(whole)
