"""Objects, the global resourceVersion, per-resource history, snapshot reads and continue tokens.

This is the etcd-and-watch-cache layer. Every write takes the next value of
one global, monotonic resourceVersion and appends one event to its resource's
history. Objects are immutable once stored: an `Entry` holds the serialized
JSON (built once per write, so lists are joined bytes and one watch line
serves every watcher), the labels and the field-selector values.

History serves three readers:
- watches, which read events after a resourceVersion (410 once compacted);
- paginated lists, which read the state at the first page's resourceVersion
  (as etcd's MVCC does) by overlaying the history since then on the current
  state, so later pages neither skip nor repeat objects under churn;
- lists with resourceVersionMatch=Exact.
History is bounded per resource (the watch cache's capacity) and can be
compacted on demand (etcd's compaction).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Final

import orjson

from hvpa.sim.apiserver.errors import BadRequest, Expired
from hvpa.sim.apiserver.resources import ResourceTable, ResourceType
from hvpa.sim.apiserver.selectors import field_values

__all__ = [
    "Behind",
    "Entry",
    "ListPage",
    "Storage",
    "Store",
    "WatchEvent",
    "decode_continue",
    "encode_continue",
]

Predicate = Callable[["Entry"], bool]

ADDED: Final = "ADDED"
MODIFIED: Final = "MODIFIED"
DELETED: Final = "DELETED"

CONTINUE_EXPIRED: Final = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token in "
    "this response to retrieve the remainder of the results. Continuing with the provided "
    "token results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)
LIST_EXPIRED: Final = "The resourceVersion for the provided list is too old."


class Entry:
    """One stored version of one object. Never mutated: `load()` gives a private copy,
    `shared()` the one decoded copy that readers which only read share."""

    __slots__ = ("_item_start", "_shared", "fields", "json", "key", "labels", "rv")

    def __init__(
        self,
        key: str,
        rv: int,
        json: bytes,
        labels: dict[str, str],
        fields: dict[str, str],
        item_start: int,
    ) -> None:
        self.key = key
        self.rv = rv
        self.json = json
        self.labels = labels
        self.fields = fields
        self._item_start = item_start
        self._shared: dict[str, Any] | None = None

    @classmethod
    def build(cls, rtype: ResourceType, key: str, obj: dict[str, Any], rv: int) -> Entry:
        """Serialize `obj` (which the entry then owns) with apiVersion and kind leading,
        so a list item without them is a slice of the same bytes."""
        ordered: dict[str, Any] = {"apiVersion": rtype.api_version, "kind": rtype.kind}
        for name, value in obj.items():
            if name not in ("apiVersion", "kind"):
                ordered[name] = value
        head = orjson.dumps({"apiVersion": rtype.api_version, "kind": rtype.kind})
        labels = (ordered.get("metadata") or {}).get("labels") or {}
        # orjson's bytes keep their growth buffer (4 KiB for a 1 KiB pod); a copy is exact.
        json = bytes(memoryview(orjson.dumps(ordered)))
        return cls(key, rv, json, labels, field_values(rtype, ordered), len(head))

    def load(self) -> dict[str, Any]:
        loaded: dict[str, Any] = orjson.loads(self.json)
        return loaded

    def shared(self) -> dict[str, Any]:
        """The object decoded once for every reader that only reads it: the simulator's
        controllers read every workload at every tick, and most have not changed since
        the last. It depends on nothing but `json`, which never changes, so it cannot go
        stale; a reader that changed it would change what the others read (not what is
        stored, which the server reads through `load()`), so a reader that changes what
        it reads takes `load()`."""
        shared = self._shared
        if shared is None:
            shared = self._shared = orjson.loads(self.json)
        return shared

    def untyped_tail(self) -> memoryview:
        """The JSON after `{"apiVersion":..,"kind":..,`: prefixed with `{`, the object as a
        built-in list's item, which omits apiVersion and kind."""
        return memoryview(self.json)[self._item_start :]

    def with_resource_version(self, rtype: ResourceType, rv: int) -> Entry:
        """The same object stamped with another resourceVersion (a deletion's)."""
        obj = self.load()
        obj["metadata"]["resourceVersion"] = str(rv)
        return Entry.build(rtype, self.key, obj, rv)


class WatchEvent:
    """One change. `prev` is the object before it (None for a creation), which
    lets a filtered watch turn a change into ADDED or DELETED for its selector."""

    __slots__ = ("_lines", "entry", "prev", "rv", "type")

    def __init__(self, rv: int, type_: str, entry: Entry, prev: Entry | None) -> None:
        self.rv = rv
        self.type = type_
        self.entry = entry
        self.prev = prev
        self._lines: dict[str, bytes] = {}

    def line(self, type_: str) -> bytes:
        """The event as one line of a watch stream, serialized once for all watchers."""
        cached = self._lines.get(type_)
        if cached is None:
            cached = b'{"type":"' + type_.encode() + b'","object":' + self.entry.json + b"}\n"
            self._lines[type_] = cached
        return cached


