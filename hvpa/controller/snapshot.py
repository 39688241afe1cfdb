"""The one place a Snapshot is built: from the cache, plus the metric readings it asks for.

Building is two steps because the metric reads are I/O and the rest is not:
`prepare` reads the cache (without awaiting, so it sees one consistent
state) and says which metric queries the decision needs; the caller reads
them (`hvpa.controller.metricsapi`; `hvpa recommend` answers them from its
scenario) and `complete` adds the readings. The live reconcile, `hvpa
explain` and `hvpa recommend` all go through here, so they decide on the
same inputs by the same rules: the target's pods are those its selector
selects in the Hvpa's namespace, nodes are passed only to
cluster-proportional Hvpas, the VPA is the one the Hvpa owns and selects
(when `vpa.deploy`; a VPA of its name that it does not own is named in
`vpa_name_taken`, for the condition that says so), and every other HPA, VPA
and valid Hvpa of the target is reported as a writer.

Nothing here imports a Kubernetes client or HTTP (an import contract in
pyproject.toml keeps it so): `hvpa recommend` builds its snapshot here and
must start fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import msgspec

from hvpa.api.resource import Hvpa
from hvpa.controller.cache import Cache
from hvpa.controller.resources import HvpaRecord, VpaObject, vpa_selector
from hvpa.controller.vpa import vpa_name
from hvpa.engine.decision import Snapshot
from hvpa.engine.guards import HORIZONTAL_POD_AUTOSCALER, Writer, writer_from_hvpa, writer_from_vpa
from hvpa.engine.metrics import (
    ExternalMetricQuery,
    MetricQuery,
    MetricReadError,
    MetricReading,
    ObjectMetricQuery,
    PodsMetricQuery,
    metric_queries,
    needs_pod_usage,
)
from hvpa.records import ConfigMapRecord, TargetRecord, check_readable, parse_time

__all__ = ["Prepared", "SnapshotInputs", "complete", "prepare"]


@dataclass(frozen=True, slots=True)
class Prepared:
    """A snapshot without metrics, the queries it still needs, and what it was built from."""

    hvpa: Hvpa
    snapshot: Snapshot
    queries: tuple[MetricQuery, ...]
    vpa: VpaObject | None
    # ConfigMaps the Hvpa names whose informer has not listed yet: decide later.
    unsynced_config_maps: tuple[tuple[str, str], ...] = ()

    @property
    def target(self) -> TargetRecord | None:
        return self.snapshot.target


def _config_maps(
    record: HvpaRecord, cache: Cache
) -> tuple[tuple[ConfigMapRecord, ...], tuple[tuple[str, str], ...]]:
    ref = record.config_map
    if ref is None:
        return (), ()
    if not cache.config_maps.synced(*ref):
        return (), (ref,)
    found = cache.config_maps.get(*ref)
    return ((found,) if found is not None else ()), ()


def _writers(record: HvpaRecord, cache: Cache) -> tuple[Writer, ...]:
    """Every other HPA, VPA and valid Hvpa that targets the same workload."""
    target = record.target
    if target is None:
        return ()
    writers = [
        Writer(
            HORIZONTAL_POD_AUTOSCALER,
            hpa.namespace,
            hpa.name,
            hpa.target_kind,
            hpa.target_name,
            created=parse_time(hpa.creation_timestamp),
        )
        for hpa in cache.hpas_targeting(target)
    ]
    writers += [writer_from_vpa(vpa.record) for vpa in cache.vpas_targeting(target)]
    writers += [
        writer_from_hvpa(other.hvpa)
        for other in cache.hvpas_targeting(target)
        if other.hvpa is not None and other.key != record.key
    ]
    return tuple(writers)


def _name_taken(record: HvpaRecord, hvpa: Hvpa, cache: Cache) -> str:
    """The VPA that holds `<hvpa>-vpa` without being this Hvpa's, described; "" when none."""
    found = cache.vpas.get(f"{record.namespace}/{vpa_name(hvpa)}")
    if found is None or found.controller_uid() == record.uid:
        return ""
    where = f"VerticalPodAutoscaler {found.namespace}/{found.name}"
    controller = next((owner for owner in found.owners if owner.controller), None)
    if controller is None:
        return f"{where} (no controller owns it)"
    if (controller.kind, controller.name) == ("Hvpa", record.name):
        return f"{where} (controlled by an earlier Hvpa {record.name}, uid {controller.uid})"
    return f"{where} (controlled by {controller.kind} {controller.name})"


