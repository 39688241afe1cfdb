"""The reflector and informer against a scripted server, for what a faithful API
server never sends: objects that do not decode or convert (skipped, logged, the
stream goes on; a converter's bug is raised, not skipped), unknown event types,
silence (the inactivity timeout), a list that hangs or fails (one request, then the
reflector's own backoff), pages and events past their bounds, and the exact requests
made (pagination, resourceVersions, bookmarks, timeouts).

The informer's diffing on re-list is tested here too, through `replace`.
"""

import asyncio
import dataclasses
import random
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from hvpa.kube.client import KubeClient
from hvpa.kube.informer import EventHandler, Informer
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.resources import PODS, Resource
from hvpa.kube.settings import WatchSettings
from hvpa.records import PodRecord, PodWire, pod_from_wire

pytestmark = pytest.mark.looptime


def pod(name: str, rv: int, cpu: str = "100m", **labels: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "resourceVersion": str(rv),
            "labels": labels or {"app": "web"},
        },
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
        "status": {"phase": "Running"},
    }


def pod_list(rv: int, items: list[Any], token: str = "") -> web.Response:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if token:
        meta["continue"] = token
    body = {"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items}
    return web.Response(body=orjson.dumps(body), content_type="application/json")


def event(kind: str, obj: Any) -> bytes:
    return orjson.dumps({"type": kind, "object": obj}) + b"\n"


def expired() -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "too old resource version: 1 (5)",
        "reason": "Expired",
        "code": 410,
    }


# The list path (1. in hvpa/kube/reflector.py); the watch-list has tests of its own below.
LISTS = WatchSettings(watch_list=False)


class Api:
    """Answers list requests from `lists` and watch requests from `watches` (lines, then close)."""

    def __init__(self) -> None:
        self.list_times: list[float] = []
        self.lists: list[web.Response | None] = []  # None: never answer
        # lines, then silence before closing; or an answer to the watch request itself
        self.watches: list[tuple[list[bytes], float] | web.Response] = []
        self.requests: list[dict[str, str]] = []
        self.exhausted = asyncio.Event()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append(dict(request.query))
        if request.query.get("watch") != "true":
            self.list_times.append(asyncio.get_running_loop().time())
            answer = self.lists.pop(0)
            if answer is None:
                await asyncio.sleep(3600)
                raise AssertionError("a hung list was waited for an hour")
            return answer
        if not self.watches:
            self.exhausted.set()
            await asyncio.sleep(3600)
        answer = self.watches.pop(0)
        if isinstance(answer, web.Response):
            return answer
        lines, silence = answer
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        for line in lines:
            await response.write(line)
        await asyncio.sleep(silence)
        await response.write_eof()
        return response


class Config:
    def __init__(self, host: str) -> None:
        self.host = host
        self.username = None
        self.tls_server_name = None

    async def get_api_key_with_prefix(self, identifier: str) -> str | None:
        return None


@pytest.fixture
async def api() -> AsyncIterator[tuple[Api, KubeClient, KubeMetrics]]:
    from prometheus_client import CollectorRegistry

    state = Api()
    app = web.Application()

    async def handle(request: web.Request) -> web.StreamResponse:
        # Looked up per request, so a test may put its own handler in front.
        return await state.handle(request)

    app.router.add_get("/api/v1/pods", handle)
    server = TestServer(app)
    await server.start_server()
    metrics = KubeMetrics(CollectorRegistry())
    client = KubeClient(configuration=Config(str(server.make_url("")).rstrip("/")), metrics=metrics)
    try:
        yield state, client, metrics
    finally:
        await client.close()
        await server.close()


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def handler(self) -> EventHandler[PodRecord]:
        return EventHandler(
            on_add=lambda new: self.events.append(("add", new.name, new.resource_version)),
            on_update=lambda old, new: self.events.append(
                ("update", new.name, f"{old.resource_version}->{new.resource_version}")
            ),
            on_delete=lambda old: self.events.append(("delete", old.name, old.resource_version)),
        )


