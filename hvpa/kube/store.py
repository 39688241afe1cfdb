"""The informer cache: slim records keyed by namespace/name, with named indexes.

As client-go's thread-safe store and Indexer: an index is a function from a
record to the values it is filed under; the store keeps, per index, a map
from each value to the set of keys filed there, and updates it on every
change by re-running the function on the old record (so no per-record list
of index values is kept: at 100,000 pods, memory is the constraint).

Reads are plain method calls with no locking: the store only changes in the
informer's task, between awaits, so a caller that does not await while it
iterates sees a consistent store. Index lookups return live sets - copy one
before awaiting with it in hand.

`select` finds the records a label selector matches in a namespace from two
indexes (namespace, and namespace + label key=value): the sets of each
equality requirement are intersected, smallest first, and only the survivors
are matched against the whole selector.

`selecting` is the reverse: the records (scale targets) whose selector
matches a given set of labels (a pod's). Each selector is filed under one of
its equality requirements, so a pod's labels name the few candidates.
"""

from __future__ import annotations

import gc
from collections.abc import (
    Callable,
    Hashable,
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    ValuesView,
)
from collections.abc import Set as AbstractSet
from typing import Final, Generic, Protocol, TypeVar

from hvpa.labels import LabelSelector

__all__ = [
    "BY_NAMESPACE",
    "BY_NAMESPACE_LABEL",
    "BY_SELECTOR",
    "IndexFunc",
    "Labelled",
    "Selecting",
    "Store",
    "freeze_heap",
    "index_by_namespace",
    "index_by_namespace_label",
    "index_by_selector",
    "labelled_indexers",
    "select",
    "selecting",
]

R = TypeVar("R")
IndexFunc = Callable[[R], Iterable[Hashable]]

BY_NAMESPACE: Final = "namespace"
BY_NAMESPACE_LABEL: Final = "namespace-label"
BY_SELECTOR: Final = "selector"

_NO_KEYS: Final[AbstractSet[str]] = frozenset()


class Store(Generic[R]):
    """Records by key, plus named indexes from index values to sets of keys."""

    def __init__(self, *, indexers: Mapping[str, IndexFunc[R]] | None = None) -> None:
        self._items: dict[str, R] = {}
        self._indexers: dict[str, IndexFunc[R]] = {}
        self._indexes: dict[str, dict[Hashable, set[str]]] = {}
        if indexers:
            self.add_indexers(indexers)

    # -- reading -------------------------------------------------------------

    def get(self, key: str) -> R | None:
        return self._items.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def keys(self) -> KeysView[str]:
        return self._items.keys()

    def values(self) -> ValuesView[R]:
        return self._items.values()

    def items(self) -> ItemsView[str, R]:
        return self._items.items()

    @property
    def index_names(self) -> list[str]:
        return sorted(self._indexers)

    def index_keys(self, index: str, value: Hashable) -> AbstractSet[str]:
        """Keys filed under `value` in `index` (a live set: do not hold it across an await).

        Raises KeyError for an index the store does not have.
        """
        return self._indexes[index].get(value, _NO_KEYS)

    def by_index(self, index: str, value: Hashable) -> list[R]:
        """Records filed under `value` in `index`, in key order."""
        items = self._items
        return [items[key] for key in sorted(self.index_keys(index, value))]

    def index_values(self, index: str) -> list[Hashable]:
        """Every value with at least one record filed under it in `index`."""
        return list(self._indexes[index])

    # -- indexes -------------------------------------------------------------

    def add_indexers(self, indexers: Mapping[str, IndexFunc[R]]) -> None:
        """Add indexes, filing the records already held; a name may be added only once."""
        for name, func in indexers.items():
            if name in self._indexers:
                raise ValueError(f"index {name!r} already exists")
            index: dict[Hashable, set[str]] = {}
            for key, record in self._items.items():
                for value in func(record):
                    index.setdefault(value, set()).add(key)
            self._indexers[name] = func
            self._indexes[name] = index

    def _file(self, key: str, record: R) -> None:
        for name, func in self._indexers.items():
            _add(self._indexes[name], func(record), key)

    def _unfile(self, key: str, record: R) -> None:
        for name, func in self._indexers.items():
            _discard(self._indexes[name], func(record), key)

    # -- writing (the informer's) ------------------------------------------------

    def upsert(self, key: str, record: R) -> R | None:
        """Insert or replace a record; returns the record it replaced.

        A replacement touches only the index entries whose values changed: most
        updates (a pod's status, a target's replicas) file the record under the
        same values as before, and moving the key out of every set and back in
        was most of an update's cost in the store."""
        old = self._items.get(key)
        self._items[key] = record
        if not self._indexers:
            return old
        if old is None:
            self._file(key, record)
            return old
        for name, func in self._indexers.items():
            old_values = set(func(old))
            new_values = set(func(record))
            if old_values == new_values:
                continue
            index = self._indexes[name]
            _discard(index, old_values - new_values, key)
            _add(index, new_values - old_values, key)
        return old

    def renew(self, key: str, record: R) -> R | None:
        """Replace a record with one filed under the same index values; returns the old one.

        For the held record at a newer resourceVersion (a pod whose update
        changed nothing else of its record): no index function is run. A key
        the store does not hold is inserted as `upsert` inserts it."""
        old = self._items.get(key)
        if old is None:
            return self.upsert(key, record)
        self._items[key] = record
        return old

    def delete(self, key: str) -> R | None:
        """Remove a record; returns it, or None if the store had none."""
        old = self._items.pop(key, None)
        if old is not None and self._indexers:
            self._unfile(key, old)
        return old

    def clear(self) -> None:
        self._items.clear()
        for index in self._indexes.values():
            index.clear()


