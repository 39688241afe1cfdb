"""The in-repo API server in a child process of its own, filled with realistic objects.

    with Child(serve, ClusterSpec(pods=150_000, nodes=5_000), name="apiserver") as server:
        info = server.recv()              # {"kubeconfig": ..., "url": ..., "seconds": ...}
        ...                               # clients in other processes list and watch it
        server.ask(("churn", 1000.0, 5.0))   # commands run in the server's own loop

Loads that measure a client run the server here so the two never share an
event loop (nor, on a 2-core machine, more than one core each). Objects are
written with `server.objects` (direct writes: the same rules, history and
watch events as an HTTP write, without a client's cost in this process).
The server strips managedFields, as it does from every write, so listed pods
are the corpus pods less managedFields (about 5.7 KiB of JSON, not 7.6).

Commands (a tuple; the reply is a dict, or the exception raised):
- ("stop",): reply {} and exit.
- ("churn", events_per_second, seconds): pod status updates (a container's
  restartCount), spread over every pod, at that rate; reply the rate made.
- ("burst", events): that many pod status updates as fast as they can be
  made, then one write to the marker pod; reply the seconds taken.
Benchmarks with more to do (bench_controller) add their own commands via
`extra`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from bench import corpus
from hvpa.sim.apiserver import ApiServer

__all__ = ["MARKER", "ClusterSpec", "Commands", "populate", "serve"]

MARKER = ("default", "bench-marker")

Commands = dict[str, Callable[..., Awaitable[dict[str, Any]]]]


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    pods: int = 0
    nodes: int = 0
    pods_per_workload: int = 50
    deployments: bool = False
    history_limit: int = 200_000


def populate(server: ApiServer, spec: ClusterSpec) -> None:
    objects = server.objects
    for index in range(corpus.NAMESPACES):
        objects.create("namespaces", {"metadata": {"name": corpus.namespace_name(index)}})
    for index in range(spec.nodes):
        objects.create("nodes", corpus.node(index), keep_status=True)
    per = spec.pods_per_workload
    workloads = -(-spec.pods // per)
    if spec.deployments:
        for workload in range(workloads):
            replicas = min(per, spec.pods - workload * per)
            objects.create(
                "deployments.apps",
                corpus.deployment(workload, replicas),
                namespace=corpus.namespace_of(workload),
            )
    for index in range(spec.pods):
        workload, replica = divmod(index, per)
        body = corpus.pod(workload, replica, managed_fields=False)
        metadata = body["metadata"]
        del metadata["resourceVersion"], metadata["uid"], metadata["creationTimestamp"]
        objects.create("pods", body, namespace=metadata["namespace"], keep_status=True)
    namespace, name = MARKER
    objects.create(
        "pods",
        {
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"containers": [{"name": "pause", "image": "pause:3.10"}]},
        },
        namespace=namespace,
        keep_status=True,
    )


class PodChurn:
    """Status updates of the pods, round-robin, each bumping a container's restartCount."""

    def __init__(self, server: ApiServer, spec: ClusterSpec) -> None:
        self._server = server
        self._spec = spec
        self._next = 0
        self._restarts: dict[int, int] = {}
        self.writes = 0

    def one(self) -> None:
        spec = self._spec
        # A stride coprime with the pod count visits every pod, spread over the workloads.
        index = (self._next * 7919) % spec.pods
        self._next += 1
        workload, replica = divmod(index, spec.pods_per_workload)
        count = self._restarts.get(index, 0) + 1
        self._restarts[index] = count
        # The whole list, as a kubelet writes it (a merge patch replaces a list): a status
        # without `state` would tell the controller the containers stopped running, a
        # change it must answer, where a restart count is one it ignores.
        running = {"running": {"startedAt": corpus.START}}
        statuses = [
            {"name": "app", "state": running, "restartCount": count, "ready": True},
            {"name": "proxy", "state": running, "restartCount": 0, "ready": True},
        ]
        self._server.objects.patch(
            "pods",
            corpus.pod_name(workload, replica),
            {"status": {"containerStatuses": statuses}},
            namespace=corpus.namespace_of(workload),
            subresource="status",
            patch_type="merge",
        )
        self.writes += 1

    async def run(self, per_second: float, seconds: float) -> float:
        """Writes at `per_second` (in batches every 10 ms) for `seconds`; the rate made."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        done = 0
        while (elapsed := loop.time() - started) < seconds:
            due = int(elapsed * per_second)
            while done < due:
                self.one()
                done += 1
            await asyncio.sleep(0.01)
        return done / (loop.time() - started)


def mark(server: ApiServer, value: str) -> None:
    namespace, name = MARKER
    server.objects.patch(
        "pods", name, {"metadata": {"labels": {"bench": value}}}, namespace=namespace
    )


def serve(
    conn: Connection, spec: ClusterSpec, extra: Callable[..., Commands] | None = None
) -> None:
    """The child process: fill a server, report where it is, then obey commands until EOF."""
    try:
        asyncio.run(_serve(conn, spec, extra))
    except Exception as error:
        with contextlib.suppress(Exception):
            conn.send(error)
        raise


async def _serve(
    conn: Connection, spec: ClusterSpec, extra: Callable[..., Commands] | None
) -> None:
    started = time.perf_counter()
    async with ApiServer(seed=1, history_limit=spec.history_limit) as server:
        populate(server, spec)
        churn = PodChurn(server, spec)
        commands: Commands = extra(server, spec, churn) if extra is not None else {}
        conn.send(
            {
                "kubeconfig": str(server.kubeconfig_path),
                "url": server.url,
                "seconds": time.perf_counter() - started,
            }
        )
        while True:
            try:
                message = await asyncio.to_thread(conn.recv)
            except EOFError:
                return
            name, *args = message
            try:
                if name == "stop":
                    conn.send({})
                    return
                if name == "churn":
                    conn.send({"rate": await churn.run(*args)})
                elif name == "burst":
                    began = time.perf_counter()
                    for _ in range(args[0]):
                        churn.one()
                    mark(server, str(churn.writes))
                    conn.send({"seconds": time.perf_counter() - began})
                elif name in commands:
                    conn.send(await commands[name](*args))
                else:
                    raise ValueError(f"unknown command {name!r}")
            except Exception as error:
                conn.send(error)