async def run_until_exhausted(
    state: Api, informer: Informer[Any, PodRecord], settle: float = 0.0
) -> None:
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(state.exhausted.wait(), timeout=3000)
        await asyncio.sleep(settle)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def test_list_pages_watch_skips_bad_objects_and_relists_on_expiry(
    api: tuple[Api, KubeClient, KubeMetrics], caplog: pytest.LogCaptureFixture
) -> None:
    state, client, _ = api
    bad_shape = pod("bad-shape", 3)
    bad_shape["spec"]["containers"] = "not a list"
    # Fits the wire struct but does not convert (a RecordError); an unreadable quantity
    # would not do: the record keeps it, named, for the reconcile to report.
    bad_time = pod("bad-time", 4)
    bad_time["status"]["startTime"] = "yesterday"
    state.lists = [
        pod_list(10, [pod("a", 1), bad_shape], token="page2"),
        pod_list(10, [pod("b", 2), bad_time]),
        # the re-list after 410: "a" was deleted and "c" added while we were not watching
        pod_list(20, [pod("b", 12), pod("c", 15)]),
    ]
    state.watches = [
        (
            [
                event("ADDED", pod("c", 11)),
                event("MODIFIED", {**pod("a", 12), "spec": {"containers": 7}}),
                event("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": "13"}}),
                event("MODIFIED", pod("b", 12)),
                event("DELETED", pod("c", 14)),
            ],
            0.0,
        ),
        ([event("ADDED", pod("c", 15)), event("ERROR", expired())], 0.0),
    ]
    informer = Informer(
        client=client,
        resource=PODS,
        settings=WatchSettings(watch_list=False, page_size=2),
        rng=random.Random(1),
    )
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    await run_until_exhausted(state, informer)

    assert recorder.events == [
        ("add", "a", "1"),
        ("add", "b", "2"),
        ("add", "c", "11"),
        ("update", "b", "2->12"),
        ("delete", "c", "11"),
        ("add", "c", "15"),
        # the re-list: b and c unchanged (no events), a vanished
        ("delete", "a", "1"),
    ]
    assert sorted(informer.store) == ["ns/b", "ns/c"]
    assert informer.reflector.skipped == 3
    assert informer.resource_version == "20"
    assert informer.reflector.lists == 2

    lists = [q for q in state.requests if "watch" not in q]
    watches = [q for q in state.requests if "watch" in q]
    assert [(q.get("limit"), q.get("continue")) for q in lists] == [
        ("2", None),
        ("2", "page2"),
        ("2", None),
    ]
    assert [q["resourceVersion"] for q in watches] == ["10", "14", "20"]
    for query in watches:
        assert query["allowWatchBookmarks"] == "true"
        assert 300 <= int(query["timeoutSeconds"]) < 600
    skipped = [r for r in caplog.records if "skipped" in r.getMessage()]
    assert {r.__dict__["fields"]["key"] for r in skipped} == {"ns/bad-shape", "ns/bad-time", "ns/a"}


