"""Fixtures for the server tests: a client of the in-repo API server each module starts
(its own `apiserver` fixture: each module seeds it with what its tests need)."""

from __future__ import annotations

import pytest

from hvpa.kube.client import KubeClient


@pytest.fixture
def client(kube: KubeClient) -> KubeClient:
    """tests/conftest.py's client, under the name the server tests use."""
    return kube
