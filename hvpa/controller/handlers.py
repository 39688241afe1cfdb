"""Event handlers: each maps a change of one object to the keys of the Hvpas it concerns.

Handlers only map; they never read the API, decide or write, so they are
quick enough to run in the informers' tasks. The reconcile that follows is
level-triggered: it reads everything afresh, so a handler that maps too
widely costs a spare reconcile, and one that misses is caught by the
periodic resync.

- pod -> the targets whose selector selects it (old and new labels) -> their Hvpas
- target (Deployment, StatefulSet, ReplicaSet) -> its Hvpas
- VPA -> the Hvpa owning it, and the Hvpas of the target it points at (a VPA
  in a mode other than Off is a conflicting writer)
- HPA -> the Hvpas of its scale target (a conflicting writer)
- node -> every cluster-proportional Hvpa, when schedulability, readiness,
  allocatable or labels change (not on every heartbeat)
- ConfigMap -> the Hvpas whose configMapRef names it
- Hvpa -> itself when its spec or deletion changes (not on its own status
  writes), and the other Hvpas of its target (the older one acts)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from msgspec.structs import replace

from hvpa.api import KIND as HVPA_KIND
from hvpa.controller.cache import Cache
from hvpa.controller.resources import HpaRecord, HvpaRecord, VpaObject
from hvpa.kube.informer import EventHandler
from hvpa.records import ConfigMapRecord, NodeRecord, PodRecord, TargetRecord

__all__ = ["Handlers"]

T = TypeVar("T")


class Handlers:
    """One EventHandler per resource, all feeding `enqueue`."""

    def __init__(
        self,
        *,
        cache: Cache,
        enqueue: Callable[[str], None],
        on_hvpa_change: Callable[[], None] | None = None,
    ) -> None:
        """`on_hvpa_change` runs when the set of configMapRefs may have changed (the
        ConfigMap watches follow it): an Hvpa naming one added or deleted, or a changed ref."""
        self._cache = cache
        self._enqueue = enqueue
        self._on_hvpa_change = on_hvpa_change

    def _add_all(self, keys: Iterable[str]) -> None:
        for key in sorted(set(keys)):
            self._enqueue(key)

    def _mapped(
        self,
        keys: Callable[[T], list[str]],
        on_update: Callable[[T, T], None] | None = None,
    ) -> EventHandler[T]:
        """Queue what `keys` maps an added or deleted object to, and on an update what
        the old and the new object map to (unless `on_update` says otherwise)."""
        return EventHandler(
            on_add=lambda obj: self._add_all(keys(obj)),
            on_update=on_update or (lambda old, new: self._add_all(keys(old) + keys(new))),
            on_delete=lambda obj: self._add_all(keys(obj)),
        )

    # -- pods ------------------------------------------------------------------

    def _pod_keys(self, pod: PodRecord) -> list[str]:
        keys: list[str] = []
        for target in self._cache.targets_selecting(pod):
            keys.extend(
                self._cache.hvpa_keys_for_target(target.namespace, target.kind, target.name)
            )
        return keys

    def pods(self) -> EventHandler[PodRecord]:
        def changed(old: PodRecord, new: PodRecord) -> None:
            # Most pod updates (restart counts, probe times, IPs) change nothing the
            # record keeps: only the resourceVersion moves, and a reconcile would
            # see what it saw before.
            if replace(old, resource_version="") == replace(new, resource_version=""):
                return
            keys = self._pod_keys(new)
            if old.labels != new.labels:
                keys += self._pod_keys(old)
            self._add_all(keys)

        return self._mapped(self._pod_keys, changed)

    # -- targets ---------------------------------------------------------------

    def _target_keys(self, target: TargetRecord) -> list[str]:
        return self._cache.hvpa_keys_for_target(target.namespace, target.kind, target.name)

    def targets(self) -> EventHandler[TargetRecord]:
        return self._mapped(self._target_keys)

    # -- VPAs and HPAs -----------------------------------------------------------

    def _vpa_keys(self, vpa: VpaObject) -> list[str]:
        keys = [f"{vpa.namespace}/{owner.name}" for owner in vpa.owners if owner.kind == HVPA_KIND]
        keys += self._cache.hvpa_keys_for_target(*vpa.target)
        return keys

    def vpas(self) -> EventHandler[VpaObject]:
        return self._mapped(self._vpa_keys)

    def _hpa_keys(self, hpa: HpaRecord) -> list[str]:
        return self._cache.hvpa_keys_for_target(*hpa.target)

    def hpas(self) -> EventHandler[HpaRecord]:
        return self._mapped(self._hpa_keys)

    # -- nodes and ConfigMaps ----------------------------------------------------

    def nodes(self) -> EventHandler[NodeRecord]:
        def changed(old: NodeRecord, new: NodeRecord) -> None:
            if replace(old, resource_version="") != replace(new, resource_version=""):
                self._add_all(self._cache.cluster_proportional_keys())

        return self._mapped(lambda _: self._cache.cluster_proportional_keys(), changed)

    def _config_map_keys(self, config_map: ConfigMapRecord) -> list[str]:
        return self._cache.hvpa_keys_for_config_map(config_map.namespace, config_map.name)

    def config_maps(self) -> EventHandler[ConfigMapRecord]:
        return self._mapped(self._config_map_keys)

    # -- Hvpas -------------------------------------------------------------------

    def _siblings(self, hvpa: HvpaRecord) -> list[str]:
        """The Hvpa and every other Hvpa of its target (which of them acts may change)."""
        target = hvpa.target
        siblings = [] if target is None else self._cache.hvpa_keys_for_target(*target)
        return [hvpa.key, *siblings]

    def _config_map_refs_changed(self, old: HvpaRecord | None, new: HvpaRecord | None) -> None:
        before = old.config_map if old is not None else None
        after = new.config_map if new is not None else None
        if before != after and self._on_hvpa_change is not None:
            self._on_hvpa_change()

    def hvpas(self) -> EventHandler[HvpaRecord]:
        def added(hvpa: HvpaRecord) -> None:
            self._config_map_refs_changed(None, hvpa)
            self._add_all(self._siblings(hvpa))

        def changed(old: HvpaRecord, new: HvpaRecord) -> None:
            self._config_map_refs_changed(old, new)
            if old.generation != new.generation or old.deleting != new.deleting:
                self._add_all(self._siblings(old) + self._siblings(new))

        def deleted(hvpa: HvpaRecord) -> None:
            self._config_map_refs_changed(hvpa, None)
            self._add_all(self._siblings(hvpa))

        return EventHandler(on_add=added, on_update=changed, on_delete=deleted)
