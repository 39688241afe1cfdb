"""Helpers for the integration tests (importable: conftest is not)."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hvpa_objects import hvpa_body, recommendation_status
from integration_cluster import MiniCluster
from prometheus_client import CollectorRegistry

from hvpa.aio import Tasks
from hvpa.controller.manager import Manager
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.client import KubeClient, client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.settings import LeaderElectionSettings
from hvpa.settings import ControllerSettings
from hvpa.sim.apiserver import ApiServer, RequestRecord

# Virtual time in steps of 1/1024 s: every loop time is then a binary fraction, exactly
# representable, so `loop.time() + 30` lands exactly on a timer set for it. With
# looptime's default 1e-6 s steps, a timer at `t + 30` can fire at a loop time a
# hair below it, and a watch that re-checks `now >= t + 30` re-arms the same timer
# forever (the in-repo API server's watch loop does; see the report to its owner).
VIRTUAL_TIME = pytest.mark.looptime(resolution=2**-10)


@dataclass
class Running:
    manager: Manager
    task: asyncio.Task[None]
    registry: CollectorRegistry
    client: KubeClient

    def sample(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        value: float | None = self.registry.get_sample_value(name, labels or {})
        return value


# The fixtures' pieces (conftest.py), for a test that needs more than one cluster in a test:
# each piece is what the fixture of that name gives.


@contextlib.asynccontextmanager
async def api_server(clock: Callable[[], float]) -> AsyncIterator[ApiServer]:
    """The in-repo API server on `clock`, with a short bookmark interval."""
    async with ApiServer(seed=1, clock=clock, bookmark_interval_seconds=30.0) as server:
        yield server


@contextlib.asynccontextmanager
async def mini_cluster(server: ApiServer, clock: Callable[[], float]) -> AsyncIterator[MiniCluster]:
    """The workload stand-in on `server`; its tasks end with the block."""
    async with Tasks(name="mini-cluster") as tasks:
        yield MiniCluster(server, clock, tasks)


async def start_manager(
    server: ApiServer,
    clock: Callable[[], float],
    *,
    settings: ControllerSettings | None = None,
    engine: EngineSettings | None = None,
    leader_election: LeaderElectionSettings | None = None,
    identity: str = "controller-a",
    wait: bool = True,
) -> Running:
    """A controller (a Manager in a task) against `server` over HTTP; `wait`: until synced
    and ready. stop_manager ends it."""
    registry = CollectorRegistry()
    kube_metrics = KubeMetrics(registry)
    client = await client_from_kubeconfig(metrics=kube_metrics, path=str(server.kubeconfig_path))
    manager = Manager(
        client=client,
        kube_metrics=kube_metrics,
        settings=settings or ControllerSettings(),
        engine=engine,
        leader_election=leader_election,
        identity=identity,
        clock=clock,
        rng=random.Random(identity),
    )
    running = Running(manager, asyncio.create_task(manager.run(), name=identity), registry, client)
    if wait:
        await eventually(lambda: manager.synced and manager.ready(), within=30)
    return running


async def stop_manager(running: Running) -> None:
    """Stop a controller start_manager started, and close its client."""
    running.manager.stop()
    # A test may have cancelled it (a killed instance) or it may have lost its lease.
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await running.task
    await running.client.close()


async def eventually(predicate: Callable[[], bool], *, within: float, step: float = 0.5) -> float:
    """Poll until `predicate()` holds (loop time); returns how long it took."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while not predicate():
        if loop.time() - start > within:
            raise AssertionError(f"not true within {within} s")
        await asyncio.sleep(step)
    return loop.time() - start


def hvpa_manifest(name: str = "web", *, target: str = "web", **options: Any) -> dict[str, Any]:
    """The shared Hvpa body (tests/hvpa_objects.py) in the `default` namespace."""
    return hvpa_body(name, target=target, metadata={"namespace": "default"}, **options)


def events(server: ApiServer, reason: str) -> list[dict[str, Any]]:
    """The Events in `default` with that reason."""
    return [e for e in server.objects.list("events", namespace="default") if e["reason"] == reason]


def recommend(server: ApiServer, *, cpu: str, memory: str) -> None:
    """What a VPA recommender would write into the child VPA's status."""
    server.objects.patch(
        "verticalpodautoscalers",
        "web-vpa",
        recommendation_status("app", cpu=cpu, memory=memory),
        namespace="default",
        subresource="status",
    )


WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")

# A Capacity curve of pods of 1 CPU and 1Gi at any count: 2 such pods carry the 1600m of
# demand that 800m of usage makes at the 50% CPU target (within the 10% tolerance up to
# 880m), so a Deployment of 2 x 1 CPU under that load keeps its count and its pods.
FLAT_CAPACITY_CURVE = [
    {"replicas": 1, "cpu": "1", "memory": "1Gi"},
    {"replicas": 10, "cpu": "1", "memory": "1Gi"},
]


def writes(
    server: ApiServer, *, resource: str, subresource: str = "", succeeded: bool = True
) -> list[RequestRecord]:
    """The write requests to `resource` (and subresource) in the server's request log."""
    return [
        r
        for r in server.requests
        if r.method in WRITE_METHODS
        and r.resource == resource
        and r.subresource == subresource
        and (not succeeded or (r.status is not None and r.status < 300))
    ]
