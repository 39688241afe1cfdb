"""/openapi/v3 and /openapi/v2, and fieldValidation: what kubectl reads before it writes.

kubectl finds a kind's schema and operations by `x-kubernetes-group-version-kind`, and sends
`fieldValidation=Strict` (instead of validating itself) when the kind's PATCH operation takes
that parameter; the Strict and Warn answers below are the real server's words (kube-apiserver
v1.37.2, the Widget CRD of apiserver_objects).
"""

from __future__ import annotations

from typing import Any

from apiserver_http import Http
from apiserver_objects import WIDGET_CRD, deployment, widget

GVK = "x-kubernetes-group-version-kind"


async def document(http: Http, key: str) -> dict[str, Any]:
    root = (await http.get("/openapi/v3")).body
    url = root["paths"][key]["serverRelativeURL"]
    path, _, query = url.partition("?")
    reply = await http.get(path, **dict([query.split("=", 1)]))
    assert reply.status == 200
    assert reply.headers["Content-Type"].startswith("application/json")
    result: dict[str, Any] = reply.body
    return result


def by_gvk(doc: dict[str, Any], group: str, version: str, kind: str) -> dict[str, Any]:
    wanted = {"group": group, "version": version, "kind": kind}
    (schema,) = [s for s in doc["components"]["schemas"].values() if wanted in s.get(GVK, [])]
    return schema


def patch_operation(doc: dict[str, Any], group: str, version: str, kind: str) -> dict[str, Any]:
    wanted = {"group": group, "version": version, "kind": kind}
    (operation,) = [
        item["patch"]
        for path, item in doc["paths"].items()
        if "patch" in item
        and item["patch"][GVK] == wanted
        and not path.endswith(("/status", "/scale"))
    ]
    return operation


async def test_the_root_lists_every_served_group_version(http: Http) -> None:
    paths = (await http.get("/openapi/v3")).body["paths"]
    assert {
        "api/v1",
        "apis/apps/v1",
        "apis/autoscaling/v2",
        "apis/coordination.k8s.io/v1",
        "apis/events.k8s.io/v1",
        "apis/apiextensions.k8s.io/v1",
        "apis/autoscaling.k8s.io/v1alpha1",
        "apis/autoscaling.k8s.io/v1",
    } <= set(paths)
    assert all("?hash=" in p["serverRelativeURL"] for p in paths.values())
    assert (await http.get("/openapi/v3/apis/nothing.example.com/v1")).status == 404


async def test_a_crds_schema_is_published_with_the_standard_fields(http: Http) -> None:
    doc = await document(http, "apis/autoscaling.k8s.io/v1alpha1")
    hvpa = by_gvk(doc, "autoscaling.k8s.io", "v1alpha1", "Hvpa")
    assert hvpa["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    ]
    # The CRD's descriptions are there for kubectl explain hvpa.spec.
    assert hvpa["properties"]["spec"]["description"]
    assert hvpa["properties"]["spec"]["properties"]["targetRef"]["description"]
    by_gvk(doc, "autoscaling.k8s.io", "v1alpha1", "HvpaList")
    patch = patch_operation(doc, "autoscaling.k8s.io", "v1alpha1", "Hvpa")
    assert {"name": "fieldValidation", "in": "query"}.items() <= next(
        p for p in patch["parameters"] if p["name"] == "fieldValidation"
    ).items()
    # A custom resource takes no strategic merge patch: kubectl sends a merge patch.
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]
    assert "application/merge-patch+json" in patch["requestBody"]["content"]


async def test_built_in_kinds_are_published(http: Http) -> None:
    apps = await document(http, "apis/apps/v1")
    deployment_schema = by_gvk(apps, "apps", "v1", "Deployment")
    assert deployment_schema["properties"]["spec"]["properties"]["template"]
    containers = apps["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"][
        "containers"
    ]
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    core = await document(http, "api/v1")
    by_gvk(core, "", "v1", "Pod")
    patch = patch_operation(core, "", "v1", "ConfigMap")
    assert any(p["name"] == "fieldValidation" for p in patch["parameters"])


