"""The two pod watchers bench_kopf sets side by side, each run in a process of its own.

Both list every pod, then watch; each counts the MODIFIED pod events it has
processed and stops counting when the marker pod carries the label the
burst ends with. Protocol over the pipe: the watcher sends {"rss", "events"}
once synced; on ("go", marker_value) it takes its CPU time and waits for the
marker, then sends {"events", "cpu", "wall", "rss"}; on ("stop",) it exits.

- hvpa: an Informer over PODS with the controller's pod indexes, on hvpa's
  KubeClient: decode, slim record, indexed store, an update handler.
- kopf: a minimal operator - one `on.event` handler that only counts;
  nothing patches anything; standalone (no peering), Kubernetes Events from
  logs off, logging at WARNING. Its login reads the same kubeconfig. kopf
  keeps no cache of the pods this way (hvpa keeps its store), so the
  reference does less. A `kopf.index` (kopf's in-memory cache) made its cost
  grow with the square of the pods: each pod's worker holds a toggle of the
  index's readiness, and every toggle created or turned wakes every waiter
  that then checks every toggle (kopf/_cogs/aiokits/aiotoggles.py): 5,000
  pods took about 2 minutes to list, 20,000 had not in 6.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from multiprocessing.connection import Connection
from typing import Any

import yaml

from bench.cluster import MARKER
from bench.harness import cpu_seconds, rss_bytes

__all__ = ["hvpa_watcher", "kopf_watcher"]


class _Progress:
    """Counts events; `synced` once the initial pods are in, `finished` at the marker."""

    def __init__(self, pods: int) -> None:
        self.pods = pods
        self.seen = 0
        self.events = 0
        self.marker: str | None = None
        self.synced = asyncio.Event()
        self.finished = asyncio.Event()

    def on_pod(self, namespace: str, name: str, labels: Any, modified: bool) -> None:
        if (namespace, name) == MARKER:
            if self.marker is not None and (labels or {}).get("bench") == self.marker:
                self.finished.set()
        elif modified:
            self.events += 1
        else:
            self.seen += 1
            if self.seen >= self.pods:
                self.synced.set()


async def _drive(conn: Connection, progress: _Progress) -> None:
    await progress.synced.wait()
    conn.send({"rss": rss_bytes(), "events": progress.events})
    while True:
        try:
            message = await asyncio.to_thread(conn.recv)
        except EOFError:
            return
        if message[0] != "go":
            return
        progress.events = 0
        progress.marker = message[1]
        progress.finished.clear()
        cpu, wall = cpu_seconds(), time.perf_counter()
        await progress.finished.wait()
        conn.send(
            {
                "events": progress.events,
                "cpu": cpu_seconds() - cpu,
                "wall": time.perf_counter() - wall,
                "rss": rss_bytes(),
            }
        )


def _run(conn: Connection, main: Any) -> None:
    logging.basicConfig(level=logging.WARNING)
    try:
        asyncio.run(main)
    except Exception as error:
        with contextlib.suppress(Exception):
            conn.send(error)
        raise


# -- hvpa ----------------------------------------------------------------------


async def _hvpa(conn: Connection, kubeconfig: str, pods: int) -> None:
    from prometheus_client import CollectorRegistry

    from hvpa.controller.cache import pod_indexers
    from hvpa.kube.client import client_from_kubeconfig
    from hvpa.kube.informer import EventHandler, Informer
    from hvpa.kube.metrics import KubeMetrics
    from hvpa.kube.resources import PODS

    progress = _Progress(pods)
    client = await client_from_kubeconfig(metrics=KubeMetrics(CollectorRegistry()), path=kubeconfig)
    informer: Informer[Any, Any] = Informer(client=client, resource=PODS, indexers=pod_indexers())
    informer.add_handler(
        EventHandler(
            on_add=lambda p: progress.on_pod(p.namespace, p.name, p.labels, False),
            on_update=lambda _, p: progress.on_pod(p.namespace, p.name, p.labels, True),
        )
    )
    async with client:
        task = asyncio.create_task(informer.run())
        try:
            await _drive(conn, progress)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def hvpa_watcher(conn: Connection, kubeconfig: str, pods: int) -> None:
    _run(conn, _hvpa(conn, kubeconfig, pods))


# -- kopf ------------------------------------------------------------------------


async def _kopf(conn: Connection, server: str, token: str, pods: int) -> None:
    import kopf

    progress = _Progress(pods)
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        return kopf.ConnectionInfo(server=server, token=token, scheme="Bearer")

    @kopf.on.startup(registry=registry)
    def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        settings.posting.enabled = False
        settings.watching.server_timeout = 600

    @kopf.on.event("pods", registry=registry)
    def count(event: dict[str, Any], namespace: str, name: str, labels: Any, **_: Any) -> None:
        progress.on_pod(namespace, name, labels, event.get("type") == "MODIFIED")

    stop = asyncio.Event()
    operator = asyncio.create_task(
        kopf.operator(registry=registry, standalone=True, clusterwide=True, stop_flag=stop)
    )
    driver = asyncio.create_task(_drive(conn, progress))
    done, _ = await asyncio.wait({operator, driver}, return_when=asyncio.FIRST_COMPLETED)
    stop.set()
    if operator in done:
        operator.result()
        raise RuntimeError("the kopf operator stopped")
    with contextlib.suppress(Exception):
        await asyncio.wait_for(operator, 30)


def kopf_watcher(conn: Connection, kubeconfig: str, pods: int) -> None:
    with open(kubeconfig, encoding="utf-8") as file:
        config = yaml.safe_load(file)
    server = config["clusters"][0]["cluster"]["server"]
    token = config["users"][0]["user"]["token"]
    _run(conn, _kopf(conn, server, token, pods))
