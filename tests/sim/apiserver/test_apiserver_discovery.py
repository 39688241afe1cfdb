"""Discovery and the request log: what kubectl maps resources from, and what RBAC checks read."""

from __future__ import annotations

from typing import Any

import pytest
from apiserver_http import Http

from hvpa.sim.apiserver import ApiServer
from hvpa.sim.apiserver.requestlog import request_attributes


async def test_core_and_group_discovery(server: ApiServer, http: Http) -> None:
    api = (await http.get("/api")).body
    assert api["kind"] == "APIVersions"
    assert api["versions"] == ["v1"]
    groups = {g["name"]: g for g in (await http.get("/apis")).body["groups"]}
    assert {
        "apps",
        "autoscaling",
        "autoscaling.k8s.io",
        "coordination.k8s.io",
        "events.k8s.io",
        "metrics.k8s.io",
    } <= set(groups)
    # The metrics adapters' APIs appear with their first metric (an empty group list would
    # fail client-go's discovery: "received empty response").
    assert not {"custom.metrics.k8s.io", "external.metrics.k8s.io"} & set(groups)
    assert (await http.get("/apis/custom.metrics.k8s.io/v1beta2")).status == 404
    server.metrics.set_custom_metric("pods", "p", "qps", 1, namespace="default")
    server.metrics.set_external_metric("default", "queue", 1)
    groups = {g["name"]: g for g in (await http.get("/apis")).body["groups"]}
    assert {"custom.metrics.k8s.io", "external.metrics.k8s.io"} <= set(groups)
    assert groups["autoscaling.k8s.io"]["preferredVersion"]["version"] == "v1"
    assert [v["version"] for v in groups["autoscaling.k8s.io"]["versions"]] == ["v1", "v1alpha1"]
    single = (await http.get("/apis/apps")).body
    assert single["kind"] == "APIGroup"
    assert (await http.get("/apis/nothing.example.com")).status == 404
    version = (await http.get("/version")).body
    assert version["gitVersion"].startswith("v1.")


def by_name(resource_list: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in resource_list["resources"]}


async def test_resource_lists_name_subresources_verbs_and_short_names(http: Http) -> None:
    apps = by_name((await http.get("/apis/apps/v1")).body)
    assert apps["deployments"]["shortNames"] == ["deploy"]
    assert apps["deployments"]["namespaced"] is True
    assert "watch" in apps["deployments"]["verbs"]
    assert apps["deployments/scale"] == {
        "name": "deployments/scale",
        "singularName": "",
        "namespaced": True,
        "group": "autoscaling",
        "version": "v1",
        "kind": "Scale",
        "verbs": ["get", "patch", "update"],
    }
    assert apps["deployments/status"]["kind"] == "Deployment"
    core = by_name((await http.get("/api/v1")).body)
    assert core["nodes"]["namespaced"] is False
    assert core["pods/binding"]["verbs"] == ["create"]
    hvpas = by_name((await http.get("/apis/autoscaling.k8s.io/v1alpha1")).body)
    assert set(hvpas) == {"hvpas", "hvpas/status"}
    metrics = by_name((await http.get("/apis/metrics.k8s.io/v1beta1")).body)
    assert metrics["pods"]["verbs"] == ["get", "list"]


@pytest.mark.parametrize(
    ("method", "path", "query", "expected"),
    [
        pytest.param(
            "GET", "/api/v1/namespaces/ns/pods", {}, ("list", "", "pods", "", "ns", ""), id="list"
        ),
        pytest.param(
            "GET", "/api/v1/pods", {"watch": "true"}, ("watch", "", "pods", "", "", ""), id="watch"
        ),
        pytest.param(
            "GET",
            "/api/v1/watch/namespaces/ns/pods",
            {},
            ("watch", "", "pods", "", "ns", ""),
            id="watch-prefix",
        ),
        pytest.param(
            "PATCH",
            "/apis/apps/v1/namespaces/ns/deployments/web/scale",
            {},
            ("patch", "apps", "deployments", "scale", "ns", "web"),
            id="scale",
        ),
        pytest.param(
            "PUT",
            "/api/v1/namespaces/ns/status",
            {},
            ("update", "", "namespaces", "status", "ns", "ns"),
            id="namespace-status",
        ),
        pytest.param(
            "GET",
            "/api/v1/namespaces/ns",
            {},
            ("get", "", "namespaces", "", "ns", "ns"),
            id="namespace",
        ),
        pytest.param(
            "DELETE",
            "/apis/coordination.k8s.io/v1/namespaces/ns/leases",
            {},
            ("deletecollection", "coordination.k8s.io", "leases", "", "ns", ""),
            id="deletecollection",
        ),
        pytest.param("GET", "/version", {}, ("get", "", "", "", "", ""), id="non-resource"),
    ],
)
def test_request_attributes(
    method: str, path: str, query: dict[str, str], expected: tuple[str, ...]
) -> None:
    record = request_attributes(method, path, query)
    assert (
        record.verb,
        record.api_group,
        record.resource,
        record.subresource,
        record.namespace,
        record.name,
    ) == expected


async def test_request_log_records_what_clients_did(http: Http, server: ApiServer) -> None:
    server.clear_requests()
    await http.get("/api/v1/namespaces/default/pods", limit="5")
    await http.get("/api/v1/namespaces/default/pods/missing")
    log = server.requests
    assert [(r.method, r.verb, r.resource, r.status) for r in log] == [
        ("GET", "list", "pods", 200),
        ("GET", "get", "pods", 404),
    ]
    assert log[0].query == {"limit": "5"}
