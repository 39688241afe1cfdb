"""The simulated cluster: every piece of the model around one API server, advanced tick by tick.

One `step` is one tick of the cluster, in this order (each piece reads what
the ones before it wrote, so a change ripples through in one tick at most):

1. nodes follow `node_count` if the scenario scales the cluster;
2. the workload controller converges pods to each workload's spec;
3. the scheduler binds pending pods;
4. the kubelet starts, readies, restarts and removes pods;
5. the load model gives each running container its usage from the trace:
   memory over the limit is an OOMKill (the kubelet kills, the recommender
   gets its bump), CPU over the limit is throttled;
6. metrics-server publishes a window every `metrics_resolution_seconds`;
7. the recommender samples and writes VPA status every `interval_seconds`.

Everything the cluster does goes through the in-process API server
(`server.objects`, `server.metrics`), so the controller, over HTTP, sees
watch events and metrics exactly as from a real cluster. The cluster has no
timer of its own: the runner calls `step` once per tick in virtual time.
With `settings.admission`, pods are created through the server's mutating
webhooks (they answer over HTTPS, on the same loop): the runner awaits
`advance` instead, which sends the creates the workloads asked for through
admission before the scheduler runs, so a pod no webhook matches is created,
scheduled and started at the same tick as without admission.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hvpa.sim.apiserver import ApiServer
from hvpa.sim.kubelet import Kubelet
from hvpa.sim.load import ContainerUsage, WorkloadLoad, spread
from hvpa.sim.metricsserver import MetricsServer
from hvpa.sim.nodes import NodePool
from hvpa.sim.pods import Pods, SimPod, WorkloadKey
from hvpa.sim.recommender import Recommender, RecommenderSettings
from hvpa.sim.scheduler import Scheduler
from hvpa.sim.traces import Demand, Trace
from hvpa.sim.workloads import WorkloadController

__all__ = ["Cluster", "ClusterSettings", "OomKill", "Tick", "WorkloadTick"]

# Who creates the workloads' pods, as the API server's admission sees it.
_CONTROLLER = "system:serviceaccount:kube-system:replicaset-controller"


class _PodAdmission:
    """The server's mutating admission for the model's pod creates, as the ReplicaSet and
    StatefulSet controllers' requests."""

    def __init__(self, server: ApiServer) -> None:
        self._server = server
        self._pods = server.objects.resource("pods")

    def needed(self, namespace: str, manifest: Mapping[str, Any]) -> bool:
        return self._server.admission.needed(self._pods, namespace, manifest)

    async def admit(self, namespace: str, manifest: dict[str, Any]) -> dict[str, Any]:
        return await self._server.admission.admit(self._pods, namespace, manifest, user=_CONTROLLER)


# A workload nobody gave a load: no demand, only its containers' bases.
_IDLE = WorkloadLoad(Trace("idle", lambda elapsed: Demand(0.0, 0.0)))


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    tick_seconds: float = 5.0
    nodes: int = 10
    node_cpu_millicores: int = 4000
    node_memory_bytes: int = 16 * 2**30
    readiness_delay_seconds: float = 15.0
    termination_seconds: float = 5.0
    # In-place resize: how long the kubelet takes to apply one, and whether the kubelets support
    # it at all (False: they report no container resources and the API server refuses resizes).
    resize_seconds: float = 5.0
    kubelet_resize: bool = True
    # Pods are created through the API server's mutating admission webhooks (`admit`).
    admission: bool = False
    metrics_resolution_seconds: float = 15.0
    recommender: RecommenderSettings = field(default_factory=RecommenderSettings)


@dataclass(frozen=True, slots=True)
class OomKill:
    """A container the load model pushed past its memory limit."""

    time: float
    pod: str
    container: str
    limit_bytes: int


@dataclass(frozen=True, slots=True)
class WorkloadTick:
    """One workload at one tick: its demand, its pods' usage, and the in-place resizes its
    pods' kubelets admitted and the containers they restarted for one."""

    demand: Demand
    pods: tuple[SimPod, ...]
    usage: Mapping[str, tuple[ContainerUsage, ...]]
    oom_kills: tuple[OomKill, ...]
    resizes: int = 0
    resize_restarts: int = 0


@dataclass(frozen=True, slots=True)
class Tick:
    time: float
    elapsed_seconds: float
    workloads: Mapping[WorkloadKey, WorkloadTick]