def prepare(record: HvpaRecord, cache: Cache) -> Prepared:
    """Read everything but the metrics for a valid Hvpa (`record.hvpa` set).

    Raises UnreadableInput (a RecordError) naming each field of the target,
    its pods, the nodes or the VPA that holds a quantity hvpa cannot use."""
    hvpa = record.hvpa
    if hvpa is None:
        raise ValueError(f"Hvpa {record.key} is invalid; there is nothing to decide")
    namespace = record.namespace
    ref = hvpa.spec.target_ref
    target = cache.target(namespace, ref.kind, ref.name)
    config_maps, unsynced = _config_maps(record, cache)
    vpa = cache.owned_vpa(record, vpa_selector(hvpa)) if hvpa.spec.vpa.deploy else None
    queries: tuple[MetricQuery, ...] = ()
    if target is not None:
        template = hvpa.spec.hpa.template.spec
        queries = metric_queries(
            template.metrics if template is not None else (),
            namespace,
            target.selector,
            pod_usage=needs_pod_usage(hvpa.spec),
        )
    snapshot = Snapshot(
        target=target,
        pods=cache.pods_of(target) if target is not None else (),
        nodes=cache.all_nodes() if hvpa.spec.cluster_proportional is not None else (),
        config_maps=config_maps,
        vpa=vpa.record if vpa is not None else None,
        writers=_writers(record, cache),
        vpa_name_taken=_name_taken(record, hvpa, cache)
        if hvpa.spec.vpa.deploy and vpa is None
        else "",
    )
    check_readable((snapshot.target, snapshot.vpa, *snapshot.pods, *snapshot.nodes))
    return Prepared(hvpa, snapshot, queries, vpa, unsynced)


def complete(prepared: Prepared, readings: Mapping[MetricQuery, MetricReading]) -> Snapshot:
    """The snapshot with the readings of its queries."""
    return replace(prepared.snapshot, metrics=dict(readings))


# ---------------------------------------------------------------------------
# Descriptions for /debug/state and logs


def _describe_query(query: MetricQuery) -> str:
    if isinstance(query, PodsMetricQuery):
        return f"custom.metrics.k8s.io pods/{query.metric} selector {query.selector}"
    if isinstance(query, ObjectMetricQuery):
        return f"custom.metrics.k8s.io {query.kind}/{query.name} {query.metric}"
    if isinstance(query, ExternalMetricQuery):
        return f"external.metrics.k8s.io {query.metric}"
    return f"metrics.k8s.io pods selector {query.selector}"


def _reading_outcome(reading: MetricReading) -> int | MetricReadError:
    """What /debug/state tells of a reading: how many items it held, or its error."""
    return reading if isinstance(reading, MetricReadError) else len(reading.items)


def _describe_outcome(outcome: int | MetricReadError) -> dict[str, Any]:
    if isinstance(outcome, MetricReadError):
        return {"error": outcome.message}
    return {"items": outcome}


class SnapshotInputs(msgspec.Struct, frozen=True):
    """What a decision was made from, as /debug/state shows it, described when shown.

    Every reconcile leaves one for its Hvpa and few are ever read, so the
    reconcile keeps the parts (immutable, and held by the snapshot already)
    instead of spelling them out: the selectors, the writers and the counts
    cost more to describe than the rest of the bookkeeping. The pods and nodes
    are kept as counts, not the snapshot's tuples, so an Hvpa's entry does not
    hold a cluster-proportional Hvpa's every node until its next reconcile;
    likewise a metric reading is kept as its item count or its error, not its
    items: every Hvpa holding its last reading kept the previous period's
    PodMetrics of every pod alive (577 against 520 MiB at 10,000 Hvpas,
    docs/benchmarks.md).
    A struct, not a frozen dataclass, whose __init__ cost more than the dict it
    replaces."""

    target: TargetRecord | None
    pods: int
    nodes: int
    vpa: str | None
    config_maps: tuple[str, ...]  # namespace/name: a record would hold its data
    writers: tuple[Writer, ...]
    metrics: tuple[tuple[MetricQuery, int | MetricReadError], ...]

    @classmethod
    def of(cls, snapshot: Snapshot, vpa: VpaObject | None) -> SnapshotInputs:
        return cls(
            target=snapshot.target,
            pods=len(snapshot.pods),
            nodes=len(snapshot.nodes),
            vpa=None if vpa is None else vpa.name,
            config_maps=tuple(f"{c.namespace}/{c.name}" for c in snapshot.config_maps),
            writers=snapshot.writers,
            metrics=tuple(
                (query, _reading_outcome(reading)) for query, reading in snapshot.metrics.items()
            ),
        )

    def describe(self) -> dict[str, Any]:
        target = self.target
        return {
            "target": None
            if target is None
            else {
                "kind": target.kind,
                "name": target.name,
                "resourceVersion": target.resource_version,
                "replicas": target.spec_replicas,
            },
            "pods": self.pods,
            "nodes": self.nodes,
            "vpa": self.vpa,
            "configMaps": list(self.config_maps),
            "writers": [w.describe() for w in self.writers],
            "metrics": [
                {"query": _describe_query(query), **_describe_outcome(outcome)}
                for query, outcome in self.metrics
            ],
        }
