"""Cluster-proportional replicas: cluster-proportional-autoscaler's linear and ladder arithmetic.

Follows kubernetes-sigs/cluster-proportional-autoscaler: the cluster status
counts the nodes the node selector selects (k8sclient), all of them and the
schedulable ones (not cordoned; CPA does not look at readiness), and their
allocatable CPU summed and then rounded up to whole cores; the linear
controller takes the larger of the core and node proposals, each clamped to
min/max, with at least two replicas on a multi-node cluster when asked to
prevent a single point of failure; the ladder controller looks up the last
step whose threshold is at most the count (and may answer 0).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hvpa.api.proportional import (
    ClusterProportionalSpec,
    LadderParams,
    LinearParams,
    ProportionalError,
    parse_configmap_data,
)
from hvpa.engine.explain import Explanation
from hvpa.engine.gomath import int32
from hvpa.engine.metrics import MetricError
from hvpa.quantity import ceil_div
from hvpa.records import ConfigMapRecord, NodeRecord

__all__ = [
    "ClusterStatus",
    "cluster_proportional_replicas",
    "get_cluster_status",
    "get_expected_replicas_from_entries",
    "ladder_replicas",
    "linear_replicas",
]


@dataclass(frozen=True, slots=True)
class ClusterStatus:
    total_nodes: int
    schedulable_nodes: int
    total_cores: int
    schedulable_cores: int


def get_cluster_status(
    nodes: Sequence[NodeRecord], node_selector: Mapping[str, str]
) -> ClusterStatus:
    """GetClusterStatus: node and core counts over the selected nodes."""
    total_nodes = schedulable_nodes = 0
    total_millicores = schedulable_millicores = 0
    selector = tuple(node_selector.items())
    for node in nodes:
        labels = node.labels
        if selector and not all(labels.get(key) == value for key, value in selector):
            continue
        millicores = node.allocatable.cpu or 0
        total_nodes += 1
        total_millicores += millicores
        if not node.unschedulable:
            schedulable_nodes += 1
            schedulable_millicores += millicores
    return ClusterStatus(
        total_nodes,
        schedulable_nodes,
        int32(ceil_div(total_millicores, 1000)),
        int32(ceil_div(schedulable_millicores, 1000)),
    )


def _from_param(resources: int, per_replica: float, params: LinearParams) -> int:
    """getExpectedReplicasFromParam: ceil(resources / per replica), clamped to max then min."""
    if per_replica == 0:
        return 1
    replicas = float(math.ceil(resources / per_replica))
    if params.max != 0:
        replicas = min(float(params.max), replicas)
    return int(max(float(params.min), replicas))


def linear_replicas(params: LinearParams, status: ClusterStatus) -> int:
    """getExpectedReplicasFromParams (linear)."""
    nodes, cores = status.schedulable_nodes, status.schedulable_cores
    if params.include_unschedulable_nodes:
        nodes, cores = status.total_nodes, status.total_cores
    from_cores = _from_param(cores, params.cores_per_replica, params)
    from_nodes = _from_param(nodes, params.nodes_per_replica, params)
    # Prevent a single point of failure: at least two replicas on more than one node.
    if params.prevent_single_point_failure and nodes > 1 and from_nodes < 2:
        from_nodes = 2
    return max(from_cores, from_nodes)


def get_expected_replicas_from_entries(resources: int, entries: Sequence[tuple[int, int]]) -> int:
    """getExpectedReplicasFromEntries: the last step with threshold <= resources (the first if none)."""
    if not entries:
        return 1
    position = next(
        (i for i, (threshold, _) in enumerate(entries) if resources < threshold), len(entries)
    )
    return entries[max(position - 1, 0)][1]


def ladder_replicas(params: LadderParams, status: ClusterStatus) -> int:
    """getExpectedReplicasFromParams (ladder)."""
    nodes, cores = status.schedulable_nodes, status.schedulable_cores
    if params.include_unschedulable_nodes:
        nodes, cores = status.total_nodes, status.total_cores
    from_cores = get_expected_replicas_from_entries(cores, params.cores_to_replicas)
    from_nodes = get_expected_replicas_from_entries(nodes, params.nodes_to_replicas)
    return max(from_cores, from_nodes)


def _params(
    spec: ClusterProportionalSpec, namespace: str, config_maps: Sequence[ConfigMapRecord]
) -> LinearParams | LadderParams:
    if spec.linear is not None:
        return spec.linear
    if spec.ladder is not None:
        return spec.ladder
    if spec.config_map_ref is None:
        raise MetricError("clusterProportional sets none of linear, ladder or configMapRef")
    ref_namespace = spec.config_map_ref.namespace or namespace
    found = next(
        (
            config_map
            for config_map in config_maps
            if config_map.name == spec.config_map_ref.name
            and (config_map.namespace or namespace) == ref_namespace
        ),
        None,
    )
    if found is None:
        raise MetricError(
            f'configmaps "{spec.config_map_ref.name}" not found in namespace {ref_namespace}'
        )
    try:
        return parse_configmap_data(found.data)
    except ProportionalError as error:
        raise MetricError(str(error)) from error


def cluster_proportional_replicas(
    spec: ClusterProportionalSpec,
    namespace: str,
    nodes: Sequence[NodeRecord],
    config_maps: Sequence[ConfigMapRecord],
    explain: Explanation,
) -> int:
    """The CPA's expected replicas; raise MetricError when its parameters cannot be read."""
    params = _params(spec, namespace, config_maps)
    status = get_cluster_status(nodes, spec.node_selector)
    where = f" matching {dict(spec.node_selector)}" if spec.node_selector else ""
    explain.add(
        f"{status.total_nodes} nodes{where} ({status.schedulable_nodes} schedulable), "
        f"{status.total_cores} cores ({status.schedulable_cores} schedulable; allocatable CPU "
        "summed, rounded up)"
    )
    counted = "all nodes" if params.include_unschedulable_nodes else "schedulable nodes only"
    if isinstance(params, LinearParams):
        replicas = linear_replicas(params, status)
        explain.add(
            f"linear ({counted}): coresPerReplica {params.cores_per_replica:g}, nodesPerReplica "
            f"{params.nodes_per_replica:g}, min {params.min}, max {params.max or 'none'}, "
            f"preventSinglePointFailure {str(params.prevent_single_point_failure).lower()} "
            f"-> {replicas} replicas"
        )
    else:
        replicas = ladder_replicas(params, status)
        explain.add(f"ladder ({counted}): -> {replicas} replicas")
    return replicas