async def test_a_crd_change_changes_its_documents_hash(http: Http) -> None:
    before = (await http.get("/openapi/v3")).body["paths"]
    assert "apis/example.com/v1" not in before
    await http.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", WIDGET_CRD)
    after = (await http.get("/openapi/v3")).body["paths"]
    assert "apis/example.com/v1" in after
    assert after["api/v1"] == before["api/v1"]
    doc = await document(http, "apis/example.com/v1")
    assert by_gvk(doc, "example.com", "v1", "Widget")["properties"]["spec"]["required"] == ["size"]


async def test_v2_is_json_only(http: Http) -> None:
    v2 = await http.get("/openapi/v2")
    assert v2.status == 200
    assert v2.body["swagger"] == "2.0"
    pod = v2.body["definitions"]["io.k8s.api.core.v1.Pod"]
    assert pod[GVK] == [{"group": "", "version": "v1", "kind": "Pod"}]
    assert pod["properties"]["metadata"]["$ref"].startswith("#/definitions/")
    protobuf = await http.call(
        "GET",
        "/openapi/v2",
        headers={"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
    )
    assert protobuf.status == 406


async def test_strict_refuses_unknown_fields_as_the_real_server(http: Http, widgets: str) -> None:
    body = {**widget("fv"), "extra": 1}
    body["spec"] = {"size": 1, "unknownField": 1, "nested": {"zzz": 1}}
    reply = await http.call("POST", widgets, body, params={"fieldValidation": "Strict"})
    assert reply.status == 400
    assert reply.body["reason"] == "BadRequest"
    assert reply.body["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
        'unknown field "extra", unknown field "spec.nested.zzz", unknown field "spec.unknownField"'
    )
    warned = await http.call("POST", widgets, body, params={"fieldValidation": "Warn"})
    assert warned.status == 201
    assert warned.body["spec"] == {"size": 1, "defaulted": "dflt", "nested": {"inner": 7}}
    assert warned.headers["Warning"].startswith('299 - "unknown field \\"')
    ignored = await http.call(
        "POST", widgets, {**body, "metadata": {"name": "fv2"}}, params={"fieldValidation": "Ignore"}
    )
    assert ignored.status == 201 and "Warning" not in ignored.headers
    patched = await http.call(
        "PATCH",
        f"{widgets}/fv",
        {"status": {"bogus": 1}},
        content_type="application/merge-patch+json",
        params={"fieldValidation": "Strict"},
    )
    assert patched.status == 422
    (cause,) = patched.body["details"]["causes"]
    assert (cause["reason"], cause["field"]) == ("FieldValueInvalid", "patch")
    assert cause["message"].endswith('strict decoding error: unknown field "status.bogus"')
    bad = await http.call("POST", widgets, body, params={"fieldValidation": "Loose"})
    assert bad.status == 422
    assert bad.body["message"] == (
        'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )


async def test_strict_on_built_in_kinds_checks_the_parts_described(http: Http) -> None:
    apps = "/apis/apps/v1/namespaces/default/deployments"
    body = deployment()
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requets": {"cpu": "1"}}
    refused = await http.call("POST", apps, body, params={"fieldValidation": "Strict"})
    assert refused.status == 400
    assert refused.body["message"] == (
        'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: '
        'unknown field "spec.template.spec.containers[0].resources.requets"'
    )
    missing = await http.call(
        "PATCH",
        f"{apps}/web",
        {"spec": {"bogus": 1}},
        content_type="application/strategic-merge-patch+json",
        params={"fieldValidation": "Strict"},
    )
    assert missing.status == 404  # the object is looked up before the patch is read
    # An open part (a probe, described by no field here) is not second-guessed.
    body["spec"]["template"]["spec"]["containers"][0]["resources"] = {}
    body["spec"]["template"]["spec"]["containers"][0]["livenessProbe"] = {"anything": 1}
    assert (await http.call("POST", apps, body, params={"fieldValidation": "Strict"})).status == 201
    patched = await http.call(
        "PATCH",
        f"{apps}/web",
        {"spec": {"bogus": 1}},
        content_type="application/strategic-merge-patch+json",
        params={"fieldValidation": "Strict"},
    )
    assert patched.status == 422
    assert patched.body["message"] == (
        ' "" is invalid: patch: Invalid value: "map[spec:map[bogus:1]]": '
        'strict decoding error: unknown field "spec.bogus"'
    )
