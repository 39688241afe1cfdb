"""kubernetes_asyncio's typed clients, configured from the generated kubeconfig, against the server:
what hvpa.kube will do, through the same library, over HTTP."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from apiserver_objects import deployment, widget
from kubernetes_asyncio import client, watch
from kubernetes_asyncio.client.exceptions import ApiException

from hvpa.sim.apiserver import ApiServer

GROUP, VERSION, PLURAL = "autoscaling.k8s.io", "v1alpha1", "hvpas"
# For a dict body CustomObjectsApi picks json-patch, which the real server rejects too.
MERGE = "application/merge-patch+json"


async def test_core_pods_create_list_and_watch(kube: client.ApiClient, server: ApiServer) -> None:
    core = client.CoreV1Api(kube)
    for index in range(3):
        body = client.V1Pod(
            metadata=client.V1ObjectMeta(name=f"web-{index}", labels={"app": "web"}),
            spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="nginx:1.25")]),
        )
        created = await core.create_namespaced_pod("default", body)
        assert created.status.phase == "Pending"
    listed = await core.list_namespaced_pod("default", label_selector="app=web", limit=2)
    assert [p.metadata.name for p in listed.items] == ["web-0", "web-1"]
    rest = await core.list_namespaced_pod(
        "default", label_selector="app=web", _continue=listed.metadata._continue
    )
    assert [p.metadata.name for p in rest.items] == ["web-2"]
    stream = watch.Watch().stream(
        core.list_namespaced_pod,
        "default",
        resource_version=listed.metadata.resource_version,
        timeout_seconds=5,
    )
    server.objects.patch("pods", "web-1", {"metadata": {"labels": {"seen": "yes"}}})
    async for event in stream:
        assert event["type"] == "MODIFIED"
        assert event["object"].metadata.labels["seen"] == "yes"
        break
    with pytest.raises(ApiException) as missing:
        await core.read_namespaced_pod("nope", "default")
    assert missing.value.status == 404


async def test_apps_patch_and_scale(kube: client.ApiClient) -> None:
    apps = client.AppsV1Api(kube)
    await apps.create_namespaced_deployment("default", deployment(replicas=2))
    patched = await apps.patch_namespaced_deployment(
        "web",
        "default",
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [{"name": "app", "resources": {"requests": {"cpu": "300m"}}}]
                    }
                }
            }
        },
    )
    assert patched.spec.template.spec.containers[0].resources.requests == {"cpu": "300m"}
    scale = await apps.read_namespaced_deployment_scale("web", "default")
    assert (scale.spec.replicas, scale.status.selector) == (2, "app=web")
    scale.spec.replicas = 4
    replaced = await apps.replace_namespaced_deployment_scale("web", "default", scale)
    assert replaced.spec.replicas == 4
    status = await apps.delete_namespaced_deployment("web", "default")
    assert status.status == "Success"


async def test_custom_objects_with_status_and_scale(kube: client.ApiClient, widgets: str) -> None:
    custom = client.CustomObjectsApi(kube)
    group, version, plural = "example.com", "v1", "widgets"
    created = await custom.create_namespaced_custom_object(
        group, version, "default", plural, widget("web", size=1)
    )
    assert created["metadata"]["generation"] == 1
    status = await custom.patch_namespaced_custom_object_status(
        group,
        version,
        "default",
        plural,
        "web",
        {"status": {"replicas": 1, "selector": "app=web"}},
        _content_type=MERGE,
    )
    assert status["status"]["selector"] == "app=web"
    scale = await custom.get_namespaced_custom_object_scale(
        group, version, "default", plural, "web"
    )
    assert scale["status"] == {"replicas": 1, "selector": "app=web"}
    await custom.patch_namespaced_custom_object_scale(
        group, version, "default", plural, "web", {"spec": {"replicas": 3}}, _content_type=MERGE
    )
    listed = await custom.list_namespaced_custom_object(group, version, "default", plural)
    assert listed["kind"] == "WidgetList"
    assert listed["items"][0]["kind"] == "Widget"  # custom resource lists keep each item's kind
    assert listed["items"][0]["spec"]["size"] == 3


async def test_custom_objects_hvpa(kube: client.ApiClient) -> None:
    custom = client.CustomObjectsApi(kube)
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Hvpa",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        },
    }
    created = await custom.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
    assert created["spec"]["targetRef"]["name"] == "web"
    listed = await custom.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)
    assert listed["kind"] == "HvpaList"


async def test_coordination_leases(kube: client.ApiClient) -> None:
    leases = client.CoordinationV1Api(kube)
    now = datetime(2024, 1, 1, tzinfo=UTC)
    body = client.V1Lease(
        metadata=client.V1ObjectMeta(name="hvpa-leader"),
        spec=client.V1LeaseSpec(
            holder_identity="a", lease_duration_seconds=15, renew_time=now, acquire_time=now
        ),
    )
    created = await leases.create_namespaced_lease("kube-system", body)
    created.spec.holder_identity = "b"
    renewed = await leases.replace_namespaced_lease("hvpa-leader", "kube-system", created)
    assert renewed.spec.holder_identity == "b"
    assert renewed.spec.renew_time == now
    created.spec.holder_identity = "c"
    with pytest.raises(ApiException) as stale:
        await leases.replace_namespaced_lease("hvpa-leader", "kube-system", created)
    assert stale.value.status == 409
