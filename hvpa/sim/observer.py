"""What a run measures about its target: per-tick integrals for the summary, one row a minute.

Definitions (report fields, docs/simulator.md):
- demand: the trace's total demand (the useful work; the per-pod bases are
  overhead and count as allocated but not as demand);
- allocated: the requests of the target's pods that hold node capacity
  (bound to a node, terminating ones included until they are gone);
- serving: the requests of the ready pods, the capacity that takes load;
- need: what the ready pods would use unthrottled (demand plus their bases),
  or the demand alone while no pod is ready;
- under-provisioned: need above serving, for CPU or memory: the pods use
  more than they asked for (contention on a full node, OOM risk);
- throttled pod-minutes: pods with a container at its CPU limit, times minutes;
- in-place resizes: resizes the pods' kubelets admitted (the in-place resize
  modes); pod restarts: containers restarted to apply one (their
  resizePolicy says RestartContainer), counted apart from rollouts, which
  replace pods;
- pod size over time: the main container's requests as its kubelet admitted
  them, read from every pod each tick (oscillations.py, `PodSizes`);
- utilization = demand / allocated and over-provisioning = allocated / demand,
  both as ratios of time integrals over the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hvpa.sim.cluster import OomKill, Tick
from hvpa.sim.oscillations import PodSizes, Size
from hvpa.sim.pods import ContainerSize, SimPod, WorkloadKey, container_sizes
from hvpa.sim.workloads import template_hash

__all__ = ["Observer", "Totals"]


@dataclass(slots=True)
class Totals:
    """Time integrals (value x seconds) and extremes over the run."""

    seconds: float = 0.0
    demand_cpu: float = 0.0
    demand_memory: float = 0.0
    allocated_cpu: float = 0.0
    allocated_memory: float = 0.0
    peak_demand_cpu: float = 0.0
    peak_demand_memory: float = 0.0
    under_cpu_seconds: float = 0.0
    under_memory_seconds: float = 0.0
    under_seconds: float = 0.0
    throttled_pod_seconds: float = 0.0
    unschedulable_pod_seconds: float = 0.0
    in_place_resizes: int = 0
    pod_restarts: int = 0
    # Pods deleted while a newer template was rolling out: restarted to change their size.
    replaced_pods: int = 0
    oom_kills: list[tuple[OomKill, ContainerSize | None]] = field(default_factory=list)


class Observer:
    def __init__(
        self,
        target: WorkloadKey,
        main_container: str,
        *,
        tick_seconds: float,
        sample_seconds: float,
    ) -> None:
        self.target = target
        self.main_container = main_container
        self.tick_seconds = tick_seconds
        self.sample_seconds = sample_seconds
        self.totals = Totals()
        self.rows: list[dict[str, Any]] = []
        self._next_row = 0.0
        self._terminating: set[str] = set()
        self.pod_sizes = PodSizes()

    def observe(
        self,
        tick: Tick,
        spec: tuple[int, dict[str, Any]] | None,
        sized: ContainerSize | None = None,
    ) -> None:
        """Account one tick; `spec` is the target's (replicas, template) as last seen, `sized`
        the main container's size when the in-place modes keep it outside the template."""
        workload = tick.workloads.get(self.target)
        if workload is None:
            return
        dt = self.tick_seconds
        totals = self.totals
        demand = workload.demand
        bound = [p for p in workload.pods if p.node is not None]
        ready = [p for p in workload.pods if p.ready and not p.deleting]
        allocated = [0, 0]
        for pod in bound:
            cpu, memory = pod.requests()
            allocated[0] += cpu
            allocated[1] += memory
        serving = [0, 0]
        need = [0.0, 0.0]
        throttled = 0
        for pod in ready:
            cpu, memory = pod.requests()
            serving[0] += cpu
            serving[1] += memory
            for usage in workload.usage.get(pod.name, ()):
                need[0] += usage.cpu_need
                need[1] += usage.memory
        for pod in workload.pods:
            if any(u.throttled for u in workload.usage.get(pod.name, ())):
                throttled += 1
        if not ready:
            need = [demand.cpu_millicores, demand.memory_bytes]
        under_cpu, under_memory = need[0] > serving[0], need[1] > serving[1]
        pending = sum(1 for p in workload.pods if p.node is None and not p.deleting)

        totals.seconds += dt
        totals.demand_cpu += demand.cpu_millicores * dt
        totals.demand_memory += demand.memory_bytes * dt
        totals.allocated_cpu += allocated[0] * dt
        totals.allocated_memory += allocated[1] * dt
        totals.peak_demand_cpu = max(totals.peak_demand_cpu, demand.cpu_millicores)
        totals.peak_demand_memory = max(totals.peak_demand_memory, demand.memory_bytes)
        totals.under_cpu_seconds += dt if under_cpu else 0.0
        totals.under_memory_seconds += dt if under_memory else 0.0
        totals.under_seconds += dt if under_cpu or under_memory else 0.0
        totals.throttled_pod_seconds += throttled * dt
        totals.unschedulable_pod_seconds += pending * dt
        totals.in_place_resizes += workload.resizes
        totals.pod_restarts += workload.resize_restarts
        by_name = {p.name: p for p in workload.pods}
        for kill in workload.oom_kills:
            killed = by_name.get(kill.pod)
            size = (
                next((c.size for c in killed.containers if c.size.name == kill.container), None)
                if killed is not None
                else None
            )
            totals.oom_kills.append((kill, size))

        self._count_replaced(workload.pods, spec)
        self.pod_sizes.observe(
            tick.elapsed_seconds,
            {
                p.name: _main_requests(p, self.main_container)
                for p in workload.pods
                if not p.deleting
            },
        )

        if tick.elapsed_seconds + 1e-9 < self._next_row:
            return
        self._next_row += self.sample_seconds
        replicas, template = spec if spec is not None else (0, {})
        main = sized or next(
            (
                c
                for c in container_sizes((template or {}).get("spec") or {})
                if c.name == self.main_container
            ),
            ContainerSize(self.main_container),
        )
        self.rows.append(
            {
                "time": round(tick.elapsed_seconds),
                "demandCpuCores": round(demand.cpu_millicores / 1000, 4),
                "demandMemoryBytes": round(demand.memory_bytes),
                "needCpuCores": round(need[0] / 1000, 4),
                "needMemoryBytes": round(need[1]),
                "allocatedCpuCores": allocated[0] / 1000,
                "allocatedMemoryBytes": allocated[1],
                "servingCpuCores": serving[0] / 1000,
                "servingMemoryBytes": serving[1],
                "replicas": replicas,
                "readyPods": len(ready),
                "pendingPods": pending,
                "throttledPods": throttled,
                "oomKills": len(totals.oom_kills),
                "podRequestCpuCores": (main.request_cpu or 0) / 1000,
                "podRequestMemoryBytes": main.request_memory or 0,
                "podLimitCpuCores": None if main.limit_cpu is None else main.limit_cpu / 1000,
                "podLimitMemoryBytes": main.limit_memory,
            }
        )

    def _count_replaced(
        self, pods: tuple[SimPod, ...], spec: tuple[int, dict[str, Any]] | None
    ) -> None:
        """Count the pods that began terminating this tick at a revision other than the
        template's (a Deployment's revision is the template's hash, a StatefulSet's ends in it)."""
        terminating = {p.name for p in pods if p.deleting}
        started = terminating - self._terminating
        self._terminating = terminating
        if spec is None or not started:
            return  # the template is hashed only on a tick where a pod began terminating
        current = template_hash(spec[1] or {})
        self.totals.replaced_pods += sum(
            1 for p in pods if p.name in started and not p.revision.endswith(current)
        )


def _main_requests(pod: SimPod, container: str) -> Size:
    """The container's requests as the pod's kubelet admitted them (a resize it has not
    admitted has not reached the pod); {} if the pod has no such container."""
    state = next((c for c in pod.containers if c.size.name == container), None)
    if state is None:
        return {}
    admitted = state.admitted
    amounts = {"cpu": admitted.request_cpu, "memory": admitted.request_memory}
    return {resource: amount for resource, amount in amounts.items() if amount is not None}
