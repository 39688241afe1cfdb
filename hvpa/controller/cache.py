"""The controller's view of the cluster: the informers' stores, their indexes, and lookups.

The live controller fills the stores from informers; `hvpa explain` fills
the same stores from one LIST each (`Cache.of_records`). Either way the
snapshot builder and the event handlers read the cluster only through this
class, so both see the same rules (which pods a target selects, which VPA an
Hvpa owns, who else scales a target).

Indexes, besides the pods' label indexes that `select` needs:
- targets by selector (`selecting`: the targets a pod's labels belong to);
- Hvpas, HPAs and VPAs by target (namespace, kind, name);
- Hvpas by the ConfigMap their configMapRef names, and by whether they are
  cluster-proportional (a node change concerns only those);
- VPAs by the uid of their controlling owner.

Lookups return copies (tuples, lists), never the stores' live index sets, so
a caller may await with a result in hand.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping
from typing import Final, Generic, Protocol, TypeVar

from hvpa.controller.resources import HpaRecord, HvpaRecord, VpaObject
from hvpa.kube.resources import TARGETS
from hvpa.kube.store import (
    BY_SELECTOR,
    IndexFunc,
    Store,
    index_by_selector,
    labelled_indexers,
    select,
    selecting,
)
from hvpa.labels import LabelSelector
from hvpa.records import ConfigMapRecord, NodeRecord, PodRecord, TargetRecord

__all__ = [
    "BY_CLUSTER_PROPORTIONAL",
    "BY_CONFIG_MAP",
    "BY_OWNER",
    "BY_READER_NAMESPACE",
    "BY_TARGET",
    "TARGET_KINDS",
    "Cache",
    "ConfigMapSource",
    "Partitioned",
    "StaticConfigMaps",
    "hpa_indexers",
    "hvpa_indexers",
    "pod_indexers",
    "target_indexers",
    "vpa_indexers",
]

R = TypeVar("R")

BY_TARGET: Final = "target"
BY_CONFIG_MAP: Final = "config-map"
BY_CLUSTER_PROPORTIONAL: Final = "cluster-proportional"
BY_OWNER: Final = "owner"
# The namespace of each Hvpa that reads metrics: a valid one not being deleted.
BY_READER_NAMESPACE: Final = "reader-namespace"

# The kinds an Hvpa may target; each has its own informer and store.
TARGET_KINDS: Final = tuple(TARGETS)


def _reader_namespace(record: HvpaRecord) -> tuple[str, ...]:
    """Its namespace for an Hvpa whose reconcile reads metrics; none for one that does not
    (invalid: it stops at InvalidSpec; deleting: the reconciler leaves it)."""
    if record.hvpa is None or record.deleting:
        return ()
    return (record.namespace,)


def _hvpa_target(record: HvpaRecord) -> tuple[tuple[str, str, str], ...]:
    target = record.target
    return () if target is None else (target,)


def _hvpa_config_map(record: HvpaRecord) -> tuple[tuple[str, str], ...]:
    ref = record.config_map
    return () if ref is None else (ref,)


def _hvpa_proportional(record: HvpaRecord) -> tuple[bool, ...]:
    return (True,) if record.cluster_proportional else ()


def hvpa_indexers() -> Mapping[str, IndexFunc[HvpaRecord]]:
    return {
        BY_READER_NAMESPACE: _reader_namespace,
        BY_TARGET: _hvpa_target,
        BY_CONFIG_MAP: _hvpa_config_map,
        BY_CLUSTER_PROPORTIONAL: _hvpa_proportional,
    }


def _hpa_target(record: HpaRecord) -> tuple[tuple[str, str, str]]:
    return (record.target,)


def hpa_indexers() -> Mapping[str, IndexFunc[HpaRecord]]:
    return {BY_TARGET: _hpa_target}


def _vpa_target(record: VpaObject) -> tuple[tuple[str, str, str]]:
    return (record.target,)


def _vpa_owner(record: VpaObject) -> tuple[str, ...]:
    uid = record.controller_uid()
    return () if uid is None else (uid,)


def vpa_indexers() -> Mapping[str, IndexFunc[VpaObject]]:
    return {BY_TARGET: _vpa_target, BY_OWNER: _vpa_owner}


def target_indexers() -> Mapping[str, IndexFunc[TargetRecord]]:
    return {BY_SELECTOR: index_by_selector}


def pod_indexers() -> Mapping[str, IndexFunc[PodRecord]]:
    return labelled_indexers()


class ConfigMapSource(Protocol):
    """Where the ConfigMaps named by configMapRef come from."""

    def get(self, namespace: str, name: str) -> ConfigMapRecord | None: ...

    def synced(self, namespace: str, name: str) -> bool:
        """False while the ConfigMap has not been looked for yet (its informer is starting)."""
        ...


class StaticConfigMaps:
    """ConfigMaps read once (by `hvpa explain`); every name counts as looked for."""

    def __init__(self, records: Iterable[ConfigMapRecord]) -> None:
        self._records = {(r.namespace, r.name): r for r in records}

    def get(self, namespace: str, name: str) -> ConfigMapRecord | None:
        return self._records.get((namespace, name))

    def synced(self, namespace: str, name: str) -> bool:
        return True


class Partitioned(Generic[R]):
    """One resource's stores, one per watched namespace (or one for all namespaces).

    `hvpa run --namespace a --namespace b` runs one informer per namespace, so
    a namespaced RBAC Role suffices; every lookup of the controller is within
    one namespace, so it goes to that namespace's store. Keys are
    `namespace/name`, as in each store.
    """

    def __init__(self, stores: Mapping[str | None, Store[R]]) -> None:
        """`stores`: by namespace; the key None holds a store of every namespace."""
        self._stores = dict(stores)

    @classmethod
    def single(cls, store: Store[R]) -> Partitioned[R]:
        return cls({None: store})

    def for_namespace(self, namespace: str) -> Store[R] | None:
        every = self._stores.get(None)
        return every if every is not None else self._stores.get(namespace)

    def get(self, key: str) -> R | None:
        namespace, _, _ = key.partition("/")
        store = self.for_namespace(namespace)
        return None if store is None else store.get(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __iter__(self) -> Iterator[str]:
        for store in self._stores.values():
            yield from store

    def __len__(self) -> int:
        return sum(len(store) for store in self._stores.values())

    def index_values(self, index: str) -> set[Hashable]:
        """Every value something is filed under, across every store."""
        values: set[Hashable] = set()
        for store in self._stores.values():
            values.update(store.index_values(index))
        return values

    def count(self, index: str, value: Hashable) -> int:
        """How many keys are filed under `value`, across every store."""
        return sum(len(store.index_keys(index, value)) for store in self._stores.values())

    def index_keys(self, index: str, value: Hashable) -> list[str]:
        """Sorted keys filed under `value`, across every store (a copy)."""
        keys: set[str] = set()
        for store in self._stores.values():
            keys.update(store.index_keys(index, value))
        return sorted(keys)


class Cache:
    """Read access to every store the controller keeps."""

    def __init__(
        self,
        *,
        hvpas: Partitioned[HvpaRecord],
        pods: Partitioned[PodRecord],
        nodes: Store[NodeRecord],
        targets: Mapping[str, Partitioned[TargetRecord]],
        vpas: Partitioned[VpaObject],
        hpas: Partitioned[HpaRecord],
        config_maps: ConfigMapSource,
    ) -> None:
        missing = set(TARGET_KINDS) - set(targets)
        if missing:
            raise ValueError(f"no store for target kinds {sorted(missing)}")
        self.hvpas = hvpas
        self.pods = pods
        self.nodes = nodes
        self.targets = targets
        self.vpas = vpas
        self.hpas = hpas
        self.config_maps = config_maps

    @classmethod
    def of_records(
        cls,
        *,
        hvpas: Iterable[HvpaRecord] = (),
        pods: Iterable[PodRecord] = (),
        nodes: Iterable[NodeRecord] = (),
        targets: Iterable[TargetRecord] = (),
        vpas: Iterable[VpaObject] = (),
        hpas: Iterable[HpaRecord] = (),
        config_maps: Iterable[ConfigMapRecord] = (),
    ) -> Cache:
        """A cache of records read once, with the same indexes as the informers' stores."""
        hvpa_store: Store[HvpaRecord] = Store(indexers=hvpa_indexers())
        for hvpa in hvpas:
            hvpa_store.upsert(hvpa.key, hvpa)
        pod_store: Store[PodRecord] = Store(indexers=pod_indexers())
        for pod in pods:
            pod_store.upsert(pod.key, pod)
        node_store: Store[NodeRecord] = Store()
        for node in nodes:
            node_store.upsert(node.name, node)
        target_stores: dict[str, Store[TargetRecord]] = {
            kind: Store(indexers=target_indexers()) for kind in TARGET_KINDS
        }
        for target in targets:
            if target.kind in target_stores:
                target_stores[target.kind].upsert(target.key, target)
        vpa_store: Store[VpaObject] = Store(indexers=vpa_indexers())
        for vpa in vpas:
            vpa_store.upsert(f"{vpa.namespace}/{vpa.name}", vpa)
        hpa_store: Store[HpaRecord] = Store(indexers=hpa_indexers())
        for hpa in hpas:
            hpa_store.upsert(f"{hpa.namespace}/{hpa.name}", hpa)
        return cls(
            hvpas=Partitioned.single(hvpa_store),
            pods=Partitioned.single(pod_store),
            nodes=node_store,
            targets={kind: Partitioned.single(store) for kind, store in target_stores.items()},
            vpas=Partitioned.single(vpa_store),
            hpas=Partitioned.single(hpa_store),
            config_maps=StaticConfigMaps(config_maps),
        )

    # -- reading for a snapshot ------------------------------------------------

    def target(self, namespace: str, kind: str, name: str) -> TargetRecord | None:
        store = self.targets.get(kind)
        return None if store is None else store.get(f"{namespace}/{name}")

    def pods_of(self, target: TargetRecord) -> tuple[PodRecord, ...]:
        """The pods the target's selector selects in its namespace, as the API would list them."""
        store = self.pods.for_namespace(target.namespace)
        if store is None:
            return ()
        return tuple(select(store, namespace=target.namespace, selector=target.selector))

    def all_nodes(self) -> tuple[NodeRecord, ...]:
        nodes = (self.nodes.get(key) for key in sorted(self.nodes))
        return tuple(node for node in nodes if node is not None)

    def owned_vpa(self, hvpa: HvpaRecord, selector: LabelSelector | None) -> VpaObject | None:
        """The VPA this Hvpa controls (owner reference) and `vpa.selector` selects; oldest name first."""
        for key in self.vpas.index_keys(BY_OWNER, hvpa.uid):
            vpa = self.vpas.get(key)
            if vpa is not None and vpa.namespace == hvpa.namespace and vpa.selected_by(selector):
                return vpa
        return None

    def vpas_targeting(self, target: tuple[str, str, str]) -> list[VpaObject]:
        found = (self.vpas.get(key) for key in self.vpas.index_keys(BY_TARGET, target))
        return [vpa for vpa in found if vpa is not None]

    def hpas_targeting(self, target: tuple[str, str, str]) -> list[HpaRecord]:
        found = (self.hpas.get(key) for key in self.hpas.index_keys(BY_TARGET, target))
        return [hpa for hpa in found if hpa is not None]

    def hvpas_targeting(self, target: tuple[str, str, str]) -> list[HvpaRecord]:
        found = (self.hvpas.get(key) for key in self.hvpa_keys_for_target(*target))
        return [hvpa for hvpa in found if hvpa is not None]

    # -- for the event handlers --------------------------------------------------

    def hvpa_keys_for_target(self, namespace: str, kind: str, name: str) -> list[str]:
        return self.hvpas.index_keys(BY_TARGET, (namespace, kind, name))

    def hvpa_keys_for_config_map(self, namespace: str, name: str) -> list[str]:
        return self.hvpas.index_keys(BY_CONFIG_MAP, (namespace, name))

    def config_map_refs(self) -> set[tuple[str, str]]:
        """(namespace, name) of every ConfigMap a valid Hvpa's configMapRef names."""
        return {ref for ref in self.hvpas.index_values(BY_CONFIG_MAP) if isinstance(ref, tuple)}

    def cluster_proportional_keys(self) -> list[str]:
        return self.hvpas.index_keys(BY_CLUSTER_PROPORTIONAL, True)

    def targets_selecting(self, pod: PodRecord) -> list[TargetRecord]:
        found: list[TargetRecord] = []
        for kind in TARGET_KINDS:
            store = self.targets[kind].for_namespace(pod.namespace)
            if store is not None:
                found.extend(selecting(store, namespace=pod.namespace, labels=pod.labels))
        return found

    def hvpa_keys(self) -> list[str]:
        return sorted(self.hvpas)

    def pod_name(self, namespace: str, name: str) -> str:
        """The pod store's copy of pod `name`'s name (`name` itself for a pod it does not
        hold): what a kept PodMetrics answer shares instead of a copy per period."""
        pod = self.pods.get(f"{namespace}/{name}")
        return pod.name if pod is not None else name

    def metrics_readers_in(self, namespace: str) -> int:
        """How many Hvpas of `namespace` read metrics (valid, not being deleted): whether one
        namespace-wide PodMetrics read would serve more than one reader
        (controller/shared_pod_metrics.py). An invalid or deleting Hvpa reads nothing, so it
        must not make a single reader's namespace read whole."""
        return self.hvpas.count(BY_READER_NAMESPACE, namespace)
