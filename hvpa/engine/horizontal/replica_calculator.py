"""The replica calculator: upstream's replica_calculator.go, one function per metric type.

Follows Kubernetes 1.37.2's pkg/controller/podautoscaler/replica_calculator.go
and metrics/utilization.go name for name, so a reader can hold the two side
by side: `group_pods` sorts pods into ready, unready, missing and ignored
once per metric; `Tolerances.is_within` is the one tolerance test; the
utilization and usage ratios use the same integer truncation and float64
arithmetic. Every rule that fires adds a line to the explanation.

Times are POSIX seconds and `now` is passed in, where upstream calls
time.Now(). A timestamp that is absent (None) is Go's zero time: earlier
than any real one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from hvpa.engine.explain import Explanation, counted, names
from hvpa.engine.gomath import MAX_INT32, MAX_INT64, ceil_int32, ceil_int64, fdiv, int32, trunc_div
from hvpa.engine.metrics import MetricError, PodMetric, PodMetricsInfo
from hvpa.quantity import format_human, format_human_resource
from hvpa.records import PodRecord

__all__ = [
    "PodGroups",
    "ReplicaCalculator",
    "Tolerances",
    "calculate_requests",
    "get_metric_usage_ratio",
    "get_resource_utilization_ratio",
    "group_pods",
]

# Go's zero time (0001-01-01T00:00:00Z): what an absent timestamp reads as upstream.
_GO_ZERO_TIME = -62_135_596_800.0


@dataclass(frozen=True, slots=True)
class Tolerances:
    """The usage-ratio band inside which the replica count does not change."""

    scale_down: float
    scale_up: float

    def is_within(self, usage_ratio: float) -> bool:
        return (1.0 - self.scale_down) <= usage_ratio <= (1.0 + self.scale_up)

    def __str__(self) -> str:
        return f"[down:{self.scale_down * 100:.1f}%, up:{self.scale_up * 100:.1f}%]"


@dataclass(frozen=True, slots=True)
class PodGroups:
    ready_count: int
    unready: frozenset[str]
    missing: frozenset[str]
    ignored: frozenset[str]


def group_pods(
    pods: Sequence[PodRecord],
    metrics: Mapping[str, PodMetric],
    resource: str,
    cpu_initialization_period: float,
    delay_of_initial_readiness_status: float,
    now: float,
) -> PodGroups:
    """groupPods: which pods count, which wait for a scale-up, which lack metrics.

    Deleted pods and Failed pods are ignored; Pending pods are unready. A
    Succeeded pod is grouped like a running one, as upstream groups it (its
    metrics, if any are still reported, count). For CPU
    only, a pod is also unready while its samples cannot be trusted: it has
    no Ready condition or start time; or it is inside the initialization
    period and either unready or its sample does not yet cover a full window
    since it turned ready; or it turned unready within the initial readiness
    delay after starting and never became ready since.
    """
    ready_count = 0
    unready: set[str] = set()
    missing: set[str] = set()
    ignored: set[str] = set()
    for pod in pods:
        if pod.deleting or pod.phase == "Failed":
            ignored.add(pod.name)
            continue
        if pod.phase == "Pending":
            unready.add(pod.name)
            continue
        metric = metrics.get(pod.name)
        if metric is None:
            missing.add(pod.name)
            continue
        if resource == "cpu":
            if pod.ready is None or pod.start_time is None:
                is_unready = True
            else:
                transition = _GO_ZERO_TIME if pod.ready_transition is None else pod.ready_transition
                if pod.start_time + cpu_initialization_period > now:
                    sampled = _GO_ZERO_TIME if metric.timestamp is None else metric.timestamp
                    is_unready = (
                        pod.ready == "False" or sampled < transition + metric.window_seconds
                    )
                else:
                    is_unready = (
                        pod.ready == "False"
                        and pod.start_time + delay_of_initial_readiness_status > transition
                    )
            if is_unready:
                unready.add(pod.name)
                continue
        ready_count += 1
    return PodGroups(ready_count, frozenset(unready), frozenset(missing), frozenset(ignored))


def calculate_requests(pods: Sequence[PodRecord], container: str, resource: str) -> dict[str, int]:
    """calculateRequests: each pod's request for `resource`.

    A pod that sets pod-level requests (`spec.resources.requests`, the
    PodLevelResources feature) is measured against them, unless the metric
    names a container, which takes precedence; otherwise the requests of its
    containers and sidecars are summed (or one container's is taken). Raises
    MetricError naming the pod (and container) without a request, as
    upstream does: utilization is meaningless without one.
    """
    requests: dict[str, int] = {}
    for pod in pods:
        if not container and _pod_level_requests_set(pod):
            requests[pod.name] = _pod_level_request(pod, resource)
        else:
            requests[pod.name] = _container_requests(pod, container, resource)
    return requests


def _pod_level_requests_set(pod: PodRecord) -> bool:
    """IsPodLevelRequestsSet: a supported resource (cpu, memory) among the pod-level requests."""
    return pod.requests.cpu is not None or pod.requests.memory is not None


def _pod_level_request(pod: PodRecord, resource: str) -> int:
    """calculatePodLevelRequests: the pod-level request, else the containers' sum for the resource.

    Upstream reads PodRequests: the containers' requests, overridden by the
    pod-level ones for each resource the pod sets; a container without a
    request for the resource adds nothing, and a resource requested nowhere
    is an error.
    """
    amount = pod.requests.get(resource)
    if amount is not None:
        return amount
    found = [c.requests.get(resource) for c in pod.containers]
    present = [value for value in found if value is not None]
    if not present:
        raise MetricError(f"missing pod-level request for {resource} in Pod {pod.name}")
    return sum(present)


def _container_requests(pod: PodRecord, container: str, resource: str) -> int:
    """calculatePodRequestsFromContainers: the sum over containers and sidecars, or one container's."""
    total = 0
    for spec in pod.containers:
        if container and spec.name != container:
            continue
        amount = spec.requests.get(resource)
        if amount is None:
            raise MetricError(
                f"missing request for {resource} in container {spec.name} of Pod {pod.name}"
            )
        total += amount
        if container:
            return total
    if container:
        raise MetricError(f"container {container} not found in Pod {pod.name}")
    return total


def get_resource_utilization_ratio(
    metrics: Mapping[str, PodMetric], requests: Mapping[str, int], target_utilization: int
) -> tuple[float, int, int]:
    """GetResourceUtilizationRatio: (usage ratio, utilization %, raw average value).

    Metrics of pods without a request are extraneous and skipped; the
    utilization is truncated to a whole percent before the ratio is taken.
    The totals are exact (upstream falls back to big integers when an int64
    sum would overflow) and a utilization beyond the int32 range saturates
    at its end, so a huge usage over a tiny request (memory `1`, one byte)
    reads as a very high utilization, never as a wrapped negative one.
    """
    metrics_total = 0
    requests_total = 0
    entries = 0
    for name, metric in metrics.items():
        request = requests.get(name)
        if request is None:
            continue
        metrics_total += metric.value
        requests_total += request
        entries += 1
    if requests_total == 0:
        raise MetricError("no metrics returned matched known pods")
    utilization = int32(trunc_div(metrics_total * 100, requests_total))
    return (
        fdiv(float(utilization), float(target_utilization)),
        utilization,
        trunc_div(metrics_total, entries),
    )


def get_metric_usage_ratio(
    metrics: Mapping[str, PodMetric], target_usage: int
) -> tuple[float, int]:
    """GetMetricUsageRatio: (usage ratio, average usage in milli-units), averaged over every metric.

    The sum is exact, as upstream's big-integer fallback makes it, so the
    average of int64 values is an int64 again.
    """
    total = sum(metric.value for metric in metrics.values())
    usage = trunc_div(total, len(metrics))
    return fdiv(float(usage), float(target_usage)), usage


class ReplicaCalculator:
    """One per decision: the target's pods, the controller settings and the time."""

    def __init__(
        self,
        pods: Sequence[PodRecord],
        cpu_initialization_period: float,
        delay_of_initial_readiness_status: float,
        now: float,
        explain: Explanation,
    ) -> None:
        self.pods = pods
        self.cpu_initialization_period = cpu_initialization_period
        self.delay_of_initial_readiness_status = delay_of_initial_readiness_status
        self.now = now
        self.explain = explain

    # -- Resource and ContainerResource, Utilization target ----------------

    def get_resource_replicas(
        self,
        current_replicas: int,
        target_utilization: int,
        resource: str,
        tolerances: Tolerances,
        container: str,
        metrics: PodMetricsInfo,
    ) -> tuple[int, int, int]:
        """GetResourceReplicas: (replicas, utilization %, raw average value in milli-units)."""
        explain = self.explain
        if not self.pods:
            raise MetricError("no pods returned by selector while calculating replica count")
        groups = self._group(metrics, resource)
        _remove(metrics, groups.ignored)
        _remove(metrics, groups.unready)
        if not metrics:
            raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
        requests = calculate_requests(self.pods, container, resource)
        _note_negative(explain, (metric.value for metric in metrics.values()))
        usage_ratio, utilization, raw_utilization = get_resource_utilization_ratio(
            metrics, requests, target_utilization
        )
        explain.add(
            f"utilization {utilization}% of requests over {counted(len(metrics), 'pod')} with metrics "
            f"(average {format_human_resource(resource, raw_utilization)}), target {target_utilization}%: "
            f"usage ratio {usage_ratio:.4g}"
        )
        scale_up_with_unready = bool(groups.unready) and usage_ratio > 1.0
        if not scale_up_with_unready and not groups.missing:
            if tolerances.is_within(usage_ratio):
                explain.add(f"usage ratio within tolerance {tolerances}: keep {current_replicas}")
                return current_replicas, utilization, raw_utilization
            replicas = ceil_int32(usage_ratio * groups.ready_count)
            explain.add(
                f"ceil({usage_ratio:.4g} x {counted(groups.ready_count, 'ready pod')}) = {counted(replicas, 'replica')}"
            )
            return replicas, utilization, raw_utilization

        if groups.missing:
            if usage_ratio < 1.0:
                fallback = max(100, target_utilization)
                for name in groups.missing:
                    metrics[name] = PodMetric(trunc_div(requests[name] * fallback, 100))
                explain.add(
                    f"scale-down: {counted(len(groups.missing), 'pod')} without metrics count as using "
                    f"{fallback}% of their request"
                )
            elif usage_ratio > 1.0:
                for name in groups.missing:
                    metrics[name] = PodMetric(0)
                explain.add(
                    f"scale-up: {counted(len(groups.missing), 'pod')} without metrics count as using 0%"
                )
        if scale_up_with_unready:
            for name in groups.unready:
                metrics[name] = PodMetric(0)
            explain.add(f"scale-up: {len(groups.unready)} unready pods count as using 0%")

        new_usage_ratio, _, _ = get_resource_utilization_ratio(
            metrics, requests, target_utilization
        )
        return self._rebalanced(
            current_replicas,
            usage_ratio,
            new_usage_ratio,
            len(metrics),
            tolerances,
            utilization,
            raw_utilization,
        )

    # -- Resource and ContainerResource AverageValue, and Pods metrics -----

    def get_raw_resource_replicas(
        self,
        current_replicas: int,
        target_usage: int,
        resource: str,
        tolerances: Tolerances,
        metrics: PodMetricsInfo,
    ) -> tuple[int, int]:
        """GetRawResourceReplicas: (replicas, average usage) for a per-pod resource value."""
        return self.calc_plain_metric_replicas(
            metrics, current_replicas, target_usage, tolerances, resource
        )

    def get_metric_replicas(
        self,
        current_replicas: int,
        target_usage: int,
        tolerances: Tolerances,
        metrics: PodMetricsInfo,
    ) -> tuple[int, int]:
        """GetMetricReplicas: (replicas, average usage) for a Pods metric."""
        return self.calc_plain_metric_replicas(
            metrics, current_replicas, target_usage, tolerances, ""
        )

    def calc_plain_metric_replicas(
        self,
        metrics: PodMetricsInfo,
        current_replicas: int,
        target_usage: int,
        tolerances: Tolerances,
        resource: str,
    ) -> tuple[int, int]:
        """calcPlainMetricReplicas: as for utilization, but missing pods count as the target on a scale-down."""
        explain = self.explain
        if not self.pods:
            raise MetricError("no pods returned by selector while calculating replica count")
        groups = self._group(metrics, resource)
        _remove(metrics, groups.ignored)
        _remove(metrics, groups.unready)
        if not metrics:
            raise MetricError("did not receive metrics for targeted pods (pods might be unready)")
        _note_negative(explain, (metric.value for metric in metrics.values()))
        usage_ratio, usage = get_metric_usage_ratio(metrics, target_usage)
        explain.add(
            f"average {format_human_resource(resource, usage)} over {counted(len(metrics), 'pod')} with "
            f"metrics, target {format_human_resource(resource, target_usage)}: "
            f"usage ratio {usage_ratio:.4g}"
        )
        scale_up_with_unready = bool(groups.unready) and usage_ratio > 1.0
        if not scale_up_with_unready and not groups.missing:
            if tolerances.is_within(usage_ratio):
                explain.add(f"usage ratio within tolerance {tolerances}: keep {current_replicas}")
                return current_replicas, usage
            replicas = ceil_int32(usage_ratio * groups.ready_count)
            explain.add(
                f"ceil({usage_ratio:.4g} x {counted(groups.ready_count, 'ready pod')}) = {counted(replicas, 'replica')}"
            )
            return replicas, usage

        if groups.missing:
            if usage_ratio < 1.0:
                for name in groups.missing:
                    metrics[name] = PodMetric(target_usage)
                explain.add(
                    f"scale-down: {counted(len(groups.missing), 'pod')} without metrics count as using "
                    "exactly the target"
                )
            elif usage_ratio > 1.0:
                for name in groups.missing:
                    metrics[name] = PodMetric(0)
                explain.add(
                    f"scale-up: {counted(len(groups.missing), 'pod')} without metrics count as using 0"
                )
        if scale_up_with_unready:
            for name in groups.unready:
                metrics[name] = PodMetric(0)
            explain.add(f"scale-up: {len(groups.unready)} unready pods count as using 0")

        new_usage_ratio, _ = get_metric_usage_ratio(metrics, target_usage)
        replicas, _, _ = self._rebalanced(
            current_replicas, usage_ratio, new_usage_ratio, len(metrics), tolerances, 0, usage
        )
        return replicas, usage

    # -- Object metrics -----------------------------------------------------

    def get_object_metric_replicas(
        self, current_replicas: int, target_usage: int, usage: int, tolerances: Tolerances
    ) -> int:
        """GetObjectMetricReplicas: the object's value against a total target."""
        _note_negative(self.explain, (usage,))
        usage_ratio = fdiv(float(usage), float(target_usage))
        self.explain.add(
            f"value {format_human(usage)}, target {format_human(target_usage)}: "
            f"usage ratio {usage_ratio:.4g}"
        )
        return self.get_usage_ratio_replica_count(current_replicas, usage_ratio, tolerances)

    def get_object_per_pod_metric_replicas(
        self, status_replicas: int, target_average_usage: int, usage: int, tolerances: Tolerances
    ) -> tuple[int, int]:
        """GetObjectPerPodMetricReplicas: the object's value shared over the current pods."""
        _note_negative(self.explain, (usage,))
        return self._per_pod(status_replicas, target_average_usage, usage, tolerances)

    # -- External metrics ---------------------------------------------------

    def get_external_metric_replicas(
        self,
        current_replicas: int,
        target_usage: int,
        values: Sequence[int],
        tolerances: Tolerances,
    ) -> tuple[int, int]:
        """GetExternalMetricReplicas: the sum of the series against a total target."""
        _note_negative(self.explain, values)
        usage = 0
        for value in values:
            if value > 0 and usage > MAX_INT64 - value:
                usage = MAX_INT64
                break
            usage += value
        usage_ratio = fdiv(float(usage), float(target_usage))
        self.explain.add(
            f"value {format_human(usage)} (sum of {len(values)} series), "
            f"target {format_human(target_usage)}: usage ratio {usage_ratio:.4g}"
        )
        return (
            self.get_usage_ratio_replica_count(current_replicas, usage_ratio, tolerances),
            usage,
        )

    def get_external_per_pod_metric_replicas(
        self,
        status_replicas: int,
        target_usage_per_pod: int,
        values: Sequence[int],
        tolerances: Tolerances,
    ) -> tuple[int, int]:
        """GetExternalPerPodMetricReplicas: the sum of the series shared over the current pods."""
        usage = 0
        for value in values:
            usage += value
            # Upstream detects int64 overflow as a negative running sum, so a
            # negative value reads as the largest usage too.
            if usage < 0 or usage > MAX_INT64:
                self.explain.add(
                    "the sum of the series is negative or beyond int64: read as "
                    f"{format_human(MAX_INT64)} (upstream takes a negative running sum for an "
                    "overflow)"
                )
                usage = MAX_INT64
                break
        return self._per_pod(status_replicas, target_usage_per_pod, usage, tolerances)

    # -- Shared steps -------------------------------------------------------

    def get_usage_ratio_replica_count(
        self, current_replicas: int, usage_ratio: float, tolerances: Tolerances
    ) -> int:
        """getUsageRatioReplicaCount: ready pods x ratio; from zero replicas, the ratio alone (no tolerance)."""
        explain = self.explain
        if current_replicas != 0:
            if tolerances.is_within(usage_ratio):
                explain.add(f"usage ratio within tolerance {tolerances}: keep {current_replicas}")
                return current_replicas
            ready = self.get_ready_pods_count()
            replicas_float = usage_ratio * float(ready)
            if replicas_float > MAX_INT32:
                explain.add(
                    f"{usage_ratio:.4g} x {counted(ready, 'ready pod')} exceeds int32: {MAX_INT32}"
                )
                return MAX_INT32
            replicas = ceil_int32(replicas_float)
            explain.add(
                f"ceil({usage_ratio:.4g} x {counted(ready, 'ready pod')}) = {counted(replicas, 'replica')}"
            )
            return replicas
        replicas = ceil_int32(usage_ratio)
        explain.add(f"from zero replicas: ceil({usage_ratio:.4g}) = {replicas} (no tolerance)")
        return replicas

    def get_ready_pods_count(self) -> int:
        """getReadyPodsCount: Running pods whose Ready condition is True."""
        if not self.pods:
            raise MetricError(
                "unable to calculate ready pods: no pods returned by selector while "
                "calculating replica count"
            )
        return sum(1 for pod in self.pods if pod.phase == "Running" and pod.ready == "True")

    def _per_pod(
        self, status_replicas: int, target_per_pod: int, usage: int, tolerances: Tolerances
    ) -> tuple[int, int]:
        """The per-pod (AverageValue) form of Object and External metrics.

        The replica count saturates at int32 and the reported average at
        int64. With no current replicas the average is the quotient by zero
        converted as every other (hvpa/engine/gomath.py): a positive usage
        reads as the int64 maximum and no usage as 0, where upstream's Go
        conversion of an infinite or NaN quotient is implementation-defined
        (the int64 minimum on amd64). The count is upstream's either way:
        the usage over the per-pod target.
        """
        replicas = status_replicas
        usage_ratio = fdiv(float(usage), float(target_per_pod) * float(replicas))
        self.explain.add(
            f"value {format_human(usage)} over {status_replicas} current replicas, "
            f"target {format_human(target_per_pod)} each: usage ratio {usage_ratio:.4g}"
        )
        if not tolerances.is_within(usage_ratio):
            replicas = ceil_int32(fdiv(float(usage), float(target_per_pod)))
            self.explain.add(
                f"ceil({format_human(usage)} / {format_human(target_per_pod)}) = {counted(replicas, 'replica')}"
            )
        else:
            self.explain.add(f"usage ratio within tolerance {tolerances}: keep {replicas}")
        if float(usage) >= float(MAX_INT64):
            average = MAX_INT64
        else:
            average = ceil_int64(fdiv(float(usage), float(status_replicas)))
        return replicas, average

    def _group(self, metrics: Mapping[str, PodMetric], resource: str) -> PodGroups:
        groups = group_pods(
            self.pods,
            metrics,
            resource,
            self.cpu_initialization_period,
            self.delay_of_initial_readiness_status,
            self.now,
        )
        explain = self.explain
        explain.add(
            f"{counted(len(self.pods), 'pod')}: {groups.ready_count} ready with metrics, "
            f"{len(groups.unready)} unready, {len(groups.missing)} without metrics, "
            f"{len(groups.ignored)} ignored"
        )
        with explain.indented():
            if groups.ignored:
                explain.add(f"ignored (deleted or failed): {names(groups.ignored)}")
            if groups.unready:
                why = (
                    "pending, unready or in the CPU initialization period"
                    if resource == "cpu"
                    else "pending"
                )
                explain.add(f"unready ({why}): {names(groups.unready)}")
            if groups.missing:
                explain.add(f"without metrics: {names(groups.missing)}")
        return groups

    def _rebalanced(
        self,
        current_replicas: int,
        usage_ratio: float,
        new_usage_ratio: float,
        pod_count: int,
        tolerances: Tolerances,
        utilization: int,
        raw: int,
    ) -> tuple[int, int, int]:
        """The re-check after filling in missing and unready pods: no flip of direction, no tiny change."""
        explain = self.explain
        explain.add(f"usage ratio recomputed with them: {new_usage_ratio:.4g}")
        if tolerances.is_within(new_usage_ratio):
            explain.add(f"within tolerance {tolerances}: keep {current_replicas}")
            return current_replicas, utilization, raw
        if (usage_ratio < 1.0 < new_usage_ratio) or (usage_ratio > 1.0 > new_usage_ratio):
            explain.add(f"the direction would flip: keep {current_replicas}")
            return current_replicas, utilization, raw
        new_replicas = ceil_int32(new_usage_ratio * pod_count)
        if (new_usage_ratio < 1.0 and new_replicas > current_replicas) or (
            new_usage_ratio > 1.0 and new_replicas < current_replicas
        ):
            explain.add(
                f"ceil({new_usage_ratio:.4g} x {counted(pod_count, 'pod')}) = {new_replicas} would move against "
                f"the direction: keep {current_replicas}"
            )
            return current_replicas, utilization, raw
        explain.add(
            f"ceil({new_usage_ratio:.4g} x {counted(pod_count, 'pod')}) = {counted(new_replicas, 'replica')}"
        )
        return new_replicas, utilization, raw


def _note_negative(explain: Explanation, values: Iterable[int]) -> None:
    """Say so when a metric is negative: upstream uses it as it is, and so does hvpa.

    A negative value lowers an average or a sum like any other; it can read
    as a wish to scale down (docs/engine.md, "Negative metric values").
    """
    if any(value < 0 for value in values):
        explain.add(
            "a metric value is negative: used as it is, as upstream's HPA uses it (it lowers "
            "the average or the sum)"
        )


def _remove(metrics: PodMetricsInfo, pods: frozenset[str]) -> None:
    for name in pods:
        metrics.pop(name, None)
