"""The applier, the one place that writes, against the in-repo API server: the shape of
each write, preconditions that make a stale decision fail with 409, nothing written when
not the leader (the lease checked again before every retry), nothing written to targets or VPAs in a dry run, and Events patched on
repeat and created again when the first has gone."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from controller_records import hvpa as hvpa_record

from hvpa.controller.applier import Applier, ContainerResources, NotLeader, resources_patch
from hvpa.controller.events import EventCorrelator, InvolvedObject, RecordedEvent
from hvpa.controller.resources import OWNED_VPAS, VpaObjectWire, vpa_object_from_wire
from hvpa.controller.vpa import vpa_body
from hvpa.kube.client import KubeClient
from hvpa.kube.errors import Conflict
from hvpa.records import decode_target
from hvpa.sim.apiserver import ApiServer

WRITES = ("POST", "PUT", "PATCH", "DELETE")
WEB = InvolvedObject("autoscaling.k8s.io/v1alpha1", "Hvpa", "default", "web", "uid-1")


def deployment(server: ApiServer) -> dict[str, Any]:
    labels = {"app": "web"}
    return server.objects.create(
        "deployments.apps",
        {
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "initContainers": [
                            {
                                "name": "proxy",
                                "image": "p",
                                "restartPolicy": "Always",
                                "resources": {"requests": {"cpu": "10m"}},
                            }
                        ],
                        "containers": [
                            {
                                "name": "app",
                                "image": "a",
                                "resources": {
                                    "requests": {"cpu": "100m"},
                                    "limits": {"cpu": "200m"},
                                },
                            },
                            {"name": "log", "image": "l", "resources": {"requests": {"cpu": "5m"}}},
                        ],
                    },
                },
            },
        },
    )


def applier(
    kube: KubeClient, *, dry_run: bool = False, leader: Callable[[], bool] | None = None
) -> Applier:
    clock = iter(range(1_750_000_000, 1_750_100_000, 7))
    return Applier(
        client=kube,
        correlator=EventCorrelator(clock=lambda: float(next(clock))),
        identity="me",
        dry_run=dry_run,
        is_leader=leader,
    )


def written(server: ApiServer) -> list[tuple[str, str, str, int | None]]:
    return [
        (r.method, r.resource, r.subresource, r.status)
        for r in server.requests
        if r.method in WRITES
    ]


def test_resources_patch_names_only_the_changed_containers() -> None:
    patch = resources_patch(
        "42",
        [
            ContainerResources("app", False, {"cpu": "300m"}, {"cpu": "600m"}),
            ContainerResources("proxy", True, {"cpu": "20m"}, {}),
        ],
    )
    assert patch == {
        "metadata": {"resourceVersion": "42"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "resources": {"requests": {"cpu": "300m"}, "limits": {"cpu": "600m"}},
                        }
                    ],
                    "initContainers": [
                        {"name": "proxy", "resources": {"requests": {"cpu": "20m"}}}
                    ],
                }
            }
        },
    }


async def test_target_writes_and_their_preconditions(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    target = decode_target(deployment(apiserver))
    writer = applier(kube)
    scaled = await writer.write_target_replicas(target, 5)
    assert scaled is not None and scaled != target.resource_version
    resized = await writer.write_target_resources(
        target,
        scaled,
        [
            ContainerResources("app", False, {"cpu": "300m"}, {"cpu": "600m"}),
            ContainerResources("proxy", True, {"cpu": "20m"}, {}),
        ],
    )
    obj = apiserver.objects.get("deployments.apps", "web")
    assert obj["metadata"]["resourceVersion"] == resized
    assert obj["spec"]["replicas"] == 5
    spec = obj["spec"]["template"]["spec"]
    assert [c["resources"] for c in spec["containers"]] == [
        {"requests": {"cpu": "300m"}, "limits": {"cpu": "600m"}},
        {"requests": {"cpu": "5m"}},
    ]
    assert spec["initContainers"][0]["resources"] == {"requests": {"cpu": "20m"}}
    # A decision made on the old object cannot land.
    with pytest.raises(Conflict):
        await writer.write_target_replicas(target, 7)
    with pytest.raises(Conflict):
        await writer.write_target_resources(
            target, scaled, [ContainerResources("app", False, {"cpu": "1"}, {})]
        )
    assert apiserver.objects.get("deployments.apps", "web")["spec"]["replicas"] == 5


async def test_nothing_is_written_without_the_lease(apiserver: ApiServer, kube: KubeClient) -> None:
    target = decode_target(deployment(apiserver))
    apiserver.objects.create(
        "hvpas",
        {"metadata": {"name": "web"}, "spec": {"targetRef": {"kind": "Deployment", "name": "web"}}},
    )
    record = hvpa_record()
    assert record.hvpa is not None
    writer = applier(kube, leader=lambda: False)
    apiserver.clear_requests()
    attempts = [
        writer.write_target_replicas(target, 5),
        writer.write_target_resources(
            target, "1", [ContainerResources("app", False, {"cpu": "1"}, {})]
        ),
        writer.create_vpa(vpa_body(record.hvpa, "uid", "apps/v1")),
        writer.write_status(namespace="default", name="web", resource_version="1", status={}),
        writer.record(RecordedEvent(WEB, "Normal", "X", "y")),
    ]
    for attempt in attempts:
        with pytest.raises(NotLeader):
            await attempt
    assert written(apiserver) == []


@pytest.mark.looptime
@pytest.mark.parametrize("write", ["scale", "resources", "vpa", "status", "event"])
async def test_the_lease_is_checked_again_before_a_retry(
    apiserver: ApiServer, kube: KubeClient, write: str
) -> None:
    """A write waiting in a 429's Retry-After while the lease is lost is never sent again."""
    target = decode_target(deployment(apiserver))
    apiserver.objects.create(
        "hvpas",
        {"metadata": {"name": "web"}, "spec": {"targetRef": {"kind": "Deployment", "name": "web"}}},
    )
    record = hvpa_record()
    assert record.hvpa is not None
    leading = [True]
    writer = applier(kube, leader=lambda: leading[0])
    apiserver.faults.fail(status=429, times=1, retry_after_seconds=20)
    apiserver.clear_requests()
    attempts = {
        "scale": lambda: writer.write_target_replicas(target, 5),
        "resources": lambda: writer.write_target_resources(
            target, "1", [ContainerResources("app", False, {"cpu": "1"}, {})]
        ),
        "vpa": lambda: writer.create_vpa(vpa_body(record.hvpa, "uid", "apps/v1")),
        "status": lambda: writer.write_status(
            namespace="default", name="web", resource_version="1", status={}
        ),
        "event": lambda: writer.record(RecordedEvent(WEB, "Normal", "X", "y")),
    }
    attempt = asyncio.ensure_future(attempts[write]())
    await asyncio.sleep(10)  # inside the Retry-After
    leading[0] = False
    with pytest.raises(NotLeader):
        await attempt
    assert [status for *_, status in written(apiserver)] == [429], "the retry was never sent"


