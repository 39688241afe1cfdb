"""The simulated nodes: identical workers with allocatable CPU and memory, and their Node objects.

The pool keeps its own table of nodes (the scheduler reads it every tick, so
it must not decode Node objects from the API server each time) and writes
each node once, Ready and schedulable, with `node-role.kubernetes.io/worker`
so cluster-proportional Hvpas that select workers count them. `resize`
adds nodes or removes the newest ones, deleting the pods bound to them as
the node lifecycle controller would, so their workloads create them again.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Final

from hvpa.quantity import format_bytes, format_cpu
from hvpa.sim.apiserver import NotFound, Objects
from hvpa.sim.pods import Pods

__all__ = ["NodePool", "SimNode"]

WORKER_LABEL: Final = "node-role.kubernetes.io/worker"


@dataclass(frozen=True, slots=True)
class SimNode:
    name: str
    cpu_millicores: int
    memory_bytes: int


class NodePool:
    """Nodes named `<prefix>-<index>`, all of one size."""

    def __init__(
        self,
        objects: Objects,
        pods: Pods,
        *,
        cpu_millicores: int,
        memory_bytes: int,
        prefix: str = "sim-node",
    ) -> None:
        self._objects = objects
        self._pods = pods
        self.cpu_millicores = cpu_millicores
        self.memory_bytes = memory_bytes
        self._prefix = prefix
        self._nodes: dict[str, SimNode] = {}
        self._created = 0

    @property
    def nodes(self) -> list[SimNode]:
        return list(self._nodes.values())

    def resize(self, count: int) -> None:
        """Add nodes up to `count`, or remove the newest down to it."""
        while len(self._nodes) < count:
            self._add()
        while len(self._nodes) > count:
            self._remove(next(reversed(self._nodes)))

    def _add(self) -> None:
        name = f"{self._prefix}-{self._created}"
        self._created += 1
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", WORKER_LABEL: ""}
        resources = {
            "cpu": format_cpu(self.cpu_millicores),
            "memory": format_bytes(self.memory_bytes, binary=True),
            "pods": "110",
        }
        self._objects.create(
            "nodes",
            {
                "metadata": {"name": name, "labels": labels},
                "spec": {},
                "status": {
                    "capacity": resources,
                    "allocatable": resources,
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                    "nodeInfo": {"kubeletVersion": "v1.32.0", "operatingSystem": "linux"},
                },
            },
            keep_status=True,
        )
        self._nodes[name] = SimNode(name, self.cpu_millicores, self.memory_bytes)

    def _remove(self, name: str) -> None:
        for pod in self._pods:
            if pod.node == name:
                self._pods.delete(pod)
        del self._nodes[name]
        with contextlib.suppress(NotFound):
            self._objects.delete("nodes", name)
