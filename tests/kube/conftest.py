"""Fixtures shared by the kube tests: a private metrics registry per test, the in-repo
API server and a client for it."""

from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry

from hvpa.kube.client import KubeClient, client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.sim.apiserver import ApiServer


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def metrics(registry: CollectorRegistry) -> KubeMetrics:
    return KubeMetrics(registry)


@pytest.fixture
async def apiserver() -> AsyncIterator[ApiServer]:
    """The in-repo API server, with a short bookmark interval so bookmarks show in tests."""
    async with ApiServer(seed=1, bookmark_interval_seconds=30.0) as server:
        yield server


@pytest.fixture
async def kube(apiserver: ApiServer, metrics: KubeMetrics) -> AsyncIterator[KubeClient]:
    """A client built from the kubeconfig the server writes, as `hvpa run` would build it."""
    client = await client_from_kubeconfig(metrics=metrics, path=str(apiserver.kubeconfig_path))
    async with client:
        yield client