async def test_dry_run_writes_only_status_and_events(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    target = decode_target(deployment(apiserver))
    created = apiserver.objects.create(
        "hvpas",
        {"metadata": {"name": "web"}, "spec": {"targetRef": {"kind": "Deployment", "name": "web"}}},
    )
    record = hvpa_record()
    assert record.hvpa is not None
    vpa = vpa_object_from_wire(
        msgspec.convert(vpa_body(record.hvpa, "uid", "apps/v1"), VpaObjectWire)
    )
    writer = applier(kube, dry_run=True)
    apiserver.clear_requests()
    assert await writer.write_target_replicas(target, 5) is None
    assert (
        await writer.write_target_resources(
            target, "1", [ContainerResources("app", False, {"cpu": "1"}, {})]
        )
        is None
    )
    assert await writer.create_vpa(vpa_body(record.hvpa, "uid", "apps/v1")) is False
    await writer.update_vpa(vpa, {"spec": {}})
    await writer.delete_vpa(vpa)
    assert written(apiserver) == []
    await writer.write_status(
        namespace="default",
        name="web",
        resource_version=created["metadata"]["resourceVersion"],
        status={"replicas": 2},
    )
    await writer.record(RecordedEvent(WEB, "Normal", "DryRun", "would"))
    assert written(apiserver) == [("PUT", "hvpas", "status", 200), ("POST", "events", "", 201)]


async def test_events_patch_on_repeat_and_recreate_when_gone(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    writer = applier(kube)
    await writer.record(RecordedEvent(WEB, "Warning", "FailedGetScale", "not found"))
    await writer.record(RecordedEvent(WEB, "Warning", "FailedGetScale", "not found"))
    (event,) = apiserver.objects.list("events", namespace="default")
    assert (event["count"], event["type"], event["source"]) == (2, "Warning", {"component": "hvpa"})
    apiserver.objects.delete("events", event["metadata"]["name"], namespace="default")
    await writer.record(RecordedEvent(WEB, "Warning", "FailedGetScale", "not found"))
    (again,) = apiserver.objects.list("events", namespace="default")
    assert again["count"] == 1
    assert again["metadata"]["name"] != event["metadata"]["name"]


async def test_vpa_create_is_idempotent(apiserver: ApiServer, kube: KubeClient) -> None:
    record = hvpa_record()
    assert record.hvpa is not None
    writer = applier(kube)
    body = vpa_body(record.hvpa, "uid-web", "apps/v1")
    # Whether the server created it: the reconcile then leaves the decision to the next.
    assert await writer.create_vpa(body) is True
    # A retry after a lost answer: AlreadyExists is fine, and the reconcile decides at once.
    assert await writer.create_vpa(body) is False
    assert [
        v["metadata"]["name"]
        for v in apiserver.objects.list(OWNED_VPAS.plural, namespace="default")
    ] == ["web-vpa"]


async def test_deleting_a_vpa_already_gone_is_done(apiserver: ApiServer, kube: KubeClient) -> None:
    """Two deletions race (a retry, a person with kubectl): the second finds nothing, and
    the Hvpa's aim, no VPA, holds; the reconcile must not fail and retry over it."""
    record = hvpa_record()
    assert record.hvpa is not None
    writer = applier(kube)
    await writer.create_vpa(vpa_body(record.hvpa, "uid-web", "apps/v1"))
    created = apiserver.objects.get(OWNED_VPAS.plural, "web-vpa", namespace="default")
    vpa = vpa_object_from_wire(msgspec.convert(created, VpaObjectWire))
    await writer.delete_vpa(vpa)
    await writer.delete_vpa(vpa)
    assert apiserver.objects.list(OWNED_VPAS.plural, namespace="default") == []
    assert [w[3] for w in written(apiserver) if w[0] == "DELETE"] == [200, 404]
