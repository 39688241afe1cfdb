"""What the `Capacity` strategy reads of an Hvpa and a snapshot, in the engine's units.

Kept apart from decide.py so the order of a decision stays readable there:
this module turns `spec.capacity`, the container policies, the HPA
metrics, the pod metrics, the VPA and the status history into the curve,
the sized containers and the demand (demand.py), with the usage and
demand samples the status kept (status.py reads and writes them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Final

from hvpa.api.autoscaling import MetricTarget
from hvpa.api.defaults import (
    CAPACITY_DEMAND_PERCENTILE,
    CAPACITY_DEMAND_WINDOW_SECONDS,
    CAPACITY_HEADROOM_PERCENT,
    CAPACITY_RESIZE_TOLERANCE_PERCENT,
    CAPACITY_SCALE_DOWN_STABILIZATION_SECONDS,
    CAPACITY_TOLERANCE_PERCENT,
)
from hvpa.api.spec import CapacitySpec, HvpaSpec
from hvpa.engine.demand import (
    Demand,
    DemandHistory,
    DemandInput,
    ReplicaFloor,
    measure_demand,
    rise_begins,
    total_load,
)
from hvpa.engine.horizontal.controller import HorizontalRecommendation
from hvpa.engine.memo import ByIdentity
from hvpa.engine.strategies.capacity import CapacityParams, CurvePoint
from hvpa.engine.strategies.combine import CapacityInput
from hvpa.engine.vertical import (
    ContainerTarget,
    VerticalRecommendation,
    amounts,
    container_policy,
    policy_target,
)
from hvpa.engine.vertical.recommendation import RESOURCES
from hvpa.records import (
    CPU,
    NO_RESOURCES,
    ContainerSpec,
    PodMetricsRecord,
    PodRecord,
    Resources,
    VpaContainerPolicy,
    VpaRecord,
)

__all__ = [
    "CAPACITY",
    "capacity_input",
    "capacity_problem",
    "scale_down_window",
    "targeted",
]

CAPACITY = "Capacity"
# Metrics that speak in replicas: demand covers their wish at the current pod size.
_REPLICA_METRICS = ("Pods", "Object", "External")


def capacity_problem(spec: HvpaSpec) -> str:
    """Why a Capacity spec cannot be decided on ('' when it can); validation says the same."""
    if spec.capacity is None:
        return "strategy Capacity needs spec.capacity"
    if spec.hpa.template.spec is None:
        return "strategy Capacity needs spec.hpa.template.spec (minReplicas and maxReplicas)"
    return ""


def _read_params(spec: CapacitySpec) -> CapacityParams:
    base = spec.base_resources_per_replica
    overhead = amounts(base.cpu, base.memory) if base is not None else NO_RESOURCES
    return CapacityParams(
        curve=tuple(
            CurvePoint(point.replicas, amounts(point.cpu, point.memory)) for point in spec.curve
        ),
        overhead={r: amount for r in RESOURCES if (amount := overhead.get(r)) is not None},
        tolerance=Fraction(
            str(spec.tolerance if spec.tolerance is not None else CAPACITY_TOLERANCE_PERCENT)
        ),
        resize_tolerance=Fraction(
            str(
                spec.resize_tolerance
                if spec.resize_tolerance is not None
                else CAPACITY_RESIZE_TOLERANCE_PERCENT
            )
        ),
        headroom=Fraction(
            str(spec.headroom if spec.headroom is not None else CAPACITY_HEADROOM_PERCENT)
        ),
    )


# `spec.capacity` in the engine's units, once per spec object (memo.py).
capacity_params: Final = ByIdentity(_read_params)


def _sized(
    containers: Sequence[ContainerSpec], policies: Sequence[VpaContainerPolicy]
) -> tuple[ContainerTarget, ...]:
    """The containers Capacity sizes (all but those whose policy is Off), with their policy bounds."""
    found = (policy_target(c.name, container_policy(c.name, policies)) for c in containers)
    return tuple(target for target in found if target is not None)


def _shares(
    policies: Sequence[ContainerTarget],
    containers: Sequence[ContainerSpec],
    targets: Mapping[str, Resources] | None,
) -> dict[str, dict[str, int]]:
    """How a pod's size splits between its sized containers: by VPA target, else by request."""
    requests = {c.name: c.requests for c in containers}
    shares: dict[str, dict[str, int]] = {}
    for resource in RESOURCES:
        names = [p.name for p in policies if p.controls(resource)]
        by_target = {n: (targets or {}).get(n, NO_RESOURCES).get(resource) for n in names}
        if all(v for v in by_target.values()):
            shares[resource] = {n: v or 0 for n, v in by_target.items()}
        else:
            shares[resource] = {n: requests[n].get(resource) or 0 for n in names}
    return shares


