"""Events as client-go's recorder writes them: deduplicated, aggregated and rate-limited.

hvpa records an Event (core/v1) for each scaling, each newly blocked change,
an invalid spec and a failed write. Left alone, a flapping condition would
write one Event object per reconcile; client-go's EventCorrelator prevents
that, and this module follows it (pure logic; the applier does the writes):

- dedup: an event identical to an earlier one (same object, type, reason,
  message) is not created again; the existing Event is patched with
  `count + 1` and a new `lastTimestamp`;
- aggregation: when more than `max_similar` events with the same object,
  type and reason but different messages arrive within
  `similar_window_seconds`, further ones are folded into one Event whose
  message starts "(combined from similar events): ";
- spam filter: per object, a token bucket of `burst` events refilled at
  `refill_per_second`; an event without a token is dropped (and logged).

The caches are bounded (least recently used entries go first), so a
controller running for months does not grow with every message it ever wrote.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, TypeVar

from hvpa.records import format_time

__all__ = [
    "EventCorrelator",
    "EventSettings",
    "EventWrite",
    "InvolvedObject",
    "RecordedEvent",
    "WriteKind",
]

_COMBINED: Final = "(combined from similar events): "
# core/v1 Event messages longer than this are rejected by events.k8s.io; keep within it.
MAX_MESSAGE_LENGTH: Final = 1024
SOURCE_COMPONENT: Final = "hvpa"

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class EventSettings:
    """client-go's defaults (EventCorrelator, EventSourceObjectSpamFilter)."""

    max_similar: int = 10
    similar_window_seconds: float = 600.0
    burst: int = 25
    refill_per_second: float = 1 / 300
    cache_size: int = 4096


@dataclass(frozen=True, slots=True)
class InvolvedObject:
    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str

    def as_dict(self) -> dict[str, str]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
        }


@dataclass(frozen=True, slots=True)
class RecordedEvent:
    """What a caller wants recorded."""

    involved: InvolvedObject
    type: str  # Normal | Warning
    reason: str
    message: str


class WriteKind(enum.Enum):
    CREATE = "create"
    PATCH = "patch"


@dataclass(frozen=True, slots=True)
class EventWrite:
    """One write the applier should make: create a new Event, or patch an existing one."""

    kind: WriteKind
    namespace: str
    name: str
    body: dict[str, Any]
    dedup_key: tuple[str, ...]


class _Lru(Generic[K, V]):
    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)

    def pop(self, key: K) -> None:
        self._items.pop(key, None)


@dataclass(slots=True)
class _Seen:
    name: str
    count: int


@dataclass(slots=True)
class _Similar:
    messages: set[str]
    last: float


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


class EventCorrelator:
    def __init__(
        self, *, clock: Callable[[], float], settings: EventSettings | None = None
    ) -> None:
        self._clock = clock
        self._settings = settings = settings or EventSettings()
        self._seen: _Lru[tuple[str, ...], _Seen] = _Lru(settings.cache_size)
        self._similar: _Lru[tuple[str, ...], _Similar] = _Lru(settings.cache_size)
        self._buckets: _Lru[tuple[str, ...], _Bucket] = _Lru(settings.cache_size)
        self._last_nanos = 0

    def _allow(self, key: tuple[str, ...], now: float) -> bool:
        settings = self._settings
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(float(settings.burst), now)
        bucket.tokens = min(
            float(settings.burst), bucket.tokens + (now - bucket.at) * settings.refill_per_second
        )
        bucket.at = now
        self._buckets.put(key, bucket)
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    def _aggregate(self, event: RecordedEvent, now: float) -> tuple[str, tuple[str, ...]]:
        """The message to write and its dedup key, folding floods of similar messages."""
        involved = event.involved
        similar_key = (
            involved.namespace,
            involved.kind,
            involved.name,
            involved.uid,
            event.type,
            event.reason,
        )
        entry = self._similar.get(similar_key)
        if entry is None or now - entry.last > self._settings.similar_window_seconds:
            entry = _Similar(set(), now)
        entry.messages.add(event.message)
        entry.last = now
        self._similar.put(similar_key, entry)
        if len(entry.messages) > self._settings.max_similar:
            return _COMBINED + event.message, (*similar_key, _COMBINED)
        return event.message, (*similar_key, event.message)

    def _name(self, involved: InvolvedObject, now: float) -> str:
        """client-go's `<object>.<unix nanos in hex>`, kept unique when the clock stands still."""
        nanos = max(int(now * 1e9), self._last_nanos + 1)
        self._last_nanos = nanos
        return f"{involved.name}.{nanos:x}"

    def correlate(self, event: RecordedEvent, *, reporting_instance: str) -> EventWrite | None:
        """The write for `event`, or None when the spam filter drops it."""
        now = self._clock()
        involved = event.involved
        if not self._allow((involved.namespace, involved.kind, involved.name, involved.uid), now):
            return None
        message, key = self._aggregate(event, now)
        message = message[:MAX_MESSAGE_LENGTH]
        seen = self._seen.get(key)
        if seen is not None:
            return EventWrite(
                WriteKind.PATCH,
                involved.namespace,
                seen.name,
                {"count": seen.count + 1, "lastTimestamp": format_time(now), "message": message},
                key,
            )
        stamp = format_time(now)
        name = self._name(involved, now)
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": involved.namespace},
            "involvedObject": involved.as_dict(),
            "reason": event.reason,
            "message": message,
            "type": event.type,
            "source": {"component": SOURCE_COMPONENT},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "reportingComponent": SOURCE_COMPONENT,
            "reportingInstance": reporting_instance,
        }
        return EventWrite(WriteKind.CREATE, involved.namespace, name, body, key)

    def written(self, write: EventWrite) -> None:
        """The write succeeded: the next identical event patches this Event."""
        seen = self._seen.get(write.dedup_key)
        if write.kind is WriteKind.CREATE or seen is None:
            self._seen.put(write.dedup_key, _Seen(write.name, 1))
        else:
            seen.count += 1

    def lost(self, write: EventWrite) -> None:
        """The patched Event is gone (expired after its TTL): the next one is created afresh."""
        self._seen.pop(write.dedup_key)
