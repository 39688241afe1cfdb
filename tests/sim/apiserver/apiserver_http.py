"""A raw HTTP client and a watch-stream reader for the API server tests.

Kept out of conftest.py because test modules import them by name, and several
test directories have a conftest module.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

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
