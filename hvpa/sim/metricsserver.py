"""metrics-server of the model: PodMetrics and NodeMetrics over a window, served by the API server.

Every tick the load model's usage of each running container is recorded;
every `resolution_seconds` (metrics-server's --metric-resolution, 15 s) the
window closes and each pod gets one PodMetrics: CPU as the average over the
window (a rate, as metrics-server derives it from cumulative counters) and
memory as the last working set, timestamped at the window's end with
`window` set to its length. A pod with no running container in the window
(pending, crash-looping, gone) gets none, so the controller sees it as a pod
without metrics, as upstream's HPA does. Nodes get the sum of their pods.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from hvpa.quantity import format_bytes, format_cpu
from hvpa.sim.apiserver import Metrics
from hvpa.sim.load import ContainerUsage
from hvpa.sim.pods import SimPod

__all__ = ["ContainerSample", "MetricsServer"]


@lru_cache(maxsize=8192, typed=True)
def _cpu_text(millicores: int) -> str:
    """format_cpu, once per value: every pod's usage is spelled at every window, and the
    same few hundred values recur (the API server's Metrics caches its parse the same way)."""
    return format_cpu(millicores)


@lru_cache(maxsize=8192, typed=True)
def _memory_text(count: int) -> str:
    """format_bytes, once per value (see _cpu_text)."""
    return format_bytes(count)


@dataclass(frozen=True, slots=True)
class ContainerSample:
    """One container's published usage: average millicores over the window, bytes at its end."""

    cpu_millicores: int
    memory_bytes: int


@dataclass(slots=True)
class _Window:
    cpu_sum: dict[str, float] = field(default_factory=dict)
    memory_last: dict[str, float] = field(default_factory=dict)
    ticks: int = 0


class MetricsServer:
    def __init__(self, metrics: Metrics, *, resolution_seconds: float = 15.0) -> None:
        self._metrics = metrics
        self.resolution_seconds = resolution_seconds
        self._windows: dict[tuple[str, str], _Window] = {}
        self._nodes: set[str] = set()
        # The last published sample of each (namespace, pod) by container: what the recommender reads.
        self.latest: dict[tuple[str, str], dict[str, ContainerSample]] = {}

    def record(self, pod: SimPod, usages: tuple[ContainerUsage, ...]) -> None:
        window = self._windows.setdefault((pod.namespace, pod.name), _Window())
        window.ticks += 1
        for usage in usages:
            window.cpu_sum[usage.name] = window.cpu_sum.get(usage.name, 0.0) + usage.cpu
            window.memory_last[usage.name] = usage.memory

    def publish(self, pods: Mapping[tuple[str, str], SimPod]) -> None:
        """Close the window: publish what was recorded, withdraw what was not."""
        latest: dict[tuple[str, str], dict[str, ContainerSample]] = {}
        per_node: dict[str, list[float]] = {}
        for key, window in sorted(self._windows.items()):
            samples = {
                name: ContainerSample(
                    round(window.cpu_sum[name] / window.ticks), round(window.memory_last[name])
                )
                for name in sorted(window.cpu_sum)
            }
            latest[key] = samples
            self._metrics.set_pod_metrics(
                key[0],
                key[1],
                {
                    name: {
                        "cpu": _cpu_text(sample.cpu_millicores),
                        "memory": _memory_text(sample.memory_bytes),
                    }
                    for name, sample in samples.items()
                },
                window_seconds=self.resolution_seconds,
            )
            pod = pods.get(key)
            if pod is not None and pod.node is not None:
                total = per_node.setdefault(pod.node, [0.0, 0.0])
                total[0] += sum(s.cpu_millicores for s in samples.values())
                total[1] += sum(s.memory_bytes for s in samples.values())
        for key in sorted(self.latest.keys() - latest.keys()):
            self._metrics.remove_pod_metrics(*key)
        for node in sorted(self._nodes - set(per_node)):
            self._metrics.remove_node_metrics(node)
        for node, (cpu, memory) in sorted(per_node.items()):
            self._metrics.set_node_metrics(
                node,
                {"cpu": _cpu_text(round(cpu)), "memory": _memory_text(round(memory))},
                window_seconds=self.resolution_seconds,
            )
        self._nodes = set(per_node)
        self._windows.clear()
        self.latest = latest
