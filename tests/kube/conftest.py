"""Fixtures shared by the kube tests: a private metrics registry per test."""

import pytest
from prometheus_client import CollectorRegistry

from hvpa.kube.metrics import KubeMetrics


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def metrics(registry: CollectorRegistry) -> KubeMetrics:
    return KubeMetrics(registry)