def _vpa_targets(
    vpa: VpaRecord | None, recommendation: VerticalRecommendation | None
) -> dict[str, Resources] | None:
    """The VPA's own per-container targets (before capping), when the recommendation is trusted."""
    if vpa is None or recommendation is None or not recommendation.usable:
        return None
    return {r.container_name: r.target for r in vpa.recommendations or ()}


def _resource_targets(spec: HvpaSpec) -> Iterator[tuple[str, MetricTarget]]:
    """(resource name, target) of each Resource metric of the HPA template, in order."""
    template = spec.hpa.template.spec
    for metric in template.metrics if template is not None else ():
        if metric.type == "Resource" and metric.resource is not None:
            yield metric.resource.name, metric.resource.target


def _utilization(spec: HvpaSpec) -> dict[str, int]:
    found: dict[str, int] = {}
    for name, target in _resource_targets(spec):
        if target.type == "Utilization" and target.average_utilization:
            found.setdefault(name, target.average_utilization)
    return found


def targeted(spec: HvpaSpec) -> frozenset[str]:
    """The resources the HPA template gives a per-pod target: Utilization or AverageValue.

    Either says how much load a pod may carry, and Capacity honours that
    statement instead of adding its own margin (`Room.spares`, the band's
    shortfall). A Utilization target leaves 1/u - 1 of the request free
    (70%: 43%). An AverageValue target T is a usage per pod whatever the
    request (upstream's HPA asks ceil(usage / T) replicas, within its
    tolerance); the curve whose ceiling is T (Gardener's kube-apiserver:
    6 CPU) already sizes the count for the demand, usage x 1.15 (the margin
    a VPA beside that HPA sizes its pods with: demand.AVERAGE_VALUE_MARGIN_PERCENT),
    so each pod carries at most T / 1.15 of load, 15% under what its owner
    accepts, and one pod out moves the others no further past T than the
    owner's own HPA would go. (A curve whose ceiling is above T says pods
    may carry more than the HPA's target; the curve is the policy Capacity
    follows.) Only a resource with no target at all has just Capacity's
    `headroom` and nothing that says a pod may carry more.
    """
    return frozenset(
        name
        for name, target in _resource_targets(spec)
        if (target.type == "Utilization" and target.average_utilization)
        or (target.type == "AverageValue" and target.average_value is not None)
    )


def scale_down_window(spec: HvpaSpec) -> tuple[int, str]:
    """How long a scale-down looks back for the largest demand, and whose setting says so.

    One input, one meaning: an Hvpa that does not set Capacity's own window
    but gives its HPA template a scale-down behavior has already said how
    long the count should wait before it falls (Gardener's kube-apiserver:
    30 minutes), so Capacity waits that long too. Both fields are checked
    as upstream checks the HPA's (0 to 3600 seconds); with neither set it
    is 300 s, the HPA's own default.
    """
    capacity = spec.capacity
    own = capacity.scale_down_stabilization_seconds if capacity is not None else None
    if own is not None:
        return own, "spec.capacity.scaleDownStabilizationSeconds"
    template = spec.hpa.template.spec
    behavior = template.behavior if template is not None else None
    rules = behavior.scale_down if behavior is not None else None
    if rules is not None and rules.stabilization_window_seconds is not None:
        return (
            rules.stabilization_window_seconds,
            "the HPA template's behavior.scaleDown.stabilizationWindowSeconds",
        )
    return CAPACITY_SCALE_DOWN_STABILIZATION_SECONDS, "the default"


def _floors(horizontal: HorizontalRecommendation | None) -> tuple[ReplicaFloor, ...]:
    if horizontal is None:
        return ()
    return tuple(
        ReplicaFloor(f"{m.type} metric {m.name}", m.desired_replicas)
        for m in horizontal.metrics
        if m.type in _REPLICA_METRICS and m.desired_replicas is not None and not m.error
    )


