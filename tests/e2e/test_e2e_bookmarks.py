"""Watch bookmarks as a real API server sends them, through hvpa's own reflector.

The watch cache sends a bookmark shortly before a watch's deadline (2 s before it) and about
once a minute otherwise; its object is a zero value of the resource's type with only the
resourceVersion set, so a Deployment's carries `"containers": null`, which hvpa's wire types
once rejected: every bookmark was logged as an error and counted as a skipped object (issue 16).
A 5 s watch gets one about 3 s in, once the cache has seen the resource change since the
watch began.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import threading
from typing import Any

import pytest
from e2e_cluster import Cluster
from e2e_objects import deployment, statefulset, workload_path
from prometheus_client import CollectorRegistry
from reflector_sink import RecordingSink

from hvpa.kube.client import client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.reflector import Reflector
from hvpa.kube.resources import DEPLOYMENTS, PODS, REPLICASETS, STATEFULSETS, Resource
from hvpa.kube.settings import WatchSettings

pytestmark = pytest.mark.e2e

SHORT_WATCHES = WatchSettings(min_watch_timeout_seconds=5, max_watch_timeout_seconds=5)


def test_a_real_bookmark_carries_a_zero_value_object(cluster: Cluster, namespace: str) -> None:
    """The shape the reflector must accept, as the server sends it. The bookmark that ends a
    watch's initial events (sendInitialEvents) comes at once; it has the periodic bookmarks'
    shape, plus an annotation."""
    api = cluster.admin
    api.create(
        workload_path(namespace, "Deployment"),
        deployment("web", replicas=1, requests={"cpu": "10m"}),
    )
    lines = api.watch_lines(
        workload_path(namespace, "Deployment"),
        params={
            "sendInitialEvents": True,
            "resourceVersionMatch": "NotOlderThan",
            "allowWatchBookmarks": True,
            "timeoutSeconds": 5,
        },
        timeout_seconds=15,
    )
    bookmark = next(json.loads(line)["object"] for line in lines if b'"BOOKMARK"' in line)
    assert bookmark["kind"] == "Deployment"
    assert bookmark["metadata"]["resourceVersion"]
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert bookmark["spec"]["template"]["spec"]["containers"] is None


class _CountingReflector(Reflector[Any, Any]):
    """hvpa's reflector, counting the bookmark lines it is handed, so that the test cannot
    pass on a watch that happened to get none."""

    bookmarks = 0

    def _handle(self, line: bytes) -> None:
        if b'"type":"BOOKMARK"' in line:
            self.bookmarks += 1
        super()._handle(line)


# One object of each kind, and a patch that touches it: the watch cache sends a periodic
# bookmark only once it has seen the resource change past the watch's resourceVersion.
OBJECTS: dict[str, tuple[str, dict[str, Any]]] = {
    "pods": (
        "/api/v1/namespaces/{ns}/pods",
        {"metadata": {"name": "one"}, "spec": {"containers": [{"name": "a", "image": "a"}]}},
    ),
    "deployments": (
        "/apis/apps/v1/namespaces/{ns}/deployments",
        deployment("one", replicas=0, requests={"cpu": "10m"}),
    ),
    "statefulsets": (
        "/apis/apps/v1/namespaces/{ns}/statefulsets",
        statefulset("one", replicas=0, requests={"cpu": "10m"}),
    ),
    "replicasets": (
        "/apis/apps/v1/namespaces/{ns}/replicasets",
        {**deployment("one", replicas=0, requests={"cpu": "10m"}), "kind": "ReplicaSet"},
    ),
}


def _churn(cluster: Cluster, path: str, stop: threading.Event) -> None:
    touch = 0
    while not stop.wait(0.5):
        touch += 1
        cluster.admin.patch(path, {"metadata": {"labels": {"touch": str(touch)}}})


@pytest.mark.parametrize(
    "resource", [PODS, DEPLOYMENTS, STATEFULSETS, REPLICASETS], ids=lambda r: r.plural
)
async def test_reflector_takes_bookmarks_without_skipping(
    cluster: Cluster, namespace: str, resource: Resource[Any, Any], caplog: pytest.LogCaptureFixture
) -> None:
    collection, body = OBJECTS[resource.plural]
    collection = collection.format(ns=namespace)
    cluster.admin.create(collection, body)
    stop = threading.Event()
    churn = threading.Thread(target=_churn, args=(cluster, f"{collection}/one", stop), daemon=True)
    churn.start()
    client = await client_from_kubeconfig(
        metrics=KubeMetrics(CollectorRegistry()), path=str(cluster.control_plane.admin_kubeconfig)
    )
    sink = RecordingSink()
    reflector = _CountingReflector(
        client=client,
        resource=resource,
        sink=sink,
        namespace=namespace,
        settings=SHORT_WATCHES,
        rng=random.Random(1),
    )
    caplog.set_level(logging.INFO, logger="hvpa.kube.reflector")
    try:
        async with client:
            task = asyncio.create_task(reflector.run())
            # Each 5 s watch gets its bookmark 2 s before its deadline. The reflector signals
            # nothing per event: poll its counter.
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 40
            while reflector.bookmarks < 2 and loop.time() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.2)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    finally:
        stop.set()
        churn.join(timeout=10)
    assert reflector.bookmarks >= 2, "the server sent no bookmarks: the test proves nothing"
    assert sink.objects, "the namespace's object was listed"
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert reflector.skipped == 0, errors
    assert not errors