@dataclass(slots=True)
class ListPage:
    entries: list[Entry]
    resource_version: int
    continue_token: str | None = None
    remaining: int | None = None


@dataclass(slots=True)
class _Overlay:
    """The state at `at_rv` of every key changed since: None if it did not exist then."""

    at_rv: int
    upto_rv: int
    states: dict[str, Entry | None]
    sorted_keys: list[str] | None = None


class Behind(Exception):
    """A watcher's next event was dropped from history: it is too slow and must restart."""


class Store:
    """One resource's objects, sorted keys and history."""

    def __init__(self, rtype: ResourceType, history_limit: int) -> None:
        self.rtype = rtype
        self.entries: dict[str, Entry] = {}
        self.keys: list[str] = []
        self.history: list[WatchEvent] = []
        self.first_seq = 0
        self.compacted_rv = 0
        self._history_limit = history_limit
        self._waiters: set[asyncio.Future[None]] = set()
        self._overlay: _Overlay | None = None
        # Set when the resource stops being served (its CRD is gone): open watches end.
        self.closed = False

    # ----------------------------------------------------------- writes

    def put(self, entry: Entry) -> WatchEvent:
        prev = self.entries.get(entry.key)
        if prev is None:
            index = bisect_left(self.keys, entry.key)
            self.keys.insert(index, entry.key)
        self.entries[entry.key] = entry
        return self._record(WatchEvent(entry.rv, ADDED if prev is None else MODIFIED, entry, prev))

    def remove(self, deleted: Entry) -> WatchEvent:
        """Drop the object; `deleted` is its last state stamped with the deletion's rv."""
        prev = self.entries.pop(deleted.key)
        del self.keys[bisect_left(self.keys, deleted.key)]
        return self._record(WatchEvent(deleted.rv, DELETED, deleted, prev))

    def _record(self, event: WatchEvent) -> WatchEvent:
        self.history.append(event)
        if len(self.history) > self._history_limit + max(self._history_limit // 4, 1):
            self.compact_through(self.history[len(self.history) - self._history_limit - 1].rv)
        if self._waiters:
            waiters, self._waiters = self._waiters, set()
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)
        return event

    def close(self) -> None:
        """The resource is no longer served: wake every watcher so its stream ends."""
        self.closed = True
        waiters, self._waiters = self._waiters, set()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def compact_through(self, rv: int) -> None:
        """Forget the events at or before `rv`: reads at older versions now get 410."""
        cut = bisect_right(self.history, rv, key=lambda e: e.rv)
        if cut:
            del self.history[:cut]
            self.first_seq += cut
        self.compacted_rv = max(self.compacted_rv, rv)

    # ----------------------------------------------------------- watch support

    @property
    def end_seq(self) -> int:
        return self.first_seq + len(self.history)

    def seq_after(self, rv: int) -> int:
        """The sequence number of the first event newer than `rv`."""
        return self.first_seq + bisect_right(self.history, rv, key=lambda e: e.rv)

    def events_from(self, seq: int) -> list[WatchEvent]:
        if seq < self.first_seq:
            raise Behind
        return self.history[seq - self.first_seq :]

    def add_waiter(self, waiter: asyncio.Future[None]) -> None:
        """Resolve `waiter` at the next write (writes in one loop turn wake a watcher once)."""
        self._waiters.add(waiter)

    def discard_waiter(self, waiter: asyncio.Future[None]) -> None:
        self._waiters.discard(waiter)

    # ----------------------------------------------------------- reads

    def bounds(self, namespace: str | None) -> tuple[str, str | None]:
        """The key range of a namespace: keys are `ns/name`, and '0' follows '/'."""
        if namespace is None or not self.rtype.namespaced:
            return "", None
        return f"{namespace}/", f"{namespace}0"

    def current(self, namespace: str | None) -> Iterator[Entry]:
        """The namespace's objects now, in key order (consume before the next write)."""
        low, high = self.bounds(namespace)
        return self._iterate(low, high, None, None)

    def check_readable(self, rv: int, message: str, *, continue_after: str | None = None) -> None:
        if rv < self.compacted_rv:
            token = encode_continue(-1, continue_after) if continue_after is not None else None
            raise Expired(message, continue_token=token)

    def page(
        self,
        *,
        namespace: str | None,
        predicate: Predicate | None,
        limit: int | None,
        after: str | None,
        at_rv: int,
    ) -> ListPage:
        """One page of the state at `at_rv`, in key order, starting after key `after`."""
        overlay = self._overlay_for(at_rv)
        low, high = self.bounds(namespace)
        items = self._iterate(low, high, after, overlay)
        if predicate is None and limit is None:
            # Everything in range, on one page (most lists): no per-item checks.
            return ListPage(list(items), at_rv)
        entries: list[Entry] = []
        last_key = None
        for entry in items:
            if predicate is not None and not predicate(entry):
                continue
            entries.append(entry)
            last_key = entry.key
            if limit is not None and len(entries) >= limit:
                break
        page = ListPage(entries, at_rv)
        if limit is not None and last_key is not None and next(items, None) is not None:
            page.continue_token = encode_continue(at_rv, last_key)
            if predicate is None:
                page.remaining = self._count_after(low, high, last_key, overlay)
        return page

    def _overlay_for(self, at_rv: int) -> _Overlay | None:
        history = self.history
        if not history or history[-1].rv <= at_rv:
            return None
        overlay = self._overlay
        if overlay is None or overlay.at_rv != at_rv:
            overlay = _Overlay(at_rv, at_rv, {})
        if overlay.upto_rv < history[-1].rv:
            start = bisect_right(history, overlay.upto_rv, key=lambda e: e.rv)
            states = overlay.states
            for event in history[start:]:
                if event.entry.key not in states:
                    states[event.entry.key] = event.prev
            overlay.upto_rv = history[-1].rv
            overlay.sorted_keys = None
        if overlay.sorted_keys is None:
            overlay.sorted_keys = sorted(overlay.states)
        self._overlay = overlay
        return overlay

    def _iterate(
        self, low: str, high: str | None, after: str | None, overlay: _Overlay | None
    ) -> Iterator[Entry]:
        """Entries of the snapshot in key order: current keys merged with the overlay's.

        Consumed synchronously by the caller, so the key list cannot change underneath."""
        keys, entries = self.keys, self.entries
        start = bisect_right(keys, after) if after is not None and after >= low else None
        i = start if start is not None else bisect_left(keys, low)
        if overlay is None:
            for key in keys[i:] if high is None else keys[i : bisect_left(keys, high, lo=i)]:
                yield entries[key]
            return
        changed = overlay.sorted_keys or []
        states = overlay.states
        j = (
            bisect_right(changed, after)
            if after is not None and start is not None
            else bisect_left(changed, low)
        )
        while True:
            a = keys[i] if i < len(keys) and (high is None or keys[i] < high) else None
            b = changed[j] if j < len(changed) and (high is None or changed[j] < high) else None
            if a is None and b is None:
                return
            if b is None or (a is not None and a < b):
                i += 1
                if a not in states:
                    yield entries[a]  # type: ignore[index]
                continue
            if a == b:
                i += 1
            j += 1
            state = states[b]
            if state is not None:
                yield state

    def _count_after(self, low: str, high: str | None, after: str, overlay: _Overlay | None) -> int:
        keys = self.keys
        stop = len(keys) if high is None else bisect_left(keys, high)
        count = max(stop - bisect_right(keys, after), 0)
        if overlay is not None and overlay.sorted_keys:
            changed = overlay.sorted_keys
            for key in changed[bisect_right(changed, after) :]:
                if high is not None and key >= high:
                    break
                if key < low:
                    continue
                now_exists = key in self.entries
                then_existed = overlay.states[key] is not None
                count += int(then_existed) - int(now_exists)
        return count


