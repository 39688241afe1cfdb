"""Fixtures shared by the kube tests: a private metrics registry per test, the in-repo
API server and a client for it."""

from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry

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
def kube_metrics(metrics: KubeMetrics) -> KubeMetrics:
    """The root `kube` fixture's client reports into this directory's `metrics`."""
    return metrics
