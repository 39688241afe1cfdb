"""The whole controller under load: its RSS, and how fast it answers a change.

Two processes on real time (no virtual clock):

- the cluster (bench.cluster): the in-repo API server with N Deployments of
  50 realistic pods each, every pod Running and Ready with PodMetrics,
  1,000 nodes, and one Hvpa per Deployment (vpa.deploy, vpaWeight 100: the
  VPA's recommendation sets the containers' requests). It also plays the
  VPA recommender and the kubelets (below), with direct writes;
- the controller: `hvpa.controller.manager.Manager`, default settings
  (5 workers, 15 s resync), connected over HTTP with a kubeconfig, as
  `hvpa run` runs it.

Steps:
1. The controller syncs, then reconciles every Hvpa (creating its VPA); the
   cluster then writes each VPA's first recommendation, equal to the current
   requests (nothing to do), and the controller settles (its queue empty for
   2 s). RSS of the controller process (VmRSS) is read here: the RSS row.
2. Measured phase, for `seconds`: pod churn of 1,000 status updates/s (a
   container's restartCount, round-robin over every pod), and triggers at
   `triggers_per_second`: each raises one VPA's recommended CPU for the app
   container by 500m (above the default minimum change), which needs an
   answer - a patch of that Deployment's pod template. Each Hvpa is
   triggered at most once. Latency = arrival of that PATCH at the server
   (the request log's time) - the moment before the recommendation was
   written. Both times are taken in the cluster process, so no clocks of
   two processes are compared. After the answer the cluster marks the
   Deployment's rollout done (status.observedGeneration), as its controller
   would.

Targets: p99 <= 100 ms; RSS <= 300 MB at 1,000 Hvpas, 50,000 pods and
1,000 nodes. The reference for the RSS is the same controller process
before it started (its interpreter and imports), for the latency the
target itself: no other controller answers this change.

A pod metric change is not a trigger here: metrics change without watch
events, so the controller reads them at its resync (every 15 s by default),
and the latency of a metric-driven change is the resync's (up to 15 s) by
design.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

from bench import corpus
from bench.cluster import ClusterSpec, PodChurn, serve
from bench.controller_process import controller_main
from bench.harness import Child, LoopWatch, Row, Size, note, pick, quantile
from hvpa.sim.apiserver import ApiServer

MB = 1_000_000
PODS_PER_HVPA = 50
TRIGGER_CPU_MILLICORES = 500
# How long the cluster answers what its one collection before a measure held (quiesce).
QUIESCE_SECONDS = 1.0


def hvpa_manifest(workload: int) -> dict[str, Any]:
    name = corpus.workload_name(workload)
    return {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "metadata": {"name": name, "namespace": corpus.namespace_of(workload)},
        "spec": {
            "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "hpa": {
                "deploy": False,
                "selector": {"matchLabels": {"role": f"{name}-hpa"}},
                "template": {
                    "metadata": {"labels": {"role": f"{name}-hpa"}},
                    "spec": {
                        "minReplicas": 1,
                        "maxReplicas": 100,
                        "metrics": [
                            {
                                "type": "Resource",
                                "resource": {
                                    "name": "cpu",
                                    "target": {"type": "Utilization", "averageUtilization": 60},
                                },
                            }
                        ],
                    },
                },
            },
            "vpa": {
                "deploy": True,
                "selector": {"matchLabels": {"role": f"{name}-vpa"}},
                "template": {"metadata": {"labels": {"role": f"{name}-vpa"}}},
            },
            "weightBasedScalingIntervals": [{"vpaWeight": 100}],
        },
    }


def _recommendation(app_cpu_millicores: int) -> dict[str, Any]:
    def container(name: str, cpu: str, memory: str) -> dict[str, Any]:
        amounts = {"cpu": cpu, "memory": memory}
        return {
            "containerName": name,
            "target": amounts,
            "lowerBound": amounts,
            "upperBound": amounts,
        }

    return {
        "status": {
            "conditions": [{"type": "RecommendationProvided", "status": "True"}],
            "recommendation": {
                "containerRecommendations": [
                    container("app", f"{app_cpu_millicores}m", "256M"),
                    container("proxy", "50m", "64M"),
                ]
            },
        }
    }


class Recommender:
    """The cluster side: VPA recommendations, triggers, answers, rollouts marked done."""

    def __init__(self, server: ApiServer, spec: ClusterSpec, churn: PodChurn) -> None:
        self.server = server
        self.spec = spec
        self.churn = churn
        # (seconds into the phase, latency, the Deployment's "namespace/name")
        self.answered: list[tuple[float, float, str]] = []
        self._began = 0.0
        self.workloads = spec.pods // spec.pods_per_workload
        objects = server.objects
        # One scrape's time for every pod (metrics-server stamps a node's pods alike), after
        # every pod was created (bench.cluster's server runs on the real clock): with a time
        # of its own each pod's PodMetrics missed the server's cache of spelled times, and
        # each list of a namespace spelled 750 of them.
        scraped_at = time.time()
        for workload in range(self.workloads):
            namespace = corpus.namespace_of(workload)
            name = corpus.workload_name(workload)
            objects.patch(
                "deployments.apps",
                name,
                {"status": self._rollout_done(1, spec.pods_per_workload)},
                namespace=namespace,
                subresource="status",
            )
            objects.create("hvpas", hvpa_manifest(workload), namespace=namespace)
            for replica in range(spec.pods_per_workload):
                server.metrics.set_pod_metrics(
                    namespace,
                    corpus.pod_name(workload, replica),
                    {
                        "app": {
                            "cpu": f"{corpus.app_cpu_millicores(workload) // 2}m",
                            "memory": "200M",
                        },
                        "proxy": {"cpu": "20m", "memory": "40M"},
                    },
                    timestamp=scraped_at,
                )

    @staticmethod
    def _rollout_done(generation: int, replicas: int) -> dict[str, Any]:
        return {
            "observedGeneration": generation,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
        }

    def _vpa(self, workload: int) -> tuple[str, str]:
        return corpus.namespace_of(workload), f"{corpus.workload_name(workload)}-vpa"

    def _recommend(self, workload: int, app_cpu_millicores: int) -> None:
        namespace, name = self._vpa(workload)
        self.server.objects.patch(
            "verticalpodautoscalers",
            name,
            _recommendation(app_cpu_millicores),
            namespace=namespace,
            subresource="status",
        )

    async def quiesce(self) -> dict[str, Any]:
        """Collect once and no more until the measure ends, then let the loop answer what the
        collection held.

        This process plays the cluster, not the subject: its collector's stop-the-world
        pauses (gen-2 over the server's store and history, 150-250 ms) would be charged to
        the controller's answers. A Go API server has no such pauses; so none here. The
        collection itself held the controller's requests, and its answers to them went out
        together when it ended: made at the measure's start, that burst was the window's
        first half second (a 235-369 ms stall of this process's loop, in every run)."""
        gc.collect()
        gc.disable()
        await asyncio.sleep(QUIESCE_SECONDS)
        return {}

    async def baseline(self) -> dict[str, Any]:
        """Every VPA's first recommendation: the current requests (nothing to change)."""
        for workload in range(self.workloads):
            self._recommend(workload, corpus.app_cpu_millicores(workload))
        self.server.clear_requests()
        return {}

    async def measure(
        self, churn_per_second: float, triggers_per_second: float, seconds: float
    ) -> dict[str, Any]:
        self.server.clear_requests()
        churn = asyncio.create_task(self.churn.run(churn_per_second, seconds))
        watch = LoopWatch()
        watch.start()
        pending: dict[tuple[str, str], float] = {}  # Deployment (namespace, name) -> triggered at
        latencies: list[float] = []
        loop = asyncio.get_running_loop()
        started = loop.time()
        self._began = time.monotonic()
        triggered = 0
        order = [(w * 7) % self.workloads for w in range(self.workloads)]  # spread over namespaces
        while loop.time() - started < seconds or (pending and loop.time() - started < seconds + 5):
            due = min(int((loop.time() - started) * triggers_per_second), len(order))
            if loop.time() - started >= seconds:
                due = triggered
            while triggered < due:
                workload = order[triggered]
                triggered += 1
                key = (corpus.namespace_of(workload), corpus.workload_name(workload))
                pending[key] = time.monotonic()
                self._recommend(
                    workload, corpus.app_cpu_millicores(workload) + TRIGGER_CPU_MILLICORES
                )
            self._answers(pending, latencies)
            await asyncio.sleep(0.005)
        made = await churn
        gc.enable()
        watch.stop()
        self._answers(pending, latencies)
        return {
            "latencies": latencies,
            "answered": self.answered,
            "began": self._began,
            "stalls": watch.lag.stalls,
            "stall_samples": dict(watch.sampler.samples),
            "stall_sample_seconds": watch.sampler.interval,
            "gc": watch.pauses.pauses,
            "triggers": triggered,
            "unanswered": len(pending),
            "churn_rate": made,
        }

    def _answers(self, pending: dict[tuple[str, str], float], latencies: list[float]) -> None:
        records = self.server.requests
        self.server.clear_requests()
        for record in records:
            if record.method != "PATCH" or record.resource != "deployments" or record.subresource:
                continue
            key = (record.namespace, record.name)
            at = pending.pop(key, None)
            if at is None:
                continue
            latencies.append(record.received_at - at)
            self.answered.append((at - self._began, record.received_at - at, "/".join(key)))
            deployment = self.server.objects.get("deployments.apps", record.name, namespace=key[0])
            self.server.objects.patch(
                "deployments.apps",
                record.name,
                {
                    "status": self._rollout_done(
                        deployment["metadata"]["generation"], self.spec.pods_per_workload
                    )
                },
                namespace=key[0],
                subresource="status",
            )


def wait_until_decided(controller: Child, *, within: float, poll: float) -> None:
    """Until the controller has decided every Hvpa in its cache at least once.

    Not until every VPA exists: a reconcile that creates the VPA leaves the
    decision to the one the VPA's ADDED event queues, so the VPAs are all there
    before the first decisions are."""
    deadline = time.monotonic() + within
    while controller.ask(("undecided",)):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the controller did not decide every Hvpa in {within:.0f} s")
        time.sleep(poll)


def quiet_window(controller: Child, seconds: float) -> dict[str, float]:
    """The controller's decisions and CPU seconds over `seconds` with no churn and no
    trigger: what a decision costs the resync alone."""
    first = controller.ask(("tally",))
    time.sleep(seconds)
    last = controller.ask(("tally",))
    return {
        "decisions": last["decisions"] - first["decisions"],
        "cpu": last["cpu_before_pass"] - first["cpu"],
        "seconds": seconds,
    }


def settle_and_measure(
    controller: Child,
    cluster: Child,
    churn: float,
    triggers_per_second: float,
    seconds: float,
    *,
    timeout: float,
    settle_within: float | None = None,
    quiet_seconds: float = 0.0,
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Settle the controller, take the cluster's baseline, settle again, measure `seconds` of
    churn and triggers, and stop the controller: (settled, count before, measured, count
    after). `timeout` bounds each settle; a fifth of it the measure's end and the stop.
    `settle_within`: give each settle up after that long and measure anyway (`settled`
    says so), for a controller that may never drain its queue. `quiet_seconds`: before the
    churn, that long with none (the resync alone); `settled["quiet"]` then holds its
    decisions and the controller's CPU seconds."""
    settle: tuple[Any, ...] = ("settle", 2.0)
    if settle_within is not None:
        settle = (*settle, settle_within)
    controller.ask(settle, timeout=timeout)
    cluster.ask(("baseline",))
    settled = controller.ask(settle, timeout=timeout)
    if not settled.get("settled", True):
        note(f"  not settled after {settle_within:g} s: {settled['queued']:,} keys queued")
    note(f"  settled at {settled['rss'] / MB:.0f} MB; measuring for {seconds:.0f} s...")
    if quiet_seconds:
        settled["quiet"] = quiet_window(controller, quiet_seconds)
    cluster.ask(("quiesce",))
    before = controller.ask(("count",))
    measured = cluster.ask(
        ("measure", churn, triggers_per_second, seconds), timeout=seconds + timeout / 5
    )
    after = controller.ask(("count",))
    after["full_collection"] = controller.ask(("full_collection",))
    controller.send(("stop",))
    controller.recv(timeout=timeout / 5)
    return settled, before, measured, after


def _cluster_commands(server: ApiServer, spec: ClusterSpec, churn: PodChurn) -> dict[str, Any]:
    recommender = Recommender(server, spec, churn)
    return {
        "baseline": recommender.baseline,
        "quiesce": recommender.quiesce,
        "measure": recommender.measure,
    }


# -- the benchmark ----------------------------------------------------------------------


def run(size: Size = "full") -> list[Row]:
    hvpas = pick(size, 4, 200, 1_000)
    nodes = pick(size, 10, 1_000, 1_000)
    seconds = pick(size, 2.0, 15.0, 40.0)
    churn = pick(size, 100.0, 1_000.0, 1_000.0)
    triggers_per_second = min(hvpas / seconds, 20.0)
    spec = ClusterSpec(
        pods=hvpas * PODS_PER_HVPA,
        nodes=nodes,
        pods_per_workload=PODS_PER_HVPA,
        deployments=True,
    )
    note(f"  cluster: {hvpas:,} Hvpas, {spec.pods:,} pods, {nodes:,} nodes...")
    with Child(serve, spec, _cluster_commands, name="apiserver") as cluster:
        info = cluster.recv(timeout=900)
        with Child(controller_main, info["kubeconfig"], name="controller") as controller:
            synced = controller.recv(timeout=600)
            note(f"  controller synced in {synced['synced_seconds']:.1f} s; first reconciles...")
            wait_until_decided(controller, within=600, poll=0.5)
            settled, before, measured, after = settle_and_measure(
                controller, cluster, churn, triggers_per_second, seconds, timeout=600
            )
        cluster.ask(("stop",))
    latencies_ms = [1000 * latency for latency in measured["latencies"]]
    if not latencies_ms:
        raise RuntimeError(f"no trigger was answered: {measured}")
    p50, p99 = quantile(latencies_ms, 0.5), quantile(latencies_ms, 0.99)
    load = (
        f"{hvpas:,} Hvpas, {measured['churn_rate']:.0f} pod events/s, "
        f"{len(latencies_ms)}/{measured['triggers']} answered"
    )
    reconciles_per_second = (after["reconciles"] - before["reconciles"]) / seconds
    rss = settled["rss"]
    return [
        Row.compared(
            f"reconcile latency p50, VPA change -> template PATCH ({load})",
            p50,
            "ms",
            100.0,
            invert=True,
        ),
        Row.compared(
            f"reconcile latency p99 ({load}; ref: the 100 ms target)",
            p99,
            "ms",
            100.0,
            invert=True,
            ratio_at_least=1.0,
            target="<= 100 ms",
            met=measured["unanswered"] == 0,
        ),
        Row(
            "reconciles/s during the measured phase (churn + triggers + resync)",
            reconciles_per_second,
            "reconciles/s",
        ),
        Row.compared(
            f"controller RSS: {hvpas:,} Hvpas, {spec.pods:,} pods, {nodes:,} nodes "
            "(ref: its RSS after imports, before start)",
            rss / MB,
            "MB",
            synced["rss_start"] / MB,
            target="<= 300 MB",
            met=rss <= 300 * MB,
        ),
    ]
