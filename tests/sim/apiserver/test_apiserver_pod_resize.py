"""pods/resize: served from 1.33, the request reduced to the containers' resources, upstream's checks.

The refusals are ported from kubernetes pkg/apis/core/validation/validation_test.go,
TestValidatePodResize (the cases a controller can meet: QoS class, removed
requests, resources other than cpu and memory, memory limit decreases and
additions by resizePolicy, a node without resize support), with the
messages upstream's ValidatePodResize gives.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from apiserver_http import FAKE_NOW, Http

from hvpa.sim.apiserver import ApiServer

PODS = "/api/v1/namespaces/default/pods"


def resources(
    cpu: str | None = "500m",
    memory: str | None = "256Mi",
    limit_cpu: str | None = "1",
    limit_memory: str | None = "512Mi",
    **others: str,
) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory), *others.items()) if v}
    limits = {k: v for k, v in (("cpu", limit_cpu), ("memory", limit_memory)) if v}
    out: dict[str, Any] = {}
    if requests:
        out["requests"] = requests
    if limits:
        out["limits"] = limits
    return out


def pod(name: str = "web-0", *, memory_policy: str | None = None, **amounts: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "app", "image": "app:1", "resources": resources(**amounts)}
    if memory_policy is not None:
        container["resizePolicy"] = [
            {"resourceName": "cpu", "restartPolicy": "NotRequired"},
            {"resourceName": "memory", "restartPolicy": memory_policy},
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {
            "containers": [container],
            "initContainers": [
                {"name": "setup", "image": "app:1", "resources": resources(**amounts)}
            ],
        },
    }


def container_patch(**amounts: Any) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "app", "resources": resources(**amounts)}]}}


async def running(http: Http, name: str = "web-0", *, reports_resources: bool = True) -> None:
    """The kubelet's status for a running pod: with status.resources when it can resize."""
    status: dict[str, Any] = {"name": "app", "state": {"running": {}}, "ready": True}
    if reports_resources:
        status["resources"] = resources()
    reply = await http.patch(
        f"{PODS}/{name}/status", {"status": {"phase": "Running", "containerStatuses": [status]}}
    )
    assert reply.status == 200, reply.body


def causes(reply: Any) -> list[str]:
    return [f"{c['field']}: {c['message']}" for c in reply.body["details"]["causes"]]


@pytest.fixture
async def http_of() -> AsyncIterator[Any]:
    """`await http_of(version)`: a raw client of a server of that Kubernetes version."""
    opened: list[tuple[ApiServer, aiohttp.ClientSession]] = []

    async def start(version: str) -> Http:
        server = ApiServer(seed=7, clock=lambda: FAKE_NOW, kubernetes_version=version)
        await server.start()
        session = aiohttp.ClientSession()
        opened.append((server, session))
        return Http(session, server.url)

    yield start
    for server, session in opened:
        await session.close()
        await server.stop()


@pytest.mark.parametrize(("version", "served"), [("v1.32.4", False), ("v1.33.0", True)])
async def test_served_from_1_33(http_of: Any, version: str, served: bool) -> None:
    http = await http_of(version)
    listed = {r["name"] for r in (await http.get("/api/v1")).body["resources"]}
    assert ("pods/resize" in listed) is served
    await http.post(PODS, pod())
    reply = await http.patch(f"{PODS}/web-0/resize", container_patch(cpu="600m"), "strategic")
    assert reply.status == (200 if served else 404)


