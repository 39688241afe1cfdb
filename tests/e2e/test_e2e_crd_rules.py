"""The CRD's validation on a real API server (issue 15): every invalid fixture of
tests/api/fixtures/invalid/hvpas.yaml, applied server-side, is refused at the fields hvpa
validate names, and where a CEL rule refuses it, in hvpa validate's words; and the rules stay
well inside the server's CEL cost budgets, which cel-python (tests/api) cannot estimate.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Final

import pytest
import yaml
from e2e_api import APPLY_PATCH
from e2e_cluster import MANIFESTS, REPOSITORY, Cluster
from e2e_objects import hvpa_path

pytestmark = pytest.mark.e2e

FIXTURES: Final = REPOSITORY / "tests" / "api" / "fixtures" / "invalid" / "hvpas.yaml"
INVALID: Final[list[dict[str, Any]]] = [
    d for d in yaml.safe_load_all(FIXTURES.read_text(encoding="utf-8")) if d
]
# What hvpa validate reports for each fixture (tests/api checks it is current).
PROBLEMS_ANNOTATION: Final = "test.hvpa.dev/problems"
# Refused by the schema's own bounds (maximum, maxLength, maxItems), in the server's words;
# hvpa validate says the same in its own. Every other fixture meets a CEL rule.
BY_THE_SCHEMA: Final = {"max-replicas-beyond-int32", "name-too-long", "too-many-metrics"}
# The server adds this cause when the schema refused something: CEL rules are then skipped.
_RULES_SKIPPED: Final = "some validation rules were not checked"


def _server_problems(status: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(field, reason, message) of each cause the server gave, the CEL messages without the
    "Invalid value: " the server puts before them."""
    causes = (status.get("details") or {}).get("causes") or []
    return [
        (str(c.get("field")), str(c.get("reason")), str(c.get("message")))
        for c in causes
        if _RULES_SKIPPED not in str(c.get("message"))
    ]


@pytest.mark.parametrize("fixture", INVALID, ids=[str(m["metadata"]["name"]) for m in INVALID])
def test_the_server_refuses_an_invalid_fixture_as_hvpa_validate_does(
    cluster: Cluster, namespace: str, fixture: dict[str, Any]
) -> None:
    manifest = copy.deepcopy(fixture)
    manifest["metadata"]["namespace"] = namespace
    name = manifest["metadata"]["name"]
    expected: list[str] = json.loads(manifest["metadata"]["annotations"][PROBLEMS_ANNOTATION])
    response = cluster.admin.request(
        "PATCH",
        hvpa_path(namespace, name),
        json.dumps(manifest),
        params={"fieldManager": "e2e", "fieldValidation": "Strict"},
        content_type=APPLY_PATCH,
    )
    assert response.status == 422, response.body[:500]
    found = _server_problems(response.json())
    assert sorted({field for field, _, _ in found}) == sorted(
        {problem.split(": ", 1)[0] for problem in expected}
    ), found
    if name in BY_THE_SCHEMA:
        return
    worded = sorted(
        f"{field}: {message.removeprefix('Invalid value: ')}" for field, _, message in found
    )
    assert worded == sorted(expected)


def test_the_rules_keep_tenfold_headroom_under_the_cost_budgets(cluster: Cluster) -> None:
    """kube-apiserver refuses a CRD whose rules' estimated cost exceeds 10**6 per rule, or
    10**8 in all, times the number of times a rule may run (the maxItems of the lists above
    it). Making every rule run ten times more often (the spec schema as the item of a list
    of 10) must still be accepted, so no rule is within a factor of ten of a budget.
    Measured on v1.37.2 with the rules of this commit: the first refusal comes at a list of
    106 (describedObject.apiVersion's regular expression, under 32 metrics), the total's at
    643."""
    crd = yaml.safe_load((MANIFESTS / "crd.yaml").read_text(encoding="utf-8"))
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    tenfold = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "headrooms.e2e.hvpa.example"},
        "spec": {
            "group": "e2e.hvpa.example",
            "scope": "Namespaced",
            "names": {"kind": "Headroom", "plural": "headrooms"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "many": {"type": "array", "maxItems": 10, "items": spec}
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    response = cluster.admin.request(
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        tenfold,
        params={"dryRun": "All"},
    )
    assert response.status == 201, response.json().get("message")
