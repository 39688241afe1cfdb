"""Informers against the in-repo API server, in virtual time: the paginated initial
list, then every change seen exactly once (no miss, no repeat) across dropped
watches, 500s and 429s; re-list with deletes after compaction; bookmarks carrying
the resourceVersion forward; and a store that ends equal to the server's state."""

import asyncio
import gc
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from kube_helpers import eventually

from hvpa.kube.client import KubeClient
from hvpa.kube.informer import EventHandler, Informer, wait_for_cache_sync
from hvpa.kube.resources import NODES, PODS
from hvpa.kube.settings import WatchSettings
from hvpa.kube.store import labelled_indexers, select
from hvpa.labels import LabelSelector
from hvpa.records import PodRecord, PodWire
from hvpa.sim.apiserver import ApiServer

pytestmark = pytest.mark.looptime


def pod(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels or {"app": "web"}},
        "spec": {
            "containers": [
                {"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}
            ]
        },
    }


class Events:
    """What the handlers saw, as (kind, key, resourceVersion)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []
        self.times: list[float] = []

    def _note(self, kind: str, record: PodRecord) -> None:
        self.seen.append((kind, record.key, record.resource_version))
        self.times.append(asyncio.get_running_loop().time())

    def handler(self) -> EventHandler[PodRecord]:
        return EventHandler(
            on_add=lambda new: self._note("add", new),
            on_update=lambda old, new: self._note("update", new),
            on_delete=lambda old: self._note("delete", old),
        )


class Cluster:
    """Writes pods through the server's in-process API and remembers each change."""

    def __init__(self, server: ApiServer) -> None:
        self.server = server
        self.changes: list[tuple[str, str, str]] = []

    def create(self, name: str, namespace: str = "default", **labels: str) -> None:
        obj = self.server.objects.create("pods", pod(name, **labels), namespace=namespace)
        self.changes.append(("add", f"{namespace}/{name}", obj["metadata"]["resourceVersion"]))

    def relabel(self, name: str, namespace: str = "default", **labels: str) -> None:
        obj = self.server.objects.patch(
            "pods", name, {"metadata": {"labels": labels}}, namespace=namespace
        )
        self.changes.append(("update", f"{namespace}/{name}", obj["metadata"]["resourceVersion"]))

    def delete(self, name: str, namespace: str = "default") -> None:
        key = f"{namespace}/{name}"
        last = [rv for _, k, rv in self.changes if k == key][-1]
        self.server.objects.delete("pods", name, namespace=namespace)
        self.changes.append(("delete", key, last))

    def current(self) -> dict[str, str]:
        return {
            f"{p['metadata']['namespace']}/{p['metadata']['name']}": p["metadata"][
                "resourceVersion"
            ]
            for p in self.server.objects.list("pods")
        }


def _informer(kube: KubeClient, *, watch_list: bool) -> tuple[Informer[PodWire, PodRecord], Events]:
    informer = Informer(
        client=kube,
        resource=PODS,
        indexers=labelled_indexers(),
        settings=WatchSettings(page_size=4, watch_list=watch_list),
        rng=random.Random(11),
    )
    events = Events()
    informer.add_handler(events.handler())
    return informer, events


@pytest.fixture(params=[False, True], ids=["lists", "watch-list"])
async def informer(
    kube: KubeClient, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[Informer[PodWire, PodRecord], Events]]:
    """Both ways to the initial state: paginated lists, and the watch-list stream."""
    yield _informer(kube, watch_list=request.param)


@pytest.fixture
async def listing_informer(
    kube: KubeClient,
) -> AsyncIterator[tuple[Informer[PodWire, PodRecord], Events]]:
    yield _informer(kube, watch_list=False)


@asynccontextmanager
async def running(*informers: Informer[Any, Any]) -> AsyncIterator[None]:
    """Informers running and synced; stopped (and seen to stop) on exit."""
    tasks = [asyncio.create_task(informer.run(), name=informer.name) for informer in informers]
    try:
        await asyncio.wait_for(wait_for_cache_sync(informers, freeze=False), timeout=60)
        yield
    finally:
        for task in tasks:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task


async def settled(apiserver: ApiServer) -> None:
    """The informer's watch is open, and old enough that closing it is no failure."""
    await eventually(lambda: apiserver.open_watches == 1, within=10)
    await asyncio.sleep(2 * WatchSettings().short_watch_seconds)


def store_versions(informer: Informer[Any, PodRecord]) -> dict[str, str]:
    return {key: record.resource_version for key, record in informer.store.items()}


