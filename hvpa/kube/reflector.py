"""List, then watch: one resource mirrored into a sink, as client-go's Reflector.

The loop:

1. Stream the list (client-go's watch-list, KEP-3157): one watch with
   `sendInitialEvents=true`, `resourceVersionMatch=NotOlderThan` and
   bookmarks, from the resourceVersion last seen (none at the start). The
   server answers from its watch cache with an ADDED event per object, then a
   bookmark annotated `k8s.io/initial-events-end`; what came before it goes
   to the sink in one `replace`, and the same stream goes on as the watch of
   2. This costs the server no etcd read and the client no page held in
   memory: one event at a time, bounded as every watch event is. A server
   that refuses it (400/422: the WatchList feature is off) or ignores it (a
   bookmark without the annotation) is listed instead, for good:
   List in pages (`limit`/`continue`). If a continue token expires (410)
   mid-list, the list starts over; if it expires again, one unpaginated list
   is made, as client-go's pager does. The whole result goes to the sink in
   one `replace`, which is how objects deleted while we were not watching
   are noticed. A list request is made once, without the client's retries:
   a failure goes straight to this loop's backoff (4.), so a hung server
   shows in `last_error` after one request timeout, not after the client's
   retries of it. A page is read up to `max_list_page_bytes`; a page larger
   than that is asked for again with half the `limit` (down to one object),
   since a few huge objects should cost smaller pages, not the informer.
2. Watch from the list's resourceVersion with bookmarks. Every event, and
   every bookmark, advances the resourceVersion to resume from. The server
   ends the watch after a random 5 to 10 minutes; a watch that sends no
   bytes for the inactivity timeout is abandoned (a half-open connection
   would otherwise hang forever). Either way the next watch starts at once
   from where the last one stopped: nothing is missed, nothing repeated.
3. 410 Expired (an HTTP status or a watch ERROR event) means the server no
   longer has history back to our resourceVersion: list again (1.).
4. Any other failure (connection, 5xx, a malformed stream, a watch that
   closes at once with nothing in it) waits a jittered exponential backoff
   (0.8 s doubling to 30 s, reset after 2 minutes of health), then resumes
   the watch (or retries the list, if the list failed). 429 waits at least
   the server's Retry-After.

A watch is read as it arrives, one line (one event) at a time, and a line
longer than `max_event_bytes` is not buffered further: the watch ends with
ResponseTooLarge and resumes after the backoff.

Objects are decoded from the raw bytes with msgspec straight into the
resource's wire struct; one that does not fit, or whose conversion to a
record meets a value it cannot read (a RecordError, a msgspec decoding
error), is logged and skipped, and the stream goes on. Any other exception
of a converter is a bug: it is raised, not taken for a bad object.

For a resource with a `Renewal` (pods), the reflector keeps the digest of the
wire struct each record it handed to the sink was made from; an update whose
digest is the held record's is handed over as that record at the new
resourceVersion (`renew`), not converted again. The digests follow the
sink's records: set with each record handed over, dropped with a delete,
and replaced with the records of a list (a watch-list's
initial events keep their own until the bookmark that ends them, so a
watch-list that fails half way leaves the sink's digests as they were).
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
from collections.abc import Iterable, Mapping
from typing import Any, Final, Generic, Protocol, TypeVar

import msgspec

from hvpa.kube.backoff import Backoff
from hvpa.kube.client import KubeClient
from hvpa.kube.errors import (
    BadRequest,
    Gone,
    Invalid,
    KubeError,
    NotFound,
    ResponseTooLarge,
    StatusWire,
    TooManyRequests,
    TransportError,
    error_from_status,
)
from hvpa.kube.resources import Resource
from hvpa.kube.settings import WatchSettings
from hvpa.kube.wire import MetaOnly, ObjectList, WatchEvent, WireObject, object_key
from hvpa.logs import fields
from hvpa.records import DECODING_ERRORS

__all__ = ["Reflector", "ReflectorSink"]

_logger = logging.getLogger(__name__)

W = TypeVar("W", bound=WireObject)
R = TypeVar("R")

# How many bytes of a skipped object's JSON go into the log line.
_LOGGED_BYTES: Final = 200
# Bytes that are not the JSON they should be: msgspec raises UnicodeDecodeError, not a
# DecodeError, for a string that is not UTF-8.
_UNDECODABLE: Final = (msgspec.DecodeError, UnicodeDecodeError)
# An object that does not fit its wire struct (the rest of the stream still reads).
_MISFIT: Final = (msgspec.ValidationError, UnicodeDecodeError)


class ReflectorSink(Protocol[R]):
    """Where a reflector puts what it sees (an informer)."""

    def replace(self, items: Mapping[str, R]) -> None:
        """The complete set of objects, after a (re-)list."""

    def upsert(self, key: str, record: R) -> None:
        """An object was added or modified."""

    def delete(self, key: str) -> None:
        """An object was deleted."""

    def get(self, key: str) -> R | None:
        """The record last handed over for `key` (for a `Renewal`)."""

    def renew(self, key: str, record: R) -> None:
        """The object was modified, and its record is the one held but for its
        resourceVersion: filed under the same index values, so none is recomputed."""


class _BrokenStream(KubeError):
    """A watch stream that is not a sequence of JSON watch events."""


class _WatchListIgnored(KubeError):
    """A bookmark without the initial-events-end annotation came while the initial
    events were expected: the server does not do watch-list."""


class _Annotations(msgspec.Struct):
    annotations: dict[str, str] | None = None
    resource_version: str = msgspec.field(default="", name="resourceVersion")


class _BookmarkObject(msgspec.Struct):
    metadata: _Annotations = msgspec.field(default_factory=_Annotations)


# What a watch-list's last initial bookmark carries (client-go's metav1.InitialEventsAnnotationKey).
INITIAL_EVENTS_END: Final = "k8s.io/initial-events-end"


class _Collect:
    """The initial events of a watch-list, gathered until the bookmark that ends them,
    with the digests of their wire structs (for a `Renewal`)."""

    def __init__(self) -> None:
        self.items: dict[str, Any] = {}
        self.digests: dict[str, bytes] = {}

    def upsert(self, key: str, record: Any) -> None:
        self.items[key] = record

    def delete(self, key: str) -> None:
        self.items.pop(key, None)

    def get(self, key: str) -> Any:
        return self.items.get(key)

    renew = upsert


class _ShortWatch(KubeError):
    """A watch that ended cleanly at once with nothing in it: treated as a failure."""


class Reflector(Generic[W, R]):
    """Keeps a sink in step with one resource (optionally one namespace, selected)."""

    def __init__(
        self,
        *,
        client: KubeClient,
        resource: Resource[W, R],
        sink: ReflectorSink[R],
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        settings: WatchSettings | None = None,
        rng: random.Random | None = None,
        optional: bool = False,
    ) -> None:
        """`optional`: the resource may not be served (a CRD that is not installed);
        then the sink gets an empty list, so its consumers are not held up, and the
        reflector looks again every `unserved_recheck_seconds`."""
        self._client = client
        self._resource = resource
        self._renewal = resource.renewal
        # The digest of the wire struct each of the sink's records was made from.
        self._digests: dict[str, bytes] = {}
        self._optional = optional
        self._sink = sink
        self._namespace = namespace
        self._settings = settings or WatchSettings()
        self._rng = rng or random.Random()
        self._path = resource.path(namespace=namespace)
        self._selectors: dict[str, str] = {}
        if label_selector:
            self._selectors["labelSelector"] = label_selector
        if field_selector:
            self._selectors["fieldSelector"] = field_selector
        self.name = str(resource) if namespace is None else f"{resource}/{namespace}"

        wire: Any = resource.wire_type
        self._decode_list = msgspec.json.Decoder(ObjectList[wire]).decode
        self._decode_raw_list = msgspec.json.Decoder(ObjectList[msgspec.Raw]).decode
        self._decode_object = msgspec.json.Decoder(wire).decode
        self._decode_event = msgspec.json.Decoder(WatchEvent[wire]).decode
        self._decode_meta_event = msgspec.json.Decoder(WatchEvent[MetaOnly]).decode
        self._decode_status_event = msgspec.json.Decoder(WatchEvent[StatusWire]).decode
        self._decode_meta = msgspec.json.Decoder(MetaOnly).decode
        self._decode_bookmark = msgspec.json.Decoder(WatchEvent[_BookmarkObject]).decode
        # Watch-list until the server shows it does not do it; while its initial events
        # come, they go to `_initial`, not the sink.
        self._watch_list = self._settings.watch_list
        self._initial: _Collect | None = None

        # What /debug/state shows.
        self.resource_version = ""
        self.lists = 0
        self.watches = 0
        self.skipped = 0
        self.last_error = ""
        self.served = True
        self._watch_started = math.inf

    # -- the loop ------------------------------------------------------------

    async def run(self) -> None:
        """List and watch until cancelled; never returns, never raises on API errors."""
        loop = asyncio.get_running_loop()
        backoff = Backoff(self._settings.backoff, clock=loop.time, rng=self._rng)
        must_list = True
        while True:
            delay = 0.0
            self._watch_started = math.inf  # until a watch starts: a 410 here is the list's
            try:
                if must_list and self._watch_list:
                    must_list = not await self._stream_list()
                    continue
                if must_list:
                    await self._list()
                    must_list = False
                await self._watch()
            except (BadRequest, Invalid, _WatchListIgnored) as error:
                if self._initial is None:
                    delay = backoff.next_delay()
                    self._note_error("list or watch failed", error, delay)
                else:
                    self._initial = None
                    self._watch_list = False
                    self._note_error("the server does not do watch-list; listing instead", error)
            except Gone as error:
                # Expected after compaction: re-list at once - unless the list
                # itself or a watch that had only just started met it, where a
                # server stuck on 410 would otherwise be hammered with lists.
                must_list = True
                if self._initial is not None:
                    # A watch-list from a version the server no longer has: from the most
                    # recent one instead, as client-go does.
                    self.resource_version = ""
                    self._initial = None
                if loop.time() - self._watch_started < self._settings.short_watch_seconds:
                    delay = backoff.next_delay()
                self._note_error("resourceVersion expired; re-listing", error, delay)
            except NotFound as error:
                if not self._optional:
                    delay = backoff.next_delay()
                    self._note_error("list or watch failed", error, delay)
                else:
                    delay = self._settings.unserved_recheck_seconds
                    self._unserved(error, delay)
                    must_list = True
            except TooManyRequests as error:
                delay = max(error.retry_after or 0.0, backoff.next_delay())
                self._note_error("throttled", error, delay)
            except KubeError as error:
                delay = backoff.next_delay()
                self._note_error("list or watch failed", error, delay)
            if delay:
                await asyncio.sleep(delay)

    def _unserved(self, error: NotFound, delay: float) -> None:
        """The server does not serve this resource: an empty, synced cache until it does."""
        if self.served:
            self._note_error("resource not served; treating it as empty", error, delay)
        self.served = False
        self.last_error = str(error)
        self._sink.replace({})
        self._digests.clear()

    def _note_error(self, message: str, error: Exception, delay: float = 0.0) -> None:
        self.last_error = str(error)
        _logger.warning(
            message,
            extra=fields(
                reflector=self.name,
                error=str(error),
                error_type=type(error).__name__,
                resource_version=self.resource_version,
                delay_seconds=round(delay, 3),
            ),
        )

    # -- list ----------------------------------------------------------------

    async def _stream_list(self) -> bool:
        """A watch-list: True once its initial events are in the sink (the stream then
        went on as a watch, until it ended); False if it ended before they were all in.
        A refusal is raised with `_initial` set, so the caller knows what was refused."""
        self._initial = _Collect()
        await self._watch(initial=True)
        complete = self._initial is None
        self._initial = None
        return complete

    def _end_initial(self, line: bytes) -> None:
        """A bookmark while the initial events come: theirs ends them, any other says the
        server ignored sendInitialEvents."""
        assert self._initial is not None
        try:
            metadata = self._decode_bookmark(line).object.metadata
        except _UNDECODABLE as error:
            raise _BrokenStream(f"watch of {self.name}: {error}") from error
        if (metadata.annotations or {}).get(INITIAL_EVENTS_END) != "true":
            raise _WatchListIgnored(
                f"watch-list of {self.name}: a bookmark without {INITIAL_EVENTS_END}"
            )
        items = self._initial.items
        digests = self._initial.digests
        self._initial = None
        self.lists += 1
        self.served = True
        self._sink.replace(items)
        self._digests = digests
        _logger.info(
            "listed",
            extra=fields(
                reflector=self.name,
                objects=len(items),
                resource_version=metadata.resource_version,
                watch_list=True,
            ),
        )

    async def _list(self) -> None:
        """A complete, consistent list, page by page, handed to the sink in one piece."""
        items: dict[str, R] = {}
        limit = self._settings.page_size
        token = ""
        expirations = 0
        resource_version = ""
        while True:
            params: dict[str, str | int | bool] = dict(self._selectors)
            if limit:
                params["limit"] = limit
            if token:
                params["continue"] = token
            try:
                body = await self._client.request(
                    "GET",
                    self._path,
                    params=params,
                    timeout_seconds=self._settings.request_timeout_seconds,
                    retry=False,
                    max_response_bytes=self._settings.max_list_page_bytes,
                )
            except ResponseTooLarge as error:
                if limit <= 1:
                    raise
                limit //= 2
                _logger.info(
                    "list page too large; asking for smaller pages",
                    extra=fields(reflector=self.name, error=str(error), limit=limit),
                )
                continue
            except Gone as error:
                if not token:
                    raise
                expirations += 1
                _logger.info(
                    "list continue token expired; listing again",
                    extra=fields(
                        reflector=self.name, error=str(error), unpaginated=expirations > 1
                    ),
                )
                items.clear()
                token = ""
                if expirations > 1:
                    limit = 0
                continue
            resource_version, token = self._take_page(body, items)
            if not token:
                break
        self.lists += 1
        self.served = True
        self._sink.replace(items)
        self._digests.clear()  # a paged list's records are converted, not digested
        self.resource_version = resource_version
        _logger.info(
            "listed",
            extra=fields(
                reflector=self.name, objects=len(items), resource_version=resource_version
            ),
        )

    def _take_page(self, body: bytes, items: dict[str, R]) -> tuple[str, str]:
        """Decode one page into `items`; returns the list's resourceVersion and continue token."""
        try:
            page = self._decode_list(body)
            objects: Iterable[Any] = page.items or ()
            metadata = page.metadata
        except _MISFIT:
            # Some object does not fit the wire struct: decode one by one, skip the misfits.
            try:
                raw_page = self._decode_raw_list(body)
            except _UNDECODABLE as error:
                raise _BrokenStream(f"list of {self.name}: {error}") from error
            objects = self._decode_each(raw_page.items or ())
            metadata = raw_page.metadata
        except _UNDECODABLE as error:
            raise _BrokenStream(f"list of {self.name}: {error}") from error
        for wire in objects:
            key = object_key(wire.metadata)
            record = self._convert(wire, key)
            if record is not None:
                items[key] = record
        return metadata.resource_version, metadata.continue_

    def _decode_each(self, raws: Iterable[msgspec.Raw]) -> Iterable[W]:
        for raw in raws:
            try:
                yield self._decode_object(raw)
            except _UNDECODABLE as error:
                self._skip(raw, error)

    def _convert(self, wire: W, key: str) -> R | None:
        try:
            return self._resource.convert(wire)
        except DECODING_ERRORS as error:
            self.skipped += 1
            _logger.error(
                "object skipped: cannot convert it to a record",
                extra=fields(reflector=self.name, key=key, error=str(error)),
            )
            return None

    def _skip(self, raw: bytes | msgspec.Raw, error: Exception) -> None:
        self.skipped += 1
        try:
            key = object_key(self._decode_meta(raw).metadata)
        except _UNDECODABLE:
            key = ""
        _logger.error(
            "object skipped: cannot decode it",
            extra=fields(
                reflector=self.name,
                key=key,
                error=str(error),
                json=bytes(raw)[:_LOGGED_BYTES].decode("utf-8", errors="replace"),
            ),
        )

    # -- watch ---------------------------------------------------------------

    async def _watch(self, *, initial: bool = False) -> None:
        """One watch request, consumed until it ends; returns when it ended cleanly.
        `initial`: a watch-list, its initial events first (`_stream_list`)."""
        settings = self._settings
        loop = asyncio.get_running_loop()
        server_timeout = int(
            settings.min_watch_timeout_seconds
            + self._rng.random()
            * (settings.max_watch_timeout_seconds - settings.min_watch_timeout_seconds)
        )
        params: dict[str, str | int | bool] = {
            **self._selectors,
            "watch": True,
            "resourceVersion": self.resource_version,
            "timeoutSeconds": server_timeout,
            "allowWatchBookmarks": settings.allow_bookmarks,
        }
        if initial:
            params["allowWatchBookmarks"] = True  # the initial events end with a bookmark
            params["sendInitialEvents"] = True
            params["resourceVersionMatch"] = "NotOlderThan"
            if not self.resource_version:
                del params["resourceVersion"]  # most recent: a consistent read
        self.watches += 1
        self._watch_started = started = loop.time()
        lines = 0
        try:
            async with self._client.stream(
                self._path,
                params=params,
                timeout_seconds=server_timeout + settings.request_timeout_seconds,
            ) as content:
                buffer = bytearray()
                while True:
                    try:
                        async with asyncio.timeout(settings.inactivity_timeout_seconds):
                            chunk = await content.read_chunk()
                    except TimeoutError:
                        _logger.info(
                            "watch inactive; reconnecting",
                            extra=fields(
                                reflector=self.name,
                                idle_seconds=settings.inactivity_timeout_seconds,
                            ),
                        )
                        return
                    if not chunk:
                        break
                    lines += self._take_lines(buffer, chunk)
        except TransportError:
            if lines:
                return  # the server cut a healthy watch short: resume at once
            raise
        if not lines and loop.time() - started < settings.short_watch_seconds:
            raise _ShortWatch(f"watch of {self.name} closed at once with no events")

    def _take_lines(self, buffer: bytearray, chunk: bytes) -> int:
        """Handle every line `chunk` completes; keep the unfinished rest in `buffer`.

        `buffer` holds no newline before the chunk is added, so only the chunk
        is searched: a long line arriving in many chunks is scanned once. The
        count of non-empty lines handled is returned.
        """
        limit = self._settings.max_event_bytes
        start = 0
        search_from = len(buffer)
        buffer += chunk
        handled = 0
        # Each line is copied once, out of a view of the buffer (a slice of the bytearray and
        # then bytes() copied it twice, and a strip() to test for a blank line a third time).
        with memoryview(buffer) as view:
            while (end := buffer.find(b"\n", search_from)) >= 0:
                if end - start > limit:
                    raise self._event_too_large(limit)
                line = bytes(view[start:end])
                start = search_from = end + 1
                if line and not line.isspace():
                    handled += 1
                    self._handle(line)
        del buffer[:start]
        if len(buffer) > limit:
            raise self._event_too_large(limit)
        return handled

    def _event_too_large(self, limit: int) -> ResponseTooLarge:
        return ResponseTooLarge(f"watch of {self.name}", limit_bytes=limit, part="one event")

    def _handle(self, line: bytes) -> None:
        """Apply one watch event to the sink."""
        try:
            event = self._decode_event(line)
        except _MISFIT as error:
            self._handle_misfit(line, error)
            return
        except _UNDECODABLE as error:
            raise _BrokenStream(f"watch of {self.name}: {error}") from error
        kind = event.type
        if kind == "ERROR":
            self._raise_status(line)
        wire = event.object
        meta = wire.metadata
        if kind == "BOOKMARK":
            if self._initial is not None:
                self._end_initial(line)
            self.resource_version = meta.resource_version or self.resource_version
            return
        key = object_key(meta)
        if kind == "DELETED":
            self._delete(key)
        elif kind in ("ADDED", "MODIFIED"):
            self._put(key, wire)
        else:
            raise _BrokenStream(f"watch of {self.name}: unknown event type {kind!r}")
        self.resource_version = meta.resource_version or self.resource_version

    def _target(self) -> tuple[ReflectorSink[R] | _Collect, dict[str, bytes]]:
        """Where an event goes, with that sink's digests: a watch-list's initial events are
        collected until the bookmark that ends them."""
        if self._initial is not None:
            return self._initial, self._initial.digests
        return self._sink, self._digests

    def _delete(self, key: str) -> None:
        sink, digests = self._target()
        digests.pop(key, None)
        sink.delete(key)

    def _put(self, key: str, wire: W) -> None:
        """Hand an added or modified object to its sink: the held record renewed when the
        object's digest is the one it was made from, else a conversion."""
        sink, digests = self._target()
        renewal = self._renewal
        if renewal is None:
            record = self._convert(wire, key)
            if record is not None:
                sink.upsert(key, record)
            return
        digest = renewal.digest(wire)
        if digests.get(key) == digest:
            held = sink.get(key)
            if held is not None:
                sink.renew(key, renewal.renew(held, wire))
                return
        record = self._convert(wire, key)
        if record is not None:  # (a skipped object leaves the held record and its digest)
            digests[key] = digest
            sink.upsert(key, record)

    def _handle_misfit(self, line: bytes, error: Exception) -> None:
        """An event whose object does not fit the wire struct: an ERROR Status, a bookmark
        (metadata only), or a bad object (skipped)."""
        try:
            event = self._decode_meta_event(line)
        except _UNDECODABLE as broken:
            raise _BrokenStream(f"watch of {self.name}: {broken}") from broken
        if event.type == "ERROR":
            self._raise_status(line)
        meta = event.object.metadata
        if event.type == "BOOKMARK":
            # kube-apiserver's bookmark object is the type's zero value (a Deployment's says
            # `"containers": null`), which a wire struct for real objects rejects; it carries
            # a resourceVersion and nothing else, so its metadata is all there is to read
            # (and, while a watch-list's initial events come, its annotations).
            if self._initial is not None:
                self._end_initial(line)
            self.resource_version = meta.resource_version or self.resource_version
            return
        self.skipped += 1
        _logger.error(
            "watch event skipped: cannot decode its object",
            extra=fields(
                reflector=self.name,
                type=event.type,
                key=object_key(meta),
                error=str(error),
                json=line[:_LOGGED_BYTES].decode("utf-8", errors="replace"),
            ),
        )
        if event.type == "DELETED":
            self._delete(object_key(meta))
        self.resource_version = meta.resource_version or self.resource_version

    def _raise_status(self, line: bytes) -> None:
        try:
            status = self._decode_status_event(line).object
        except _UNDECODABLE as error:
            raise _BrokenStream(f"watch of {self.name}: ERROR event: {error}") from error
        raise error_from_status(status, code=status.code or 500)
