"""Fixtures for the server tests: a client of the in-repo API server each module starts
(its own `apiserver` fixture: each module seeds it with what its tests need)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry

from hvpa.kube.client import KubeClient, client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.sim.apiserver import ApiServer


@pytest.fixture
async def client(apiserver: ApiServer) -> AsyncIterator[KubeClient]:
    kube = await client_from_kubeconfig(
        metrics=KubeMetrics(CollectorRegistry()), path=str(apiserver.kubeconfig_path)
    )
    async with kube:
        yield kube
