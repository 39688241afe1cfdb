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

What is kept of a ConfigMap (`PROPORTIONAL_CONFIGMAPS`, `proportional_view`):
an Hvpa names the ConfigMap, but whoever creates an Hvpa may not be allowed
to read that ConfigMap, and whatever hvpa says about it goes into that
Hvpa's status, its Events and /debug/state. So the store keeps a value only
where cluster-proportional-autoscaler would read it - the one key `linear`
or `ladder` of a ConfigMap that has no other key - and every other value is
replaced by its size. A ConfigMap with an `api-key` and a `db-password`
then reads, in any message, as `map[api-key:<12 bytes> db-password:<8 bytes>]`:
key names and sizes, never data. Which ConfigMap is read at all is decided
by the Hvpa record (`HvpaRecord.config_map`): the Hvpa's own namespace only,
whatever `configMapRef.namespace` says.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Iterable, Mapping
from typing import Final

from hvpa.aio import Tasks
from hvpa.kube.client import KubeClient
from hvpa.kube.informer import EventHandler, Informer
from hvpa.kube.resources import Resource
from hvpa.kube.settings import WatchSettings
from hvpa.logs import fields
from hvpa.records import ConfigMapRecord, ConfigMapWire, configmap_from_wire

__all__ = ["PROPORTIONAL_CONFIGMAPS", "ConfigMapWatches", "proportional_view", "redacted"]

_logger = logging.getLogger(__name__)

Ref = tuple[str, str]  # (namespace, name)

# cluster-proportional-autoscaler's two control modes, the only keys whose value it reads.
_PARAMETER_KEYS: Final = frozenset({"linear", "ladder"})


def redacted(value: str) -> str:
    """What stands for a value that is not kept: its size in bytes (UTF-8), nothing of it."""
    return f"<{len(value.encode())} bytes>"


def proportional_data(data: Mapping[str, str]) -> dict[str, str]:
    """`data` with every value redacted but the parameters of a one-key CPA ConfigMap."""
    if len(data) == 1 and set(data) <= _PARAMETER_KEYS:
        return dict(data)
    return {key: redacted(value) for key, value in data.items()}


def proportional_view(wire: ConfigMapWire) -> ConfigMapRecord:
    """A ConfigMap as cluster-proportional scaling may read it (see the module's docstring)."""
    record = configmap_from_wire(wire)
    return ConfigMapRecord(
        namespace=record.namespace,
        name=record.name,
        data=proportional_data(record.data),
        resource_version=record.resource_version,
        sizes=record.sizes,
    )


# ConfigMaps as every reader of configMapRef gets them: the informers here, `hvpa explain`.
PROPORTIONAL_CONFIGMAPS: Resource[ConfigMapWire, ConfigMapRecord] = Resource(
    "", "v1", "configmaps", "ConfigMap", True, ConfigMapWire, proportional_view
)


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
                resource=PROPORTIONAL_CONFIGMAPS,
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
