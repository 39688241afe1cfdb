"""Informer = reflector + store + event handlers, for one resource.

The reflector feeds changes in; the informer applies each to the store and
then calls the handlers, in registration order, one event at a time, in the
reflector's task: so a handler never runs concurrently with another handler
of the same informer, and sees the store already updated. Handlers must be
quick and must not block (they map an event to work-queue keys); one that
raises is logged and the others still run.

A re-list (`replace`) is diffed against the store: new keys are adds,
records that differ are updates, keys gone from the list are deletes (the
handler gets the last record the store held). Unchanged records produce no
event, so a re-list after a dropped watch or a 410 delivers each change
exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from hvpa.kube.client import KubeClient
from hvpa.kube.reflector import Reflector
from hvpa.kube.resources import Resource
from hvpa.kube.settings import WatchSettings
from hvpa.kube.store import IndexFunc, Store, freeze_heap
from hvpa.kube.wire import WireObject
from hvpa.logs import fields

__all__ = ["EventHandler", "Informer", "wait_for_cache_sync"]

_logger = logging.getLogger(__name__)

W = TypeVar("W", bound=WireObject)
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class EventHandler(Generic[R]):
    """Callbacks for one consumer; any may be left out."""

    on_add: Callable[[R], None] | None = None
    on_update: Callable[[R, R], None] | None = None
    on_delete: Callable[[R], None] | None = None


class Informer(Generic[W, R]):
    """A watched, indexed cache of one resource, with change callbacks."""

    def __init__(
        self,
        *,
        client: KubeClient,
        resource: Resource[W, R],
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        indexers: Mapping[str, IndexFunc[R]] | None = None,
        settings: WatchSettings | None = None,
        rng: random.Random | None = None,
        optional: bool = False,
    ) -> None:
        """`optional`: see `Reflector`; an unserved resource syncs as empty."""
        self.resource = resource
        self.namespace = namespace
        self.store: Store[R] = Store(indexers=indexers)
        self._handlers: list[EventHandler[R]] = []
        self._synced = asyncio.Event()
        self.reflector: Reflector[W, R] = Reflector(
            client=client,
            resource=resource,
            sink=self,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            settings=settings,
            rng=rng,
            optional=optional,
        )
        self.name = self.reflector.name

    # -- for consumers ---------------------------------------------------------

    def add_handler(self, handler: EventHandler[R]) -> None:
        """Register callbacks; added after the first sync, they first get an add per record."""
        self._handlers.append(handler)
        if self.has_synced and handler.on_add is not None:
            for record in list(self.store.values()):
                self._call(handler.on_add, record)

    @property
    def has_synced(self) -> bool:
        """The first complete list is in the store."""
        return self._synced.is_set()

    async def wait_synced(self) -> None:
        await self._synced.wait()

    @property
    def served(self) -> bool:
        """False while the server does not serve an optional resource."""
        return self.reflector.served

    @property
    def resource_version(self) -> str:
        return self.reflector.resource_version

    @property
    def size(self) -> int:
        return len(self.store)

    def state(self) -> dict[str, Any]:
        """What /debug/state shows of this informer."""
        reflector = self.reflector
        return {
            "resource": str(self.resource),
            "namespace": self.namespace,
            "synced": self.has_synced,
            "served": reflector.served,
            "resourceVersion": reflector.resource_version,
            "size": self.size,
            "lists": reflector.lists,
            "watches": reflector.watches,
            "skipped": reflector.skipped,
            "lastError": reflector.last_error,
            "indexes": self.store.index_names,
        }

    async def run(self) -> None:
        """List and watch until cancelled."""
        await self.reflector.run()

    # -- from the reflector ----------------------------------------------------

    def replace(self, items: Mapping[str, R]) -> None:
        store = self.store
        vanished = [key for key in store if key not in items]
        for key, record in items.items():
            old = store.get(key)
            if old is None:
                store.upsert(key, record)
                self._dispatch_add(record)
            elif old != record:
                store.upsert(key, record)
                self._dispatch_update(old, record)
        for key in vanished:
            old = store.delete(key)
            if old is not None:
                self._dispatch_delete(old)
        if not self._synced.is_set():
            self._synced.set()
            _logger.info("informer synced", extra=fields(informer=self.name, size=len(store)))

    def upsert(self, key: str, record: R) -> None:
        self._dispatch_change(self.store.upsert(key, record), record)

    def delete(self, key: str) -> None:
        old = self.store.delete(key)
        if old is not None:
            self._dispatch_delete(old)

    def get(self, key: str) -> R | None:
        return self.store.get(key)

    def renew(self, key: str, record: R) -> None:
        """As `upsert`, for a record that is the held one at a newer resourceVersion: the
        handlers see the update as before, the store's indexes are not recomputed."""
        self._dispatch_change(self.store.renew(key, record), record)

    # -- dispatch ------------------------------------------------------------

    def _dispatch_change(self, old: R | None, record: R) -> None:
        """`record` now held in place of `old` (None: it is new)."""
        if old is None:
            self._dispatch_add(record)
        elif old != record:
            self._dispatch_update(old, record)

    def _dispatch_add(self, record: R) -> None:
        for handler in self._handlers:
            if handler.on_add is not None:
                self._call(handler.on_add, record)

    def _dispatch_update(self, old: R, new: R) -> None:
        for handler in self._handlers:
            if handler.on_update is not None:
                self._call(handler.on_update, old, new)

    def _dispatch_delete(self, old: R) -> None:
        for handler in self._handlers:
            if handler.on_delete is not None:
                self._call(handler.on_delete, old)

    def _call(self, callback: Callable[..., None], *records: R) -> None:
        try:
            callback(*records)
        except Exception:
            _logger.exception(
                "event handler failed",
                extra=fields(informer=self.name, handler=getattr(callback, "__qualname__", "?")),
            )


async def wait_for_cache_sync(
    informers: Iterable[Informer[Any, Any]], *, freeze: bool = True
) -> None:
    """Wait for every informer's first full list; then (by default) freeze the heap.

    The caches built by the first sync live as long as the process, so
    `gc.freeze()` takes them out of every later garbage collection.
    """
    await asyncio.gather(*(informer.wait_synced() for informer in informers))
    if freeze:
        freeze_heap()
