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
"""

from __future__ import annotations

from collections.abc import Callable

from hvpa.sim.pods import Pods, SimPod

__all__ = ["Kubelet"]


class Kubelet:
    def __init__(
        self,
        pods: Pods,
        *,
        clock: Callable[[], float],
        readiness_delay_seconds: float = 15.0,
        termination_seconds: float = 5.0,
    ) -> None:
        self._pods = pods
        self._clock = clock
        self.readiness_delay_seconds = readiness_delay_seconds
        self.termination_seconds = termination_seconds

    def sync(self) -> None:
        now = self._clock()
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
                    container.started_at = now
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

    def oom_kill(self, pod: SimPod, container_name: str) -> None:
        """The kernel's OOM killer ended the container; the pod is unready until it is back."""
        now = self._clock()
        for container in pod.containers:
            if container.size.name == container_name and container.running:
                container.kill(now, reason="OOMKilled", exit_code=137)
        pod.ready_since = None
        self._pods.write(pod)
