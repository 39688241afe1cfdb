"""Fixtures for the integration tests: the in-repo API server on a virtual clock, a minimal
kubelet/Deployment controller, and the real controller started in-process over HTTP."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from integration_cluster import MiniCluster
from integration_helpers import Running, api_server, mini_cluster, start_manager, stop_manager

from hvpa.sim.apiserver import ApiServer

EPOCH = 1_750_000_000.0


@pytest.fixture
def clock() -> Callable[[], float]:
    """POSIX seconds on the running loop's (virtual) clock, shared by server and controller."""
    return lambda: EPOCH + asyncio.get_running_loop().time()


@pytest.fixture
async def apiserver(clock: Callable[[], float]) -> AsyncIterator[ApiServer]:
    async with api_server(clock) as server:
        yield server


@pytest.fixture
async def cluster(apiserver: ApiServer, clock: Callable[[], float]) -> AsyncIterator[MiniCluster]:
    async with mini_cluster(apiserver, clock) as made:
        yield made


StartController = Callable[..., Awaitable[Running]]


@pytest.fixture
async def start_controller(
    apiserver: ApiServer, clock: Callable[[], float]
) -> AsyncIterator[StartController]:
    """Start a controller (a Manager running in a task); each is stopped at the end of the test.

    Takes start_manager's keyword arguments (settings, engine, leader_election, identity,
    wait)."""
    started: list[Running] = []

    async def start(**options: Any) -> Running:
        running = await start_manager(apiserver, clock, **options)
        started.append(running)
        return running

    yield start
    for running in started:
        await stop_manager(running)
