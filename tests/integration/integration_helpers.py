"""Helpers for the integration tests (importable: conftest is not)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hvpa_objects import hvpa_body, recommendation_status
from prometheus_client import CollectorRegistry

from hvpa.controller.manager import Manager
from hvpa.kube.client import KubeClient
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
