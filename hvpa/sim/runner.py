"""One simulation run: the API server, the cluster model and the real controller on one virtual clock.

    report = simulate(RunOptions(scenario=..., trace=..., duration_seconds=6 * 3600))

What runs: the in-process API server (HTTP on loopback, a kubeconfig), the
cluster model (cluster.py) stepping every `tick_seconds`, and hvpa's real
controller (`hvpa.controller.manager.Manager`: informers, work queue,
reconciler, engine, applier) connected over HTTP with kubernetes_asyncio, as
`hvpa run` would connect to a cluster. No part of the controller is replaced
or called directly. All three share the SimEventLoop's virtual clock, so
hours of cluster time take seconds, and a seed gives one report.

Ticks fall a quarter of a second off the whole seconds, so they never share
an instant with the controller's timers (its resync runs on whole multiples
of 15 s from a start at virtual zero): at a shared instant which ran first
would depend on the order the loop happened to pick.

`keep_running`: after the report, the loop switches to real time, the
controller's `/metrics` and `/debug/state` listener and its `/healthz` and
`/readyz` probes start on free loopback ports, `on_serving` gets the
endpoints, and the cluster keeps ticking (the trace holding its course)
until the task is cancelled (Ctrl-C). A kept-running cluster is meant to be
looked at with kubectl and `hvpa explain` as a live one, so:

- the controller runs with leader election, as `hvpa run --leader-elect`
  does, on the Lease `kube-system/hvpa` (`kubectl get lease -A` shows the
  holder); the sim puts the Lease there, free, before the controller starts,
  so that the controller acquires it by an update and the seeded uids and
  pod names of the run stay those of a plain run;
- the simulated hours end at the machine's clock: the run starts at the
  scenario's time of day (maintenance windows are times of day), on the last
  day that lets it end before now, and when it switches to real time the
  cluster's clock steps forward to the machine's (as a cluster paused for
  that long would). From then on cluster time is wall time: ages in kubectl,
  `hvpa explain`'s now and the Events' timestamps agree with the machine's.

Events keep coming in a long run: the controller's event correlator (the
client-go spam filter: 25 per object, one more every 5 minutes) counts
cluster time, virtual during the run, so six simulated hours refill it as
six real hours would.

The server plays Kubernetes 1.35 (pods/resize served) and the model creates
pods through its mutating admission; the controller's pod admission webhook
listens on a loopback port, registered by URL in the configuration `hvpa`
(with its Secret, as the manifests create them), so an Hvpa that resizes in
place (`spec.vpa.resizeMode`) runs as on a cluster: pods resized through
pods/resize, new ones sized at admission.

What can go wrong: the controller failing (a background task raising) stops
the run with that error; a scenario whose Hvpa the API server refuses (it
validates as the CRD does) raises the server's Invalid error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from prometheus_client import CollectorRegistry

from hvpa.aio import Tasks
from hvpa.controller.manager import Manager
from hvpa.kube.client import KubeClient, client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.settings import LeaderElectionSettings
from hvpa.logs import fields
from hvpa.records import format_time, parse_time
from hvpa.server import Server
from hvpa.settings import ControllerSettings, ServerSettings, WebhookSettings
from hvpa.sim.apiserver import AlreadyExists, ApiServer
from hvpa.sim.baselines.vpa_updater import VpaUpdater
from hvpa.sim.clock import SimClock, SimEventLoop
from hvpa.sim.cluster import Cluster, ClusterSettings
from hvpa.sim.kinds import RESOURCE_OF_KIND
from hvpa.sim.load import WorkloadLoad
from hvpa.sim.observer import Observer
from hvpa.sim.pods import ContainerSize, container_sizes
from hvpa.sim.recommender import RecommenderSettings
from hvpa.sim.report import summarize
from hvpa.sim.scenarios import Scenario
from hvpa.sim.traces import Trace

__all__ = ["LEASE", "Endpoints", "RunOptions", "default_half_life", "live_start", "simulate"]

_logger = logging.getLogger(__name__)

TICK_OFFSET_SECONDS: Final = 0.25
# The Kubernetes the simulated cluster plays: in-place resize GA, memory limits lowered in place.
SIM_KUBERNETES_VERSION: Final = "v1.35.0"
WEBHOOK_NAMESPACE: Final = "hvpa-system"
_DAY_SECONDS: Final = 86400
# The Lease a kept-running controller holds; its uid is named here, not drawn (see above).
LEASE: Final = LeaderElectionSettings(lease_name="hvpa", lease_namespace="kube-system")
_LEASE_UID: Final = str(uuid.uuid5(uuid.NAMESPACE_URL, "hvpa-sim:kube-system/leases/hvpa"))


def default_half_life(duration_seconds: float) -> float:
    """The recommender's half-life for a run this long: a twenty-fourth of it, 5 min to 24 h."""
    return min(max(duration_seconds / 24, 300.0), 24 * 3600.0)


