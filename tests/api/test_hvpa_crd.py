"""manifests/crd.yaml: current, structural, and in agreement with parse_hvpa on valid and invalid Hvpas.

The API server prunes unknown fields rather than refusing them, and
`kubectl apply` refuses them with its default strict field validation; the
schema checks here emulate the latter by closing every object that does not
preserve unknown fields.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hvpa_samples import DELETE, FIXTURE_NAMES, base, edited, fixture

from hvpa.api import InvalidHvpa, parse_hvpa
from hvpa.api.crd import render_crd
from hvpa.api.defaults import DEFAULT_STRATEGY

CRD_PATH = Path(__file__).parents[2] / "manifests" / "crd.yaml"
CRD: dict[str, Any] = yaml.safe_load(CRD_PATH.read_text())
VERSION = CRD["spec"]["versions"][0]
SCHEMA = VERSION["schema"]["openAPIV3Schema"]


def strict(schema: Any) -> Any:
    if isinstance(schema, list):
        return [strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: strict(value) for key, value in schema.items() if key != "properties"}
    if "properties" in schema:
        out["properties"] = {name: strict(value) for name, value in schema["properties"].items()}
        if not schema.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    return out


VALIDATOR = jsonschema.Draft4Validator(strict(SCHEMA))


def schema_errors(manifest: Any) -> list[str]:
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
        for e in VALIDATOR.iter_errors(manifest)
    ]


def python_problems(manifest: Any) -> list[str]:
    try:
        parse_hvpa(manifest)
    except InvalidHvpa as error:
        return [str(problem) for problem in error.problems]
    return []


def test_crd_file_is_current() -> None:
    assert CRD_PATH.read_text() == render_crd(), (
        "manifests/crd.yaml is stale: run `.venv/bin/python -m hvpa.api.crd > manifests/crd.yaml`"
    )


def test_crd_identity_and_subresources() -> None:
    assert CRD["metadata"]["name"] == "hvpas.autoscaling.k8s.io"
    approval = CRD["metadata"]["annotations"]["api-approved.kubernetes.io"]
    # KEP-2337: a URL of the approving pull request, or a value starting with "unapproved".
    assert approval.startswith(("unapproved", "https://github.com/kubernetes/"))
    assert CRD["spec"]["scope"] == "Namespaced"
    # No scale subresource: no Hvpa sets .spec.replicas, so /scale answered 500 on a real
    # server (issue 16); an autoscaler has no replicas of its own to scale.
    assert VERSION["subresources"] == {"status": {}}


def test_names_for_kubectl() -> None:
    names = CRD["spec"]["names"]
    assert (names["singular"], names["plural"], names["shortNames"]) == ("hvpa", "hvpas", ["hv"])
    assert names["categories"] == ["all"]


def test_every_field_is_described() -> None:
    """`kubectl explain hvpa.spec` (and .status) shows a description for every field."""
    missing: list[str] = []

    def walk(node: dict[str, Any], path: str) -> None:
        for name, child in node.get("properties", {}).items():
            if not child.get("description") and path + name != ".metadata":
                missing.append(path + name)
            walk(child, f"{path}{name}.")
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                walk(node[key], path)

    walk(SCHEMA, ".")
    assert missing == []


def test_strategy_defaults_in_the_schema_as_in_apply_defaults() -> None:
    """The STRATEGY column is filled for Hvpas that leave the default, and means the same."""
    strategy = SCHEMA["properties"]["spec"]["properties"]["strategy"]
    assert strategy["default"] == DEFAULT_STRATEGY
    assert strategy["default"] in strategy["enum"]


def resolve(path: str) -> dict[str, Any] | None:
    """The schema of a `.a.b.c` JSON path, or None when the schema has no such field."""
    node: dict[str, Any] = SCHEMA
    for part in path.strip(".").split("."):
        if part not in node.get("properties", {}):
            return None
        node = node["properties"][part]
    return node


@pytest.mark.parametrize(
    "column", VERSION["additionalPrinterColumns"], ids=lambda column: str(column["name"])
)
def test_printer_columns_name_real_fields(column: dict[str, str]) -> None:
    if column["jsonPath"] == ".metadata.creationTimestamp":
        return
    field = resolve(column["jsonPath"])
    assert field is not None
    assert field["type"] == column["type"]


def test_printer_columns() -> None:
    columns = {c["name"]: c["jsonPath"] for c in VERSION["additionalPrinterColumns"]}
    assert columns == {
        # From status: the three-stage form names its target in hpaSpec.scaleTargetRef.
        "Target": ".status.targetRef.name",
        "Strategy": ".spec.strategy",
        # The decision's, written in a dry run too (lastScaling keeps the applied one).
        "Desired": ".status.desiredReplicas",
        "Current": ".status.replicas",
        "Age": ".metadata.creationTimestamp",
    }


def structural_violations(schema: dict[str, Any], path: str = "") -> list[str]:
    """The rules of a structural schema that this generator could break (apiextensions v1)."""
    found: list[str] = []
    escape = schema.get("x-kubernetes-int-or-string") or (
        schema.get("x-kubernetes-preserve-unknown-fields") and "type" not in schema
    )
    if "type" not in schema and not escape:
        found.append(f"{path}: no type")
    if "properties" in schema and "additionalProperties" in schema:
        found.append(f"{path}: properties and additionalProperties")
    for branch in schema.get("anyOf", []):
        allowed = {"required"} if not schema.get("x-kubernetes-int-or-string") else {"type"}
        if set(branch) - allowed:
            found.append(f"{path}: anyOf branch {branch}")
    for name, child in schema.get("properties", {}).items():
        found += structural_violations(child, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            found += structural_violations(schema[key], f"{path}[{key}]")
    return found


def test_schema_is_structural() -> None:
    assert structural_violations(SCHEMA) == []
    assert SCHEMA["properties"]["metadata"] == {"type": "object"}


@pytest.mark.parametrize("name", FIXTURE_NAMES)
def test_examples_are_valid_for_both(name: str) -> None:
    manifest = fixture(name)
    assert python_problems(manifest) == []
    assert schema_errors(manifest) == []


THREE_STAGE = fixture("proposal-example-1.yaml")
T = "spec.hpa.template.spec"

# Both must reject: rules the schema can express.
BOTH = [
    pytest.param({"spec.hpa.tempalte": {}}, None, id="unknown-field"),
    pytest.param({"spec.replicas": "three"}, None, id="wrong-type"),
    pytest.param({"spec.targetRef": DELETE}, None, id="targetRef-required"),
    pytest.param({f"{T}.maxReplicas": DELETE}, None, id="maxReplicas-required"),
    pytest.param({f"{T}.maxReplicas": 0}, None, id="maxReplicas-minimum"),
    pytest.param({f"{T}.minReplicas": -1}, None, id="minReplicas-minimum"),
    pytest.param(
        {"spec.weightBasedScalingIntervals.0.vpaWeight": 101}, None, id="vpaWeight-maximum"
    ),
    pytest.param(
        {"spec.hpa.scaleUp": {"updatePolicy": {"updateMode": "Always"}}}, None, id="updateMode-enum"
    ),
    pytest.param({"spec.strategy": "Balanced"}, None, id="strategy-enum"),
    pytest.param(
        {"spec.maintenanceTimeWindow": {"begin": "10pm", "end": "230000+0100"}},
        None,
        id="window-pattern",
    ),
    pytest.param(
        {"spec.maintenanceTimeWindow": {"begin": "220000+0100"}}, None, id="window-end-required"
    ),
    pytest.param({"spec.mixed": {"cpuThreshold": "lots"}}, None, id="quantity-pattern"),
    pytest.param({"spec.mixed": {"memoryThreshold": 0.5}}, None, id="quantity-not-a-float"),
    pytest.param({"spec.capacity": {"curve": []}}, None, id="curve-min-items"),
    pytest.param(
        {"spec.capacity": {"curve": [{"replicas": 0, "cpu": "1"}]}},
        None,
        id="curve-replicas-minimum",
    ),
    pytest.param(
        {"spec.capacity": {"curve": [{"replicas": 1}], "demandPercentile": 0}},
        None,
        id="percentile-exclusive-minimum",
    ),
    pytest.param(
        {"spec.clusterProportional": {"ladder": {"coresToReplicas": [[1]]}}},
        None,
        id="ladder-step-pair",
    ),
    pytest.param(
        {f"{T}.metrics.0.resource.targetAverageUtilisation": 80}, None, id="metric-unknown-field"
    ),
    pytest.param(
        {
            "spec.vpa": {
                "template": {"spec": {"resourcePolicy": {"containerPolicies": [{"mode": "Off"}]}}}
            }
        },
        None,
        id="containerName-required",
    ),
    pytest.param(
        {"status": {"conditions": [{"type": "ScalingActive", "status": "Maybe"}]}},
        None,
        id="condition-status-enum",
    ),
    pytest.param(
        {"status": {"history": {"scaleUpEvents": [{"time": "2024-05-01T10:00:00Z"}]}}},
        None,
        id="history-event-replicaChange-required",
    ),
    pytest.param({"spec.secondStageVpaWeight": 1.5}, THREE_STAGE, id="three-stage-weight-maximum"),
    pytest.param({"spec.hpaSpec.maxReplicas": "ten"}, THREE_STAGE, id="three-stage-hpaSpec-type"),
]

# Only parse_hvpa can reject: rules across fields, or about a value's meaning.
PYTHON_ONLY = [
    pytest.param(
        {f"{T}.minReplicas": 5, f"{T}.maxReplicas": 2},
        None,
        id="cross-field-schema-cannot-express-max-below-min",
    ),
    pytest.param(
        {f"{T}.minReplicas": 0},
        None,
        id="cross-field-schema-cannot-express-scale-to-zero-needs-object-metric",
    ),
    pytest.param(
        {"spec.targetRef.kind": "CronJob"}, None, id="schema-leaves-kind-open-like-gardener"
    ),
    pytest.param(
        {
            "spec.weightBasedScalingIntervals.0.startReplicaCount": 9,
            "spec.weightBasedScalingIntervals.0.lastReplicaCount": 2,
        },
        None,
        id="cross-field-schema-cannot-express-interval-order",
    ),
    pytest.param(
        {"spec.strategy": "Mixed"}, None, id="cross-field-schema-cannot-express-mixed-required"
    ),
    pytest.param(
        {"spec.capacity": {"curve": [{"replicas": 1, "cpu": "2"}, {"replicas": 5, "cpu": "1"}]}},
        None,
        id="cross-field-schema-cannot-express-curve-non-decreasing",
    ),
    pytest.param(
        {"spec.hpa.scaleDown": {"stabilizationDuration": "soon"}},
        None,
        id="go-duration-syntax-not-in-schema",
    ),
    pytest.param(
        {"spec.vpa.scaleUp": {"minChange": {"cpu": {"value": "lots"}}}},
        None,
        id="minChange-value-is-a-string-like-gardener",
    ),
    pytest.param(
        {"spec.hpa.selector": {"matchLabels": {"app": "other"}}},
        None,
        id="cross-field-schema-cannot-express-selector-matches-labels",
    ),
    pytest.param(
        {f"{T}.metrics.0.type": "Pods"},
        None,
        id="cross-field-schema-cannot-express-metric-type-and-source",
    ),
    pytest.param(
        {f"{T}.behavior": {"scaleUp": {"policies": []}}},
        None,
        id="behavior-policies-non-empty-upstream-rule",
    ),
    pytest.param(
        {"spec.clusterProportional": {"linear": {"min": -1, "nodesPerReplica": 2}}},
        None,
        id="cluster-proportional-own-rules",
    ),
    pytest.param(
        {"spec.hpa": {"deploy": True}},
        THREE_STAGE,
        id="cross-field-schema-cannot-express-three-stage-exclusive",
    ),
    pytest.param(
        {"spec.stageTwoStopReplicaCount": 2},
        THREE_STAGE,
        id="cross-field-schema-cannot-express-stage-order",
    ),
]


@pytest.mark.parametrize(("changes", "start"), BOTH)
def test_both_reject(changes: dict[str, Any], start: dict[str, Any] | None) -> None:
    manifest = edited(changes, copy.deepcopy(start) if start else base())
    assert python_problems(manifest)
    assert schema_errors(manifest)


@pytest.mark.parametrize(("changes", "start"), PYTHON_ONLY)
def test_only_hvpa_rejects(changes: dict[str, Any], start: dict[str, Any] | None) -> None:
    manifest = edited(changes, copy.deepcopy(start) if start else base())
    assert python_problems(manifest)
    assert schema_errors(manifest) == []


def test_case_insensitive_keys_survive_the_schema() -> None:
    """`MinAllowed` inside vpaSpec is kept for hvpa to read, not refused or pruned."""
    policy = THREE_STAGE["spec"]["vpaSpec"]["resourcePolicy"]["containerPolicies"][0]
    assert "MinAllowed" in policy
    assert schema_errors(THREE_STAGE) == []
