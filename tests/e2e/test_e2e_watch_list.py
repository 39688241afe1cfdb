"""hvpa's reflector lists by watch-list on the real server (kube-apiserver v1.37.2): one watch
with sendInitialEvents streams the namespace's objects, ends them with the
k8s.io/initial-events-end bookmark, and goes on as the watch - no list request, no fallback
to paged lists (hvpa/kube/reflector.py, 1.)."""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

import pytest
from e2e_cluster import Cluster
from prometheus_client import CollectorRegistry
from reflector_sink import RecordingSink

from hvpa.kube.client import client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.reflector import Reflector
from hvpa.kube.resources import PODS

pytestmark = pytest.mark.e2e

PODS_MADE = 3


async def test_the_real_server_streams_the_initial_state(
    cluster: Cluster, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    collection = f"/api/v1/namespaces/{namespace}/pods"
    for index in range(PODS_MADE):
        cluster.admin.create(
            collection,
            {
                "metadata": {"name": f"p{index}"},
                "spec": {"containers": [{"name": "a", "image": "a"}]},
            },
        )
    client = await client_from_kubeconfig(
        metrics=KubeMetrics(CollectorRegistry()), path=str(cluster.control_plane.admin_kubeconfig)
    )
    sink = RecordingSink()
    reflector: Reflector[Any, Any] = Reflector(
        client=client, resource=PODS, sink=sink, namespace=namespace, rng=random.Random(1)
    )
    caplog.set_level(logging.INFO, logger="hvpa.kube.reflector")
    async with client:
        task = asyncio.create_task(reflector.run())
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while not sink.replaced and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.1)
        cluster.admin.create(
            collection,
            {"metadata": {"name": "later"}, "spec": {"containers": [{"name": "a", "image": "a"}]}},
        )
        while len(sink.objects) <= PODS_MADE and loop.time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert sink.replaced == 1
    assert sorted(sink.objects) == sorted(
        f"{namespace}/{name}" for name in ("p0", "p1", "p2", "later")
    )
    listed = [r for r in caplog.records if r.getMessage() == "listed"]
    assert [r.__dict__["fields"].get("watch_list") for r in listed] == [True]
    assert reflector.watches == 1  # the same stream carried the later pod
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not warnings
