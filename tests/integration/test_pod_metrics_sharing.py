"""PodMetrics shared between the Hvpas of a namespace, with the whole controller: the same
cluster run twice in virtual time, once reading every query by its selector (as upstream's
HPA does) and once sharing one namespace-wide read per sync period, makes the same decisions
and ends in the same state, with metrics.k8s.io requests falling from one per reconcile to
one per period."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Final

from integration_cluster import Load, MiniCluster
from integration_helpers import (
    VIRTUAL_TIME,
    api_server,
    hvpa_manifest,
    mini_cluster,
    start_manager,
    stop_manager,
)

from bench.harness import counter_total
from hvpa.settings import ControllerSettings
from hvpa.sim.apiserver import ApiServer

pytestmark = VIRTUAL_TIME

EPOCH: Final = 1_750_000_000.0
PERIOD: Final = 15.0
# Five periods: past the 60 s after which history-only status changes are written.
PERIODS: Final = 5
# Six Deployments of 100m pods whose loads ask for 1 to 6 replicas at 50% (50m a replica),
# so each Hvpa's decision depends on its own pods' metrics and a wrong selection shows.
LOADS: Final = {f"web-{index}": 50 * index for index in range(1, 7)}


@dataclass(frozen=True)
class Run:
    decisions: dict[str, tuple[Any, ...]]  # per Hvpa, what its last reconcile decided
    statuses: dict[str, Any]  # as written (its times to the minute): conditions, scaling, history
    replicas: dict[str, int]
    reconciles: int
    metric_requests: int


def _decided(decision: Any) -> tuple[Any, ...]:
    """What a decision says, without the times its status carries."""
    return (
        decision.current_replicas,
        decision.desired_replicas,
        decision.containers,
        decision.horizontal,
        decision.blocked,
        tuple((c.type, c.status, c.reason, c.message) for c in decision.conditions),
    )


def _to_the_minute(value: Any) -> Any:
    """A status with each of its times cut to the minute. The runs' requests interleave
    differently, and a reconcile that finds its cache older than its own last write
    retries a second later: a write can then be stamped a second apart in the two runs,
    with the same content."""
    if isinstance(value, dict):
        return {key: _to_the_minute(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_to_the_minute(item) for item in value]
    if isinstance(value, str) and len(value) == 20 and value[10] == "T" and value[-1] == "Z":
        return value[:16]
    return value


async def _run(*, share: bool) -> Run:
    """One cluster and controller, from the integration fixtures' pieces (two runs in a test
    need two of each), on a clock of their own from EPOCH, so the two runs stamp the same
    times."""
    loop = asyncio.get_running_loop()
    began = loop.time()

    def clock() -> float:
        return EPOCH + loop.time() - began

    async with api_server(clock) as server, mini_cluster(server, clock) as cluster:
        for name, cpu in LOADS.items():
            cluster.deployment(
                name, replicas=1, requests={"cpu": "100m"}, load=Load(cpu_millicores=cpu)
            )
            server.objects.create("hvpas", hvpa_manifest(name, target=name))
        running = await start_manager(
            server,
            clock,
            settings=ControllerSettings(sync_period_seconds=PERIOD, share_pod_metrics=share),
        )
        try:
            await asyncio.sleep(PERIODS * PERIOD)
            requests = sum(1 for r in server.requests if r.api_group == "metrics.k8s.io")
        finally:
            await stop_manager(running)
        observations = running.manager.observations
        return Run(
            decisions={n: _decided(observations.get(f"default/{n}").decision) for n in LOADS},
            statuses={n: _to_the_minute(server.objects.get("hvpas", n)["status"]) for n in LOADS},
            replicas={name: cluster.replicas(name) for name in LOADS},
            reconciles=int(
                counter_total(running.registry.collect(), "controller_runtime_reconcile")
            ),
            metric_requests=requests,
        )


async def test_shared_reads_decide_the_same_with_a_request_per_period() -> None:
    alone = await _run(share=False)
    shared = await _run(share=True)

    assert shared.replicas == alone.replicas == {f"web-{i}": i for i in range(1, 7)}
    assert shared.decisions == alone.decisions
    assert shared.statuses == alone.statuses
    assert all(s["history"]["recommendations"] for s in shared.statuses.values())
    # Every Hvpa at least once a period in both; a retry on a stale cache (above) can add
    # a reconcile to either run.
    assert min(shared.reconciles, alone.reconciles) >= len(LOADS) * PERIODS
    # One read per decision, as the HPA's: every Hvpa at least once a period.
    assert alone.metric_requests >= len(LOADS) * PERIODS
    assert shared.metric_requests <= PERIODS + 1  # one namespace-wide read per period


async def test_a_broken_hvpa_beside_one_reader_leaves_its_reads_by_selector(
    apiserver: ApiServer, cluster: MiniCluster, start_controller: Any
) -> None:
    """A namespace with one Hvpa that reads metrics and one invalid Hvpa (which reads none):
    a namespace-wide read would serve a single reader and pay for every other pod, so the
    reader's PodMetrics are read by its selector, as with no other Hvpa at all."""
    cluster.deployment("web", replicas=1, requests={"cpu": "100m"}, load=Load(cpu_millicores=100))
    apiserver.objects.create("hvpas", hvpa_manifest("web", target="web"))
    # The CRD's rules refuse it: stored as an Hvpa written before them would be.
    broken = hvpa_manifest("broken", target="api", min_replicas=5, max_replicas=3)
    apiserver.objects.create("hvpas", broken, validate=False)
    await start_controller(
        settings=ControllerSettings(sync_period_seconds=PERIOD, share_pod_metrics=True)
    )
    await asyncio.sleep(PERIODS * PERIOD)

    reads = [r for r in apiserver.requests if r.api_group == "metrics.k8s.io"]
    assert reads, "the reader read its metrics"
    assert [r.query.get("labelSelector") for r in reads] == ["app=web"] * len(reads)