class Cluster:
    def __init__(
        self,
        server: ApiServer,
        *,
        settings: ClusterSettings,
        clock: Callable[[], float],
        node_count: Callable[[float], int] | None = None,
    ) -> None:
        """`node_count(elapsed seconds)`, when given, sizes the node pool at every tick."""
        self.settings = settings
        self._clock = clock
        self._start = clock()
        self._node_count = node_count
        objects = server.objects
        self.pods = Pods(
            objects,
            clock=clock,
            reports_resources=settings.kubelet_resize,
            admission=_PodAdmission(server) if settings.admission else None,
        )
        self._server = server
        server.resizes.listeners.append(self.pods.on_resize)
        self.nodes = NodePool(
            objects,
            self.pods,
            cpu_millicores=settings.node_cpu_millicores,
            memory_bytes=settings.node_memory_bytes,
        )
        self.nodes.resize(node_count(0.0) if node_count is not None else settings.nodes)
        self.workloads = WorkloadController(objects, self.pods, clock=clock)
        self.scheduler = Scheduler(self.pods, self.nodes)
        self.kubelet = Kubelet(
            self.pods,
            clock=clock,
            readiness_delay_seconds=settings.readiness_delay_seconds,
            termination_seconds=settings.termination_seconds,
            nodes=self.nodes,
            resize_seconds=settings.resize_seconds,
        )
        self.metrics_server = MetricsServer(
            server.metrics, resolution_seconds=settings.metrics_resolution_seconds
        )
        self.recommender = Recommender(
            objects,
            self.pods,
            self.metrics_server,
            settings=settings.recommender,
            clock=clock,
        )
        self.loads: dict[WorkloadKey, WorkloadLoad] = {}
        self._next_metrics = self._start + settings.metrics_resolution_seconds
        self._next_recommendation = self._start + settings.recommender.interval_seconds

    def step(self) -> Tick:
        """One tick; with `settings.admission`, creates a webhook must see wait for `advance`."""
        self._sync_workloads()
        return self._run()

    async def advance(self) -> Tick:
        """One tick, the pod creates it asks for admitted before the scheduler runs."""
        self._sync_workloads()
        await self.pods.admit_pending()
        return self._run()

    def _sync_workloads(self) -> None:
        if self._node_count is not None:
            self.nodes.resize(self._node_count(self._clock() - self._start))
        self.workloads.sync()

    def _run(self) -> Tick:
        now = self._clock()
        elapsed = now - self._start
        self.scheduler.schedule()
        resized, restarted = len(self.kubelet.resizes), len(self.kubelet.resize_restarts)
        self.kubelet.sync()
        ticks = self._load(elapsed)
        self._count_resizes(ticks, resized, restarted)
        if now >= self._next_metrics:
            self.metrics_server.publish({(p.namespace, p.name): p for p in self.pods})
            self._next_metrics += self.settings.metrics_resolution_seconds
        if now >= self._next_recommendation:
            self.recommender.run_once()
            self._next_recommendation += self.settings.recommender.interval_seconds
        return Tick(now, elapsed, ticks)

    def _count_resizes(
        self, ticks: dict[WorkloadKey, WorkloadTick], resized: int, restarted: int
    ) -> None:
        """Add this tick's admitted resizes and resize restarts to each workload's tick."""
        resizes: dict[WorkloadKey, int] = {}
        restarts: dict[WorkloadKey, int] = {}
        for _, workload, _ in self.kubelet.resizes[resized:]:
            resizes[workload] = resizes.get(workload, 0) + 1
        for _, workload, _, _ in self.kubelet.resize_restarts[restarted:]:
            restarts[workload] = restarts.get(workload, 0) + 1
        for key, tick in ticks.items():
            if key in resizes or key in restarts:
                ticks[key] = dataclasses.replace(
                    tick, resizes=resizes.get(key, 0), resize_restarts=restarts.get(key, 0)
                )

    def _load(self, elapsed: float) -> dict[WorkloadKey, WorkloadTick]:
        by_workload: dict[WorkloadKey, list[SimPod]] = {}
        for pod in self.pods:
            by_workload.setdefault(pod.workload, []).append(pod)
        ticks: dict[WorkloadKey, WorkloadTick] = {}
        for key, pods in by_workload.items():
            load = self.loads.get(key, _IDLE)
            demand = load.trace.demand_at(elapsed)
            usage = spread(demand, pods, load)
            kills: list[OomKill] = []
            for pod in pods:
                usages = usage.get(pod.name)
                if not usages:
                    continue
                self.metrics_server.record(pod, usages)
                used = {u.name: u.memory for u in usages}
                for state in pod.containers:
                    state.memory_usage_bytes = used.get(state.size.name, 0.0)
                for container in usages:
                    if container.oom:
                        limit = next(
                            c.size.limit_memory or 0
                            for c in pod.containers
                            if c.size.name == container.name
                        )
                        self.kubelet.oom_kill(pod, container.name)
                        self.recommender.observe_oom(key, container.name, limit)
                        kills.append(OomKill(self._clock(), pod.name, container.name, limit))
            if key in self.loads:
                ticks[key] = WorkloadTick(demand, tuple(pods), usage, tuple(kills))
        return ticks
