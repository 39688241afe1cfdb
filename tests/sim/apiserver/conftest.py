"""Fixtures for the in-process API server: a running server, a raw HTTP client, a kube client."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson
import pytest
from kubernetes_asyncio import client, config

from hvpa.sim.apiserver import ApiServer

FAKE_NOW = 1_700_000_000.0


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str]


class Http:
    """Raw HTTP against the server: tests of API semantics want the wire, not a client's view."""

    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session = session
        self.base = base

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        data = orjson.dumps(body) if body is not None else None
        all_headers = {"Content-Type": content_type, **(headers or {})}
        async with self.session.request(
            method, self.base + path, data=data, params=params, headers=all_headers
        ) as response:
            raw = await response.read()
            parsed = (
                orjson.loads(raw) if raw and response.content_type == "application/json" else raw
            )
            return Reply(response.status, parsed, dict(response.headers))

    async def get(self, path: str, **params: str) -> Reply:
        return await self.call("GET", path, params=params or None)

    async def post(self, path: str, body: Any) -> Reply:
        return await self.call("POST", path, body)

    async def put(self, path: str, body: Any) -> Reply:
        return await self.call("PUT", path, body)

    async def patch(self, path: str, body: Any, kind: str = "merge") -> Reply:
        content_type = {
            "merge": "application/merge-patch+json",
            "json": "application/json-patch+json",
            "strategic": "application/strategic-merge-patch+json",
        }[kind]
        return await self.call("PATCH", path, body, content_type=content_type)

    async def delete(self, path: str, body: Any = None, **params: str) -> Reply:
        return await self.call("DELETE", path, body, params=params or None)


class WatchStream:
    """An open watch: read events one at a time, each with a short timeout."""

    def __init__(self, response: aiohttp.ClientResponse, seconds_per_event: float = 2.0) -> None:
        self.response = response
        self.seconds_per_event = seconds_per_event

    async def next(self) -> dict[str, Any] | None:
        """The next event, or None when the server ended the stream."""
        line = await asyncio.wait_for(self.response.content.readline(), self.seconds_per_event)
        if not line:
            return None
        event: dict[str, Any] = orjson.loads(line)
        return event

    async def take(self, count: int) -> list[dict[str, Any]]:
        events = []
        for _ in range(count):
            event = await self.next()
            assert event is not None, f"stream ended after {len(events)} of {count} events"
            events.append(event)
        return events

    async def rest(self) -> list[dict[str, Any]]:
        """Every event until the server closes the stream."""
        events = []
        while (event := await self.next()) is not None:
            events.append(event)
        return events


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(seed=7, clock=lambda: FAKE_NOW) as running:
        yield running


@pytest.fixture
async def http(server: ApiServer) -> AsyncIterator[Http]:
    async with aiohttp.ClientSession() as session:
        yield Http(session, server.url)


@pytest.fixture
async def watch(http: Http) -> AsyncIterator[Any]:
    """`await watch(path, **params)` opens a watch stream; all are closed after the test."""
    opened: list[aiohttp.ClientResponse] = []

    async def open_watch(path: str, **params: str) -> WatchStream:
        response = await http.session.get(http.base + path, params={"watch": "true", **params})
        assert response.status == 200, await response.text()
        opened.append(response)
        return WatchStream(response)

    yield open_watch
    for response in opened:
        response.close()


@pytest.fixture
async def kube(server: ApiServer) -> AsyncIterator[client.ApiClient]:
    configuration = client.Configuration()
    await config.load_kube_config(
        config_file=str(server.kubeconfig_path), client_configuration=configuration
    )
    async with client.ApiClient(configuration) as api:
        yield api
