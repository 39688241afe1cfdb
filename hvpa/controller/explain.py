"""`hvpa explain`: what the controller would decide for one Hvpa now, from plain reads.

No informers and no writes: one GET or LIST per object kind the decision
needs (the Hvpa, its target, the target's pods by its selector, nodes for a
cluster-proportional Hvpa, the named ConfigMap, and the namespace's VPAs,
HPAs and Hvpas for ownership and conflicts), put into the same `Cache`
shape the informers fill, then the same snapshot builder, metrics reader
and `decide` as a reconcile. So what it prints is what the controller would
do on its next reconcile, give or take what changes in between. `hvpa
recommend` fills the same cache from a scenario file (`hvpa.scenario`).

Its `now` is the cluster's, not this machine's (`cluster_clock`): the API
server's `Date` header, which is the clock the controller beside it keeps
(and the simulator's virtual one under `hvpa sim --keep-running`), so a
laptop whose clock is off, or a simulated cluster living in another year,
is explained as the controller would decide it; the explanation's first line
says which clock it read, and by how much this machine's differs.

What can go wrong: the Hvpa is missing (`ExplainError`), or invalid
(`ExplainError` listing every problem, as the InvalidSpec condition would);
an API error other than a missing target or ConfigMap, or an API the cluster
does not serve (no VPA CRD: no VPAs, as the controller's optional informers
see it), is raised.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import msgspec

from hvpa.controller.cache import Cache
from hvpa.controller.configmaps import PROPORTIONAL_CONFIGMAPS
from hvpa.controller.metricsapi import MetricsReader
from hvpa.controller.resources import HPAS, HVPAS, OWNED_VPAS, HvpaRecord
from hvpa.controller.snapshot import complete, prepare
from hvpa.durations import human_duration
from hvpa.engine.decide import decide
from hvpa.engine.decision import Decision
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.client import KubeClient, Params
from hvpa.kube.errors import NotFound
from hvpa.kube.resources import NODES, PODS, TARGETS, Resource
from hvpa.kube.settings import WatchSettings
from hvpa.kube.wire import ObjectList, WireObject
from hvpa.records import ConfigMapRecord, TargetRecord

__all__ = ["ClusterClock", "ExplainError", "cluster_clock", "explain"]

W = TypeVar("W", bound=WireObject)
R = TypeVar("R")


class ExplainError(Exception):
    """The Hvpa cannot be explained: it is missing or invalid."""


# A Date header has whole seconds, and the request takes some time: a difference under this
# is no difference worth mentioning.
_NOTABLE_SKEW_SECONDS: Final = 5.0


@dataclass(frozen=True, slots=True)
class ClusterClock:
    """The cluster's now, as this machine's clock plus the offset measured once."""

    offset_seconds: float
    source: str
    local: Callable[[], float] = time.time

    def now(self) -> float:
        return self.local() + self.offset_seconds

    def describe(self) -> str:
        """What the explanation's first line says about its time."""
        if abs(self.offset_seconds) < _NOTABLE_SKEW_SECONDS:
            return self.source
        side = "behind" if self.offset_seconds > 0 else "ahead"
        # Written as kubectl writes an age (`689d`, `3h`), the span a reader compares it with.
        span = human_duration(abs(self.offset_seconds))
        return f"{self.source}; this machine's clock is {span} {side}"


async def cluster_clock(client: KubeClient, local: Callable[[], float] = time.time) -> ClusterClock:
    """The API server's clock (its Date header), else this machine's, saying which."""
    before = local()
    server = await client.server_time()
    if server is None:
        return ClusterClock(0.0, "this machine's clock (the API server sent no Date)", local)
    # The server stamped its Date somewhere within the request; its middle is the best guess.
    offset = server - (before + local()) / 2
    return ClusterClock(offset, "the API server's clock, from its Date header", local)


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
    clock_source: str = "",
) -> Decision:
    """The Decision the controller would make for `namespace/name` at `clock()`;
    `clock_source` (`ClusterClock.describe`) is added to the explanation's first line."""
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
    decision = decide(hvpa, snapshot, clock(), engine)
    if not clock_source:
        return decision
    first, *rest = decision.explanation
    return dataclasses.replace(decision, explanation=(f"{first} ({clock_source})", *rest))