async def test_a_resize_changes_only_the_containers_resources(http_of: Any) -> None:
    http = await http_of("v1.35.0")
    created = (await http.post(PODS, pod())).body
    await running(http)
    before = (await http.get(f"{PODS}/web-0")).body
    patch = container_patch(cpu="750m", limit_cpu="1500m", memory="300Mi", limit_memory="600Mi")
    patch["metadata"] = {"labels": {"app": "other"}}
    patch["spec"]["containers"][0]["image"] = "app:2"
    patch["spec"]["initContainers"] = [{"name": "setup", "resources": resources(cpu="1")}]
    reply = await http.patch(f"{PODS}/web-0/resize", patch, "strategic")
    assert reply.status == 200, reply.body
    after = reply.body
    app = after["spec"]["containers"][0]
    assert app["resources"] == resources(
        cpu="750m", limit_cpu="1500m", memory="300Mi", limit_memory="600Mi"
    )
    # Everything else of the request is dropped: labels, the image, a plain init container.
    assert app["image"] == "app:1"
    assert after["metadata"]["labels"] == {"app": "web"}
    assert after["spec"]["initContainers"] == created["spec"]["initContainers"]
    assert after["status"] == before["status"]
    assert int(after["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    # The main resource still refuses the same change.
    refused = await http.patch(f"{PODS}/web-0", container_patch(cpu="800m"), "strategic")
    assert refused.status == 422


async def test_put_and_a_stale_resource_version(http_of: Any) -> None:
    http = await http_of("v1.35.0")
    await http.post(PODS, pod())
    current = (await http.get(f"{PODS}/web-0")).body
    current["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "600m"
    assert (await http.put(f"{PODS}/web-0/resize", current)).status == 200
    stale = await http.put(f"{PODS}/web-0/resize", current)
    assert stale.status == 409
    assert stale.body["reason"] == "Conflict"


@pytest.mark.parametrize(
    ("version", "created", "patch", "expected"),
    [
        pytest.param(
            "v1.35.0",
            {"cpu": "1", "limit_cpu": "1", "memory": "1Gi", "limit_memory": "1Gi"},
            {"cpu": "500m", "limit_cpu": "1", "memory": "1Gi", "limit_memory": "1Gi"},
            [
                'spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing'
            ],
            id="qos-class",
        ),
        pytest.param(
            "v1.35.0",
            {"limit_cpu": None},
            {"cpu": None},
            [
                "spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed"
            ],
            id="request-removed",
        ),
        pytest.param(
            "v1.35.0",
            {},
            {"ephemeral-storage": "1Gi"},
            ["spec: Forbidden: only cpu and memory resources are mutable"],
            id="other-resource",
        ),
        pytest.param(
            "v1.35.0",
            {},
            {"cpu": "2"},
            [
                'spec.containers[0].resources.requests: Invalid value: "2": '
                "must be less than or equal to cpu limit of 1"
            ],
            id="request-above-limit",
        ),
        pytest.param(
            "v1.34.2",
            {},
            {"limit_memory": "300Mi"},
            [
                "spec.containers[0].resources.limits[memory]: Forbidden: "
                "memory limits cannot be decreased unless resizePolicy is RestartContainer"
            ],
            id="memory-limit-decrease-before-1.35",
        ),
        pytest.param(
            "v1.34.2",
            {"limit_memory": None},
            {"limit_memory": "1Gi"},
            [
                "spec.containers[0].resources.limits[memory]: Forbidden: "
                "memory limits cannot be added unless resizePolicy is RestartContainer"
            ],
            id="memory-limit-added-before-1.35",
        ),
        pytest.param("v1.35.0", {}, {"limit_memory": "300Mi"}, [], id="memory-limit-decrease-1.35"),
        pytest.param(
            "v1.34.2",
            {"memory_policy": "RestartContainer"},
            {"limit_memory": "300Mi"},
            [],
            id="memory-limit-decrease-restart",
        ),
    ],
)
async def test_refusals(
    http_of: Any,
    version: str,
    created: dict[str, Any],
    patch: dict[str, Any],
    expected: list[str],
) -> None:
    http = await http_of(version)
    policy = created.pop("memory_policy", None)
    await http.post(PODS, pod(memory_policy=policy, **created))
    amounts = {
        "cpu": "500m",
        "memory": "256Mi",
        "limit_cpu": "1",
        "limit_memory": "512Mi",
        **created,
        **patch,
    }
    body = container_patch(**amounts)
    if policy is not None:
        body["spec"]["containers"][0]["resizePolicy"] = pod(memory_policy=policy)["spec"][
            "containers"
        ][0]["resizePolicy"]
    # A JSON merge patch of the whole resources, so a removed amount is removed.
    body["spec"]["containers"] = [
        {**(await http.get(f"{PODS}/web-0")).body["spec"]["containers"][0], **c}
        for c in body["spec"]["containers"]
    ]
    reply = await http.patch(f"{PODS}/web-0/resize", body, "merge")
    if not expected:
        assert reply.status == 200, reply.body
        return
    assert reply.status == 422, reply.body
    assert causes(reply) == expected
    assert reply.body["message"].startswith('Pod "web-0" is invalid: ')


async def test_a_node_without_resize_support(http_of: Any) -> None:
    http = await http_of("v1.35.0")
    await http.post(PODS, pod())
    await running(http, reports_resources=False)
    reply = await http.patch(f"{PODS}/web-0/resize", container_patch(cpu="600m"), "strategic")
    assert reply.status == 422
    assert causes(reply) == ["spec: Forbidden: Pod running on node without support for resize"]


async def test_listeners_hear_of_each_stored_resize() -> None:
    async with ApiServer(seed=1, clock=lambda: FAKE_NOW, kubernetes_version="v1.35.0") as server:
        heard: list[dict[str, Any]] = []
        server.resizes.listeners.append(heard.append)
        server.objects.create("pods", pod())
        async with aiohttp.ClientSession() as session:
            http = Http(session, server.url)
            await http.patch(f"{PODS}/web-0/resize", container_patch(cpu="600m"), "strategic")
            dry = await http.call(
                "PATCH",
                f"{PODS}/web-0/resize",
                container_patch(cpu="700m"),
                content_type="application/strategic-merge-patch+json",
                params={"dryRun": "All"},
            )
        assert dry.status == 200
        assert [p["spec"]["containers"][0]["resources"]["requests"]["cpu"] for p in heard] == [
            "600m"
        ]
