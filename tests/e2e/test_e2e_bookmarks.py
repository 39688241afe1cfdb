"""Watch bookmarks as a real API server sends them, through hvpa's own reflector.

The watch cache sends a bookmark shortly before a watch's deadline (2 s before it) and about
once a minute otherwise; its object is a zero value of the resource's type with only the
resourceVersion set, so a Deployment's carries `"containers": null`, which hvpa's wire types
once rejected: every bookmark was logged as an error and counted as a skipped object (issue 16).
A 5 s watch gets one bookmark in about 3 s.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Mapping
from typing import Any

import pytest
from e2e_cluster import Cluster
from e2e_objects import deployment, statefulset, workload_path
from prometheus_client import CollectorRegistry

from hvpa.kube.client import client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.reflector import Reflector
from hvpa.kube.resources import DEPLOYMENTS, PODS, REPLICASETS, STATEFULSETS, Resource
from hvpa.kube.settings import WatchSettings

pytestmark = pytest.mark.e2e

SHORT_WATCHES = WatchSettings(min_watch_timeout_seconds=5, max_watch_timeout_seconds=5)


def test_a_real_bookmark_carries_a_zero_value_object(cluster: Cluster, namespace: str) -> None:
    """The shape the reflector must accept, as the server sends it."""
    api = cluster.admin
    api.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=1, requests={"cpu": "10m"}),
    )
    listed = api.get(workload_path(namespace, "Deployment"))
    lines = list(
        api.watch_lines(
            workload_path(namespace, "Deployment"),
            params={
                "resourceVersion": listed["metadata"]["resourceVersion"],
                "allowWatchBookmarks": True,
                "timeoutSeconds": 5,
            },
            timeout_seconds=15,
        )
    )
    bookmarks = [json.loads(line) for line in lines if b'"BOOKMARK"' in line]
    assert bookmarks, f"no bookmark in {lines!r}"
    bookmark = bookmarks[0]["object"]
    assert bookmark["kind"] == "Deployment"
    assert bookmark["metadata"]["resourceVersion"]
    assert bookmark["spec"]["template"]["spec"]["containers"] is None


class _Sink:
    def __init__(self) -> None:
        self.objects: dict[str, Any] = {}

    def replace(self, items: Mapping[str, Any]) -> None:
        self.objects = dict(items)

    def upsert(self, key: str, record: Any) -> None:
        self.objects[key] = record

    def delete(self, key: str) -> None:
        self.objects.pop(key, None)


@pytest.mark.parametrize(
    "resource", [PODS, DEPLOYMENTS, STATEFULSETS, REPLICASETS], ids=lambda r: r.plural
)
async def test_reflector_takes_bookmarks_without_skipping(
    cluster: Cluster, namespace: str, resource: Resource[Any, Any], caplog: pytest.LogCaptureFixture
) -> None:
    api = cluster.admin
    api.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=1, requests={"cpu": "10m"}),
    )
    api.create(
        workload_path(namespace, "StatefulSet"),
        statefulset("db", replicas=1, requests={"cpu": "10m"}),
    )
    client = await client_from_kubeconfig(
        metrics=KubeMetrics(CollectorRegistry()), path=str(cluster.control_plane.admin_kubeconfig)
    )
    sink = _Sink()
    reflector = Reflector(
        client=client,
        resource=resource,
        sink=sink,
        namespace=namespace,
        settings=SHORT_WATCHES,
        rng=random.Random(1),
    )
    caplog.set_level(logging.INFO, logger="hvpa.kube.reflector")
    async with client:
        task = asyncio.create_task(reflector.run())
        # Two whole watches (the third has started): each 5 s watch gets its bookmark 2 s
        # before its deadline. The reflector signals nothing per watch: poll its counter.
        deadline = asyncio.get_running_loop().time() + 30
        while reflector.watches < 3 and asyncio.get_running_loop().time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert reflector.watches >= 3
    assert sink.objects, "the namespace's objects were listed"
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert reflector.skipped == 0, errors
    assert not errors
