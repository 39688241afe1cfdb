"""Lists and watches as client-go's reflector relies on them: one monotonic resourceVersion,
consistent pagination at the first page's version, list-then-watch that neither repeats
nor misses a change, 410 Expired after compaction, bookmarks, selector transitions."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
import pytest
from apiserver_http import Http
from apiserver_objects import pod

from hvpa.sim.apiserver import ApiServer

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
ALL_CONFIGMAPS = "/api/v1/configmaps"


def configmap(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}, "data": {"v": "0"}}


def names(body: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in body["items"]]


async def test_resource_version_is_global_and_monotonic(http: Http) -> None:
    versions = []
    for index in range(3):
        versions.append((await http.post(CONFIGMAPS, configmap(f"c{index}"))).body)
        versions.append((await http.post("/api/v1/namespaces/default/pods", pod(f"p{index}"))).body)
    versions.append((await http.patch(f"{CONFIGMAPS}/c0", {"data": {"v": "1"}})).body)
    numbers = [int(obj["metadata"]["resourceVersion"]) for obj in versions]
    assert numbers == sorted(numbers)
    assert len(set(numbers)) == len(numbers)
    listed = (await http.get(CONFIGMAPS)).body
    assert int(listed["metadata"]["resourceVersion"]) >= numbers[-1]
    assert "kind" not in listed["items"][0]  # built-in list items carry no TypeMeta


async def test_pagination_returns_every_item_once(http: Http) -> None:
    for index in range(25):
        await http.post(CONFIGMAPS, configmap(f"c{index:02d}"))
    first = (await http.get(CONFIGMAPS, limit="10")).body
    assert first["metadata"]["remainingItemCount"] == 15
    second = (
        await http.get(CONFIGMAPS, limit="10", **{"continue": first["metadata"]["continue"]})
    ).body
    assert second["metadata"]["remainingItemCount"] == 5
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    third = (
        await http.get(CONFIGMAPS, limit="10", **{"continue": second["metadata"]["continue"]})
    ).body
    assert "continue" not in third["metadata"]
    assert names(first) + names(second) + names(third) == [f"c{i:02d}" for i in range(25)]


async def test_pagination_reads_the_first_pages_snapshot(http: Http) -> None:
    for index in range(6):
        await http.post(CONFIGMAPS, configmap(f"c{index}"))
    first = (await http.get(CONFIGMAPS, limit="3")).body
    await http.delete(f"{CONFIGMAPS}/c4")
    await http.patch(f"{CONFIGMAPS}/c5", {"data": {"v": "changed"}})
    await http.post(CONFIGMAPS, configmap("c3a"))
    rest = (
        await http.get(CONFIGMAPS, limit="10", **{"continue": first["metadata"]["continue"]})
    ).body
    assert names(rest) == ["c3", "c4", "c5"]
    assert rest["items"][2]["data"] == {"v": "0"}
    fresh = (await http.get(CONFIGMAPS)).body
    assert names(fresh) == ["c0", "c1", "c2", "c3", "c3a", "c5"]


async def test_expired_continue_is_410_with_an_inconsistent_token(
    http: Http, server: ApiServer
) -> None:
    for index in range(4):
        await http.post(CONFIGMAPS, configmap(f"c{index}"))
    first = (await http.get(CONFIGMAPS, limit="2")).body
    await http.post(CONFIGMAPS, configmap("c9"))
    server.faults.compact()
    expired = await http.get(CONFIGMAPS, limit="2", **{"continue": first["metadata"]["continue"]})
    assert expired.status == 410
    assert expired.body["reason"] == "Expired"
    assert expired.body["message"].startswith("The provided continue parameter is too old")
    resumed = await http.get(
        CONFIGMAPS, limit="10", **{"continue": expired.body["metadata"]["continue"]}
    )
    assert names(resumed.body) == ["c2", "c3", "c9"]


@pytest.mark.parametrize(
    ("params", "code"),
    [
        pytest.param({"continue": "not-a-token"}, 400, id="garbage-continue"),
        pytest.param({"resourceVersionMatch": "Exact"}, 422, id="match-without-rv"),
        pytest.param({"resourceVersion": "999999"}, 504, id="too-large-rv"),
        pytest.param({"labelSelector": "a in (b"}, 400, id="bad-label-selector"),
        pytest.param({"fieldSelector": "spec.nodeName=x"}, 400, id="unsupported-field"),
    ],
)
async def test_list_parameter_errors(http: Http, params: dict[str, str], code: int) -> None:
    reply = await http.get(CONFIGMAPS, **params)
    assert reply.status == code, reply.body
    assert reply.body["code"] == code


async def test_resource_version_semantics(http: Http) -> None:
    for index in range(3):
        await http.post(CONFIGMAPS, configmap(f"c{index}"))
    at = (await http.get(CONFIGMAPS)).body["metadata"]["resourceVersion"]
    await http.delete(f"{CONFIGMAPS}/c0")
    any_version = (await http.get(CONFIGMAPS, resourceVersion="0", limit="1")).body
    assert names(any_version) == ["c1", "c2"]  # the watch cache ignores limit for rv=0
    exact = (await http.get(CONFIGMAPS, resourceVersion=at, resourceVersionMatch="Exact")).body
    assert names(exact) == ["c0", "c1", "c2"]
    assert exact["metadata"]["resourceVersion"] == at
    not_older = (
        await http.get(CONFIGMAPS, resourceVersion=at, resourceVersionMatch="NotOlderThan")
    ).body
    assert names(not_older) == ["c1", "c2"]
    paged = (
        await http.get(
            CONFIGMAPS, resourceVersion=at, resourceVersionMatch="NotOlderThan", limit="1"
        )
    ).body
    assert names(paged) == ["c1"]
    assert paged["metadata"]["continue"]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param({"labelSelector": "app=web"}, ["a", "b"], id="label-equals"),
        pytest.param({"labelSelector": "app in (web,db),tier!=back"}, ["a", "c"], id="label-set"),
        pytest.param({"labelSelector": "!tier"}, ["a"], id="label-absent"),
        pytest.param({"fieldSelector": "spec.nodeName=n1"}, ["a", "c"], id="node"),
        pytest.param({"fieldSelector": "spec.nodeName="}, ["b"], id="unscheduled"),
        pytest.param(
            {"fieldSelector": "status.phase=Pending,metadata.name!=a"}, ["b", "c"], id="phase"
        ),
        pytest.param(
            {"fieldSelector": "metadata.namespace==default"}, ["a", "b", "c"], id="namespace"
        ),
    ],
)
async def test_selectors(http: Http, selector: dict[str, str], expected: list[str]) -> None:
    await http.post("/api/v1/namespaces/default/pods", pod("a", node="n1", app="web"))
    await http.post("/api/v1/namespaces/default/pods", pod("b", app="web", tier="back"))
    await http.post("/api/v1/namespaces/default/pods", pod("c", node="n1", app="db", tier="front"))
    reply = await http.get("/api/v1/pods", **selector)
    assert names(reply.body) == expected


async def test_a_list_holds_its_namespace_and_no_other(http: Http) -> None:
    """Keys are `namespace/name`: `default`'s range must not reach `default-2` (whose keys
    sort just before its own: '-' comes before '/') nor `a`; the list of all namespaces
    holds all three, in key order as etcd's is."""
    for namespace in ("a", "default-2"):
        await http.post("/api/v1/namespaces", {"metadata": {"name": namespace}})
    for namespace, name in (("a", "x"), ("default", "y"), ("default-2", "z"), ("default", "w")):
        await http.post(f"/api/v1/namespaces/{namespace}/configmaps", configmap(name))
    assert names((await http.get(CONFIGMAPS)).body) == ["w", "y"]
    assert names((await http.get(ALL_CONFIGMAPS)).body) == ["x", "z", "w", "y"]


