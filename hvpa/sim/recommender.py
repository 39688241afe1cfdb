"""A VPA-like recommender: decaying percentiles of usage plus a safety margin, written to VPA status.

The Vertical Pod Autoscaler's recommender, reduced to what hvpa reads:

- Samples: every `interval_seconds` (the VPA's 1 min) one CPU and one memory
  sample per running container of the VPA's target, from metrics-server's
  latest PodMetrics. Each goes into a histogram with exponentially growing
  buckets (first bucket 10m / 10 MB, 5% wider each, as the VPA's) whose
  weights decay with `half_life_seconds`: a sample that old counts half.
- OOMKills: an OOMKill adds a memory sample of max(limit x 1.2, limit +
  100 MiB) (the VPA's oomBumpUpRatio and oomMinBumpUp), so the next target
  lies above the limit that was hit.
- Recommendation per container: target = p90 x 1.15, lowerBound = p50 x
  1.15, upperBound = p95 x 1.15 (the VPA's percentiles and 15% safety
  margin), then at least 25m CPU and 250Mi memory per pod (the VPA's
  podMinCPUMillicores and podMinMemoryMb, split evenly over the containers),
  then capped to the container policy's minAllowed and maxAllowed
  (uncappedTarget keeps the value before capping). Resources outside
  controlledResources and containers with `mode: Off` get none.
- Status: `recommendation.containerRecommendations` and the condition
  `RecommendationProvided=True`; written only when it changes.

Choices and why. The VPA decays with a 24 h half-life because it watches a
workload for days; a simulation of a few hours with that half-life would
never see a recommendation come down after a peak, so the run picks a
half-life scaled to its length (runner.default_half_life: a twenty-fourth
of the run, between 5 min and 24 h), which keeps the VPA's character (slow
to forget, quick to react to growth through the p90) at the run's time scale. The VPA widens its
bounds for short histories by (1 + 1/days); over hours that factor would be
5 to 25, so it is left out: the bounds are the plain percentiles. CPU
samples are weighted 1 rather than by the pod's request (the VPA's weight),
so a resize does not change how much past samples count.

What can go wrong: the usage the recommender sees is capped by the limits
(a throttled container never shows more than its CPU limit), as in a real
cluster; only OOMKills push memory past a limit, and hvpa's starvation guard
is what pushes CPU past a throttled request.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hvpa.quantity import format_bytes, format_cpu, parse_bytes, parse_cpu_millis
from hvpa.records import format_time
from hvpa.sim.apiserver import NotFound, Objects
from hvpa.sim.metricsserver import MetricsServer
from hvpa.sim.pods import Pods, WorkloadKey

__all__ = ["DecayingHistogram", "Recommender", "RecommenderSettings"]

MIB: Final = 2**20
# The exponent at which decayed weights are renormalised, long before a float overflows.
_MAX_DECAY_EXPONENT: Final = 60.0


class DecayingHistogram:
    """Weights in exponentially growing buckets, each sample's weight halving every `half_life`.

    Decay is applied by growing new samples' weights (2^(age/half_life))
    instead of shrinking the old ones, renormalised now and then; the
    percentiles are the same either way.
    """

    def __init__(self, *, first_bucket: float, ratio: float, half_life_seconds: float) -> None:
        if first_bucket <= 0 or ratio <= 1 or half_life_seconds <= 0:
            raise ValueError("first_bucket and half_life_seconds must be > 0, ratio > 1")
        self._first = first_bucket
        self._ratio = ratio
        self._half_life = half_life_seconds
        self._weights: dict[int, float] = {}
        self._reference: float | None = None

    @property
    def empty(self) -> bool:
        return not self._weights

    def _bucket(self, value: float) -> int:
        if value < self._first:
            return 0
        return int(math.log(value * (self._ratio - 1) / self._first + 1) / math.log(self._ratio))

    def _start(self, bucket: int) -> float:
        return self._first * (self._ratio**bucket - 1) / (self._ratio - 1)

    def add(self, value: float, weight: float, time: float) -> None:
        if self._reference is None:
            self._reference = time
        exponent = (time - self._reference) / self._half_life
        if exponent > _MAX_DECAY_EXPONENT:
            scale = 2.0**-exponent
            self._weights = {b: w * scale for b, w in self._weights.items() if w * scale > 0}
            self._reference, exponent = time, 0.0
        bucket = self._bucket(max(value, 0.0))
        self._weights[bucket] = self._weights.get(bucket, 0.0) + weight * 2.0**exponent

    def percentile(self, fraction: float) -> float | None:
        """The end of the bucket where the cumulative weight reaches `fraction` of the total."""
        if not self._weights:
            return None
        total = sum(self._weights.values())
        running = 0.0
        buckets = sorted(self._weights)
        for bucket in buckets:
            running += self._weights[bucket]
            if running >= fraction * total:
                return self._start(bucket + 1)
        return self._start(buckets[-1] + 1)


@dataclass(frozen=True, slots=True)
class RecommenderSettings:
    half_life_seconds: float = 24 * 3600.0
    interval_seconds: float = 60.0
    target_percentile: float = 0.9
    lower_percentile: float = 0.5
    upper_percentile: float = 0.95
    safety_margin: float = 0.15
    oom_bump_ratio: float = 1.2
    oom_min_bump_bytes: int = 100 * MIB
    pod_min_cpu_millicores: int = 25
    pod_min_memory_bytes: int = 250 * MIB


@dataclass(slots=True)
class _Histograms:
    cpu: DecayingHistogram
    memory: DecayingHistogram


def _policy_for(policies: Sequence[Mapping[str, Any]], container: str) -> Mapping[str, Any]:
    """The container's policy in a VPA's containerPolicies: its own name wins over `*`."""
    exact = next((p for p in policies if p.get("containerName") == container), None)
    return exact or next((p for p in policies if p.get("containerName") == "*"), {})


def _bound(policy: Mapping[str, Any], key: str, resource: str) -> int | None:
    value = (policy.get(key) or {}).get(resource)
    if value is None:
        return None
    return parse_cpu_millis(value) if resource == "cpu" else parse_bytes(value)


class Recommender:
    """Recommendations for every VPA in the cluster whose target is a workload of the model."""

    def __init__(
        self,
        objects: Objects,
        pods: Pods,
        metrics_server: MetricsServer,
        *,
        settings: RecommenderSettings,
        clock: Callable[[], float],
    ) -> None:
        self._objects = objects
        self._pods = pods
        self._metrics_server = metrics_server
        self.settings = settings
        self._clock = clock
        self._histograms: dict[tuple[WorkloadKey, str], _Histograms] = {}

    def _for(self, workload: WorkloadKey, container: str) -> _Histograms:
        key = (workload, container)
        found = self._histograms.get(key)
        if found is None:
            half_life = self.settings.half_life_seconds
            found = self._histograms[key] = _Histograms(
                DecayingHistogram(first_bucket=10.0, ratio=1.05, half_life_seconds=half_life),
                DecayingHistogram(first_bucket=1e7, ratio=1.05, half_life_seconds=half_life),
            )
        return found

    def observe_oom(self, workload: WorkloadKey, container: str, limit_bytes: int) -> None:
        """An OOMKill: a memory sample above the limit that was hit."""
        bump = max(
            limit_bytes * self.settings.oom_bump_ratio,
            limit_bytes + self.settings.oom_min_bump_bytes,
        )
        self._for(workload, container).memory.add(bump, 1.0, self._clock())

    def run_once(self) -> None:
        """Take one round of samples and write every VPA's recommendation that changed."""
        now = self._clock()
        for vpa in self._objects.list("verticalpodautoscalers"):
            ref = (vpa.get("spec") or {}).get("targetRef") or {}
            workload: WorkloadKey = (
                str(ref.get("kind", "")),
                str(vpa["metadata"]["namespace"]),
                str(ref.get("name", "")),
            )
            containers: list[str] = []
            for pod in self._pods.of(workload):
                for name in (c.size.name for c in pod.containers):
                    if name not in containers:
                        containers.append(name)
                samples = self._metrics_server.latest.get((pod.namespace, pod.name), {})
                for name, sample in samples.items():
                    histograms = self._for(workload, name)
                    histograms.cpu.add(sample.cpu_millicores, 1.0, now)
                    histograms.memory.add(sample.memory_bytes, 1.0, now)
            self._write(vpa, workload, containers)

    def _write(self, vpa: dict[str, Any], workload: WorkloadKey, containers: list[str]) -> None:
        spec = vpa.get("spec") or {}
        policies = (spec.get("resourcePolicy") or {}).get("containerPolicies") or []
        wanted = [
            name
            for name in containers
            if _policy_for(policies, name).get("mode", "Auto") != "Off"
            and (workload, name) in self._histograms
            and not self._histograms[(workload, name)].cpu.empty
        ]
        if not wanted:
            return
        recommendations = [
            self._recommend(name, workload, _policy_for(policies, name), len(wanted))
            for name in wanted
        ]
        status = vpa.get("status") or {}
        if (status.get("recommendation") or {}).get("containerRecommendations") == recommendations:
            return
        provided = next(
            (
                c
                for c in status.get("conditions") or ()
                if c.get("type") == "RecommendationProvided"
            ),
            None,
        )
        since = (
            provided.get("lastTransitionTime")
            if provided is not None and provided.get("status") == "True"
            else format_time(self._clock())
        )
        try:
            self._objects.patch(
                "verticalpodautoscalers",
                vpa["metadata"]["name"],
                {
                    "status": {
                        "recommendation": {"containerRecommendations": recommendations},
                        "conditions": [
                            {
                                "type": "RecommendationProvided",
                                "status": "True",
                                "lastTransitionTime": since,
                            }
                        ],
                    }
                },
                namespace=vpa["metadata"]["namespace"],
                subresource="status",
            )
        except NotFound:
            return

    def _recommend(
        self, name: str, workload: WorkloadKey, policy: Mapping[str, Any], count: int
    ) -> dict[str, Any]:
        settings = self.settings
        histograms = self._histograms[(workload, name)]
        controlled = policy.get("controlledResources") or ["cpu", "memory"]
        margin = 1 + settings.safety_margin
        floors = {
            "cpu": settings.pod_min_cpu_millicores / count,
            "memory": settings.pod_min_memory_bytes / count,
        }
        result: dict[str, Any] = {"containerName": name}
        for field, fraction in (
            ("target", settings.target_percentile),
            ("lowerBound", settings.lower_percentile),
            ("upperBound", settings.upper_percentile),
            ("uncappedTarget", settings.target_percentile),
        ):
            values: dict[str, str] = {}
            for resource in ("cpu", "memory"):
                if resource not in controlled:
                    continue
                histogram = histograms.cpu if resource == "cpu" else histograms.memory
                raw = histogram.percentile(fraction)
                if raw is None:
                    continue
                amount = math.ceil(max(raw * margin, floors[resource]))
                if resource == "memory":
                    amount = math.ceil(amount / MIB) * MIB
                if field != "uncappedTarget":
                    low = _bound(policy, "minAllowed", resource)
                    high = _bound(policy, "maxAllowed", resource)
                    amount = max(amount, low) if low is not None else amount
                    amount = min(amount, high) if high is not None else amount
                values[resource] = (
                    format_cpu(amount) if resource == "cpu" else format_bytes(amount, binary=True)
                )
            result[field] = values
        return result