def _serving(
    metrics: Sequence[PodMetricsRecord], pods: Sequence[PodRecord]
) -> tuple[PodMetricsRecord, ...]:
    """The readings of pods that were taking load all through their window.

    A pod that is starting (or leaving) gets no traffic, so its usage is no
    load; counted, it would make a workload whose pods are all starting look
    idle, and pods would be shrunk just before the load arrives. So a
    reading counts only when its pod is ready, not being deleted, and was
    ready before the reading's window began (upstream's HPA drops CPU
    samples that overlap a pod's readiness change the same way). Without
    pods to tell (a scenario that lists only PodMetrics) every reading counts.
    """
    if not pods:
        return tuple(metrics)
    since = {
        pod.name: pod.ready_transition for pod in pods if pod.ready == "True" and not pod.deleting
    }
    return tuple(
        m
        for m in metrics
        if m.name in since
        and (
            since[m.name] is None
            or m.timestamp is None
            or m.timestamp - m.window_seconds >= (since[m.name] or 0)
        )
    )


def _at_cpu_limit(
    readings: Sequence[PodMetricsRecord], pods: Sequence[PodRecord], sized: frozenset[str]
) -> frozenset[str]:
    """CPU when a sized container's reading is at its CPU limit: the usage is capped there.

    A throttled container uses what its limit lets it, so the reading is a
    floor of its need, not the need: pods sized from it would be too small
    as soon as the throttling ends, and resized again. Within 5% of the
    limit counts as at it (a window's average of a throttled container
    stays just below it).
    """
    limits = {
        (pod.name, container.name): container.limits.cpu
        for pod in pods
        for container in pod.containers
        if container.name in sized
    }
    for reading in readings:
        for container in reading.containers:
            limit = limits.get((reading.name, container.name))
            usage = container.usage.cpu
            if limit and usage is not None and usage * 100 >= limit * 95:
                return frozenset({CPU})
    return frozenset()


def capacity_input(
    spec: HvpaSpec,
    containers: Sequence[ContainerSpec],
    replicas: int,
    *,
    horizontal: HorizontalRecommendation | None,
    recommendation: VerticalRecommendation | None,
    vpa: VpaRecord | None,
    policies: Sequence[VpaContainerPolicy],
    metrics: Sequence[PodMetricsRecord],
    pods: Sequence[PodRecord],
    history: DemandHistory,
    now: float,
    in_place: bool,
) -> tuple[CapacityInput, Demand]:
    """The curve, the sized containers and this decision's demand (spec defaulted and validated).

    `policies` are the container policies hvpa honours (decide's: the VPA
    template's, else the VPA's own). `in_place`: pods are resized in place,
    where a rise's first reading resizes nothing (`partial`): with rollouts
    the resize that answers a jump starts from pods added first and comes
    once the demand has settled, so the first reading's size is not undone
    within minutes, and waiting for the next reading cost the rollout its
    start (docs/strategies.md, "a rise's first reading").
    """
    capacity = spec.capacity
    if capacity is None:
        raise ValueError(capacity_problem(spec))
    params = capacity_params(capacity)
    sized_containers = _sized(containers, policies)
    sized = {r: frozenset(p.name for p in sized_containers if p.controls(r)) for r in RESOURCES}
    requests = {c.name: c.requests for c in containers}
    targets = _vpa_targets(vpa, recommendation)
    utilization = _utilization(spec)
    targets_given = targeted(spec)
    down_window, down_window_source = scale_down_window(spec)
    given = DemandInput(
        now=now,
        replicas=replicas,
        sized=sized,
        pod_size={r: sum(requests[n].get(r) or 0 for n in names) for r, names in sized.items()},
        overhead=params.overhead,
        percentile=capacity.demand_percentile or CAPACITY_DEMAND_PERCENTILE,
        window_seconds=capacity.demand_window_seconds or CAPACITY_DEMAND_WINDOW_SECONDS,
        down_window_seconds=down_window,
        down_window_source=down_window_source,
        utilization=utilization,
        average_value=targets_given - set(utilization),
        headroom=params.headroom,
        floors=_floors(horizontal),
        vpa_targets=targets,
    )
    serving = _serving(metrics, pods)
    demand = measure_demand(given, history, total_load(serving, sized, params.overhead, now))
    return CapacityInput(
        params=params,
        policies=sized_containers,
        demand=demand.effective,
        level=demand.level,
        level_low=demand.low,
        shares=_shares(sized_containers, containers, targets),
        spare=frozenset(r for r in RESOURCES if sized[r]) - targets_given,
        serving=any(pod.ready == "True" and not pod.deleting for pod in pods),
        falling=demand.effective != demand.measured,
        capped=_at_cpu_limit(serving, pods, sized[CPU]),
        partial=(rise_begins(demand.history.usage, params.tolerance) if in_place else frozenset()),
        vertical=spec.vpa.deploy,
    ), demand
