"""Fixtures for the controller unit tests that need a real API server: the in-repo one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry

from hvpa.kube.client import KubeClient, client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.sim.apiserver import ApiServer


@pytest.fixture
async def apiserver() -> AsyncIterator[ApiServer]:
    async with ApiServer(seed=1) as server:
        yield server


@pytest.fixture
async def kube(apiserver: ApiServer) -> AsyncIterator[KubeClient]:
    client = await client_from_kubeconfig(
        metrics=KubeMetrics(CollectorRegistry()), path=str(apiserver.kubeconfig_path)
    )
    async with client:
        yield client