# ---------------------------------------------------------------------------
# Label selection within a namespace


class Labelled(Protocol):
    """A namespaced record with labels (pods, and any other the controller selects)."""

    @property
    def namespace(self) -> str: ...

    @property
    def labels(self) -> Mapping[str, str]: ...


L = TypeVar("L", bound=Labelled)


def index_by_namespace(record: Labelled) -> tuple[str]:
    return (record.namespace,)


def index_by_namespace_label(record: Labelled) -> Iterator[tuple[str, str, str]]:
    namespace = record.namespace
    return ((namespace, key, value) for key, value in record.labels.items())


def labelled_indexers() -> Mapping[str, IndexFunc[Labelled]]:
    """The two indexes `select` needs, to pass to `Store(indexers=...)`."""
    return {BY_NAMESPACE: index_by_namespace, BY_NAMESPACE_LABEL: index_by_namespace_label}


def select(store: Store[L], *, namespace: str, selector: LabelSelector) -> list[L]:
    """The records in `namespace` that `selector` matches, in key order.

    Needs the indexes of `labelled_indexers`. Each `key=value` or `key in
    (...)` requirement names a set of candidates; the smallest bounds the
    search. A selector with no such requirement (only `!=`, `notin`,
    exists) scans the namespace.
    """
    if selector.nothing:
        return []
    candidate_sets: list[AbstractSet[str]] = []
    for key, values in selector.anchors:
        sets = [store.index_keys(BY_NAMESPACE_LABEL, (namespace, key, value)) for value in values]
        candidate_sets.append(sets[0] if len(sets) == 1 else frozenset().union(*sets))
    if candidate_sets:
        candidate_sets.sort(key=len)
        smallest, others = candidate_sets[0], candidate_sets[1:]
        keys: Iterable[str] = [key for key in smallest if all(key in s for s in others)]
    else:
        keys = store.index_keys(BY_NAMESPACE, namespace)
    found = []
    for key in sorted(keys):
        record = store.get(key)
        if record is not None and selector.matches(record.labels):
            found.append(record)
    return found


# ---------------------------------------------------------------------------
# Which selectors select a set of labels


class Selecting(Protocol):
    """A namespaced record with a label selector (a Deployment, StatefulSet, ReplicaSet)."""

    @property
    def namespace(self) -> str: ...

    @property
    def selector(self) -> LabelSelector: ...


S = TypeVar("S", bound=Selecting)

# The index value of selectors with no equality requirement: checked against every pod.
_UNANCHORED: Final = ""


def index_by_selector(record: Selecting) -> list[tuple[str, str, str]]:
    """File a selector under the values of its first `key=value` / `key in (...)` requirement.

    A selector that selects nothing is filed nowhere; one with no equality
    requirement (`key`, `!key`, `notin`) is filed as unanchored.
    """
    selector = record.selector
    if selector.nothing:
        return []
    anchors = selector.anchors
    if not anchors:
        return [(record.namespace, _UNANCHORED, _UNANCHORED)]
    key, values = anchors[0]
    return [(record.namespace, key, value) for value in values]


def selecting(store: Store[S], *, namespace: str, labels: Mapping[str, str]) -> list[S]:
    """The records in `namespace` whose selector matches `labels`, in key order.

    Needs the `BY_SELECTOR` index (`index_by_selector`). Typical use: the
    scale targets a pod belongs to, when the pod changes.
    """
    keys = set(store.index_keys(BY_SELECTOR, (namespace, _UNANCHORED, _UNANCHORED)))
    for key, value in labels.items():
        keys.update(store.index_keys(BY_SELECTOR, (namespace, key, value)))
    found = []
    for key in sorted(keys):
        record = store.get(key)
        if record is not None and record.selector.matches(labels):
            found.append(record)
    return found


def freeze_heap() -> None:
    """Move everything allocated so far out of the garbage collector's sight.

    Called once after every informer's first full sync: the cache is built
    and lives as long as the process, so scanning it on every collection is
    pure cost (and touching it un-shares copy-on-write pages). Objects
    created later are collected as usual.
    """
    gc.collect()
    gc.freeze()


def _add(index: dict[Hashable, set[str]], values: Iterable[Hashable], key: str) -> None:
    """File `key` under each of `values`."""
    for value in values:
        keys = index.get(value)
        if keys is None:
            index[value] = {key}
        else:
            keys.add(key)


def _discard(index: dict[Hashable, set[str]], values: Iterable[Hashable], key: str) -> None:
    """Take `key` out from under each of `values`, dropping the sets it leaves empty."""
    for value in values:
        keys = index.get(value)
        if keys is None:
            continue
        keys.discard(key)
        if not keys:
            del index[value]
