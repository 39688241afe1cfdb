"""Bookmarks as kube-apiserver's watch cache sends them: a zero value of the resource's type.

The object of a real BOOKMARK event is the typed object's zero value with only
metadata.resourceVersion set, serialized with its nulls (`"containers": null`), which is not
what the wire structs accept for a real object. A bookmark is metadata and nothing else: the
reflector takes its resourceVersion and neither skips nor logs it. The lines below are those
kube-apiserver v1.37.2 sent (tests/e2e/test_e2e_bookmarks.py watches them arrive).
"""

import asyncio
import logging
import random
from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from prometheus_client import CollectorRegistry
from reflector_sink import RecordingSink

from hvpa.kube.client import KubeClient
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.reflector import Reflector
from hvpa.kube.resources import DEPLOYMENTS, PODS, REPLICASETS, STATEFULSETS, Resource
from hvpa.kube.settings import WatchSettings

pytestmark = pytest.mark.looptime

# Captured from kube-apiserver v1.37.2 (watch ?allowWatchBookmarks=true), one per kind.
_TEMPLATE = {"metadata": {}, "spec": {"containers": None}}
BOOKMARKS: dict[str, dict[str, Any]] = {
    "pods": {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "13"},
        "spec": {"containers": None},
        "status": {},
    },
    "deployments": {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "13"},
        "spec": {"replicas": 0, "selector": None, "template": _TEMPLATE, "strategy": {}},
        "status": {},
    },
    "statefulsets": {
        "kind": "StatefulSet",
        "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "13"},
        "spec": {
            "replicas": 0,
            "selector": None,
            "template": _TEMPLATE,
            "serviceName": "",
            "updateStrategy": {},
        },
        "status": {"replicas": 0, "availableReplicas": 0},
    },
    "replicasets": {
        "kind": "ReplicaSet",
        "apiVersion": "apps/v1",
        "metadata": {"resourceVersion": "13"},
        "spec": {"replicas": 0, "selector": None, "template": _TEMPLATE},
        "status": {"replicas": 0},
    },
}


class _Config:
    def __init__(self, host: str) -> None:
        self.host = host
        self.username = None
        self.tls_server_name = None

    async def get_api_key_with_prefix(self, identifier: str) -> str | None:
        return None


@pytest.fixture
async def server() -> AsyncIterator[tuple[dict[str, Any], KubeClient]]:
    """An empty list at resourceVersion 10, then one watch: the bookmark, then silence."""
    scripted: dict[str, Any] = {"bookmark": None, "watched": asyncio.Event()}

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") != "true":
            body = {"metadata": {"resourceVersion": "10"}, "items": []}
            return web.Response(body=orjson.dumps(body), content_type="application/json")
        if scripted["watched"].is_set():
            await asyncio.sleep(3600)
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        await response.write(
            orjson.dumps({"type": "BOOKMARK", "object": scripted["bookmark"]}) + b"\n"
        )
        scripted["watched"].set()
        await asyncio.sleep(3600)
        return response

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    test_server = TestServer(app)
    await test_server.start_server()
    client = KubeClient(
        configuration=_Config(str(test_server.make_url("")).rstrip("/")),
        metrics=KubeMetrics(CollectorRegistry()),
    )
    try:
        yield scripted, client
    finally:
        await client.close()
        await test_server.close()


@pytest.mark.parametrize(
    "resource", [PODS, DEPLOYMENTS, STATEFULSETS, REPLICASETS], ids=lambda r: r.plural
)
async def test_a_real_servers_bookmark_advances_the_resource_version_silently(
    server: tuple[dict[str, Any], KubeClient],
    resource: Resource[Any, Any],
    caplog: pytest.LogCaptureFixture,
) -> None:
    scripted, client = server
    scripted["bookmark"] = BOOKMARKS[resource.plural]
    reflector = Reflector(
        client=client,
        resource=resource,
        sink=RecordingSink(),
        settings=WatchSettings(watch_list=False),  # lists, then watches: the scripted server
        rng=random.Random(1),
    )
    caplog.set_level(logging.INFO, logger="hvpa.kube.reflector")
    task = asyncio.create_task(reflector.run())
    await asyncio.wait_for(scripted["watched"].wait(), timeout=60)
    await asyncio.sleep(1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert reflector.resource_version == "13"
    assert reflector.skipped == 0
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