class Storage:
    """All stores and the one resourceVersion counter they share."""

    def __init__(self, table: ResourceTable, *, history_limit: int) -> None:
        self.resource_version = 0
        self._history_limit = history_limit
        self._stores = {rtype: Store(rtype, history_limit) for rtype in table if not rtype.metrics}

    def store(self, rtype: ResourceType) -> Store:
        return self._stores[rtype]

    def add_store(self, rtype: ResourceType, *, replacing: ResourceType | None = None) -> Store:
        """A store for a newly served resource; `replacing` hands over its objects, history
        and open watches (a CRD updated in place serves the same objects)."""
        store = self._stores.pop(replacing, None) if replacing is not None else None
        if store is None:
            store = Store(rtype, self._history_limit)
        store.rtype = rtype
        self._stores[rtype] = store
        return store

    def remove_store(self, rtype: ResourceType) -> None:
        store = self._stores.pop(rtype, None)
        if store is not None:
            store.close()

    def stores(self) -> Iterator[Store]:
        return iter(self._stores.values())

    def next_resource_version(self) -> int:
        self.resource_version += 1
        return self.resource_version

    def compact(self, rv: int | None = None) -> int:
        """Compact every resource's history through `rv` (default: now); returns it."""
        through = self.resource_version if rv is None else rv
        for store in self._stores.values():
            store.compact_through(through)
        return through


def encode_continue(rv: int, last_key: str) -> str:
    """An opaque token like the etcd store's: the list's resourceVersion and where to resume."""
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": last_key + "\x00"})
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def decode_continue(token: str) -> tuple[int, str]:
    """(resourceVersion, last key returned); rv -1 means "latest" (an inconsistent continue)."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        decoded = orjson.loads(raw)
        rv, start = decoded["rv"], decoded["start"]
        if decoded.get("v") != "meta.k8s.io/v1" or not isinstance(rv, int):
            raise ValueError("unknown token version")
        if not isinstance(start, str) or not start.endswith("\x00"):
            raise ValueError("bad start key")
    except (binascii.Error, ValueError, KeyError, TypeError, orjson.JSONDecodeError) as error:
        raise BadRequest(f"continue key is not valid: {error}") from error
    return rv, start[:-1]
