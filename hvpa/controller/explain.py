"""`hvpa explain`: what the controller would decide for one Hvpa now, from plain reads.

No informers and no writes: one GET or LIST per object kind the decision
needs (the Hvpa, its target, the target's pods by its selector, nodes for a
cluster-proportional Hvpa, the named ConfigMap, and the namespace's VPAs,
HPAs and Hvpas for ownership and conflicts), put into the same `Cache`
shape the informers fill, then the same snapshot builder, metrics reader
and `decide` as a reconcile. So what it prints is what the controller would
do on its next reconcile, give or take what changes in between. `hvpa
recommend` fills the same cache from a scenario file (`hvpa.scenario`).

What can go wrong: the Hvpa is missing (`ExplainError`), or invalid
(`ExplainError` listing every problem, as the InvalidSpec condition would);
an API error other than a missing target or ConfigMap, or an API the cluster
does not serve (no VPA CRD: no VPAs, as the controller's optional informers
see it), is raised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from hvpa.controller.cache import Cache
from hvpa.controller.configmaps import PROPORTIONAL_CONFIGMAPS
from hvpa.controller.metricsapi import MetricsReader
from hvpa.controller.resources import HPAS, HVPAS, OWNED_VPAS, HvpaRecord
from hvpa.controller.snapshot import complete, prepare
from hvpa.engine.decide import decide
from hvpa.engine.decision import Decision
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.client import KubeClient, Params
from hvpa.kube.errors import NotFound
from hvpa.kube.resources import NODES, PODS, TARGETS, Resource
from hvpa.kube.settings import WatchSettings
from hvpa.kube.wire import ObjectList, WireObject
from hvpa.records import ConfigMapRecord, TargetRecord

__all__ = ["ExplainError", "explain"]

W = TypeVar("W", bound=WireObject)
R = TypeVar("R")


class ExplainError(Exception):
    """The Hvpa cannot be explained: it is missing or invalid."""


async def _get(
    client: KubeClient, resource: Resource[W, R], namespace: str | None, name: str
) -> R | None:
    try:
        body = await client.get(resource.path(namespace=namespace, name=name))
    except NotFound:
        return None
    return resource.convert(msgspec.json.decode(body, type=resource.wire_type))


async def _list(
    client: KubeClient,
    resource: Resource[W, R],
    namespace: str | None,
    params: Params | None = None,
    *,
    optional: bool = False,
) -> list[R]:
    """Every object of a LIST, page by page as the informers list (so each page's read
    is bounded); `optional`: an API the server does not serve lists as empty."""
    watch = WatchSettings()
    wire: Any = resource.wire_type
    records: list[R] = []
    token = ""
    while True:
        query = {**(params or {}), "limit": watch.page_size}
        if token:
            query["continue"] = token
        try:
            body = await client.get(
                resource.path(namespace=namespace),
                params=query,
                max_response_bytes=watch.max_list_page_bytes,
            )
        except NotFound:
            if not optional:
                raise
            return []
        page: ObjectList[W] = msgspec.json.decode(body, type=ObjectList[wire])
        records += [resource.convert(item) for item in page.items or ()]
        token = page.metadata.continue_
        if not token:
            return records


async def explain(
    *,
    client: KubeClient,
    namespace: str,
    name: str,
    engine: EngineSettings,
    clock: Callable[[], float],
    metrics_timeout_seconds: float,
) -> Decision:
    """The Decision the controller would make for `namespace/name` at `clock()`."""
    record: HvpaRecord | None = await _get(client, HVPAS, namespace, name)
    if record is None:
        raise ExplainError(f"Hvpa {namespace}/{name} not found")
    if record.hvpa is None:
        raise ExplainError(
            f"Hvpa {namespace}/{name} is invalid (nothing is scaled): " + "; ".join(record.problems)
        )
    hvpa = record.hvpa
    ref = hvpa.spec.target_ref
    resource = TARGETS.get(ref.kind)
    target: TargetRecord | None = None
    if resource is not None:
        target = await _get(client, resource, namespace, ref.name)
    pods = []
    if target is not None and not target.selector.nothing:
        pods = await _list(client, PODS, namespace, {"labelSelector": str(target.selector)})
    nodes = await _list(client, NODES, None) if hvpa.spec.cluster_proportional is not None else []
    config_maps: list[ConfigMapRecord] = []
    if record.config_map is not None:
        found = await _get(client, PROPORTIONAL_CONFIGMAPS, *record.config_map)
        config_maps = [found] if found is not None else []
    cache = Cache.of_records(
        hvpas=await _list(client, HVPAS, namespace),
        pods=pods,
        nodes=nodes,
        targets=[target] if target is not None else [],
        vpas=await _list(client, OWNED_VPAS, namespace, optional=True),
        hpas=await _list(client, HPAS, namespace, optional=True),
        config_maps=config_maps,
    )
    prepared = prepare(record, cache)
    reader = MetricsReader(client=client, timeout_seconds=metrics_timeout_seconds)
    snapshot = complete(prepared, await reader.read(prepared.queries))
    return decide(hvpa, snapshot, clock(), engine)
