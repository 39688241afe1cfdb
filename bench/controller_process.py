"""The controller process of bench_controller: the real Manager, driven over a pipe.

Kept apart from bench_controller so the spawned process imports only what
`hvpa run` imports (the controller, not the simulator or the API server):
its RSS is then the controller's own.

Commands: ("settle", seconds[, within]) waits until the work queue has held no
more keys than the resync adds in a tenth of a second for that long, or at
most `within` seconds (then it reports `settled: False` and the keys still
queued: a controller short of CPU never drains the resync's queue); ("count",) reports reconciles so far (all,
and those that decided), the process's CPU time and its wait for a CPU, the
work queue's adds, when each Hvpa was last decided, RSS, and the trigger moments
since the last count (TriggerMoments, recorded from the first count on); ("cpu",) the
process's CPU time and run delay alone; ("full_collection",) times one full collection;
("tally",) the decisions so far and
the CPU time before and after the pass over the registry that counts them
(outside the profiled window); ("undecided",)
how many Hvpas have not been decided yet (cheap enough to poll while a restart
is timed: no pass over the metrics registry); ("stop",) (or EOF) stops the
Manager and reports the reconciles.

The collector: tuned and paced as `hvpa run` does (`hvpa.controller.collector`), unless
`HVPA_BENCH_GC_THRESHOLDS=700,10,10` (Python's defaults) sets other thresholds and
no pacer.

Profiling: `HVPA_BENCH_PROFILE=path` writes cProfile stats of the whole
process there; `HVPA_BENCH_PROFILE_WINDOW=path` only of the time between the
first and the second ("count",), the measured window at steady state.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import time
from collections import Counter
from multiprocessing.connection import Connection
from typing import Any

from bench.harness import LoopWatch, counter_total, rss_bytes, run_delay_seconds

__all__ = ["TriggerMoments", "controller_main"]

# More moments than a window's triggers could make: a bound, not a sample.
MAX_MOMENTS = 100_000


class TriggerMoments:
    """Two moments inside the controller that split a trigger's latency, keyed by
    "namespace/name" of the Deployment (its Hvpa and VPA are named after it): when a VPA's
    update reached the controller's handlers (its watch event read, decoded and in the
    cache, its Hvpa queued in the same call), and when the reconcile handed a PATCH of the
    Deployment to its client, and when the client had written that PATCH's headers to the
    connection (aiohttp's request tracing, `client_settings`). Beside them, when
    each namespace-wide PodMetrics read came back (keyed by the namespace; its decoding
    follows), to tell the reconciles that waited for one. Taken with the informer's public
    handler API and a wrapper of this process's client, so nothing in hvpa/ knows it is
    timed; time.monotonic, which this machine's processes share, so the API server
    process's moments compare with them."""

    def __init__(self) -> None:
        self.recording = False
        self.vpa_updates: list[tuple[str, float]] = []
        self.patches: list[tuple[str, float]] = []
        self.metrics_reads: list[tuple[str, float]] = []
        self.sent: list[tuple[str, float]] = []

    def client_settings(self) -> Any:
        """The client's settings with aiohttp's request tracing, which notes when each
        Deployment PATCH's headers have been written to the connection: the request has
        left the controller's client and loop."""
        import aiohttp

        from hvpa.kube.settings import ClientSettings

        async def headers_sent(_: Any, __: Any, params: Any) -> None:
            if (key := _patched_deployment(params.method, params.url.path)) is not None:
                self._record(self.sent, key)

        trace = aiohttp.TraceConfig()
        trace.on_request_headers_sent.append(headers_sent)
        return ClientSettings(trace_configs=(trace,))

    def follow(self, client: Any, informers: list[Any]) -> None:
        """Time `client`'s Deployment PATCHes and namespace-wide PodMetrics reads, and the VPA
        informers' updates."""
        from hvpa.controller.resources import OWNED_VPAS
        from hvpa.kube.informer import EventHandler

        request = client.request

        async def timed_request(method: str, path: str, **options: Any) -> Any:
            if (key := _patched_deployment(method, path)) is not None:
                self._record(self.patches, key)
            answer = await request(method, path, **options)
            if path.startswith(_POD_METRICS) and not options.get("params"):
                self._record(self.metrics_reads, path.removeprefix(_POD_METRICS).split("/")[0])
            return answer

        client.request = timed_request
        handler = EventHandler(on_update=self._vpa_updated)
        for informer in informers:
            if informer.resource is OWNED_VPAS:
                informer.add_handler(handler)

    def _vpa_updated(self, old: Any, new: Any) -> None:
        record = new.record
        self._record(self.vpa_updates, f"{record.namespace}/{record.target_name}")

    def _record(self, moments: list[tuple[str, float]], key: str) -> None:
        if self.recording and len(moments) < MAX_MOMENTS:
            moments.append((key, time.monotonic()))

    def take(self) -> dict[str, list[tuple[str, float]]]:
        """What was recorded since the last take; recording goes on from now."""
        taken = {
            "vpa_updates": self.vpa_updates,
            "patches": self.patches,
            "metrics_reads": self.metrics_reads,
            "sent": self.sent,
        }
        self.vpa_updates, self.patches, self.metrics_reads, self.sent = [], [], [], []
        self.recording = True
        return taken


# A namespace's PodMetrics: /apis/metrics.k8s.io/v1beta1/namespaces/NAMESPACE/pods.
_POD_METRICS = "/apis/metrics.k8s.io/v1beta1/namespaces/"


def _patched_deployment(method: str, path: str) -> str | None:
    """ "namespace/name" of a PATCH of /apis/apps/v1/namespaces/NAMESPACE/deployments/NAME
    (or a subresource of it); None for any other request."""
    parts = path.split("/")
    if method != "PATCH" or "namespaces" not in parts or "deployments" not in parts:
        return None
    return f"{parts[parts.index('namespaces') + 1]}/{parts[parts.index('deployments') + 1]}"


def controller_main(
    conn: Connection, kubeconfig: str, sync_period_seconds: float | None = None
) -> None:
    """`HVPA_BENCH_PROFILE=path`: the controller's cProfile stats are written there.
    `sync_period_seconds`: the resync period, when not ControllerSettings' default."""
    profile_path = os.environ.get("HVPA_BENCH_PROFILE")
    try:
        if profile_path:
            import cProfile

            with cProfile.Profile() as profile:
                asyncio.run(_controller(conn, kubeconfig, sync_period_seconds))
            profile.dump_stats(profile_path)
            return
        asyncio.run(_controller(conn, kubeconfig, sync_period_seconds))
    except Exception as error:
        with contextlib.suppress(Exception):
            conn.send(error)
        raise


async def _controller(conn: Connection, kubeconfig: str, sync_period_seconds: float | None) -> None:
    """The collector as `hvpa run` chooses it, unless HVPA_BENCH_GC_THRESHOLDS."""
    from hvpa.controller.collector import paced_collector

    async with contextlib.AsyncExitStack() as stack:
        if thresholds := os.environ.get("HVPA_BENCH_GC_THRESHOLDS"):
            gc.set_threshold(*(int(n) for n in thresholds.split(",")))
        else:
            await stack.enter_async_context(paced_collector())  # as `hvpa run` does
        await _measured_controller(conn, kubeconfig, sync_period_seconds)


async def _measured_controller(
    conn: Connection, kubeconfig: str, sync_period_seconds: float | None
) -> None:
    from prometheus_client import CollectorRegistry

    from hvpa.controller.manager import Manager
    from hvpa.kube.client import client_from_kubeconfig
    from hvpa.kube.metrics import KubeMetrics
    from hvpa.settings import ControllerSettings

    rss_start = rss_bytes()
    registry = CollectorRegistry()
    kube_metrics = KubeMetrics(registry)
    moments = TriggerMoments()
    client = await client_from_kubeconfig(
        metrics=kube_metrics, path=kubeconfig, settings=moments.client_settings()
    )
    manager = Manager(
        client=client,
        kube_metrics=kube_metrics,
        settings=ControllerSettings()
        if sync_period_seconds is None
        else ControllerSettings(sync_period_seconds=sync_period_seconds),
        identity="bench",
    )
    moments.follow(client, manager.informers)
    sync_period = manager.settings.sync_period_seconds
    started = time.perf_counter()
    watch = LoopWatch()
    watch.start()
    lag, pauses, sampler = watch.lag, watch.pauses, watch.sampler
    stall_samples_before: Counter[str] = Counter()
    task = asyncio.create_task(manager.run())
    await manager.wait_synced()
    conn.send({"synced_seconds": time.perf_counter() - started, "rss_start": rss_start})

    def decided_at() -> dict[str, float]:
        """When each Hvpa was last decided (time.time; 0 if never)."""
        observations = manager.observations
        return {key: observations.get(key).time for key in manager.cache.hvpa_keys()}

    window = _Window(os.environ.get("HVPA_BENCH_PROFILE_WINDOW"))
    async with client:
        while True:
            try:
                command = await asyncio.to_thread(conn.recv)
            except EOFError:
                command = ("stop",)
            if command[0] == "settle":
                quiet_since = None
                give_up = time.perf_counter() + (command[2] if len(command) > 2 else float("inf"))
                settled = True
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
                    if now >= give_up:
                        settled = False
                        break
                conn.send(
                    {
                        "rss": rss_bytes(),
                        "settled": settled,
                        "queued": len(manager.queue),
                        **_counts(registry),
                    }
                )
            elif command[0] == "count":
                # The probe's own pass over the registry (every Hvpa's series) is left out of
                # the window: it ends before the pass and starts after it, for the profile
                # and for the CPU the envelope divides decisions by.
                window.stop()  # the second count ends the window
                # The stalls sampled since the last count's pass (the probe's own are not
                # the controller's); a copy first, in one C call, as the sampler's thread
                # writes the Counter.
                since_last_count = dict(sampler.samples.copy() - stall_samples_before)
                cpu_before_pass = time.process_time()
                counts = _counts(registry)
                window.start()  # the first count starts it (nothing after the second)
                stall_samples_before = sampler.samples.copy()
                conn.send(
                    {
                        **counts,
                        "cpu_before_pass": cpu_before_pass,
                        "cpu": time.process_time(),
                        "run_delay": run_delay_seconds(),
                        "decided_at": decided_at(),
                        "time": time.time(),
                        "rss": rss_bytes(),
                        "stalls": lag.stalls,
                        "stall_thread_cpu": lag.thread_cpu,
                        "stall_samples": since_last_count,
                        "stall_sample_seconds": sampler.interval,
                        "gc": pauses.pauses,
                        "gc_thread_cpu": pauses.thread_cpu,
                        "gc_cpu": list(pauses.cpu),
                        "gc_collections": [s["collections"] for s in gc.get_stats()],
                        "gc_collected": [s["collected"] for s in gc.get_stats()],
                        "trigger_moments": moments.take(),
                    }
                )
            elif command[0] == "tally":
                cpu_before_pass = time.process_time()
                counts = _counts(registry)
                conn.send(
                    {**counts, "cpu_before_pass": cpu_before_pass, "cpu": time.process_time()}
                )
            elif command[0] == "full_collection":
                # What the pacer's full collection every FULL_EVERY_SECONDS holds the loop for
                # (a window of two periods seldom holds one).
                started_at = time.perf_counter()
                gc.collect(2)
                conn.send({"seconds": time.perf_counter() - started_at})
            elif command[0] == "cpu":
                conn.send({"cpu": time.process_time(), "run_delay": run_delay_seconds()})
            elif command[0] == "undecided":
                observations = manager.observations
                conn.send(sum(1 for key in manager.cache.hvpas if not observations.get(key).time))
            else:
                window.stop()
                watch.stop()
                manager.stop()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 60)
                with contextlib.suppress(Exception):
                    conn.send({"reconciles": _counts(registry)["reconciles"]})
                return


