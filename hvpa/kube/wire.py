"""msgspec structs for the envelopes around objects: lists, watch events, bare metadata.

The objects inside are the wire structs of `hvpa.records` (PodWire,
NodeWire...), or any struct with a `metadata` carrying name, namespace and
resourceVersion. Lists and events are generic over that type, so one pass of
msgspec over the response bytes yields typed objects with everything else
skipped.
"""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

import msgspec

__all__ = [
    "ListMeta",
    "MetaOnly",
    "ObjectList",
    "ObjectMeta",
    "WatchEvent",
    "WireObject",
    "object_key",
]

T = TypeVar("T")


class WireMeta(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def namespace(self) -> str: ...

    @property
    def resource_version(self) -> str: ...


class WireObject(Protocol):
    """What the reflector needs of a wire struct: its metadata."""

    @property
    def metadata(self) -> WireMeta: ...


class ObjectMeta(msgspec.Struct, rename="camel"):
    """Just enough metadata to key an object and track its resourceVersion."""

    name: str = ""
    namespace: str = ""
    resource_version: str = ""


class MetaOnly(msgspec.Struct):
    """An object read for its metadata only: a bookmark, or one that failed to decode."""

    metadata: ObjectMeta = msgspec.field(default_factory=ObjectMeta)


class ListMeta(msgspec.Struct, rename="camel"):
    resource_version: str = ""
    continue_: str = msgspec.field(default="", name="continue")
    remaining_item_count: int | None = None


class ObjectList(msgspec.Struct, Generic[T]):
    """A list response (PodList...); `items` is null in an empty list from some servers."""

    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    items: list[T] | None = None


class WatchEvent(msgspec.Struct, Generic[T]):
    """One line of a watch stream: ADDED, MODIFIED, DELETED, BOOKMARK or ERROR."""

    type: str
    object: T


def object_key(meta: WireMeta) -> str:
    """client-go's MetaNamespaceKeyFunc: `namespace/name`, or `name` when cluster-scoped."""
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name
