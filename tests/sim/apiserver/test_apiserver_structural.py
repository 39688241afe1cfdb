"""Structural validation of list items remembered valid: the same answers, fewer walks.

An atomic list has no old item to ratchet against, so every write validated
every item again (a status write resends its whole history); a schema node
now remembers the items it found valid. What must not change is an answer:
an invalid item is reported wherever it appears, and an item only looks like
a remembered one if validation cannot tell them apart (1, 1.0 and True are
three values to a schema).
"""

from __future__ import annotations

from typing import Any

import pytest

from hvpa.sim.apiserver.structural import MISSING, compile_schema, value_key

# A status-like history: an atomic list (no x-kubernetes-list-type) of small samples.
SCHEMA = compile_schema(
    {
        "type": "object",
        "properties": {
            "history": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["time"],
                    "properties": {
                        "time": {"type": "string", "format": "date-time"},
                        "replicas": {"type": "integer", "minimum": 0},
                    },
                },
            }
        },
    }
)
ITEMS = SCHEMA.properties["history"].items
SAMPLE = {"time": "2025-06-15T10:00:00Z", "replicas": 3}


def errors(history: list[Any], old: Any = MISSING) -> list[str]:
    old_object = old if old is MISSING else {"history": old}
    return [e.field for e in SCHEMA.validate({"history": history}, old_object)]


def test_a_valid_item_is_remembered_and_not_walked_again() -> None:
    assert ITEMS is not None
    assert errors([SAMPLE]) == []
    assert value_key(SAMPLE) in ITEMS.valid_items
    # Seen again at another index, in another write with an old list to compare: no error.
    assert errors([{"time": "2025-06-15T10:00:05Z", "replicas": 4}, SAMPLE], [SAMPLE]) == []


@pytest.mark.parametrize(
    "invalid",
    [
        pytest.param({**SAMPLE, "replicas": -1}, id="below-minimum"),
        pytest.param({**SAMPLE, "replicas": 3.5}, id="a-float-beside-a-valid-int"),
        pytest.param({**SAMPLE, "replicas": True}, id="a-bool-equal-to-a-valid-int"),
        pytest.param({"replicas": 3}, id="required-missing"),
        pytest.param({**SAMPLE, "time": "yesterday"}, id="bad-format"),
    ],
)
def test_an_invalid_item_is_reported_every_time(invalid: dict[str, Any]) -> None:
    # True == 1 in Python and hashes alike: a key without the type would take True for
    # a remembered valid 1.
    assert errors([{**SAMPLE, "replicas": 1}]) == []
    first = errors([SAMPLE, invalid])
    assert any(field.startswith("history[1]") for field in first)
    again = errors([invalid, SAMPLE], [SAMPLE])
    assert again == [f.replace("history[1]", "history[0]") for f in first]
    assert ITEMS is not None and value_key(invalid) not in ITEMS.valid_items


def test_keys_tell_apart_what_validation_tells_apart() -> None:
    assert len({value_key(v) for v in (1, 1.0, True, "1", [1], {"1": 1}, None)}) == 7
    assert value_key({"a": [1, {"b": 2.0}]}) == value_key({"a": [1, {"b": 2.0}]})
    assert value_key({"a": [1, {"b": 2.0}]}) != value_key({"a": [1, {"b": 2}]})
