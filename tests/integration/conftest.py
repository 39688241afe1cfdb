"""Fixtures for the integration tests: the in-repo API server on a virtual clock, a minimal
kubelet/Deployment controller, and the real controller started in-process over HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from integration_cluster import MiniCluster
from integration_helpers import Running, eventually
from prometheus_client import CollectorRegistry

from hvpa.aio import Tasks
from hvpa.controller.manager import Manager
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.client import client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.settings import LeaderElectionSettings
from hvpa.settings import ControllerSettings
from hvpa.sim.apiserver import ApiServer

EPOCH = 1_750_000_000.0


@pytest.fixture
def clock() -> Callable[[], float]:
    """POSIX seconds on the running loop's (virtual) clock, shared by server and controller."""
    return lambda: EPOCH + asyncio.get_running_loop().time()


@pytest.fixture
async def apiserver(clock: Callable[[], float]) -> AsyncIterator[ApiServer]:
    async with ApiServer(seed=1, clock=clock, bookmark_interval_seconds=30.0) as server:
        yield server


@pytest.fixture
async def cluster(apiserver: ApiServer, clock: Callable[[], float]) -> AsyncIterator[MiniCluster]:
    async with Tasks(name="mini-cluster") as tasks:
        yield MiniCluster(apiserver, clock, tasks)


StartController = Callable[..., Awaitable[Running]]


@pytest.fixture
async def start_controller(
    apiserver: ApiServer, clock: Callable[[], float]
) -> AsyncIterator[StartController]:
    """Start a controller (a Manager running in a task); each is stopped at the end of the test."""
    started: list[Running] = []

    async def start(
        *,
        settings: ControllerSettings | None = None,
        engine: EngineSettings | None = None,
        leader_election: LeaderElectionSettings | None = None,
        identity: str = "controller-a",
        wait: bool = True,
    ) -> Running:
        registry = CollectorRegistry()
        kube_metrics = KubeMetrics(registry)
        client = await client_from_kubeconfig(
            metrics=kube_metrics, path=str(apiserver.kubeconfig_path)
        )
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
        running = Running(
            manager, asyncio.create_task(manager.run(), name=identity), registry, client
        )
        started.append(running)
        if wait:
            await eventually(lambda: manager.synced and manager.ready(), within=30)
        return running

    yield start
    for running in started:
        running.manager.stop()
        # A test may have cancelled it (a killed instance) or it may have lost its lease.
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await running.task
        await running.client.close()