@dataclass(frozen=True, slots=True)
class RunOptions:
    scenario: Scenario
    trace: Trace
    duration_seconds: float
    seed: int = 1
    tick_seconds: float = 5.0
    sample_seconds: float = 60.0
    half_life_seconds: float | None = None
    # The recommender's safety margin over its percentile (0.15: the VPA's 15%); None: that.
    vpa_margin: float | None = None
    controller: ControllerSettings = field(default_factory=ControllerSettings)
    kubeconfig_path: Path | None = None


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Where a kept-running simulation answers."""

    api_server: str
    kubeconfig: Path
    metrics: str
    debug_state: str
    healthz: str
    readyz: str
    lease: str  # NAMESPACE/NAME of the leader-election Lease


Progress = Callable[[float, float], None]


def _epoch(text: str) -> float:
    """A scenario's start (RFC 3339, never empty) as POSIX seconds."""
    seconds = parse_time(text)
    assert seconds is not None
    return seconds


def live_start(scenario_start: float, duration_seconds: float, wall_now: float) -> float:
    """When a kept-running run starts: the scenario's start moved by whole days (its time of
    day kept) to the latest start that ends the run no later than `wall_now`."""
    days = math.floor((wall_now - duration_seconds - scenario_start) / _DAY_SECONDS)
    return scenario_start + days * _DAY_SECONDS


def simulate(
    options: RunOptions,
    *,
    progress: Progress | None = None,
    on_report: Callable[[dict[str, Any]], None] | None = None,
    keep_running: bool = False,
    on_serving: Callable[[Endpoints], None] | None = None,
) -> dict[str, Any]:
    """Run one simulation on a fresh SimEventLoop; the report (report.json's content).

    `progress(elapsed, duration)` is called at every tick. With
    `keep_running`, `on_report` gets the report before the loop switches to
    real time, and the call returns only when interrupted (KeyboardInterrupt).
    """
    with asyncio.Runner(loop_factory=SimEventLoop) as runner:
        return runner.run(
            _simulate(
                options,
                progress=progress,
                on_report=on_report,
                keep_running=keep_running,
                on_serving=on_serving,
            )
        )


def _recommender(half_life: float, margin: float | None) -> RecommenderSettings:
    settings = RecommenderSettings(half_life_seconds=half_life)
    return settings if margin is None else replace(settings, safety_margin=margin)


def _node_count(scenario: Scenario, trace: Trace) -> Callable[[float], int] | None:
    if scenario.node_range is None:
        return None
    fewest, most = scenario.node_range
    peak = scenario.peak.cpu_millicores or 1.0

    def count(elapsed: float) -> int:
        level = min(max(trace.demand_at(elapsed).cpu_millicores / peak, 0.0), 1.0)
        return fewest + round((most - fewest) * level)

    return count


