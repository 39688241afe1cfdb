"""The controller process of bench_controller: the real Manager, driven over a pipe.

Kept apart from bench_controller so the spawned process imports only what
`hvpa run` imports (the controller, not the simulator or the API server):
its RSS is then the controller's own.

Commands: ("settle", seconds) waits until the work queue has been empty and
no reconcile running for that long; ("count",) reports reconciles so far (all,
and those that decided), the process's CPU time and its wait for a CPU, the
work queue's adds, when each Hvpa was last decided, and RSS; ("stop",) (or
EOF) stops the Manager and reports the reconciles.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from multiprocessing.connection import Connection

from bench.harness import GcPauses, LoopLag, rss_bytes, run_delay_seconds

__all__ = ["controller_main"]


def controller_main(conn: Connection, kubeconfig: str) -> None:
    """`HVPA_BENCH_PROFILE=path`: the controller's cProfile stats are written there."""
    profile_path = os.environ.get("HVPA_BENCH_PROFILE")
    try:
        if profile_path:
            import cProfile

            with cProfile.Profile() as profile:
                asyncio.run(_controller(conn, kubeconfig))
            profile.dump_stats(profile_path)
            return
        asyncio.run(_controller(conn, kubeconfig))
    except Exception as error:
        with contextlib.suppress(Exception):
            conn.send(error)
        raise


async def _controller(conn: Connection, kubeconfig: str) -> None:
    from prometheus_client import CollectorRegistry

    from hvpa.controller.manager import Manager
    from hvpa.kube.client import client_from_kubeconfig
    from hvpa.kube.metrics import KubeMetrics
    from hvpa.settings import ControllerSettings

    rss_start = rss_bytes()
    registry = CollectorRegistry()
    kube_metrics = KubeMetrics(registry)
    client = await client_from_kubeconfig(metrics=kube_metrics, path=kubeconfig)
    manager = Manager(
        client=client,
        kube_metrics=kube_metrics,
        settings=ControllerSettings(),
        identity="bench",
    )
    sync_period = manager.settings.sync_period_seconds
    started = time.perf_counter()
    lag = LoopLag()
    pauses = GcPauses()
    lag_task = asyncio.create_task(lag.run())
    task = asyncio.create_task(manager.run())
    await manager.wait_synced()
    conn.send({"synced_seconds": time.perf_counter() - started, "rss_start": rss_start})

    def reconciles(result: str | None = None) -> float:
        """Reconciles so far; `result` "success": those that ran `decide` (a reconcile that
        waits for a stale cache or a ConfigMap's sync requeues itself, and counts apart)."""
        total = 0.0
        for metric in registry.collect():
            if metric.name == "controller_runtime_reconcile":
                total += sum(
                    sample.value
                    for sample in metric.samples
                    if sample.name.endswith("_total")
                    and (result is None or sample.labels.get("result") == result)
                )
        return total

    def queue_adds() -> float:
        for metric in registry.collect():
            if metric.name == "workqueue_adds":
                return sum(s.value for s in metric.samples if s.name.endswith("_total"))
        return 0.0

    def decided_at() -> dict[str, float]:
        """When each Hvpa was last decided (time.time; 0 if never)."""
        observations = manager.observations
        return {key: observations.get(key).time for key in manager.cache.hvpa_keys()}

    async with client:
        while True:
            try:
                command = await asyncio.to_thread(conn.recv)
            except EOFError:
                command = ("stop",)
            if command[0] == "settle":
                quiet_since = None
                while True:
                    await asyncio.sleep(0.1)
                    # No more keys waiting than the resync adds in a tenth of a second
                    # (at least one): a resync spread over its period keeps a few keys
                    # queued (667 a second at 10,000 Hvpas, where "at most one" never
                    # held), a burst of work queues many more.
                    resyncs_per_second = len(manager.cache.hvpas) / sync_period
                    busy = len(manager.queue) > max(1.0, 0.1 * resyncs_per_second)
                    now = time.perf_counter()
                    if busy:
                        quiet_since = None
                    elif quiet_since is None:
                        quiet_since = now
                    elif now - quiet_since >= command[1]:
                        break
                conn.send({"rss": rss_bytes(), "reconciles": reconciles()})
            elif command[0] == "count":
                conn.send(
                    {
                        "reconciles": reconciles(),
                        "decisions": reconciles("success"),
                        "cpu": time.process_time(),
                        "run_delay": run_delay_seconds(),
                        "queue_adds": queue_adds(),
                        "decided_at": decided_at(),
                        "time": time.time(),
                        "rss": rss_bytes(),
                        "stalls": lag.stalls,
                        "gc": pauses.pauses,
                    }
                )
            else:
                lag_task.cancel()
                manager.stop()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 60)
                with contextlib.suppress(Exception):
                    conn.send({"reconciles": reconciles()})
                return
