"""Fixtures for the controller unit tests that need a real API server: the in-repo one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from hvpa.sim.apiserver import ApiServer


@pytest.fixture
async def apiserver() -> AsyncIterator[ApiServer]:
    async with ApiServer(seed=1) as server:
        yield server