async def _simulate(
    options: RunOptions,
    *,
    progress: Progress | None,
    on_report: Callable[[dict[str, Any]], None] | None,
    keep_running: bool,
    on_serving: Callable[[Endpoints], None] | None,
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    if not isinstance(loop, SimEventLoop):
        raise RuntimeError("simulations run on a SimEventLoop (use simulate())")
    loop.start_virtual_time()
    scenario = options.scenario
    start = _epoch(scenario.start)
    if keep_running:
        start = live_start(start, options.duration_seconds, time.time())
    clock = SimClock(loop, start_epoch=start)
    half_life = options.half_life_seconds or default_half_life(options.duration_seconds)
    settings = ClusterSettings(
        tick_seconds=options.tick_seconds,
        nodes=scenario.nodes,
        node_cpu_millicores=scenario.node_cpu_millicores,
        node_memory_bytes=scenario.node_memory_bytes,
        recommender=_recommender(half_life, options.vpa_margin),
        admission=True,
    )
    async with ApiServer(
        seed=options.seed,
        clock=clock,
        kubeconfig_path=options.kubeconfig_path,
        kubernetes_version=SIM_KUBERNETES_VERSION,
    ) as server:
        cluster = Cluster(
            server,
            settings=settings,
            clock=clock,
            node_count=_node_count(scenario, options.trace),
        )
        target = scenario.target
        cluster.loads[target] = WorkloadLoad(options.trace, scenario.loads)
        with contextlib.suppress(AlreadyExists):
            server.objects.create("namespaces", {"metadata": {"name": scenario.namespace}})
        server.objects.create(RESOURCE_OF_KIND[target[0]], dict(scenario.workload))
        server.objects.create("hvpas", dict(scenario.hvpa))
        _install_webhook_objects(server)
        baseline = _install_baseline(scenario, server, cluster, clock)
        if keep_running:
            _put_free_lease(server)

        registry = CollectorRegistry()
        kube_metrics = KubeMetrics(registry)
        client = await client_from_kubeconfig(
            metrics=kube_metrics, path=str(server.kubeconfig_path)
        )
        manager = Manager(
            client=client,
            kube_metrics=kube_metrics,
            settings=options.controller,
            identity="hvpa-sim",
            clock=clock,
            rng=random.Random(options.seed),
            leader_election=LEASE if keep_running else None,
        )
        in_place_sizes = _InPlaceSizes(server, scenario)
        observer = Observer(
            target,
            scenario.main_container,
            tick_seconds=options.tick_seconds,
            sample_seconds=options.sample_seconds,
        )
        async with (
            client,
            Tasks(name="sim", logger=_logger) as tasks,
            _webhook_server(manager, client),
        ):
            controller = tasks.start(manager.run(), name="controller")
            try:
                await _wait(manager.wait_synced(), controller)
                ticks = int(options.duration_seconds // options.tick_seconds)
                for index in range(ticks + 1):
                    due = index * options.tick_seconds + TICK_OFFSET_SECONDS
                    await _wait(asyncio.sleep(max(due - clock.elapsed(), 0.0)), controller)
                    tick = await cluster.advance()
                    if baseline is not None:
                        baseline.step()
                    observer.observe(
                        tick, cluster.workloads.spec_of(target), in_place_sizes.current()
                    )
                    if progress is not None:
                        progress(
                            min(tick.elapsed_seconds, options.duration_seconds),
                            options.duration_seconds,
                        )
                report = _report(options, server, observer, cluster, half_life, start, baseline)
                if on_report is not None:
                    on_report(report)
                if keep_running:
                    await _keep_running(
                        loop, clock, server, manager, cluster, controller, on_serving
                    )
            finally:
                manager.stop()
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(asyncio.shield(controller), timeout=60.0)
    return report


async def _wait(awaitable: Any, controller: asyncio.Task[None]) -> None:
    """Await `awaitable`, or raise at once if the controller fails or stops meanwhile."""
    waiter = asyncio.ensure_future(awaitable)
    try:
        await asyncio.wait({waiter, controller}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not waiter.done():
            waiter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await waiter
    if controller.done():
        error = controller.exception() if not controller.cancelled() else None
        raise RuntimeError(f"the controller stopped during the simulation: {error!r}") from error


def _install_baseline(
    scenario: Scenario, server: ApiServer, cluster: Cluster, clock: SimClock
) -> VpaUpdater | None:
    """The objects a baseline adds (its VPA), and its VPA updater and admission controller,
    hooked into the model's pod creation; None for hvpa's own strategies."""
    for obj in scenario.extra_objects:
        server.objects.create(RESOURCE_OF_KIND[str(obj["kind"])], dict(obj))
    if scenario.baseline is None:
        return None
    updater = VpaUpdater(server.objects, cluster.pods, clock=clock, resizes=server.resizes)
    cluster.pods.mutators.append(updater.admit)
    return updater


def _put_free_lease(server: ApiServer) -> None:
    """The leader-election Lease, held by no one, with a uid named here rather than drawn
    from the server's seeded sequence (which names the pods of the run)."""
    server.objects.create(
        "leases",
        {"metadata": {"name": LEASE.lease_name}, "spec": {}},
        namespace=LEASE.lease_namespace,
        uid=_LEASE_UID,
    )


def _catch_up_with_the_wall_clock(clock: SimClock) -> None:
    """Step the cluster's clock forward to the machine's, never back."""
    behind = time.time() - clock()
    if behind > 0:
        clock.start_epoch += behind


async def _keep_running(
    loop: SimEventLoop,
    clock: SimClock,
    server: ApiServer,
    manager: Manager,
    cluster: Cluster,
    controller: asyncio.Task[None],
    on_serving: Callable[[Endpoints], None] | None,
) -> None:
    loop.switch_to_real_time()
    _catch_up_with_the_wall_clock(clock)
    # Loopback only, in-process: plain HTTP, as the printed URLs say.
    settings = ServerSettings(
        metrics_bind_address="127.0.0.1:0",
        health_probe_bind_address="127.0.0.1:0",
        debug_state=True,
        metrics_secure=False,
    )
    async with Server(manager=manager, settings=settings) as listener:
        base = f"http://127.0.0.1:{listener.metrics_port}"
        probes = f"http://127.0.0.1:{listener.probe_port}"
        endpoints = Endpoints(
            api_server=server.url,
            kubeconfig=server.kubeconfig_path,
            metrics=f"{base}/metrics",
            debug_state=f"{base}/debug/state",
            healthz=f"{probes}/healthz",
            readyz=f"{probes}/readyz",
            lease=f"{LEASE.lease_namespace}/{LEASE.lease_name}",
        )
        _logger.info("serving", extra=fields(metrics=endpoints.metrics, api=endpoints.api_server))
        if on_serving is not None:
            on_serving(endpoints)
        while True:
            await _wait(asyncio.sleep(cluster.settings.tick_seconds), controller)
            await cluster.advance()


def _install_webhook_objects(server: ApiServer) -> None:
    """What manifests/webhook.yaml creates: the webhook's Secret and its empty configuration."""
    defaults = WebhookSettings()
    with contextlib.suppress(AlreadyExists):
        server.objects.create("namespaces", {"metadata": {"name": WEBHOOK_NAMESPACE}})
    server.objects.create(
        "secrets", {"metadata": {"name": defaults.secret_name}}, namespace=WEBHOOK_NAMESPACE
    )
    server.objects.create(
        "mutatingwebhookconfigurations",
        {"metadata": {"name": defaults.configuration_name}, "webhooks": []},
    )


def _webhook_server(manager: Manager, client: KubeClient) -> Server:
    """The controller's pod admission webhook on a free loopback port, registered by its URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    return Server(
        manager=manager,
        settings=ServerSettings(
            metrics_bind_address="0",
            health_probe_bind_address="0",
            webhook=WebhookSettings(
                bind_address=f"127.0.0.1:{port}",
                namespace=WEBHOOK_NAMESPACE,
                url=f"https://127.0.0.1:{port}",
            ),
        ),
        client=client,
    )


class _InPlaceSizes:
    """The main container's size the in-place modes keep in the Hvpa's status, if they do
    (Rollout keeps none: the template is the size, and the Hvpa is not read every tick).

    Read at every tick, while the Hvpa changes at most once a decision: the size is
    derived again only when the Hvpa's resourceVersion moved (copying the Hvpa, whose
    status holds its histories, was a few per cent of an in-place run)."""

    def __init__(self, server: ApiServer, scenario: Scenario) -> None:
        self._server = server
        self._scenario = scenario
        self._name = str(scenario.hvpa["metadata"]["name"])
        self._read_at: int | None = None
        self._size: ContainerSize | None = None

    def current(self) -> ContainerSize | None:
        if self._scenario.resize_mode == "Rollout":
            return None
        objects, namespace = self._server.objects, self._scenario.namespace
        version = objects.resource_version("hvpas", self._name, namespace=namespace)
        if version != self._read_at:
            hvpa = objects.get("hvpas", self._name, namespace=namespace)
            self._size = _in_place_size(hvpa, self._scenario)
            self._read_at = version
        return self._size


def _in_place_size(hvpa: dict[str, Any], scenario: Scenario) -> ContainerSize | None:
    status = hvpa.get("status") or {}
    sized = (status.get("podResources") or {}).get("containers") or ()
    main = next((c for c in sized if c.get("name") == scenario.main_container), None)
    if main is None:
        return None
    pod_spec = {
        "containers": [
            {
                "name": main["name"],
                "resources": {
                    "requests": main.get("requests") or {},
                    "limits": main.get("limits") or {},
                },
            }
        ]
    }
    return container_sizes(pod_spec)[0]


def _report(
    options: RunOptions,
    server: ApiServer,
    observer: Observer,
    cluster: Cluster,
    half_life: float,
    start: float,
    baseline: VpaUpdater | None = None,
) -> dict[str, Any]:
    """report.json's content; `start` is when the run began (POSIX seconds)."""
    scenario = options.scenario
    kind, namespace, name = scenario.target
    hvpa_name = str(scenario.hvpa["metadata"]["name"])
    status = server.objects.get("hvpas", hvpa_name, namespace=namespace).get("status") or {}
    changes = [c for c in cluster.workloads.changes if c.workload == scenario.target]
    path = []
    for change in changes:
        entry: dict[str, Any] = {"time": round(change.time - start, 2)}
        if change.replicas is not None:
            entry["replicas"] = list(change.replicas)
        if change.template is not None:
            entry["containers"] = [
                {
                    "name": c.get("name"),
                    "resources": c.get("resources") or {},
                }
                for c in (change.template[1].get("spec") or {}).get("containers") or ()
            ]
        path.append(entry)
    return {
        "scenario": {
            "name": scenario.name,
            "description": scenario.description,
            "target": f"{kind} {namespace}/{name}",
            "hvpa": f"{namespace}/{hvpa_name}",
            "strategy": scenario.strategy,
            "trace": options.trace.name,
            "durationSeconds": options.duration_seconds,
            "start": format_time(start),
            "seed": options.seed,
            "tickSeconds": options.tick_seconds,
            "sampleSeconds": options.sample_seconds,
            "recommenderHalfLifeSeconds": half_life,
            "recommenderMargin": options.vpa_margin
            if options.vpa_margin is not None
            else RecommenderSettings().safety_margin,
            "syncPeriodSeconds": options.controller.sync_period_seconds,
            "nodes": scenario.node_range or scenario.nodes,
            # for the plot: it shades the windows in which scale-down was allowed
            "maintenanceTimeWindow": scenario.hvpa.get("spec", {}).get("maintenanceTimeWindow"),
        },
        "summary": summarize(
            observer,
            changes,
            evictions=len(baseline.evictions) if baseline is not None else 0,
        ),
        "hvpaStatus": {
            "conditions": status.get("conditions") or [],
            "lastBlockedScaling": status.get("lastBlockedScaling") or [],
        },
        "changes": path,
        "series": observer.rows,
    }
