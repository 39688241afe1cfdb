"""The CRD's CEL rules (x-kubernetes-validations), evaluated with cel-python against the same
manifests parse_hvpa checks: every rule refuses what hvpa validate refuses, with the same
message at the same path, and passes every valid example.

cel-python is not the API server's CEL (cel-go with Kubernetes' libraries), so the rules
keep to standard CEL (has, size, in, exists, filter, contains, matches) and one function of
the strings library, `format`, which cel-python lacks: the in-repo API server's stand-in
(hvpa.sim.apiserver.celvalidation.string_format) covers the part the messages use. The
real-control-plane suite applies tests/api/fixtures/invalid/hvpas.yaml to a real server and
compares its messages with hvpa validate's (tests/e2e/test_e2e_crd_rules.py), so the
stand-in cannot hide a difference there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import celpy
import pytest
import yaml
from hvpa_samples import FIXTURE_NAMES, FIXTURES, base, edited, fixture
from test_hvpa_crd import SCHEMA, python_problems, schema_errors

from hvpa.api.celrules import all_rules
from hvpa.sim.apiserver.celvalidation import string_format

EXAMPLES = Path(__file__).parents[2] / "manifests" / "examples"
INVALID: list[dict[str, Any]] = [
    d for d in yaml.safe_load_all((FIXTURES / "invalid" / "hvpas.yaml").read_text()) if d
]
PROBLEMS_ANNOTATION = "test.hvpa.dev/problems"
_ENVIRONMENT = celpy.Environment()
_PROGRAMS: dict[str, Any] = {}


def evaluate(expression: str, value: Any) -> Any:
    program = _PROGRAMS.get(expression)
    if program is None:
        program = _ENVIRONMENT.program(
            _ENVIRONMENT.compile(expression), functions={"format": string_format}
        )
        _PROGRAMS[expression] = program
    return program.evaluate({"self": celpy.json_to_cel(value)})


def cel_problems(value: Any, schema: dict[str, Any] = SCHEMA, path: str = "") -> list[str]:
    """What the API server's CEL rules report for `value`, as `path: message` lines."""
    if value is None:
        return []
    found: list[str] = []
    for rule in schema.get("x-kubernetes-validations", []):
        if evaluate(rule["rule"], value):
            continue
        message = rule.get("message") or str(evaluate(rule["messageExpression"], value))
        where = path + rule.get("fieldPath", "")
        found.append(f"{where.lstrip('.')}: {message}")
    if isinstance(value, dict):
        for name, child in schema.get("properties", {}).items():
            if name in value:
                found += cel_problems(value[name], child, f"{path}.{name}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            found += cel_problems(item, schema["items"], f"{path}[{index}]")
    return found


def expected(manifest: dict[str, Any]) -> list[str]:
    listed: list[str] = json.loads(manifest["metadata"]["annotations"][PROBLEMS_ANNOTATION])
    return listed


VALID = [
    *(pytest.param(fixture(name), id=name) for name in FIXTURE_NAMES),
    *(
        pytest.param(yaml.safe_load(path.read_text()), id=f"examples/{path.name}")
        for path in sorted(EXAMPLES.glob("*.yaml"))
    ),
    pytest.param(base(), id="base"),
    # Boundaries of the order rules: equal is allowed.
    pytest.param(
        edited(
            {
                "spec.hpa.template.spec.minReplicas": 3,
                "spec.hpa.template.spec.maxReplicas": 3,
                "spec.weightBasedScalingIntervals.0.startReplicaCount": 3,
                "spec.weightBasedScalingIntervals.0.lastReplicaCount": 3,
            }
        ),
        id="min-equals-max",
    ),
]


@pytest.mark.parametrize("manifest", VALID)
def test_valid_manifests_pass_every_rule(manifest: dict[str, Any]) -> None:
    assert python_problems(manifest) == []
    assert cel_problems(manifest) == []


@pytest.mark.parametrize("manifest", INVALID, ids=lambda m: str(m["metadata"]["name"]))
def test_invalid_fixture(manifest: dict[str, Any]) -> None:
    """hvpa validate reports what the fixture says; the server refuses it (a CEL rule, with
    hvpa's own message, or the schema), and every CEL message is one hvpa reports."""
    problems = python_problems(manifest)
    assert problems == expected(manifest)
    cel = cel_problems(manifest)
    assert set(cel) <= set(problems)
    assert cel or schema_errors(manifest)


def test_each_fixture_has_one_reason() -> None:
    names = [m["metadata"]["name"] for m in INVALID]
    assert len(names) == len(set(names))


def test_every_rule_refuses_some_fixture() -> None:
    """A rule that no fixture breaks is untested: each must fail on at least one."""
    failing = {rule["rule"] for m in INVALID for rule in _rules_failing(m)}
    untested = [
        (cls.__name__, field, rule.rule)
        for cls, field, rule in all_rules()
        if rule.rule not in failing
    ]
    assert untested == []


def _rules_failing(value: Any, schema: dict[str, Any] = SCHEMA) -> list[dict[str, str]]:
    if value is None:
        return []
    failing = [
        r for r in schema.get("x-kubernetes-validations", []) if not evaluate(r["rule"], value)
    ]
    if isinstance(value, dict):
        for name, child in schema.get("properties", {}).items():
            if name in value:
                failing += _rules_failing(value[name], child)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            failing += _rules_failing(item, schema["items"])
    return failing


def test_rules_are_in_the_crd() -> None:
    rendered = {r["rule"] for r in _all_crd_rules(SCHEMA)}
    assert {rule.rule for _, _, rule in all_rules()} <= rendered


def _all_crd_rules(schema: dict[str, Any]) -> list[dict[str, str]]:
    rules = list(schema.get("x-kubernetes-validations", []))
    for child in schema.get("properties", {}).values():
        rules += _all_crd_rules(child)
    if isinstance(schema.get("items"), dict):
        rules += _all_crd_rules(schema["items"])
    return rules


def test_backslashes_only_in_raw_strings() -> None:
    """cel-go refuses an unknown escape such as `\\.` in a quoted string (cel-python does not):
    a regular expression must be a raw string, r'...'."""
    for _, _, rule in all_rules():
        for text in (rule.rule, rule.message_expression or ""):
            assert "\\" not in text or "r'" in text, text


def test_no_message_converts_a_number_with_string() -> None:
    """kube-apiserver cannot bound the size of `string(int)` when it estimates a rule's cost,
    so a message built with it exceeds the budget more than 100 times and the CRD is refused
    (issue 16); cel-python does not estimate costs, so this reads the expressions."""
    offending = [
        rule.message_expression
        for _, _, rule in all_rules()
        if rule.message_expression and "string(" in rule.message_expression
    ]
    assert offending == []