async def test_initial_list_is_paginated_and_complete(
    apiserver: ApiServer, listing_informer: tuple[Informer[PodWire, PodRecord], Events]
) -> None:
    cache, events = listing_informer
    cluster = Cluster(apiserver)
    apiserver.objects.create("namespaces", {"metadata": {"name": "shop"}})
    for index in range(15):
        cluster.create(f"p{index:02}", namespace="shop" if index % 3 else "default")
    async with running(cache):
        lists = [
            r for r in apiserver.requests if r.path == "/api/v1/pods" and "watch" not in r.query
        ]
        assert [r.query.get("limit") for r in lists] == ["4"] * 4
        assert [bool(r.query.get("continue")) for r in lists] == [False, True, True, True]
        assert store_versions(cache) == cluster.current()
        assert sorted(events.seen) == sorted(cluster.changes)
        assert cache.resource_version == str(apiserver.resource_version)
        web = select(cache.store, namespace="shop", selector=LabelSelector.parse("app=web"))
        assert len(web) == 10


async def test_the_initial_state_streams_from_one_watch_request(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """The watch-list against the in-repo server: no list request, one watch with
    sendInitialEvents, the state complete, each object seen once, and the same stream then
    carries the changes."""
    cache, events = _informer(kube, watch_list=True)
    cluster = Cluster(apiserver)
    for index in range(15):
        cluster.create(f"p{index:02}")
    async with running(cache):
        pods = [r for r in apiserver.requests if r.path == "/api/v1/pods"]
        assert len(pods) == 1
        assert pods[0].query.get("sendInitialEvents") == "true"
        assert store_versions(cache) == cluster.current()
        cluster.relabel("p03", app="db")
        cluster.delete("p04")
        await eventually(lambda: store_versions(cache) == cluster.current(), within=10)
        assert sorted(events.seen) == sorted(cluster.changes)
        assert len([r for r in apiserver.requests if r.path == "/api/v1/pods"]) == 1
        assert cache.resource_version == str(apiserver.resource_version)


async def test_every_change_exactly_once_across_dropped_watches_500s_and_429s(
    apiserver: ApiServer, informer: tuple[Informer[PodWire, PodRecord], Events]
) -> None:
    cache, events = informer
    cluster = Cluster(apiserver)
    for index in range(6):
        cluster.create(f"p{index}")
    async with running(cache):
        baseline = len(cluster.changes)
        rng = random.Random(5)
        faults = [
            lambda: None,  # a dropped watch only
            lambda: apiserver.faults.fail(status=500, times=2, method="GET", path=r"/api/v1/pods$"),
            lambda: apiserver.faults.fail(
                status=429, times=1, method="GET", path=r"/api/v1/pods$", retry_after_seconds=3
            ),
        ]
        for round_ in range(12):
            # A fault, then the watch is dropped so that the next request meets it;
            # changes go on meanwhile.
            failure = faults[round_ % len(faults)]()
            apiserver.faults.close_watches()
            for step in range(5):
                name = f"p{rng.randrange(12)}"
                existing = {key.split("/")[1] for key in cluster.current()}
                if name not in existing:
                    cluster.create(name)
                elif step % 3:
                    cluster.relabel(name, app="web", round=str(round_), step=str(step))
                else:
                    cluster.delete(name)
                await asyncio.sleep(rng.uniform(0.0, 2.0))
            await eventually(
                lambda failure=failure: (
                    (failure is None or failure.remaining == 0) and apiserver.open_watches == 1
                ),
                within=150,  # failures less than 2 minutes apart: the backoff reaches its cap
            )
        await eventually(lambda: store_versions(cache) == cluster.current(), within=10)
        assert events.seen[baseline:] == cluster.changes[baseline:], "each change once, in order"
        assert cache.reflector.lists == 1, "no re-list was needed"
        assert cache.reflector.watches > 12


async def test_429_waits_for_retry_after(
    apiserver: ApiServer, informer: tuple[Informer[PodWire, PodRecord], Events]
) -> None:
    cache, events = informer
    async with running(cache):
        await settled(apiserver)
        loop = asyncio.get_running_loop()
        apiserver.faults.fail(
            status=429, times=1, method="GET", path=r"/api/v1/pods$", retry_after_seconds=7
        )
        apiserver.faults.close_watches()
        start = loop.time()
        Cluster(apiserver).create("late")
        await eventually(lambda: len(events.seen) == 1, within=60)
        waited = events.times[0] - start
        assert 7.0 <= waited <= 7.0 + 1.6 + 0.1, (
            waited
        )  # Retry-After, or the first backoff if longer
        assert "429" in cache.reflector.last_error


async def test_500s_back_off_exponentially(
    apiserver: ApiServer, informer: tuple[Informer[PodWire, PodRecord], Events]
) -> None:
    cache, events = informer
    async with running(cache):
        await settled(apiserver)
        loop = asyncio.get_running_loop()
        failure = apiserver.faults.fail(status=500, times=3, method="GET", path=r"/api/v1/pods$")
        apiserver.faults.close_watches()
        start = loop.time()
        Cluster(apiserver).create("late")
        await eventually(lambda: len(events.seen) == 1, within=60)
        assert failure.hits == 3
        # Three backoffs: [0.8, 1.6) + [1.6, 3.2) + [3.2, 6.4) seconds.
        assert 5.6 <= events.times[0] - start <= 11.2 + 0.1


async def test_compaction_forces_a_relist_that_deletes_what_vanished(
    apiserver: ApiServer, informer: tuple[Informer[PodWire, PodRecord], Events]
) -> None:
    cache, events = informer
    cluster = Cluster(apiserver)
    for index in range(8):
        cluster.create(f"p{index}")
    async with running(cache):
        await asyncio.sleep(1)
        seen_before = len(events.seen)
        # While the watch is down (no await between these): changes, then compaction.
        apiserver.faults.close_watches()
        cluster.delete("p1")
        cluster.delete("p2")
        cluster.relabel("p3", app="api")
        cluster.relabel("p3", app="web", twice="yes")
        cluster.create("p9")
        apiserver.faults.compact()
        await eventually(lambda: store_versions(cache) == cluster.current(), within=60)
        assert cache.reflector.lists == 2
        assert sorted(events.seen[seen_before:]) == sorted(
            [
                ("delete", "default/p1", cluster.changes[8][2]),
                ("delete", "default/p2", cluster.changes[9][2]),
                ("update", "default/p3", cluster.changes[11][2]),  # both relabels, as one
                ("add", "default/p9", cluster.changes[12][2]),
            ]
        )
        # And the watch goes on from the re-list.
        cluster.create("p10")
        await eventually(lambda: "default/p10" in cache.store, within=10)


async def test_bookmarks_carry_the_resource_version_past_compaction(
    apiserver: ApiServer, informer: tuple[Informer[PodWire, PodRecord], Events]
) -> None:
    cache, _ = informer
    Cluster(apiserver).create("p0")
    async with running(cache):
        pods_rv = cache.resource_version
        for index in range(5):  # other resources move the server's resourceVersion on
            apiserver.objects.create("configmaps", {"metadata": {"name": f"cm{index}"}})
        await asyncio.sleep(31)  # one bookmark interval
        assert int(cache.resource_version) == apiserver.resource_version > int(pods_rv)
        apiserver.faults.compact()
        apiserver.faults.close_watches()
        Cluster(apiserver).create("p1")
        await eventually(lambda: "default/p1" in cache.store, within=10)
        assert cache.reflector.lists == 1, "the bookmark's resourceVersion was still valid"


async def test_namespaced_and_selected_informer(apiserver: ApiServer, kube: KubeClient) -> None:
    apiserver.objects.create("namespaces", {"metadata": {"name": "shop"}})
    cluster = Cluster(apiserver)
    cluster.create("web-1", namespace="shop", app="web")
    cluster.create("api-1", namespace="shop", app="api")
    cluster.create("web-2", namespace="default", app="web")
    cache = Informer(client=kube, resource=PODS, namespace="shop", label_selector="app=web")
    async with running(cache):
        assert sorted(cache.store) == ["shop/web-1"]
        cluster.relabel("api-1", namespace="shop", app="web")
        await eventually(lambda: "shop/api-1" in cache.store, within=10)
        assert cache.state()["namespace"] == "shop"


async def test_wait_for_cache_sync_then_freeze(apiserver: ApiServer, kube: KubeClient) -> None:
    apiserver.objects.create(
        "nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    )
    Cluster(apiserver).create("p0")
    pods = Informer(client=kube, resource=PODS)
    nodes = Informer(client=kube, resource=NODES)
    try:
        async with running(pods, nodes):
            await wait_for_cache_sync([pods, nodes])
            assert gc.get_freeze_count() > 0
            assert sorted(nodes.store) == ["n1"] and sorted(pods.store) == ["default/p0"]
    finally:
        gc.unfreeze()


async def test_an_optional_resource_the_server_does_not_serve_syncs_empty_until_it_does(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """A CRD that is not installed answers 404: an optional informer (VPAs, HPAs) must
    not hold the controller's start-up, and must find the resource once it is installed."""
    Cluster(apiserver).create("p0")
    apiserver.faults.fail(status=404, times=1, method="GET", path=r"^/api/v1/pods$")
    cache: Informer[PodWire, PodRecord] = Informer(
        client=kube,
        resource=PODS,
        settings=WatchSettings(unserved_recheck_seconds=300),
        rng=random.Random(3),
        optional=True,
    )
    task = asyncio.create_task(cache.run())
    try:
        await asyncio.wait_for(cache.wait_synced(), timeout=5)
        assert (cache.size, cache.served) == (0, False)
        assert cache.state()["served"] is False
        await asyncio.sleep(299)
        assert not cache.served  # looked for again only after the recheck interval
        await eventually(lambda: cache.served and cache.size == 1, within=5)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_a_required_resource_the_server_does_not_serve_never_syncs(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    apiserver.faults.fail(status=404, times=1000, method="GET", path=r"^/api/v1/pods$")
    cache: Informer[PodWire, PodRecord] = Informer(client=kube, resource=PODS, rng=random.Random(3))
    task = asyncio.create_task(cache.run())
    try:
        await asyncio.sleep(120)
        assert not cache.has_synced
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