async def test_watch_after_list_sees_each_change_exactly_once(
    http: Http, server: ApiServer, watch: Any
) -> None:
    """The reflector's contract under concurrent writes: list, then watch from the list's
    version, and the state rebuilt from both equals the server's."""
    objects = server.objects

    async def churn() -> None:
        live: list[str] = []
        for round_ in range(60):
            objects.create("configmaps", configmap(f"c{round_}"))
            live.append(f"c{round_}")
            if round_ % 3 == 0:
                objects.patch("configmaps", live[len(live) // 2], {"data": {"v": str(round_)}})
            if round_ % 5 == 4:
                objects.delete("configmaps", live.pop(len(live) // 3))
            await asyncio.sleep(0)

    writer = asyncio.create_task(churn())
    await asyncio.sleep(0)
    listed = (await http.get(CONFIGMAPS, limit="5")).body
    items = listed["items"]
    token = listed["metadata"].get("continue")
    while token:
        page = (await http.get(CONFIGMAPS, limit="5", **{"continue": token})).body
        items += page["items"]
        token = page["metadata"].get("continue")
    list_rv = int(listed["metadata"]["resourceVersion"])
    state = {item["metadata"]["name"]: item for item in items}
    stream = await watch(CONFIGMAPS, resourceVersion=str(list_rv))
    await writer
    last_rv = list_rv
    while last_rv < server.resource_version:
        event = await stream.next()
        assert event is not None
        rv = int(event["object"]["metadata"]["resourceVersion"])
        assert rv > last_rv, "an event repeated or out of order"
        last_rv = rv
        name = event["object"]["metadata"]["name"]
        if event["type"] == "DELETED":
            assert name in state
            del state[name]
        else:
            assert (event["type"] == "ADDED") is (name not in state)
            state[name] = event["object"]
    final = objects.list("configmaps")
    assert {name: (o["metadata"], o["data"]) for name, o in state.items()} == {
        o["metadata"]["name"]: (o["metadata"], o["data"]) for o in final
    }
    assert list_rv < last_rv, "the list should have raced the writer"


async def test_watch_from_compacted_version_gets_410(
    http: Http, server: ApiServer, watch: Any
) -> None:
    old = (await http.post(CONFIGMAPS, configmap("a"))).body["metadata"]["resourceVersion"]
    await http.post(CONFIGMAPS, configmap("b"))
    server.faults.compact()
    stream = await watch(CONFIGMAPS, resourceVersion=old)
    event = await stream.next()
    assert event is not None and event["type"] == "ERROR"
    status = event["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"].startswith(f"too old resource version: {old} (")
    assert await stream.next() is None


async def test_watch_without_version_starts_with_the_current_state(http: Http, watch: Any) -> None:
    await http.post(CONFIGMAPS, configmap("a"))
    await http.post(CONFIGMAPS, configmap("b"))
    stream = await watch(CONFIGMAPS)
    initial = await stream.take(2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in initial] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
    ]
    assert initial[0]["object"]["kind"] == "ConfigMap"
    deleted = await http.delete(f"{CONFIGMAPS}/a")
    event = await stream.next()
    assert event is not None and event["type"] == "DELETED"
    assert int(event["object"]["metadata"]["resourceVersion"]) > int(
        initial[0]["object"]["metadata"]["resourceVersion"]
    )
    assert deleted.status == 200


async def test_watch_with_selector_turns_transitions_into_added_and_deleted(
    http: Http, watch: Any
) -> None:
    await http.post(CONFIGMAPS, configmap("a", app="db"))
    stream = await watch(CONFIGMAPS, labelSelector="app=web", resourceVersion="1")
    await http.patch(f"{CONFIGMAPS}/a", {"metadata": {"labels": {"app": "web"}}})
    await http.patch(f"{CONFIGMAPS}/a", {"data": {"v": "1"}})
    await http.patch(f"{CONFIGMAPS}/a", {"metadata": {"labels": {"app": "db"}}})
    await http.patch(f"{CONFIGMAPS}/a", {"data": {"v": "2"}})
    await http.delete(f"{CONFIGMAPS}/a")
    await http.post(CONFIGMAPS, configmap("b", app="web"))
    events = await stream.take(4)
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED", "ADDED"]
    assert events[2]["object"]["metadata"]["labels"] == {"app": "db"}


async def test_namespaced_watch_sees_only_its_namespace(http: Http, watch: Any) -> None:
    await http.post("/api/v1/namespaces", {"metadata": {"name": "other"}})
    stream = await watch(CONFIGMAPS, resourceVersion="1")
    await http.post("/api/v1/namespaces/other/configmaps", configmap("x"))
    await http.post(CONFIGMAPS, configmap("y"))
    event = await stream.next()
    assert event is not None and event["object"]["metadata"]["name"] == "y"


@pytest.mark.slow
async def test_bookmarks_periodic_and_at_timeout(http: Http) -> None:
    async with ApiServer(bookmark_interval_seconds=0.2) as server:
        server.objects.create("configmaps", configmap("a"))
        response = await http.session.get(
            server.url + CONFIGMAPS,
            params={
                "watch": "1",
                "resourceVersion": "1",
                "allowWatchBookmarks": "true",
                "timeoutSeconds": "1",
            },
        )
        lines = [line async for line in response.content]
        response.close()
    events = [orjson.loads(line) for line in lines]
    assert events[0]["type"] == "ADDED"
    bookmarks = [e for e in events if e["type"] == "BOOKMARK"]
    assert len(bookmarks) >= 3  # every 0.2 s, and one as the 1 s timeout ends the watch
    assert events[-1]["type"] == "BOOKMARK"
    assert bookmarks[-1]["object"] == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": str(server.resource_version)},
    }


async def test_send_initial_events_ends_with_an_annotated_bookmark(http: Http, watch: Any) -> None:
    await http.post(CONFIGMAPS, configmap("a"))
    stream = await watch(
        CONFIGMAPS,
        sendInitialEvents="true",
        allowWatchBookmarks="true",
        resourceVersionMatch="NotOlderThan",
        resourceVersion="",
    )
    added, bookmark = await stream.take(2)
    assert added["type"] == "ADDED"
    assert bookmark["type"] == "BOOKMARK"
    assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_a_watcher_left_behind_by_history_is_closed(http: Http) -> None:
    async with ApiServer(history_limit=10) as server:
        response = await http.session.get(
            server.url + CONFIGMAPS,
            params={"watch": "1", "resourceVersion": str(server.resource_version)},
        )
        for index in range(40):  # one loop turn: the watcher cannot keep up
            server.objects.create("configmaps", configmap(f"c{index}"))
        remaining = await asyncio.wait_for(response.content.read(), 2)
        response.close()
    assert remaining == b""
