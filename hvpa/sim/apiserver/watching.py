"""Watch streams: the events after a resourceVersion, filtered per watcher, one JSON object a line.

What the real server does and this one does too:
- without a resourceVersion (or with "0"), synthetic ADDED events for the
  current state first, then the changes after it;
- from resourceVersion N, the changes after N; an ERROR event carrying a 410
  Expired Status when N is older than the history kept (HTTP status stays 200);
- with a label or field selector, a change that makes an object match is
  ADDED and one that makes it stop matching is DELETED;
- BOOKMARK events (kind, apiVersion, metadata.resourceVersion and, for a built-in
  type, its zero value as kube-apiserver writes it: BOOKMARK_ZERO_VALUES) every
  `bookmark_interval_seconds` and at the end of timeoutSeconds when asked for;
  with sendInitialEvents, a bookmark annotated k8s.io/initial-events-end;
- a watcher so slow that history moved past it is closed, and the client
  re-watches (the watch cache terminates slow watchers);
- a custom resource's watches end when its CRD is deleted, after the
  deletions of its objects.
Events are serialized once per change and shared by every watcher; a watcher
writes whatever accumulated since it last woke in one chunk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import orjson

from hvpa.sim.apiserver.errors import Expired
from hvpa.sim.apiserver.resources import ResourceType
from hvpa.sim.apiserver.storage import (
    ADDED,
    DELETED,
    MODIFIED,
    Behind,
    Entry,
    Predicate,
    Storage,
    WatchEvent,
)

__all__ = ["Watch", "WatchRequest", "Watches"]

_CHUNK_LINES: Final = 1000
_TIMER_SLACK_SECONDS: Final = 1e-3

Write = Callable[[bytes], Awaitable[None]]
Render = Callable[[str, Entry | None, int], bytes]


@dataclass(frozen=True, slots=True)
class WatchRequest:
    rtype: ResourceType
    namespace: str | None
    predicate: Predicate | None
    resource_version: int | None  # None: start with the current state
    allow_bookmarks: bool
    timeout_seconds: float
    send_initial_events: bool = False
    # Renders each event (type, object, resourceVersion) instead of the stored JSON:
    # a watch asked for as a Table (tables.py). None: the objects as stored.
    render: Render | None = None


class Watch:
    """One open watch stream."""

    def __init__(
        self, storage: Storage, request: WatchRequest, *, bookmark_interval_seconds: float
    ) -> None:
        self._storage = storage
        self._store = storage.store(request.rtype)
        self._request = request
        self._bookmark_interval = bookmark_interval_seconds
        self._closed = False
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        prefix = f"{request.namespace}/" if request.namespace and request.rtype.namespaced else None
        self._prefix = prefix

    @property
    def rtype(self) -> ResourceType:
        """The resource watched."""
        return self._request.rtype

    def close(self) -> None:
        """End the stream at the next opportunity, as when the server drops a watch."""
        self._closed = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def run(self, write: Write) -> None:
        try:
            await self._run(write)
        finally:
            if self._timer is not None:
                self._timer.cancel()

    async def _run(self, write: Write) -> None:
        request, store = self._request, self._store
        loop = asyncio.get_running_loop()
        deadline = loop.time() + request.timeout_seconds
        initial: list[Entry] = []
        start_rv = self._storage.resource_version
        if request.resource_version is None or request.send_initial_events:
            initial = [
                entry
                for entry in store.current(request.namespace)
                if request.predicate is None or request.predicate(entry)
            ]
            seq = store.end_seq
        else:
            start_rv = request.resource_version
            if start_rv < store.compacted_rv:
                expired = Expired(f"too old resource version: {start_rv} ({store.compacted_rv})")
                await write(b'{"type":"ERROR","object":' + orjson.dumps(expired.status()) + b"}\n")
                return
            seq = store.seq_after(start_rv)
        render = request.render
        for offset in range(0, len(initial), _CHUNK_LINES):
            await write(
                b"".join(
                    render(ADDED, entry, entry.rv)
                    if render is not None
                    else b'{"type":"ADDED","object":' + entry.json + b"}\n"
                    for entry in initial[offset : offset + _CHUNK_LINES]
                )
            )
        if request.send_initial_events:
            await write(self._bookmark(start_rv, initial_events_end=True))
        next_bookmark = loop.time() + self._bookmark_interval if request.allow_bookmarks else None
        while not self._closed:
            try:
                events = store.events_from(seq)
            except Behind:
                return
            if events:
                seq += len(events)
                lines = self._lines(events)
                for offset in range(0, len(lines), _CHUNK_LINES):
                    await write(b"".join(lines[offset : offset + _CHUNK_LINES]))
                continue
            if store.closed:  # its CRD is gone: the deletions were the last events
                return
            # A timer may fire a hair before its time (asyncio runs timers due within the
            # clock's resolution, and virtual clocks round); comparing exactly would re-arm
            # the same timer forever and, in virtual time, stop the clock.
            now = loop.time() + _TIMER_SLACK_SECONDS
            if now >= deadline:
                if request.allow_bookmarks:
                    await write(self._bookmark(max(self._storage.resource_version, start_rv)))
                return
            if next_bookmark is not None and now >= next_bookmark:
                await write(self._bookmark(max(self._storage.resource_version, start_rv)))
                next_bookmark = loop.time() + self._bookmark_interval
                continue
            await self._wait(deadline if next_bookmark is None else min(deadline, next_bookmark))

    async def _wait(self, wake_at: float) -> None:
        """Sleep until the next write, `wake_at`, or close().

        One timer per watch, moved only when `wake_at` changes (a bookmark or the end),
        rather than a timeout per wait: waits happen once per write per watcher."""
        loop = asyncio.get_running_loop()
        if self._timer is None or self._timer.when() != wake_at:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = loop.call_at(wake_at, self._wake)
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiter = waiter
        self._store.add_waiter(waiter)
        try:
            await waiter
        finally:
            self._store.discard_waiter(waiter)
            self._waiter = None

    def _wake(self) -> None:
        self._timer = None
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _lines(self, events: list[WatchEvent]) -> list[bytes]:
        prefix, predicate = self._prefix, self._request.predicate
        if prefix is None and predicate is None:
            return [self._line(event, event.type) for event in events]
        lines: list[bytes] = []
        for event in events:
            if prefix is not None and not event.entry.key.startswith(prefix):
                continue
            if predicate is None:
                lines.append(self._line(event, event.type))
                continue
            was = event.prev is not None and predicate(event.prev)
            if event.type == DELETED:
                if was:
                    lines.append(self._line(event, DELETED))
                continue
            now = predicate(event.entry)
            if now and was:
                lines.append(self._line(event, MODIFIED))
            elif now:
                lines.append(self._line(event, ADDED))
            elif was:
                lines.append(self._line(event, DELETED))
        return lines

    def _line(self, event: WatchEvent, type_: str) -> bytes:
        render = self._request.render
        if render is None:
            return event.line(type_)
        return render(type_, event.entry, event.rv)

    def _bookmark(self, rv: int, *, initial_events_end: bool = False) -> bytes:
        if self._request.render is not None:
            return self._request.render("BOOKMARK", None, rv)
        rtype = self._request.rtype
        metadata: dict[str, object] = {"resourceVersion": str(rv)}
        if initial_events_end:
            metadata["annotations"] = {"k8s.io/initial-events-end": "true"}
        body = {
            "kind": rtype.kind,
            "apiVersion": rtype.api_version,
            "metadata": metadata,
            **BOOKMARK_ZERO_VALUES.get((rtype.api_version, rtype.kind), {}),
        }
        return b'{"type":"BOOKMARK","object":' + orjson.dumps(body) + b"}\n"


_TEMPLATE_ZERO: Final = {"metadata": {}, "spec": {"containers": None}}
# What kube-apiserver (v1.37) puts beside the metadata of a built-in type's bookmark: the
# typed object's zero value, serialized with the nulls and zeros of its non-omitempty
# fields. A client's decoder meets these, not a bare metadata object (issue 16: hvpa's
# wire structs once refused `"containers": null`). Custom resources' bookmarks carry only
# kind, apiVersion and metadata, as here by default.
BOOKMARK_ZERO_VALUES: Final[dict[tuple[str, str], dict[str, object]]] = {
    ("v1", "Pod"): {"spec": {"containers": None}, "status": {}},
    ("v1", "Namespace"): {"spec": {}, "status": {}},
    ("v1", "Node"): {
        "spec": {},
        "status": {
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
            "nodeInfo": dict.fromkeys(
                (
                    "machineID",
                    "systemUUID",
                    "bootID",
                    "kernelVersion",
                    "osImage",
                    "containerRuntimeVersion",
                    "kubeletVersion",
                    "kubeProxyVersion",
                    "operatingSystem",
                    "architecture",
                ),
                "",
            ),
        },
    },
    ("v1", "Event"): {
        "involvedObject": {},
        "source": {},
        "firstTimestamp": None,
        "lastTimestamp": None,
        "eventTime": None,
        "reportingComponent": "",
        "reportingInstance": "",
    },
    ("apps/v1", "Deployment"): {
        "spec": {"replicas": 0, "selector": None, "template": _TEMPLATE_ZERO, "strategy": {}},
        "status": {},
    },
    ("apps/v1", "StatefulSet"): {
        "spec": {
            "replicas": 0,
            "selector": None,
            "template": _TEMPLATE_ZERO,
            "serviceName": "",
            "updateStrategy": {},
        },
        "status": {"replicas": 0, "availableReplicas": 0},
    },
    ("apps/v1", "ReplicaSet"): {
        "spec": {"replicas": 0, "selector": None, "template": _TEMPLATE_ZERO},
        "status": {"replicas": 0},
    },
    ("coordination.k8s.io/v1", "Lease"): {"spec": {}},
    ("autoscaling/v2", "HorizontalPodAutoscaler"): {
        "spec": {"scaleTargetRef": {"kind": "", "name": ""}, "maxReplicas": 0},
        "status": {"desiredReplicas": 0, "currentMetrics": None},
    },
}


class Watches:
    """The open watches, so a fault (or shutdown) can end them all at once."""

    def __init__(self) -> None:
        self._open: set[Watch] = set()

    def __len__(self) -> int:
        return len(self._open)

    def add(self, watch: Watch) -> None:
        self._open.add(watch)

    def discard(self, watch: Watch) -> None:
        self._open.discard(watch)

    def close_all(self) -> int:
        watches = list(self._open)
        for watch in watches:
            watch.close()
        return len(watches)
