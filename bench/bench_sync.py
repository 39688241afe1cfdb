"""Initial sync: list every pod and node from the in-repo API server, paginated.

Three processes: the API server (bench.cluster, filled with realistic pods
and nodes), and one client at a time, each in a fresh process, measured by
its own CPU time (user + system) from its first request to its last page.

- hvpa: two informers (twice: the watch-list stream the controller uses, and
  paged lists, its fallback for a server without watch-list) (PODS with the controller's pod indexes, NODES) over
  hvpa's KubeClient, started as the controller starts them, until both have
  synced: the reflector's real list path (500 per page, resourceVersion
  unset), msgspec decoding into the wire structs, records into the store.
- reference: kubernetes_asyncio's CoreV1Api.list_pod_for_all_namespaces and
  list_node with the same page size, each page deserialised into V1Pod /
  V1Node models - what a typical Python controller does. The models are
  dropped page by page (kept, 150,000 V1Pods would need many GB), so the
  reference does less work than hvpa, which keeps its store.

Ratio = reference CPU seconds / hvpa CPU seconds.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench.cluster import ClusterSpec, serve
from bench.harness import (
    Child,
    Row,
    Size,
    counter_total,
    cpu_seconds,
    in_child,
    note,
    pick,
    rss_bytes,
)

PAGE_SIZE = 500


async def _hvpa_sync(kubeconfig: str, watch_list: bool) -> dict[str, float]:
    from prometheus_client import CollectorRegistry

    from hvpa.aio import Tasks
    from hvpa.controller.cache import pod_indexers
    from hvpa.kube.client import client_from_kubeconfig
    from hvpa.kube.informer import Informer, wait_for_cache_sync
    from hvpa.kube.metrics import KubeMetrics
    from hvpa.kube.resources import NODES, PODS
    from hvpa.kube.settings import WatchSettings

    settings = WatchSettings(page_size=PAGE_SIZE, watch_list=watch_list)
    registry = CollectorRegistry()
    client = await client_from_kubeconfig(metrics=KubeMetrics(registry), path=kubeconfig)
    async with client, Tasks(name="sync") as tasks:
        pods: Informer[Any, Any] = Informer(
            client=client, resource=PODS, indexers=pod_indexers(), settings=settings
        )
        nodes: Informer[Any, Any] = Informer(client=client, resource=NODES, settings=settings)
        cpu, wall = cpu_seconds(), time.perf_counter()
        for informer in (pods, nodes):
            tasks.start(informer.run(), name=informer.name)
        await wait_for_cache_sync([pods, nodes], freeze=False)
        cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
        objects = pods.size + nodes.size
        requests = _requests_made(registry)
        await tasks.stop()
    return {"cpu": cpu, "wall": wall, "objects": objects, "rss": rss_bytes(), "requests": requests}


def _requests_made(registry: Any) -> float:
    """The client's own count of HTTP requests (rest_client_requests_total, every code)."""
    return counter_total(registry.collect(), "rest_client_requests")


def hvpa_sync(kubeconfig: str, watch_list: bool = True) -> dict[str, float]:
    return asyncio.run(_hvpa_sync(kubeconfig, watch_list))


async def _typed_sync(kubeconfig: str) -> dict[str, float]:
    from kubernetes_asyncio import client, config

    configuration = client.Configuration()
    await config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    async with client.ApiClient(configuration) as api_client:
        core = client.CoreV1Api(api_client)
        cpu, wall = cpu_seconds(), time.perf_counter()
        objects = 0
        for list_call in (core.list_pod_for_all_namespaces, core.list_node):
            token = None
            while True:
                page = await list_call(limit=PAGE_SIZE, _continue=token)
                objects += len(page.items)
                token = page.metadata._continue
                if not token:
                    break
        cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    return {"cpu": cpu, "wall": wall, "objects": objects, "rss": rss_bytes()}


def typed_sync(kubeconfig: str) -> dict[str, float]:
    return asyncio.run(_typed_sync(kubeconfig))


def run(size: Size = "full") -> list[Row]:
    pods, nodes = pick(size, (500, 20), (30_000, 1_000), (150_000, 5_000))
    note(f"  filling the API server with {pods:,} pods and {nodes:,} nodes...")
    with Child(serve, ClusterSpec(pods=pods, nodes=nodes), name="apiserver") as server:
        info = server.recv(timeout=900)
        hvpa = in_child(hvpa_sync, info["kubeconfig"])
        note(f"  hvpa (watch-list): {hvpa['cpu']:.1f} CPU s; hvpa (paged lists)...")
        paged = in_child(hvpa_sync, info["kubeconfig"], False)
        note(f"  hvpa (paged lists): {paged['cpu']:.1f} CPU s; kubernetes_asyncio...")
        typed = in_child(typed_sync, info["kubeconfig"])
        server.ask(("stop",))
    expected = pods + nodes + 1  # and the marker pod
    for result in (hvpa, paged, typed):
        if result["objects"] != expected:
            raise RuntimeError(f"listed {result['objects']} objects of {expected}")
    label = f"{pods // 1000}k pods + {nodes // 1000}k nodes" if pods >= 1000 else f"{pods} pods"
    return [
        Row.compared(
            f"initial sync {label}: client CPU (ref kubernetes_asyncio V1Pod)",
            hvpa["cpu"],
            "CPU s",
            typed["cpu"],
            invert=True,
        ),
        Row.compared(
            f"initial sync {label}: wall clock (ref kubernetes_asyncio V1Pod)",
            hvpa["wall"],
            "s",
            typed["wall"],
            invert=True,
        ),
        Row.compared(
            f"initial sync {label}: client CPU, watch-list (ref: paged lists of {PAGE_SIZE})",
            hvpa["cpu"],
            "CPU s",
            paged["cpu"],
            invert=True,
        ),
        Row.compared(
            f"initial sync {label}: client RSS once synced, watch-list (ref: paged lists of {PAGE_SIZE})",
            hvpa["rss"] / 1e6,
            "MB",
            paged["rss"] / 1e6,
            invert=True,
        ),
        Row.compared(
            f"initial sync {label}: requests to the server, watch-list (ref: paged lists)",
            hvpa["requests"],  # measured: one watch per informer, the initial state included
            "requests",
            paged["requests"],
            invert=True,
        ),
    ]
