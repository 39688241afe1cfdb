"""The admission policies of manifests/, offline: each is bound, fails closed and names the
service account the RBAC binds; and the cases of admission_cases.yaml - the requests the
real-control-plane suite replays against a live API server, which is what runs the CEL -
are well-formed (objects valid for their schemas) and expect what a plain reading of each
policy's intent gives. An expectation and the policy's CEL that disagree then show up on
the live server, not as two wrong answers that agree here."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any, Final

import jsonschema
import kubernetes_validate
import pytest
import yaml
from manifest_kit import MANIFESTS, documents, find, install_objects
from test_manifests import HVPA_SCHEMA, KUBERNETES_VERSIONS

OBJECTS: Final = install_objects()
POLICIES: Final = {
    o["metadata"]["name"]: o for o in OBJECTS if o["kind"] == "ValidatingAdmissionPolicy"
}
BINDINGS: Final = [o for o in OBJECTS if o["kind"] == "ValidatingAdmissionPolicyBinding"]
CASES_FILE: Final = Path(__file__).with_name("admission_cases.yaml")
CASES: Final[dict[str, Any]] = yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))


def test_every_policy_is_bound_to_deny_and_fails_closed() -> None:
    bound = {b["spec"]["policyName"]: b["spec"]["validationActions"] for b in BINDINGS}
    assert bound == {name: ["Deny"] for name in POLICIES}
    for policy in POLICIES.values():
        assert policy["spec"]["failurePolicy"] == "Fail"


def test_the_workload_policies_name_the_controllers_service_account() -> None:
    """The service account is spelt out in CEL, where kustomize's namespace cannot reach."""
    deployment = find(OBJECTS, "Deployment", "hvpa")
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    username = f"system:serviceaccount:{deployment['metadata']['namespace']}:{account}"
    assert CASES["hvpaServiceAccount"] == username
    for name in ("hvpa-workload-writes", "hvpa-pod-writes"):
        (condition,) = POLICIES[name]["spec"]["matchConditions"]
        assert condition["expression"] == f"request.userInfo.username == '{username}'"


def test_the_admission_manifests_are_listed() -> None:
    for path in (MANIFESTS / "admission-workloads.yaml", MANIFESTS / "admission-hvpas.yaml"):
        assert {d["metadata"]["name"] for d in documents(path)} <= set(POLICIES)


# -- the cases ---------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: maps merge, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def new_object(case: dict[str, Any]) -> dict[str, Any] | None:
    if case["operation"] == "DELETE":
        return None
    if "object" in case:
        return copy.deepcopy(case["object"])
    result: dict[str, Any] = merge_patch(case["old"], case.get("patch", {}))
    return result


def without(value: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k not in keys}


def hvpa_may_write_workload(case: dict[str, Any]) -> bool:
    """Only an UPDATE; only spec.replicas and each container's resources differ."""
    old, new = case["old"], new_object(case)
    if case["operation"] != "UPDATE" or new is None:
        return False
    meta = ("labels", "annotations", "ownerReferences", "finalizers")
    if any(old["metadata"].get(k) != new["metadata"].get(k) for k in meta):
        return False
    if without(old["spec"], "replicas", "template") != without(new["spec"], "replicas", "template"):
        return False
    old_template, new_template = old["spec"]["template"], new["spec"]["template"]
    if old_template.get("metadata") != new_template.get("metadata"):
        return False
    if without(old_template["spec"], "containers") != without(new_template["spec"], "containers"):
        return False
    old_containers = [without(c, "resources") for c in old_template["spec"]["containers"]]
    new_containers = [without(c, "resources") for c in new_template["spec"]["containers"]]
    return old_containers == new_containers


def granted(grants: list[dict[str, Any]], resource: str, verb: str, name: str) -> bool:
    return any(
        resource in rule["resources"]
        and verb in rule["verbs"]
        and name in rule.get("resourceNames", [name])
        for rule in grants
    )


def folded(value: dict[str, Any], key: str) -> Any:
    """`value[key]` with the key matched in any case, as hvpa reads the three-stage hpaSpec."""
    (found,) = [item for name, item in value.items() if name.lower() == key.lower()]
    return found


def creator_may_scale_target(case: dict[str, Any]) -> bool:
    """The user may patch TARGET/scale, and for vertical scaling (vpa.deploy, or the
    three-stage form, which always scales vertically) update TARGET; unchanged specs pass."""
    new = new_object(case)
    assert new is not None
    if case["operation"] == "UPDATE" and case["old"]["spec"] == new["spec"]:
        return True
    three_stage = "targetRef" not in new["spec"]
    if three_stage:
        reference = folded(new["spec"]["hpaSpec"], "scaleTargetRef")
        target = {key: folded(reference, key) for key in ("kind", "name")}
    else:
        target = new["spec"]["targetRef"]
    plural = {
        "Deployment": "deployments",
        "StatefulSet": "statefulsets",
        "ReplicaSet": "replicasets",
    }
    resource = plural.get(target["kind"])
    if resource is None:
        return False
    grants = case.get("grants", [])
    if not granted(grants, f"{resource}/scale", "patch", target["name"]):
        return False
    vertical = three_stage or bool(new["spec"].get("vpa", {}).get("deploy"))
    return not vertical or granted(grants, resource, "update", target["name"])


def intended(case: dict[str, Any]) -> bool:
    """What the policy means to answer, read from its comments, not from its CEL."""
    policy = case["policy"]
    if policy == "hvpa-creator-may-scale-target":
        return creator_may_scale_target(case)
    if case["user"] != "hvpa":
        return True  # the workload and pod policies match hvpa's service account only
    if policy == "hvpa-workload-writes":
        return hvpa_may_write_workload(case)
    assert policy == "hvpa-pod-writes"
    return case["operation"] == "UPDATE" and case.get("subresource") == "resize"


CASE_PARAMS: Final = [pytest.param(case, id=case["name"]) for case in CASES["cases"]]


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_a_case_expects_what_its_policy_intends(case: dict[str, Any]) -> None:
    assert case["policy"] in POLICIES
    assert intended(case) is case["allowed"]
    if not case["allowed"]:
        assert case["message"]


@pytest.mark.parametrize("case", CASE_PARAMS)
def test_a_cases_objects_are_valid(case: dict[str, Any]) -> None:
    for obj in (case.get("old"), new_object(case)):
        if obj is None:
            continue
        assert obj["metadata"]["namespace"] == CASES["namespace"]
        if obj["kind"] == "Hvpa":
            errors = jsonschema.Draft4Validator(HVPA_SCHEMA).iter_errors(obj)
            assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []
        else:
            kubernetes_validate.validate(obj, KUBERNETES_VERSIONS[-1], strict=True)


def _fixed_words(validation: dict[str, Any]) -> list[str]:
    """The literal pieces of a validation's message (a messageExpression's quoted strings)."""
    if "message" in validation:
        return [validation["message"]]
    return [piece.strip() for piece in re.findall(r"'([^']*)'", validation["messageExpression"])]


def test_every_validation_is_reached_by_a_refused_case() -> None:
    """Some refused case expects each validation's message, so the live suite exercises each."""
    expected = [c["message"] for c in CASES["cases"] if not c["allowed"]]
    for name, policy in POLICIES.items():
        for validation in policy["spec"]["validations"]:
            words = [w for w in _fixed_words(validation) if len(w) > 3]
            hits = (w in m or m in w for w in words for m in expected)
            assert any(hits), (name, words)
