"""The load model: how a workload's total demand becomes each container's usage.

A load balancer in front of the workload sends every ready pod an equal
share of the demand; a pod that is starting, crash-looping or terminating
gets none. Each container carries a fixed part of that share (`share`, the
first container all of it by default) on top of a `base` it uses whatever
the load, so a pod's usage is

    base + share x demand / ready pods

and the workload's total usage grows with its replica count by the bases:
that overhead is what horizontal scaling costs. Then the limits act, as the
kernel would:
- CPU above the limit is throttled: the container uses its limit and the
  excess is counted (throttled pod-minutes in the report);
- memory above the limit is an OOMKill: the caller (the kubelet) kills the
  container, which restarts after the crash-loop back-off, and the pods left
  serving take its share, so one OOMKill can cascade, as it does in real life.
Without a limit nothing caps a container (node pressure is not modelled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hvpa.sim.pods import SimPod
from hvpa.sim.traces import Demand, Trace

__all__ = ["ContainerLoad", "ContainerUsage", "WorkloadLoad", "spread"]


@dataclass(frozen=True, slots=True)
class ContainerLoad:
    """How one container of each pod takes load: a share of the demand on top of a base."""

    share: float = 0.0
    base_cpu_millicores: float = 0.0
    base_memory_bytes: float = 0.0


@dataclass(frozen=True, slots=True)
class WorkloadLoad:
    """A workload's demand over time and how its containers carry it.

    Containers not named in `containers` get `default` (no share, a small base)."""

    trace: Trace
    containers: Mapping[str, ContainerLoad] = field(default_factory=dict)
    default: ContainerLoad = ContainerLoad(0.0, 5.0, 16 * 2**20)

    def container(self, name: str) -> ContainerLoad:
        return self.containers.get(name, self.default)


@dataclass(frozen=True, slots=True)
class ContainerUsage:
    """One running container's usage at one instant. `cpu_need` is what it would use unthrottled."""

    name: str
    cpu_need: float
    cpu: float
    memory: float
    throttled: bool
    oom: bool


def spread(
    demand: Demand, pods: Sequence[SimPod], load: WorkloadLoad
) -> Mapping[str, tuple[ContainerUsage, ...]]:
    """Usage of every running container of `pods` (one workload), by pod name."""
    serving = [p for p in pods if p.ready and not p.deleting]
    count = len(serving)
    result: dict[str, tuple[ContainerUsage, ...]] = {}
    for pod in pods:
        gets_load = count > 0 and pod.ready and not pod.deleting
        usages = []
        for container in pod.containers:
            if not container.running:
                continue
            spec = load.container(container.size.name)
            cpu_need = spec.base_cpu_millicores
            memory = spec.base_memory_bytes
            if gets_load:
                cpu_need += spec.share * demand.cpu_millicores / count
                memory += spec.share * demand.memory_bytes / count
            limit_cpu, limit_memory = container.size.limit_cpu, container.size.limit_memory
            throttled = limit_cpu is not None and cpu_need > limit_cpu
            usages.append(
                ContainerUsage(
                    name=container.size.name,
                    cpu_need=cpu_need,
                    cpu=min(cpu_need, limit_cpu) if limit_cpu is not None else cpu_need,
                    memory=memory,
                    throttled=throttled,
                    oom=limit_memory is not None and memory > limit_memory,
                )
            )
        if usages:
            result[pod.name] = tuple(usages)
    return result