async def test_an_expired_continue_token_restarts_the_list(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    state, client, _ = api
    gone = web.Response(status=410, body=orjson.dumps(expired()), content_type="application/json")
    gone_again = web.Response(
        status=410, body=orjson.dumps(expired()), content_type="application/json"
    )
    state.lists = [
        pod_list(10, [pod("a", 1)], token="t1"),
        gone,
        pod_list(30, [pod("a", 1)], token="t2"),
        gone_again,
        pod_list(40, [pod("a", 1), pod("b", 35)]),  # unpaginated, as client-go's pager falls back
    ]
    informer = Informer(
        client=client, resource=PODS, settings=WatchSettings(watch_list=False, page_size=1)
    )
    await run_until_exhausted(state, informer)
    lists = [q for q in state.requests if "watch" not in q]
    assert [(q.get("limit"), q.get("continue")) for q in lists] == [
        ("1", None),
        ("1", "t1"),
        ("1", None),
        ("1", "t2"),
        (None, None),
    ]
    assert sorted(informer.store) == ["ns/a", "ns/b"]
    assert informer.resource_version == "40"


async def test_a_silent_watch_is_abandoned_and_resumed(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    state, client, _ = api
    state.lists = [pod_list(10, [])]
    state.watches = [
        ([event("ADDED", pod("a", 11))], 1000.0),  # then silence, longer than the timeout
        ([event("ADDED", pod("b", 12))], 0.0),
    ]
    informer = Informer(
        client=client,
        resource=PODS,
        settings=WatchSettings(watch_list=False, inactivity_timeout_seconds=60),
    )
    loop = asyncio.get_running_loop()
    start = loop.time()
    await run_until_exhausted(state, informer)
    assert sorted(informer.store) == ["ns/a", "ns/b"]
    watches = [q for q in state.requests if "watch" in q]
    assert [q["resourceVersion"] for q in watches] == ["10", "11", "12"]
    assert loop.time() - start == pytest.approx(60.0, abs=0.1)


async def test_a_watch_closing_at_once_backs_off(api: tuple[Api, KubeClient, KubeMetrics]) -> None:
    state, client, _ = api
    state.lists = [pod_list(10, [])]
    state.watches = [([], 0.0), ([], 0.0), ([], 0.0)]
    informer = Informer(client=client, resource=PODS, rng=random.Random(5), settings=LISTS)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await run_until_exhausted(state, informer)
    # Three empty watches, each followed by a backoff: 0.8-1.6, 1.6-3.2, 3.2-6.4 s.
    assert 5.6 <= loop.time() - start <= 11.2


async def test_a_broken_stream_and_an_unknown_event_type_reconnect(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    state, client, _ = api
    state.lists = [pod_list(10, [])]
    state.watches = [
        ([event("ADDED", pod("a", 11)), b"{not json\n"], 0.0),
        ([event("SURPRISE", pod("b", 12))], 0.0),
        ([event("ADDED", pod("b", 12))], 0.0),
    ]
    informer = Informer(client=client, resource=PODS, rng=random.Random(5), settings=LISTS)
    await run_until_exhausted(state, informer)
    assert sorted(informer.store) == ["ns/a", "ns/b"]
    watches = [q for q in state.requests if "watch" in q]
    assert [q["resourceVersion"] for q in watches] == ["10", "11", "11", "12"]
    assert "unknown event type" in informer.reflector.last_error


# ---------------------------------------------------------------------------
# Informer semantics, fed directly


def record(name: str, rv: str, **labels: str) -> PodRecord:
    return PodRecord(
        namespace="ns",
        name=name,
        labels=labels,
        phase="Running",
        deleting=False,
        start_time=None,
        ready=None,
        ready_transition=None,
        containers=(),
        resource_version=rv,
    )


def offline_informer(
    resource: Resource[PodWire, PodRecord] = PODS,
) -> Informer[PodWire, PodRecord]:
    from prometheus_client import CollectorRegistry

    client = KubeClient(
        configuration=Config("http://unused.invalid"), metrics=KubeMetrics(CollectorRegistry())
    )
    return Informer(client=client, resource=resource, settings=LISTS)


@pytest.mark.parametrize("size", [1, 7, 64, 10_000])
def test_events_split_across_chunks_and_blank_lines_between_are_read_once(size: int) -> None:
    """The watch body's lines, whatever its chunks: each event applied once, in order;
    empty and whitespace-only lines (a server's keep-alives) skipped, not counted."""
    informer = offline_informer()
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    body = (
        event("ADDED", pod("a", 2))
        + b"\n \r\n\t\n"
        + event("ADDED", pod("b", 3))
        + event("MODIFIED", pod("a", 4, cpu="200m"))
    )
    buffer = bytearray()
    handled = sum(
        informer.reflector._take_lines(buffer, body[at : at + size])
        for at in range(0, len(body), size)
    )
    assert handled == 3
    assert not buffer
    assert recorder.events == [("add", "a", "2"), ("add", "b", "3"), ("update", "a", "2->4")]


def test_replace_emits_only_differences() -> None:
    informer = offline_informer()
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    assert not informer.has_synced
    informer.replace({"ns/a": record("a", "1"), "ns/b": record("b", "2")})
    assert informer.has_synced
    informer.replace({"ns/a": record("a", "1"), "ns/b": record("b", "3"), "ns/c": record("c", "4")})
    informer.replace({"ns/c": record("c", "4")})
    assert recorder.events == [
        ("add", "a", "1"),
        ("add", "b", "2"),
        ("update", "b", "2->3"),
        ("add", "c", "4"),
        ("delete", "a", "1"),
        ("delete", "b", "3"),
    ]


def test_handlers_run_in_order_and_one_failing_does_not_stop_the_rest(
    caplog: pytest.LogCaptureFixture,
) -> None:
    informer = offline_informer()
    calls: list[str] = []

    def broken(new: PodRecord) -> None:
        calls.append("broken")
        raise ValueError("handler bug")

    informer.add_handler(EventHandler(on_add=broken))
    informer.add_handler(EventHandler(on_add=lambda new: calls.append("second")))
    informer.upsert("ns/a", record("a", "1"))
    informer.upsert("ns/a", record("a", "1"))  # identical: no event
    informer.delete("ns/missing")  # unknown: no event
    assert calls == ["broken", "second"]
    assert any(r.getMessage() == "event handler failed" for r in caplog.records)


def test_a_handler_added_after_sync_gets_the_cache_as_adds() -> None:
    informer = offline_informer()
    informer.replace({"ns/a": record("a", "1")})
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    assert recorder.events == [("add", "a", "1")]
    state = informer.state()
    assert (state["synced"], state["size"], state["resource"]) == (True, 1, "pods")


async def test_a_list_answered_410_is_retried_after_a_backoff(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    state, client, _ = api
    state.lists = [
        web.Response(status=410, body=orjson.dumps(expired()), content_type="application/json"),
        web.Response(status=410, body=orjson.dumps(expired()), content_type="application/json"),
        pod_list(10, [pod("a", 1)]),
    ]
    informer = Informer(client=client, resource=PODS, rng=random.Random(5), settings=LISTS)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await run_until_exhausted(state, informer)
    assert sorted(informer.store) == ["ns/a"]
    assert 0.8 + 1.6 <= loop.time() - start <= 1.6 + 3.2, "two backoffs, no hot loop"


# ---------------------------------------------------------------------------
# The list without the client's retries, and the bounds


def server_error() -> web.Response:
    body = {"kind": "Status", "status": "Failure", "reason": "InternalError", "code": 500}
    return web.Response(status=500, body=orjson.dumps(body), content_type="application/json")


async def test_a_hung_list_is_reported_after_one_request_timeout(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    state, client, _ = api
    state.lists = [None, pod_list(10, [pod("a", 1)])]
    informer = Informer(
        client=client,
        resource=PODS,
        settings=WatchSettings(watch_list=False, request_timeout_seconds=60),
        rng=random.Random(5),
    )
    loop = asyncio.get_running_loop()
    start = loop.time()
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.sleep(61)
        # With the client's retries inside, the list would still be in its second try.
        assert (
            "/api/v1/pods: no answer within the client's timeout" in informer.reflector.last_error
        )
        assert not informer.has_synced
        await asyncio.wait_for(state.exhausted.wait(), timeout=100)
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert sorted(informer.store) == ["ns/a"]
    # The second list came after the reflector's backoff (0.8-1.6 s), not the client's.
    assert 60.8 <= state.list_times[1] - start <= 61.6


async def test_a_failed_list_is_not_retried_by_the_client(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    state, client, _ = api
    state.lists = [server_error(), server_error(), pod_list(10, [pod("a", 1)])]
    informer = Informer(client=client, resource=PODS, rng=random.Random(5), settings=LISTS)
    await run_until_exhausted(state, informer)
    assert sorted(informer.store) == ["ns/a"]
    gaps = [b - a for a, b in zip(state.list_times, state.list_times[1:], strict=False)]
    # The reflector's backoff: 0.8-1.6 s, then 1.6-3.2 s (the client's would start at 0.2 s).
    assert len(gaps) == 2
    assert 0.8 <= gaps[0] <= 1.6 and 1.6 <= gaps[1] <= 3.2


async def test_a_page_past_its_bound_is_asked_for_again_in_halves(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    state, client, _ = api
    big = [pod(f"p{i}", i, app="x" * 400) for i in range(4)]
    one_pod = len(orjson.dumps(big[0]))
    state.lists = [
        pod_list(10, big, token="t"),  # limit 4: too large
        pod_list(10, big[:2], token="t2"),  # limit 2: fits
        pod_list(10, big[2:]),
    ]
    informer = Informer(
        client=client,
        resource=PODS,
        # Room for two pods and the list's envelope, not for four.
        settings=WatchSettings(
            watch_list=False, page_size=4, max_list_page_bytes=2 * one_pod + 200
        ),
    )
    await run_until_exhausted(state, informer)
    assert sorted(informer.store) == [f"ns/p{i}" for i in range(4)]
    lists = [q for q in state.requests if "watch" not in q]
    assert [(q.get("limit"), q.get("continue")) for q in lists] == [
        ("4", None),
        ("2", None),
        ("2", "t2"),
    ]


async def test_a_page_of_one_object_past_the_bound_fails_the_list(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    state, client, _ = api
    state.lists = [pod_list(10, [pod("a", 1, app="x" * 4000)]), pod_list(10, [pod("a", 1)])]
    informer = Informer(
        client=client,
        resource=PODS,
        settings=WatchSettings(watch_list=False, page_size=1, max_list_page_bytes=1000),
        rng=random.Random(5),
    )
    await run_until_exhausted(state, informer)
    assert "the response is larger than 1000 bytes" in informer.reflector.last_error
    assert sorted(informer.store) == ["ns/a"]


class EndlessLine:
    """A watch whose one event never ends: the reader must give up at its bound."""

    def __init__(self) -> None:
        self.sent = 0

    async def respond(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        await response.write(b'{"type": "ADDED", "object": {"metadata": {"name": "')
        while True:
            await response.write(b"x" * 65536)
            self.sent += 65536
            await asyncio.sleep(0.001)


async def test_a_watch_event_past_its_bound_ends_the_watch(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    state, client, _ = api
    endless = EndlessLine()
    state.lists = [pod_list(10, [])]
    answered = state.handle

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.query.get("watch") == "true" and endless.sent == 0:
            state.requests.append(dict(request.query))
            return await endless.respond(request)
        return await answered(request)

    state.handle = handle  # type: ignore[method-assign]
    state.watches = [([event("ADDED", pod("a", 11))], 0.0)]
    informer = Informer(
        client=client,
        resource=PODS,
        settings=WatchSettings(watch_list=False, max_event_bytes=1 << 20),
        rng=random.Random(5),
    )
    await run_until_exhausted(state, informer)
    assert "one event is larger than 1048576 bytes" in informer.reflector.last_error
    assert sorted(informer.store) == ["ns/a"], "the next watch goes on from the same point"
    watches = [q for q in state.requests if "watch" in q]
    assert [q["resourceVersion"] for q in watches] == ["10", "10", "11"]
    # The server writes ahead into socket buffers; it stopped soon after the bound.
    assert endless.sent < 16 << 20


async def test_a_converter_bug_is_raised_not_skipped(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    from dataclasses import replace

    from hvpa.records import PodWire

    def buggy(wire: PodWire) -> PodRecord:
        raise ZeroDivisionError("a bug in the converter")

    state, client, _ = api
    state.lists = [pod_list(10, [pod("a", 1)])]
    informer = Informer(client=client, resource=replace(PODS, convert=buggy), settings=LISTS)
    with pytest.raises(ZeroDivisionError):
        await asyncio.wait_for(informer.run(), timeout=60)
    assert informer.reflector.skipped == 0


async def test_an_object_that_is_not_utf8_is_skipped_and_the_watch_goes_on(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    """msgspec raises UnicodeDecodeError, not a DecodeError, for a string that is not UTF-8
    (hvpa.records.DECODING_ERRORS): one such object, listed or watched, is skipped."""
    state, client, _ = api
    body = pod_list(10, [pod("listed", 2), pod("a", 1)]).body
    assert isinstance(body, bytes)
    # The first pod's phase, the watched one's too: their metadata still reads.
    listed_bad = body.replace(b'"Running"', b'"Runn\xffing"', 1)
    watched_bad = event("ADDED", pod("watched", 11)).replace(b'"Running"', b'"Runn\xffing"', 1)
    state.lists = [web.Response(body=listed_bad, content_type="application/json")]
    state.watches = [([watched_bad, event("ADDED", pod("b", 12))], 0.0)]
    informer = Informer(client=client, resource=PODS, rng=random.Random(1), settings=LISTS)
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    await run_until_exhausted(state, informer)

    assert recorder.events == [("add", "a", "1"), ("add", "b", "12")]
    assert informer.reflector.skipped == 2


# -- the watch-list (client-go's WatchListClient, KEP-3157) -----------------------------------


def initial_end(rv: int, *, zero_value: bool = False) -> bytes:
    """The bookmark that ends the initial events; `zero_value`: with the Pod's zero value
    beside its metadata, as kube-apiserver writes a built-in type's bookmark (its
    `"containers": null` does not fit the pod wire struct)."""
    body: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {
            "resourceVersion": str(rv),
            "annotations": {"k8s.io/initial-events-end": "true"},
        },
    }
    if zero_value:
        body.update(spec={"containers": None}, status={})
    return event("BOOKMARK", body)


async def test_a_watch_list_streams_the_state_then_watches_on(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    """The initial events reach the handlers as one replace, at the bookmark that ends them
    (a pod added then deleted in them is never seen); later events on the same stream are
    the watch's. After a 410 the watch-list is from the last version seen (not older than
    it, as client-go relists), and after a 410 to that, from the most recent one."""
    state, client, _ = api
    state.watches = [
        (
            [
                event("ADDED", pod("a", 1)),
                event("ADDED", pod("gone", 2)),
                event("ADDED", pod("b", 3)),
                event("DELETED", pod("gone", 4)),
                initial_end(10),
                event("MODIFIED", pod("a", 11)),
                event("ERROR", expired()),
            ],
            0.0,
        ),
        ([event("ERROR", expired())], 0.0),  # 11 is gone from the server's cache too
        ([event("ADDED", pod("b", 3)), initial_end(20, zero_value=True)], 0.0),
    ]
    informer = Informer(client=client, resource=PODS, rng=random.Random(1))
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    await run_until_exhausted(state, informer)

    assert recorder.events == [
        ("add", "a", "1"),
        ("add", "b", "3"),
        ("update", "a", "1->11"),
        ("delete", "a", "11"),  # the second watch-list's state has no "a"
    ]
    assert [q for q in state.requests if "watch" not in q] == []  # no list at all
    first, second, third, fourth = state.requests
    for query in (first, second, third):
        assert query["sendInitialEvents"] == "true"
        assert query["resourceVersionMatch"] == "NotOlderThan"
        assert query["allowWatchBookmarks"] == "true"
    assert "resourceVersion" not in first  # the most recent state: a consistent read
    assert second["resourceVersion"] == "11"
    assert "resourceVersion" not in third  # 11 expired: not asked for again
    assert fourth["resourceVersion"] == "20" and "sendInitialEvents" not in fourth
    assert informer.reflector.lists == 2


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(
            lambda: web.Response(
                status=422,
                body=orjson.dumps(
                    {
                        "kind": "Status",
                        "code": 422,
                        "reason": "Invalid",
                        "message": "sendInitialEvents is forbidden",
                    }
                ),
                content_type="application/json",
            ),
            id="refused",
        ),
        pytest.param(
            lambda: (
                [
                    event("ADDED", pod("a", 1)),
                    event("BOOKMARK", {"kind": "Pod", "metadata": {"resourceVersion": "5"}}),
                ],
                0.0,
            ),
            id="ignored",
        ),
    ],
)
async def test_a_server_without_watch_list_is_listed(
    api: tuple[Api, KubeClient, KubeMetrics], answer: Any
) -> None:
    """A server that refuses sendInitialEvents (the WatchList feature off: 422), or ignores it
    (an old one: a bookmark with no initial-events-end), is listed instead, and the watch-list
    is not tried again."""
    state, client, _ = api
    state.watches = [answer(), ([event("MODIFIED", pod("a", 12))], 0.0)]
    state.lists = [pod_list(10, [pod("a", 1), pod("b", 2)])]
    informer = Informer(client=client, resource=PODS, rng=random.Random(1))
    recorder = Recorder()
    informer.add_handler(recorder.handler())
    await run_until_exhausted(state, informer)
    assert recorder.events == [("add", "a", "1"), ("add", "b", "2"), ("update", "a", "1->12")]
    kinds = [
        "watch-list" if "sendInitialEvents" in q else "watch" if "watch" in q else "list"
        for q in state.requests
    ]
    assert kinds == ["watch-list", "list", "watch", "watch"]


# -- renewing a pod's record (hvpa.kube.resources.Renewal) -------------------------------------


def churned(name: str, rv: int, restarts: int, cpu: str = "100m", **labels: str) -> dict[str, Any]:
    """`pod`, with what a kubelet rewrites most often and the record does not keep."""
    body = pod(name, rv, cpu, **labels)
    body["status"]["containerStatuses"] = [
        {"name": "c", "restartCount": restarts, "state": {"running": {}}}
    ]
    return body


def unconvertible(name: str, rv: int, restarts: int, **kwargs: str) -> dict[str, Any]:
    """`churned`, with a start time that fits the wire struct but fails the conversion."""
    body = churned(name, rv, restarts, **kwargs)
    body["status"]["startTime"] = "yesterday"
    return body


class Conversions:
    """PODS' converter, counted."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, wire: PodWire) -> PodRecord:
        self.count += 1
        return pod_from_wire(wire)


def test_an_update_that_changes_nothing_the_record_keeps_renews_the_held_record() -> None:
    """Every step leaves the store and the handlers where converting each object leaves
    them (an informer without the renewal beside it); only the churn is renewed."""
    steps = [
        event("ADDED", churned("a", 1, 0)),
        event("MODIFIED", churned("a", 2, 1)),  # renewed
        event("MODIFIED", churned("a", 3, 2, version="2")),  # a label: converted
        event("MODIFIED", churned("a", 4, 3, version="2")),  # renewed
        event("MODIFIED", churned("a", 5, 3, cpu="200m", version="2")),  # converted
        event("MODIFIED", unconvertible("a", 6, 4, cpu="200m", version="2")),  # skipped
        event("MODIFIED", churned("a", 7, 5, cpu="200m", version="2")),  # renewed
        event("DELETED", churned("a", 8, 5, cpu="200m", version="2")),
        event("ADDED", churned("a", 9, 0, cpu="200m", version="2")),  # converted
        event("MODIFIED", churned("a", 10, 1, cpu="200m", version="2")),  # renewed
    ]
    counted = Conversions()
    renewing = offline_informer(dataclasses.replace(PODS, convert=counted))
    converting = offline_informer(dataclasses.replace(PODS, renewal=None))
    seen, expected = Recorder(), Recorder()
    renewing.add_handler(seen.handler())
    converting.add_handler(expected.handler())
    for line in steps:
        renewing.reflector._take_lines(bytearray(), line)
        converting.reflector._take_lines(bytearray(), line)
        assert dict(renewing.store.items()) == dict(converting.store.items())
        assert seen.events == expected.events
    assert renewing.store.get("ns/a") == pod_from_wire(
        msgspec.json.decode(
            orjson.dumps(churned("a", 10, 1, cpu="200m", version="2")), type=PodWire
        )
    )
    assert counted.count == 5  # 10 events: 4 renewed, 1 deleted, 5 converted (1 failing)
    renewing.reflector._take_lines(bytearray(), event("DELETED", churned("a", 11, 1)))
    assert not renewing.reflector._digests  # a deleted pod's digest is not kept


async def test_a_relist_replaces_the_digests_with_the_records(
    api: tuple[Api, KubeClient, KubeMetrics],
) -> None:
    """A paged list puts records in the store that no digest describes, and a watch-list's
    its own: an object that comes back as it was before the list is converted, not taken
    for the listed record (a held digest of the older object would renew the listed one)."""
    state, client, _ = api
    state.lists = [
        pod_list(10, [churned("a", 1, 0)]),
        pod_list(20, [churned("a", 15, 0, cpu="300m")]),
    ]
    state.watches = [
        ([event("MODIFIED", churned("a", 11, 1)), event("ERROR", expired())], 0.0),
        ([event("MODIFIED", churned("a", 21, 2))], 0.0),
    ]
    listing = Informer(client=client, resource=PODS, settings=LISTS, rng=random.Random(1))
    await run_until_exhausted(state, listing)
    held = listing.store.get("ns/a")
    assert held is not None and held.resource_version == "21"
    assert held.containers[0].requests.cpu == 100

    state.exhausted.clear()
    state.watches = [
        ([event("MODIFIED", churned("a", 11, 1)), initial_end(12)], 0.0),
        ([event("MODIFIED", churned("a", 13, 2)), event("ERROR", expired())], 0.0),
        ([event("ADDED", churned("a", 15, 0, cpu="300m")), initial_end(20)], 0.0),
        ([event("MODIFIED", churned("a", 21, 2))], 0.0),
    ]
    streaming = Informer(client=client, resource=PODS, rng=random.Random(1))
    await run_until_exhausted(state, streaming)
    held = streaming.store.get("ns/a")
    assert held is not None and held.resource_version == "21"
    assert held.containers[0].requests.cpu == 100
