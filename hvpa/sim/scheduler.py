"""The scheduler of the model: binds each pending pod to a node with room for its requests.

Room is allocatable minus the requests of every pod bound to the node,
terminating ones included (they hold their resources until they are gone),
as kube-scheduler's NodeResourcesFit filter counts it; a pod being resized in
place holds the largest of its desired, admitted and actual requests. Among the nodes that
fit, the one left with the most free share of its scarcer resource wins
(LeastAllocated, so pods spread), ties by name. A pod that fits nowhere
stays Pending with `PodScheduled=False, reason=Unschedulable` and a message
like kube-scheduler's (`0/3 nodes are available: 3 Insufficient cpu.`), and
is tried again on the next pass; pods are tried oldest first.
"""

from __future__ import annotations

from hvpa.sim.nodes import NodePool
from hvpa.sim.pods import Pods

__all__ = ["Scheduler"]


class Scheduler:
    def __init__(self, pods: Pods, nodes: NodePool) -> None:
        self._pods = pods
        self._nodes = nodes

    def schedule(self) -> None:
        """Bind what fits; mark what does not Unschedulable."""
        nodes = self._nodes.nodes
        used = {node.name: [0, 0] for node in nodes}
        pending = []
        for pod in self._pods:
            if pod.node is None:
                if not pod.deleting:
                    pending.append(pod)
            elif pod.node in used:
                cpu, memory = pod.held()
                used[pod.node][0] += cpu
                used[pod.node][1] += memory
        for pod in pending:
            cpu, memory = pod.held()
            best: tuple[float, str] | None = None
            short_cpu = short_memory = 0
            for node in nodes:
                free_cpu = node.cpu_millicores - used[node.name][0] - cpu
                free_memory = node.memory_bytes - used[node.name][1] - memory
                if free_cpu < 0:
                    short_cpu += 1
                if free_memory < 0:
                    short_memory += 1
                if free_cpu < 0 or free_memory < 0:
                    continue
                score = min(free_cpu / node.cpu_millicores, free_memory / node.memory_bytes)
                if best is None or (-score, node.name) < (-best[0], best[1]):
                    best = (score, node.name)
            if best is not None:
                self._pods.bind(pod, best[1])
                used[best[1]][0] += cpu
                used[best[1]][1] += memory
                continue
            reasons = []
            if short_cpu:
                reasons.append(f"{short_cpu} Insufficient cpu")
            if short_memory:
                reasons.append(f"{short_memory} Insufficient memory")
            detail = f": {', '.join(reasons)}" if reasons else ""
            pod.unschedulable = f"0/{len(nodes)} nodes are available{detail}."
            self._pods.write(pod)
