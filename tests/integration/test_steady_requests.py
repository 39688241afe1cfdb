"""What the controller asks of the API server at steady state, in virtual time: with the
load constant, each Hvpa is decided once per sync period; nothing is written but the
status's recommendation history, at most once per `history_flush_seconds` (60 s: four sync
periods) - no /scale, no template, no other status change - and the only reads are the
metrics, one per namespace per period. The upstream HPA controller makes, per HPA and sync,
a GET of /scale and a status write (kubernetes/pkg/controller/podautoscaler/horizontal.go,
reconcileAutoscaler: the scale read, then updateStatusIfNeeded, which writes whenever the
status differs, and its lastScaleTime/metrics differ at nearly every sync).
bench/bench_envelope.py counts the same at a cluster's size."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from integration_cluster import Load, MiniCluster
from integration_helpers import FLAT_CAPACITY_CURVE, VIRTUAL_TIME, eventually, hvpa_manifest

from hvpa.settings import ControllerSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

NAMES = [f"web-{index}" for index in range(6)]
PERIOD = 15.0
FLUSH = 60.0  # ControllerSettings.history_flush_seconds' default
WINDOW = 2 * FLUSH  # eight sync periods
METRICS_READ = ("list", "metrics.k8s.io", "pods", "")
STATUS_WRITE = ("update", "autoscaling.k8s.io", "hvpas", "status")
VPA_CREATE = ("create", "autoscaling.k8s.io", "verticalpodautoscalers", "")
EVENT_CREATE = ("create", "", "events", "")


def _workloads(apiserver: ApiServer, cluster: MiniCluster, *, vpa: bool = False) -> None:
    """A Deployment of two pods under constant load for each of NAMES, and its Hvpa."""
    for name in NAMES:
        cluster.deployment(
            name,
            replicas=2,
            requests={"cpu": "100m", "memory": "64Mi"},
            load=Load(cpu_millicores=50),
        )
        apiserver.objects.create("hvpas", hvpa_manifest(name, target=name, vpa=vpa))


def _asked(apiserver: ApiServer) -> Counter[tuple[str, str, str, str]]:
    """The requests in the server's log but watches, by (verb, group, resource, subresource)."""
    return Counter(
        (r.verb, r.api_group, r.resource, r.subresource)
        for r in apiserver.requests
        if r.verb != "watch"
    )


async def test_the_start_creates_each_vpa_and_writes_each_status_once(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """A reconcile that creates the VPA leaves the decision to the reconcile its ADDED event
    queues: deciding without it wrote a status saying there was no VPA yet, and the next
    reconcile a second one saying it had no recommendation (two status writes an Hvpa at
    the start; 10,000 more writes at the envelope's size, docs/benchmarks.md)."""
    _workloads(apiserver, cluster, vpa=True)
    running = await start_controller(settings=ControllerSettings(sync_period_seconds=PERIOD))
    observations = running.manager.observations
    decided = [f"default/{name}" for name in NAMES]
    await eventually(lambda: all(observations.get(key).time for key in decided), within=30)
    await asyncio.sleep(PERIOD / 3)  # any second decision and its writes would be done

    asked = _asked(apiserver)
    assert asked[VPA_CREATE] == len(NAMES)
    assert asked[STATUS_WRITE] == len(NAMES)
    # One Event each: the condition that turned False (the VPA has no recommendation yet),
    # never one saying there is no VPA right after it was made.
    assert asked[EVENT_CREATE] == len(NAMES)
    messages = [event["message"] for event in apiserver.objects.list("events")]
    assert not any("no VerticalPodAutoscaler" in message for message in messages)


async def test_steady_state_writes_only_the_history_and_reads_metrics_once_a_period(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    _workloads(apiserver, cluster)
    settings = ControllerSettings(sync_period_seconds=PERIOD)
    assert settings.history_flush_seconds == FLUSH
    running = await start_controller(settings=settings)
    observations = running.manager.observations
    await eventually(lambda: len(observations) == len(NAMES), within=30)
    await asyncio.sleep(FLUSH)  # the first decisions' writes, and their echoes, are over
    decided = {name: observations.get(f"default/{name}").time for name in NAMES}
    apiserver.clear_requests()

    await asyncio.sleep(WINDOW)

    periods = int(WINDOW / PERIOD)
    latest = {name: observations.get(f"default/{name}").time for name in NAMES}
    assert all(latest[name] >= decided[name] + (periods - 1) * PERIOD for name in NAMES)
    asked = _asked(apiserver)
    assert set(asked) == {METRICS_READ, STATUS_WRITE}
    # The history's flush: once per Hvpa per 60 s (a window's edge may hold one more).
    assert len(NAMES) * WINDOW / FLUSH <= asked[STATUS_WRITE] <= len(NAMES) * (WINDOW / FLUSH + 1)
    # One namespace: one shared PodMetrics read a period, against one GET /scale and one
    # status write per HPA per sync upstream (2 * 6 * 8 = 96 requests here).
    assert periods <= asked[METRICS_READ] <= periods + 1


async def test_a_capacity_hvpa_whose_usage_moves_writes_only_the_history(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """Usage moves at every reading; with nothing to scale, the status changes only in its
    history, written once per flush. (The demand's amounts in a condition's message made
    every decision a status write.)"""
    cluster.deployment(
        "web",
        replicas=2,
        requests={"cpu": "1", "memory": "1Gi"},
        load=Load(cpu_millicores=800),
    )
    apiserver.objects.create(
        "hvpas",
        hvpa_manifest("web", strategy="Capacity", capacity={"curve": FLAT_CAPACITY_CURVE}),
    )
    running = await start_controller(settings=ControllerSettings(sync_period_seconds=PERIOD))
    observations = running.manager.observations
    await eventually(lambda: len(observations) == 1, within=30)
    await asyncio.sleep(FLUSH)
    apiserver.clear_requests()

    for period in range(int(WINDOW / PERIOD)):
        # Rising, so that the down window does not hold the demand still: 800m to 870m.
        cluster.loads["web"].cpu_millicores = 800 + 10 * period
        await asyncio.sleep(PERIOD)

    asked = _asked(apiserver)
    assert set(asked) == {METRICS_READ, STATUS_WRITE}
    assert WINDOW / FLUSH <= asked[STATUS_WRITE] <= WINDOW / FLUSH + 1
    assert cluster.replicas("web") == 2