def _counts(registry: Any) -> dict[str, float]:
    """Reconciles so far (all; "decisions": those that succeeded, which ran `decide` - a
    reconcile that waits for a stale cache or a ConfigMap's sync requeues itself, and counts
    apart; one that only created its Hvpa's VPA succeeds undecided too, which happens at the
    start, not in a measured window) and the work queue's adds, from one pass over the
    registry."""
    families = list(registry.collect())
    return {
        "reconciles": counter_total(families, "controller_runtime_reconcile"),
        "decisions": counter_total(families, "controller_runtime_reconcile", result="success"),
        "queue_adds": counter_total(families, "workqueue_adds"),
    }


class _Window:
    """cProfile of the measured window: started by the first ("count",), stopped and written
    by the second (or at the stop); nothing when `path` is None."""

    def __init__(self, path: str | None) -> None:
        self._path = path
        self._profile: Any = None
        self._done = path is None

    def start(self) -> None:
        """Start profiling, unless it has started already (or there is no window)."""
        if self._done or self._profile is not None:
            return
        import cProfile

        # CPU time, not the wall clock (cProfile's default): the window's waits for a CPU on
        # a shared machine are no cost of the code.
        self._profile = cProfile.Profile(time.process_time)
        self._profile.enable()

    def stop(self) -> None:
        """Stop profiling and write the stats, if it is running."""
        if self._done or self._profile is None:
            return
        self._profile.disable()
        self._profile.dump_stats(self._path)
        self._done = True
