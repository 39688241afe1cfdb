"""The admission policies of manifests/ on a real API server, which is what runs their CEL:
every request of tests/manifests/admission_cases.yaml replayed as its user, with its grants,
answered as the case says (issue 15). Among them: hvpa's own ServiceAccount changing a
Deployment's image is refused, with hvpa's real token and the RBAC that lets it patch.

Each case runs in a namespace of its own. The case's `grants` become a Role bound to its user;
so that the request reaches admission at all, the user is also granted the one verb the
request needs on the object it names (create, patch or delete), which no policy consults:
hvpa-creator-may-scale-target asks the authorizer about the target, never about the Hvpa, and
the workload and pod policies ask it nothing. Named users are impersonated by the admin;
`hvpa` is the hvpa ServiceAccount with a token of its own, its requests marked with
PROVOKING_AGENT so that the refusals they seek do not count as gaps in its RBAC.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from e2e_api import Api, Response
from e2e_audit import PROVOKING_AGENT
from e2e_cluster import HVPA_USER, REPOSITORY, Cluster
from e2e_hvpa import LEASE_NAMESPACE
from e2e_objects import hvpa_path
from e2e_processes import wait_until

pytestmark = pytest.mark.e2e

CASES_FILE: Final = REPOSITORY / "tests" / "manifests" / "admission_cases.yaml"
CASES: Final[dict[str, Any]] = yaml.safe_load(Path(CASES_FILE).read_text(encoding="utf-8"))
# The kinds the cases write, by path prefix and plural.
_COLLECTIONS: Final = {
    "Deployment": ("/apis/apps/v1", "apps", "deployments"),
    "StatefulSet": ("/apis/apps/v1", "apps", "statefulsets"),
    "Pod": ("/api/v1", "", "pods"),
}
_VERBS: Final = {"CREATE": "create", "UPDATE": "patch", "DELETE": "delete"}


def _in_namespace(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    moved = copy.deepcopy(obj)
    moved["metadata"]["namespace"] = namespace
    return moved


def _collection(kind: str, namespace: str) -> tuple[str, str, str]:
    """The object's collection path, API group and resource."""
    if kind == "Hvpa":
        return hvpa_path(namespace), "autoscaling.k8s.io", "hvpas"
    prefix, group, plural = _COLLECTIONS[kind]
    return f"{prefix}/namespaces/{namespace}/{plural}", group, plural


def _subject(user: str) -> dict[str, str]:
    if user == "hvpa":
        return {"kind": "ServiceAccount", "name": "hvpa", "namespace": LEASE_NAMESPACE}
    return {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": user}


def _grant(admin: Api, namespace: str, name: str, user: str, rules: list[Any]) -> None:
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    admin.create(f"{rbac}/roles", {"metadata": {"name": name}, "rules": rules})
    admin.create(
        f"{rbac}/rolebindings",
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [_subject(user)],
        },
    )


def _username(user: str) -> str:
    return HVPA_USER if user == "hvpa" else user


def _wait_until_granted(admin: Api, namespace: str, user: str, rules: list[Any]) -> None:
    """Until the authorizer sees the new grants: RBAC reads Roles through a cache, so a
    request made right after granting may still be refused (or, for the rules a policy asks
    about, answered as before)."""
    reviews = []
    for rule in rules:
        for resource in rule["resources"]:
            plural, _, subresource = resource.partition("/")
            attributes = {
                "namespace": namespace,
                "verb": rule["verbs"][0],
                "group": rule["apiGroups"][0],
                "resource": plural,
                "subresource": subresource,
                "name": (rule.get("resourceNames") or [""])[0],
            }
            reviews.append({"spec": {"user": _username(user), "resourceAttributes": attributes}})

    def granted() -> bool:
        path = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
        return all(admin.create(path, review)["status"].get("allowed") for review in reviews)

    wait_until(granted, timeout_seconds=30, what=f"{user}'s grants in effect")


def _requester(cluster: Cluster, user: str) -> Api:
    if user == "admin":
        return cluster.admin
    if user == "hvpa":
        return Api(
            cluster.control_plane.server,
            ca_file=cluster.pki.ca.cert,
            token=cluster.hvpa_token(),
            user_agent=PROVOKING_AGENT,
        )
    return cluster.admin.as_user(user)


def _create_old(cluster: Cluster, namespace: str, old: dict[str, Any]) -> None:
    """The object a case starts from, as the admin creates it."""
    if old["kind"] == "Pod":
        # The ServiceAccount admission plugin refuses a pod before its namespace's default
        # ServiceAccount exists, which the controller manager makes a moment after.
        wait_until(
            lambda: cluster.admin.exists(f"/api/v1/namespaces/{namespace}/serviceaccounts/default"),
            timeout_seconds=30,
            what="the namespace's default ServiceAccount",
        )
    path, _, _ = _collection(old["kind"], namespace)
    cluster.admin.create(path, old)


def _replay(cluster: Cluster, namespace: str, case: dict[str, Any]) -> Response:
    user, operation = case["user"], case["operation"]
    old = _in_namespace(case["old"], namespace) if "old" in case else None
    new = _in_namespace(case["object"], namespace) if "object" in case else None
    subject = old or new
    assert subject is not None
    path, group, resource = _collection(subject["kind"], namespace)
    grants = list(case.get("grants", []))
    if grants:
        _grant(cluster.admin, namespace, "case-grants", user, grants)
    if user != "admin":
        reached = resource + (f"/{case['subresource']}" if "subresource" in case else "")
        rule = {"apiGroups": [group], "resources": [reached], "verbs": [_VERBS[operation]]}
        _grant(cluster.admin, namespace, "case-request", user, [rule])
        _wait_until_granted(cluster.admin, namespace, user, [*grants, rule])
    if old is not None:
        _create_old(cluster, namespace, old)
    requester = _requester(cluster, user)
    if operation == "CREATE":
        assert new is not None
        return requester.request("POST", path, new)
    assert old is not None
    item = f"{path}/{old['metadata']['name']}"
    if operation == "DELETE":
        return requester.request("DELETE", item)
    if "subresource" in case:
        item += f"/{case['subresource']}"
    return requester.request(
        "PATCH", item, case.get("patch", {}), content_type="application/merge-patch+json"
    )


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in CASES["cases"]])
def test_admission_case(cluster: Cluster, namespace: str, case: dict[str, Any]) -> None:
    assert CASES["hvpaServiceAccount"] == HVPA_USER
    response = _replay(cluster, namespace, case)
    status = response.json() or {}
    message = str(status.get("message", ""))
    if case["allowed"]:
        assert 200 <= response.status < 300, f"{response.status} {message}"
        return
    # A policy's refusal names the policy; RBAC's or the schema's would not.
    assert response.status in (403, 422), f"{response.status} {message}"
    assert f"ValidatingAdmissionPolicy '{case['policy']}'" in message, message
    assert case["message"] in message
