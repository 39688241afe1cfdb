"""One small informer per ConfigMap that some Hvpa's `clusterProportional.configMapRef` names.

Why not one informer over every ConfigMap: most clusters hold thousands of
them, some large (CA bundles, dashboards, scripts), and only the few that
cluster-proportional Hvpas name matter. A watch per named ConfigMap
(`fieldSelector=metadata.name=NAME` in its namespace) keeps only those in
memory, sees one created after its Hvpa (a referenced ConfigMap that does not
exist yet is watched too), and never lists anything else; the cost is one
watch connection per distinct name, and cluster-proportional Hvpas are few.

`sync` follows the set of names the Hvpas reference: it starts an informer
for a new name and stops the one for a name no Hvpa references any more. A
reconcile that needs a ConfigMap whose informer has not synced yet is
retried shortly (`synced` is False), rather than deciding on "not found".
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Iterable

from hvpa.aio import Tasks
from hvpa.kube.client import KubeClient
from hvpa.kube.informer import EventHandler, Informer
from hvpa.kube.resources import CONFIGMAPS
from hvpa.kube.settings import WatchSettings
from hvpa.logs import fields
from hvpa.records import ConfigMapRecord, ConfigMapWire

__all__ = ["ConfigMapWatches"]

_logger = logging.getLogger(__name__)

Ref = tuple[str, str]  # (namespace, name)


class ConfigMapWatches:
    def __init__(
        self,
        *,
        client: KubeClient,
        tasks: Tasks,
        settings: WatchSettings,
        allowed: Callable[[str], bool],
        rng: random.Random | None = None,
    ) -> None:
        """`allowed(namespace)`: whether the controller watches that namespace at all."""
        self._client = client
        self._tasks = tasks
        self._handlers: list[EventHandler[ConfigMapRecord]] = []
        self._settings = settings
        self._allowed = allowed
        self._rng = rng
        self._informers: dict[Ref, Informer[ConfigMapWire, ConfigMapRecord]] = {}
        self._runs: dict[Ref, asyncio.Task[None]] = {}

    @property
    def informers(self) -> list[Informer[ConfigMapWire, ConfigMapRecord]]:
        return [self._informers[ref] for ref in sorted(self._informers)]

    def add_handler(self, handler: EventHandler[ConfigMapRecord]) -> None:
        """Callbacks for every ConfigMap watched, now and later."""
        self._handlers.append(handler)
        for informer in self._informers.values():
            informer.add_handler(handler)

    def sync(self, wanted: Iterable[Ref]) -> None:
        """Watch exactly the ConfigMaps in `wanted` (those of unwatched namespaces are skipped)."""
        wanted_set = {ref for ref in wanted if self._allowed(ref[0])}
        for ref in sorted(set(self._informers) - wanted_set):
            self._informers.pop(ref)
            task = self._runs.pop(ref)
            task.cancel()
            _logger.info("stopped watching ConfigMap", extra=fields(configmap="/".join(ref)))
        for ref in sorted(wanted_set - set(self._informers)):
            namespace, name = ref
            informer = Informer(
                client=self._client,
                resource=CONFIGMAPS,
                namespace=namespace,
                field_selector=f"metadata.name={name}",
                settings=self._settings,
                rng=self._rng,
            )
            for handler in self._handlers:
                informer.add_handler(handler)
            self._informers[ref] = informer
            self._runs[ref] = self._tasks.start(
                informer.run(), name=f"configmap {namespace}/{name}"
            )
            _logger.info("watching ConfigMap", extra=fields(configmap=f"{namespace}/{name}"))

    def get(self, namespace: str, name: str) -> ConfigMapRecord | None:
        informer = self._informers.get((namespace, name))
        return None if informer is None else informer.store.get(f"{namespace}/{name}")

    def synced(self, namespace: str, name: str) -> bool:
        """True once the ConfigMap's informer has listed (found or not); unwatched: True."""
        informer = self._informers.get((namespace, name))
        return informer is None or informer.has_synced
