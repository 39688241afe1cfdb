"""The kubelet of the model: starts bound pods, makes them ready, kills, restarts and removes them.

- A pod bound to a node starts at once (phase Running, containers running).
- It turns Ready `readiness_delay_seconds` after its last container
  started (a readiness probe's initial delay); a restarted container makes
  the pod unready for that long again.
- `oom_kill` ends a container with `lastState.terminated.reason:
  OOMKilled` (exit code 137) and a higher restartCount; it waits out the
  crash-loop back-off (10 s doubling to 5 min, reset after 10 min running)
  in `waiting: CrashLoopBackOff`, then starts again.
- A deleted pod (deletionTimestamp set) is unready at once and removed
  (deleted again with grace period 0) `termination_seconds` later, the time
  its process takes to exit after SIGTERM.
- A resize (the pod's desired size changed through pods/resize), as the
  kubelet of KEP 1287 handles it: a pod that runs nothing yet takes the new
  size at once; otherwise the new requests must fit the node beside what
  every other pod there was admitted with. More than the node's whole
  allocatable is `PodResizePending`, reason `Infeasible`; more than is free
  now is `Deferred`, tried again every pass (as pods leave, it may fit).
  Admitted, the resize is `PodResizeInProgress` for `resize_seconds` (the
  runtime updating cgroups), then the containers run at the new size. A
  container whose `resizePolicy` says `RestartContainer` for a resource that
  changed restarts at once, at the new size (its pod unready for the
  readiness delay again). A memory limit is lowered only once the container
  uses less than the new limit (1.35's best-effort check); until then the
  resize stays in progress with reason `Error`. Messages are the kubelet's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from hvpa.sim.nodes import NodePool, SimNode
from hvpa.sim.pods import ContainerState, Pods, SimPod, WorkloadKey, changed_resources

__all__ = ["Kubelet"]

_MEMORY_CHECK: Final = "attempting to set pod memory limit below current usage"


class Kubelet:
    def __init__(
        self,
        pods: Pods,
        *,
        clock: Callable[[], float],
        readiness_delay_seconds: float = 15.0,
        termination_seconds: float = 5.0,
        nodes: NodePool | None = None,
        resize_seconds: float = 5.0,
    ) -> None:
        """`nodes`: where a resize must fit (without them every resize fits)."""
        self._pods = pods
        self._clock = clock
        self.readiness_delay_seconds = readiness_delay_seconds
        self.termination_seconds = termination_seconds
        self._nodes = nodes
        self.resize_seconds = resize_seconds
        # Resizes admitted, (time, workload, pod), and containers restarted for one,
        # (time, workload, pod, container), for the report.
        self.resizes: list[tuple[float, WorkloadKey, str]] = []
        self.resize_restarts: list[tuple[float, WorkloadKey, str, str]] = []

    def sync(self) -> None:
        now = self._clock()
        admitted = self._admitted_by_node()
        for pod in self._pods:
            if pod.node is None:
                continue
            if pod.deleting_since is not None:
                if now - pod.deleting_since >= self.termination_seconds:
                    self._pods.remove(pod)
                else:
                    self._pods.write(pod)
                continue
            if pod.phase == "Pending":
                pod.phase = "Running"
                pod.started_at = now
                for container in pod.containers:
                    # Admitted with the size the pod asks for now (a resize before it ran).
                    container.size = container.allocated = container.desired
                    container.started_at = now
            if pod.resizing or pod.resize_started is not None or pod.resize_pending is not None:
                self._resize(pod, now, admitted)
            for container in pod.containers:
                waiting = container.waiting_until
                if container.started_at is None and waiting is not None and now >= waiting:
                    container.started_at = now
                    container.waiting_until = None
            starts = [c.started_at for c in pod.containers]
            if any(start is None for start in starts):
                pod.ready_since = None
            elif pod.ready_since is None and all(
                start is not None and now - start >= self.readiness_delay_seconds
                for start in starts
            ):
                pod.ready_since = now
            self._pods.write(pod)

    # -- in-place resize ---------------------------------------------------------------

    def _admitted_by_node(self) -> dict[str, list[int]]:
        """Per node, the requests its kubelet admitted (millicores, bytes) over its pods."""
        admitted: dict[str, list[int]] = {}
        for pod in self._pods:
            if pod.node is None:
                continue
            used = admitted.setdefault(pod.node, [0, 0])
            for container in pod.containers:
                used[0] += container.admitted.request_cpu or 0
                used[1] += container.admitted.request_memory or 0
        return admitted

    def _node(self, name: str) -> SimNode | None:
        if self._nodes is None:
            return None
        return next((node for node in self._nodes.nodes if node.name == name), None)

    def _resize(self, pod: SimPod, now: float, admitted: dict[str, list[int]]) -> None:
        if not any(c.desired != c.admitted for c in pod.containers):
            pod.resize_pending = None  # nothing left to admit (a resize asked back)
        elif not self._admit(pod, now, admitted):
            return
        if pod.resize_started is None or now - pod.resize_started < self.resize_seconds:
            return
        pod.resize_error = ""
        for container in pod.containers:
            if container.size == container.admitted:
                continue
            if not self._memory_may_drop(container):
                pod.resize_error = _MEMORY_CHECK
                continue
            container.size = container.admitted
        if not any(c.size != c.admitted for c in pod.containers):
            pod.resize_started = None

    def _admit(self, pod: SimPod, now: float, admitted: dict[str, list[int]]) -> bool:
        """Admit the desired size if the node has room; else mark it Deferred or Infeasible."""
        node = self._node(pod.node) if pod.node is not None else None
        cpu, memory = pod.desired_requests()
        if node is not None:
            refusal = _refusal(node, pod, (cpu, memory), admitted.get(node.name, [0, 0]))
            if refusal is not None:
                pod.resize_pending = refusal
                return False
            used = admitted.setdefault(node.name, [0, 0])
            for container in pod.containers:
                used[0] += (container.desired.request_cpu or 0) - (
                    container.admitted.request_cpu or 0
                )
                used[1] += (container.desired.request_memory or 0) - (
                    container.admitted.request_memory or 0
                )
        pod.resize_pending = None
        pod.resize_started = now
        self.resizes.append((now, pod.workload, pod.name))
        restarted = False
        for container in pod.containers:
            changed = changed_resources(container.admitted, container.desired)
            container.allocated = container.desired
            if not container.running:
                container.size = container.desired
            elif changed & container.restart_on_resize:
                container.restart(now)
                container.size = container.desired
                self.resize_restarts.append((now, pod.workload, pod.name, container.size.name))
                restarted = True
        if restarted:
            pod.ready_since = None
        return True

    @staticmethod
    def _memory_may_drop(container: ContainerState) -> bool:
        limit = container.admitted.limit_memory
        before = container.size.limit_memory
        lowered = limit is not None and (before is None or limit < before)
        return not lowered or container.memory_usage_bytes <= (limit or 0)

    def oom_kill(self, pod: SimPod, container_name: str) -> None:
        """The kernel's OOM killer ended the container; the pod is unready until it is back."""
        now = self._clock()
        for container in pod.containers:
            if container.size.name == container_name and container.running:
                container.kill(now, reason="OOMKilled", exit_code=137)
        pod.ready_since = None
        self._pods.write(pod)


def _refusal(
    node: SimNode, pod: SimPod, desired: tuple[int, int], admitted: list[int]
) -> tuple[str, str] | None:
    """Why the node cannot take the pod's desired requests: (reason, the kubelet's message)."""
    own = [0, 0]
    for container in pod.containers:
        own[0] += container.admitted.request_cpu or 0
        own[1] += container.admitted.request_memory or 0
    capacity = (node.cpu_millicores, node.memory_bytes)
    for index, resource in enumerate(("cpu", "memory")):
        if desired[index] > capacity[index]:
            return (
                "Infeasible",
                f"Node didn't have enough capacity: {resource}, requested: {desired[index]}, "
                f"capacity: {capacity[index]}",
            )
    for index, resource in enumerate(("cpu", "memory")):
        used = admitted[index] - own[index]
        if used + desired[index] > capacity[index]:
            return (
                "Deferred",
                f"Node didn't have enough resource: {resource}, requested: {desired[index]}, "
                f"used: {used}, capacity: {capacity[index]}",
            )
    return None
