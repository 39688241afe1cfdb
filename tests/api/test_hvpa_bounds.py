"""Every value an Hvpa holds is bounded, in the CRD and in parse_hvpa alike (issue 15 item 7).

The CRD's bounds are what let the API server estimate the cost of its CEL rules and what keep
a tenant from storing megabytes in one field; parse_hvpa reads the same bounds from the same
types, so `hvpa validate` refuses what the server refuses.
"""

from __future__ import annotations

from typing import Any

import pytest
from hvpa_samples import edited
from test_hvpa_crd import SCHEMA, python_problems, schema_errors

from hvpa.api.base import DEFAULT_MAX_ITEMS, DEFAULT_MAX_LENGTH, INT32_MAX

T = "spec.hpa.template.spec"


def unbounded(schema: dict[str, Any], path: str = "") -> list[str]:
    """Schema nodes without a bound: strings, lists, maps, integers."""
    found: list[str] = []
    kind = schema.get("type")
    plain_string = "enum" not in schema and schema.get("format") != "date-time"
    if kind == "string" and plain_string and "maxLength" not in schema:
        found.append(f"{path}: string without maxLength")
    if schema.get("x-kubernetes-int-or-string") and "maxLength" not in schema:
        found.append(f"{path}: quantity without maxLength")
    if kind == "array" and "maxItems" not in schema:
        found.append(f"{path}: array without maxItems")
    # format int64: the server's own range for `type: integer` (see test_int64_fields_...).
    bounded_integer = ("minimum" in schema and "maximum" in schema) or schema.get(
        "format"
    ) == "int64"
    if kind == "integer" and not bounded_integer:
        found.append(f"{path}: integer without minimum and maximum")
    if kind == "object" and "properties" not in schema and "maxProperties" not in schema:
        found.append(f"{path}: map without maxProperties")
    for name, child in schema.get("properties", {}).items():
        found += unbounded(child, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += unbounded(schema[key], f"{path}[{key}]")
    return found


def test_every_value_in_the_crd_is_bounded() -> None:
    # The root metadata is the API server's (ObjectMeta has its own limits).
    assert unbounded({**SCHEMA, "properties": {**SCHEMA["properties"], "metadata": {}}}) == []


def test_int32_fields_have_int32_ranges() -> None:
    spec = SCHEMA["properties"]["spec"]["properties"]
    max_replicas = spec["hpa"]["properties"]["template"]["properties"]["spec"]["properties"][
        "maxReplicas"
    ]
    assert (max_replicas["minimum"], max_replicas["maximum"]) == (1, INT32_MAX)


def integer_bounds(schema: dict[str, Any], path: str = "") -> list[tuple[str, int]]:
    """Every minimum and maximum of an integer field, with its path."""
    found: list[tuple[str, int]] = []
    if schema.get("type") == "integer":
        found += [(f"{path}.{key}", schema[key]) for key in ("minimum", "maximum") if key in schema]
    for name, child in schema.get("properties", {}).items():
        found += integer_bounds(child, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += integer_bounds(schema[key], f"{path}[{key}]")
    return found


def test_every_integer_bound_is_one_the_api_server_can_hold() -> None:
    """kube-apiserver holds a bound as a float64 and, on every write of the object, checks it
    converts to an int64; a bound that does not fails every write with 422 "Maximum boundary
    value must be of type integer" (issue 16: every status write did, on observedGeneration).
    Measured on kube-apiserver v1.37.2: -(2**63) and 2**63 - 1 (which rounds to 2**63) are
    refused, -(2**63) + 1024 and 2**63 - 1024 (the float64 neighbours inside) are held."""
    bounds = integer_bounds(SCHEMA)
    assert bounds, "no bounded integer found: the walk is broken"
    unholdable = [
        (path, bound)
        for path, bound in bounds
        if float(bound) != bound or not -(2**63) < float(bound) < 2**63
    ]
    assert unholdable == []


def test_int64_fields_say_int64_instead_of_bounds() -> None:
    """The int64 range is what the server's `type: integer` refuses beyond already (a larger
    integer is "must be of type integer"), so an int64 field carries no bounds but the format,
    and parse_hvpa still refuses what lies outside it."""
    status = SCHEMA["properties"]["status"]["properties"]
    assert status["observedGeneration"] == {
        "description": status["observedGeneration"]["description"],
        "type": "integer",
        "format": "int64",
    }
    conditions = status["conditions"]["items"]["properties"]
    assert conditions["observedGeneration"]["format"] == "int64"
    assert "maximum" not in conditions["observedGeneration"]


TOO_LONG = "a" * (DEFAULT_MAX_LENGTH + 1)
CASES = [
    pytest.param(
        {f"{T}.maxReplicas": INT32_MAX + 1},
        [f"{T}.maxReplicas: must be <= {INT32_MAX} (got {INT32_MAX + 1})"],
        id="maxReplicas-beyond-int32",
    ),
    pytest.param(
        {"spec.weightBasedScalingIntervals.0.startReplicaCount": 2**40},
        [
            f"spec.weightBasedScalingIntervals[0].startReplicaCount: must be <= {INT32_MAX} "
            f"(got {2**40})"
        ],
        id="interval-count-beyond-int32",
    ),
    pytest.param(
        {f"{T}.behavior": {"scaleUp": {"stabilizationWindowSeconds": -(2**31) - 1}}},
        [
            f"{T}.behavior.scaleUp.stabilizationWindowSeconds: must be >= {-(2**31)} "
            f"(got {-(2**31) - 1})"
        ],
        id="window-below-int32",
    ),
    pytest.param(
        {"spec.targetRef.name": TOO_LONG},
        [f"spec.targetRef.name: must be at most {DEFAULT_MAX_LENGTH} characters (got 254)"],
        id="name-too-long",
    ),
    pytest.param(
        {"spec.mixed": {"cpuThreshold": "1" * 65}},
        ["spec.mixed.cpuThreshold: must be at most 64 characters (got 65)"],
        id="quantity-too-long",
    ),
    pytest.param(
        {f"{T}.metrics": [{"type": "Resource"}] * 33},
        [f"{T}.metrics: must have at most 32 items (got 33)"],
        id="too-many-metrics",
    ),
    pytest.param(
        {
            "spec.vpa.template": {
                "spec": {
                    "resourcePolicy": {
                        "containerPolicies": [{"containerName": f"c{i}"} for i in range(65)]
                    }
                }
            }
        },
        [
            "spec.vpa.template.spec.resourcePolicy.containerPolicies: must have at most "
            f"{DEFAULT_MAX_ITEMS} items (got 65)"
        ],
        id="too-many-container-policies",
    ),
    pytest.param(
        {
            "spec.clusterProportional": {
                "configMapRef": {"name": "p"},
                "nodeSelector": {f"k{i}": "" for i in range(65)},
            }
        },
        ["spec.clusterProportional.nodeSelector: must have at most 64 entries (got 65)"],
        id="too-many-node-selector-labels",
    ),
]


@pytest.mark.parametrize(("changes", "expected"), CASES)
def test_bounds_refused_by_both(changes: dict[str, Any], expected: list[str]) -> None:
    manifest = edited(changes)
    assert python_problems(manifest) == expected
    assert schema_errors(manifest)


def test_bounds_are_inclusive() -> None:
    manifest = edited({f"{T}.maxReplicas": INT32_MAX, "spec.targetRef.name": "a" * 253})
    assert python_problems(manifest) == []
    assert schema_errors(manifest) == []
