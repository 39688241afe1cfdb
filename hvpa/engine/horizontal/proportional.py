"""Cluster-proportional replicas: cluster-proportional-autoscaler's linear and ladder arithmetic.

Follows kubernetes-sigs/cluster-proportional-autoscaler (v1.10.3): the cluster
status counts the nodes the node selector selects (k8sclient), all of them
and the schedulable ones (not cordoned and Ready=True), and their
allocatable CPU summed and then rounded up to whole cores; the linear
controller takes the larger of the core and node proposals, each clamped to
min/max, with at least two replicas on a multi-node cluster when asked to
prevent a single point of failure; the ladder controller looks up the last
step whose threshold is at most the count, and answers 0 for a ladder
without steps or a step of 0 replicas. Without includeUnschedulableNodes
both count only the schedulable nodes and cores. docs/cluster-proportional.md
says where hvpa differs.
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
from hvpa.engine.explain import Explanation, counted
from hvpa.engine.gomath import int32
from hvpa.engine.metrics import MetricError
from hvpa.quantity import ceil_div
from hvpa.records import ConfigMapRecord, NodeRecord

__all__ = [
    "ClusterStatus",
    "ProportionalInput",
    "cluster_proportional_replicas",
    "get_cluster_status",
    "get_expected_replicas_from_entries",
    "ladder_replicas",
    "linear_replicas",
    "proportional_input",
]


@dataclass(frozen=True, slots=True)
class ProportionalInput:
    """The CPA's parameters as a decision uses them, or why they cannot be read.

    `unreadable`: the named ConfigMap is not there (a failed read, as CPA's
    "failed to fetch configmap"); invalid parameters never get this far, they
    are an invalid spec (`proportional_input` raises).
    """

    params: LinearParams | LadderParams | None
    node_selector: Mapping[str, str]
    unreadable: str | None = None


@dataclass(frozen=True, slots=True)
class ClusterStatus:
    total_nodes: int
    schedulable_nodes: int
    total_cores: int
    schedulable_cores: int


def get_cluster_status(
    nodes: Sequence[NodeRecord], node_selector: Mapping[str, str]
) -> ClusterStatus:
    """GetClusterStatus: node and core counts over the selected nodes.

    A node is schedulable when it is not cordoned and its Ready condition is
    True (CPA's isNodeReady): a NotReady node counts in the totals only.
    """
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
        if not node.unschedulable and node.ready == "True":
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
    """getExpectedReplicasFromEntries: the last step with threshold <= resources (the first if none).

    No steps at all ask for 0 replicas (CPA since 1.8.5; it asked for 1 before).
    """
    if not entries:
        return 0
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


def proportional_input(
    spec: ClusterProportionalSpec, namespace: str, config_maps: Sequence[ConfigMapRecord]
) -> ProportionalInput:
    """The parameters: inline, or from the ConfigMap `configMapRef` names.

    Raises ProportionalError, naming the ConfigMap and the parameter, when the
    ConfigMap's parameters are ones CPA refuses: that is an invalid spec, the
    same as invalid inline parameters.
    """
    if spec.linear is not None or spec.ladder is not None:
        return ProportionalInput(spec.linear or spec.ladder, spec.node_selector)
    ref = spec.config_map_ref
    if ref is None:
        raise ProportionalError("", "exactly one of linear, ladder or configMapRef must be set")
    ref_namespace = ref.namespace or namespace
    found = next(
        (
            config_map
            for config_map in config_maps
            if config_map.name == ref.name and (config_map.namespace or namespace) == ref_namespace
        ),
        None,
    )
    if found is None:
        return ProportionalInput(
            None,
            spec.node_selector,
            unreadable=f'configmaps "{ref.name}" not found in namespace {ref_namespace}',
        )
    try:
        return ProportionalInput(parse_configmap_data(found.data, found.sizes), spec.node_selector)
    except ProportionalError as error:
        raise ProportionalError(
            "configMapRef", f"ConfigMap {ref_namespace}/{ref.name}: {error}"
        ) from None


def cluster_proportional_replicas(
    proportional: ProportionalInput, nodes: Sequence[NodeRecord], explain: Explanation
) -> int:
    """The CPA's expected replicas; raise MetricError when its ConfigMap cannot be read."""
    params = proportional.params
    if params is None:
        raise MetricError(proportional.unreadable or "no cluster-proportional parameters")
    status = get_cluster_status(nodes, proportional.node_selector)
    selector = proportional.node_selector
    where = f" matching {dict(selector)}" if selector else ""
    explain.add(
        f"{counted(status.total_nodes, 'node')}{where} ({status.schedulable_nodes} schedulable: not "
        f"cordoned and Ready), {counted(status.total_cores, 'core')} ({status.schedulable_cores} "
        "schedulable; allocatable CPU summed, rounded up)"
    )
    which = "all nodes" if params.include_unschedulable_nodes else "schedulable nodes only"
    if isinstance(params, LinearParams):
        replicas = linear_replicas(params, status)
        explain.add(
            f"linear ({which}): coresPerReplica {params.cores_per_replica:g}, nodesPerReplica "
            f"{params.nodes_per_replica:g}, min {params.min}, max {params.max or 'none'}, "
            f"preventSinglePointFailure {str(params.prevent_single_point_failure).lower()} "
            f"-> {counted(replicas, 'replica')}"
        )
    else:
        replicas = ladder_replicas(params, status)
        explain.add(f"ladder ({which}): -> {counted(replicas, 'replica')}")
    return replicas
