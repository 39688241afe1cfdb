"""Every injected fault as a client meets it: failures with Status bodies and Retry-After,
latency, conflicts, dropped watches and compaction."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from apiserver_http import Http
from apiserver_objects import deployment

from hvpa.sim.apiserver import ApiServer

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (500, "InternalError"),
        (429, "TooManyRequests"),
        (503, "ServiceUnavailable"),
        (504, "Timeout"),
    ],
)
async def test_next_requests_fail(http: Http, server: ApiServer, status: int, reason: str) -> None:
    failure = server.faults.fail(
        status=status, times=2, method="GET", path=r"/deployments$", retry_after_seconds=3
    )
    for _ in range(2):
        reply = await http.get(DEPLOYMENTS)
        assert reply.status == status
        assert reply.body["reason"] == reason
        assert reply.body["code"] == status
        if status == 429:
            assert reply.headers["Retry-After"] == "3"
            assert reply.body["details"] == {"retryAfterSeconds": 3}
    assert (await http.get(DEPLOYMENTS)).status == 200
    assert (await http.post(DEPLOYMENTS, deployment())).status == 201  # other methods untouched
    assert failure.hits == 2
    assert [r.status for r in server.requests if r.path == DEPLOYMENTS][:2] == [status, status]


async def test_latency(http: Http, server: ApiServer) -> None:
    delay = server.faults.delay(0.05, path="/deployments")
    loop = asyncio.get_running_loop()
    started = loop.time()
    await http.get(DEPLOYMENTS)
    assert loop.time() - started >= 0.05
    assert delay.hits == 1
    delay.remove()
    await http.get(DEPLOYMENTS)
    assert delay.hits == 1


async def test_conflicts_on_the_next_updates(http: Http, server: ApiServer) -> None:
    await http.post(DEPLOYMENTS, deployment())
    server.faults.conflict("deployments", "web", times=2)
    first = await http.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 2}})
    second = await http.patch(f"{DEPLOYMENTS}/web/scale", {"spec": {"replicas": 2}})
    assert (first.status, second.status) == (409, 409)
    assert first.body["reason"] == "Conflict"
    assert (await http.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 2}})).status == 200


async def test_close_watches_ends_every_stream(server: ApiServer, watch: Any) -> None:
    first = await watch(DEPLOYMENTS, resourceVersion="1")
    second = await watch("/api/v1/pods")
    assert server.open_watches == 2
    assert server.faults.close_watches() == 2
    assert await first.rest() == []
    assert await second.rest() == []


async def test_compaction_expires_older_watches(http: Http, server: ApiServer, watch: Any) -> None:
    rv = (await http.post(DEPLOYMENTS, deployment())).body["metadata"]["resourceVersion"]
    await http.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 3}})
    live = await watch(DEPLOYMENTS, resourceVersion=rv)
    assert (await live.next())["type"] == "MODIFIED"
    assert server.faults.compact() == server.resource_version
    expired = await watch(DEPLOYMENTS, resourceVersion=rv)
    assert (await expired.next())["object"]["code"] == 410
    await http.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 4}})
    assert (await live.next())["type"] == "MODIFIED"  # established watches are not affected
