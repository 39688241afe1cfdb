"""The /scale subresource as an autoscaling/v1 Scale for every scalable kind: GET, PUT, PATCH,
the selector in string form, preconditions and validation."""

from __future__ import annotations

from typing import Any

import pytest
from apiserver_http import Http
from apiserver_objects import deployment, widget

APPS = "/apis/apps/v1/namespaces/default"


def workload(kind: str) -> dict[str, Any]:
    body = deployment("web", replicas=2, app="web", tier="front")
    body["kind"] = kind
    body["spec"]["selector"]["matchExpressions"] = [
        {"key": "env", "operator": "NotIn", "values": ["dev"]}
    ]
    return body


@pytest.mark.parametrize(
    ("plural", "kind"),
    [("deployments", "Deployment"), ("statefulsets", "StatefulSet"), ("replicasets", "ReplicaSet")],
)
async def test_scale_round_trip(http: Http, plural: str, kind: str) -> None:
    created = (await http.post(f"{APPS}/{plural}", workload(kind))).body
    await http.patch(f"{APPS}/{plural}/web/status", {"status": {"replicas": 2}})
    scale = (await http.get(f"{APPS}/{plural}/web/scale")).body
    assert scale["kind"] == "Scale"
    assert scale["apiVersion"] == "autoscaling/v1"
    assert scale["metadata"]["uid"] == created["metadata"]["uid"]
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 2, "selector": "app=web,env notin (dev),tier=front"}
    scale["spec"]["replicas"] = 5
    updated = await http.put(f"{APPS}/{plural}/web/scale", scale)
    assert updated.status == 200
    assert updated.body["spec"]["replicas"] == 5
    stale = await http.put(f"{APPS}/{plural}/web/scale", scale)
    assert stale.status == 409
    patched = await http.patch(f"{APPS}/{plural}/web/scale", {"spec": {"replicas": 1}})
    assert patched.body["spec"]["replicas"] == 1
    obj = (await http.get(f"{APPS}/{plural}/web")).body
    assert obj["spec"]["replicas"] == 1
    assert obj["metadata"]["generation"] == 3


async def test_a_custom_resource_scales_at_its_crds_paths(http: Http, widgets: str) -> None:
    """The Widget CRD's /scale reads spec.size, status.replicas and status.selector."""
    await http.post(widgets, widget("h", size=2))
    await http.patch(f"{widgets}/h/status", {"status": {"replicas": 3, "selector": "app=web"}})
    scale = (await http.get(f"{widgets}/h/scale")).body
    assert scale["spec"] == {"replicas": 2}
    assert scale["status"] == {"replicas": 3, "selector": "app=web"}
    reply = await http.patch(f"{widgets}/h/scale", {"spec": {"replicas": 4}})
    assert reply.status == 200
    assert (await http.get(f"{widgets}/h")).body["spec"]["size"] == 4


async def test_hvpas_have_no_scale(http: Http) -> None:
    """hvpa's CRD declares no /scale: an Hvpa is an autoscaler, not a workload."""
    hvpas = "/apis/autoscaling.k8s.io/v1alpha1/namespaces/default/hvpas"
    assert (await http.get(f"{hvpas}/h/scale")).status == 404


@pytest.mark.parametrize(
    ("body", "code"),
    [
        pytest.param({"spec": {"replicas": -1}}, 422, id="negative"),
        pytest.param(
            {"metadata": {"name": "other"}, "spec": {"replicas": 1}}, 400, id="name-mismatch"
        ),
    ],
)
async def test_scale_rejections(http: Http, body: dict[str, Any], code: int) -> None:
    await http.post(f"{APPS}/deployments", deployment())
    reply = await http.put(f"{APPS}/deployments/web/scale", body)
    assert reply.status == code


async def test_scale_of_a_missing_object_or_unscalable_kind(http: Http) -> None:
    assert (await http.get(f"{APPS}/deployments/nope/scale")).status == 404
    await http.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}})
    assert (await http.get("/api/v1/namespaces/default/configmaps/c/scale")).status == 404
