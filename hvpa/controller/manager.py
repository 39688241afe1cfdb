"""The Manager: informers -> handlers -> work queue -> workers -> reconciler, and their lifecycle.

How to run the controller in-process (what `hvpa run` and the simulator do)::

    kube_metrics = KubeMetrics(registry)
    client = await client_from_kubeconfig(metrics=kube_metrics, path=kubeconfig)
    manager = Manager(
        client=client,
        kube_metrics=kube_metrics,
        settings=ControllerSettings(dry_run=False),
        engine=EngineSettings(),
        leader_election=None,           # or LeaderElectionSettings(...): only the leader writes
        clock=virtual_clock,            # POSIX seconds; time.time by default
    )
    task = asyncio.create_task(manager.run())
    await manager.wait_synced()
    ...
    manager.stop()                      # workers finish, the lease is released
    await task                          # returns; raises LeadershipLost if the lease was lost

Order of events in `run`: every informer starts at once (standbys keep warm
caches too), and the elector if there is one; once every cache has synced
and this instance leads (at once without leader election), the workers
start, every Hvpa is queued, and a resync task queues every Hvpa again each
`sync_period_seconds` (metrics change without events). `run` returns after
`stop()`; it raises when a background task fails, or LeadershipLost when the
lease is lost (the process should exit non-zero: a fresh start is the only
way to be sure nothing of the old term writes).

Losing the lease (the renew deadline passed, or another candidate holds
it) stops the writing at that instant, as controller-runtime cancels its
manager's context: the elector's `on_stopped_leading` shuts the queue and
cancels every worker - a reconcile in the middle of a request, or asleep in
a Retry-After wait, ends there - and every write's `guard` re-checks the
lease before each attempt in any case. Then the rest shuts down and `run`
raises LeadershipLost (its message says why); nothing is logged above info
on the way, so the caller's one line is the whole story.

Stopping: the queue shuts down, each worker finishes the reconcile it is in
(up to `shutdown_grace_seconds`, then it is cancelled) and takes no more; a
metrics read left in the background is cancelled; then the elector is
cancelled, which releases the lease so a standby takes over at its next
retry; then the informers stop. The client is the caller's to close.

Timers (resync, retries, the elector's periods) use the running loop's
clock and `clock` gives decisions their `now`, so the whole controller runs
in a simulator's virtual time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import time
import uuid
import zlib
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from hvpa.aio import Tasks
from hvpa.controller.applier import Applier, NotLeader
from hvpa.controller.cache import (
    TARGET_KINDS,
    Cache,
    Partitioned,
    hpa_indexers,
    hvpa_indexers,
    pod_indexers,
    target_indexers,
    vpa_indexers,
)
from hvpa.controller.configmaps import ConfigMapWatches
from hvpa.controller.events import EventCorrelator
from hvpa.controller.handlers import Handlers
from hvpa.controller.inplace import ResizeDiscovery
from hvpa.controller.metricsapi import MetricsReader
from hvpa.controller.observability import ControllerMetrics, InformerStates, Observations
from hvpa.controller.reconciler import Reconciler
from hvpa.controller.resources import HPAS, HVPAS, OWNED_VPAS
from hvpa.controller.turns import TurnBudget
from hvpa.engine.settings import Settings as EngineSettings
from hvpa.kube.client import KubeClient
from hvpa.kube.errors import Conflict, KubeError
from hvpa.kube.informer import EventHandler, Informer, wait_for_cache_sync
from hvpa.kube.leader import LeaderElector, LeadershipLost
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.queue import QueueShutDown, WorkQueue
from hvpa.kube.resources import NODES, PODS, TARGETS, Resource
from hvpa.kube.settings import LeaderElectionSettings
from hvpa.kube.store import Store
from hvpa.logs import fields
from hvpa.records import NodeRecord
from hvpa.settings import ControllerSettings

__all__ = ["Manager", "default_identity", "resync_phase"]

_logger = logging.getLogger(__name__)


def default_identity() -> str:
    """client-go's leader-election identity: the host name and a random suffix."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def resync_phase(key: str) -> float:
    """Where in the sync period `key` is resynced: a stable fraction in [0, 1)."""
    return zlib.crc32(key.encode()) / 2**32


def _resync_order(keys: Iterable[str]) -> list[tuple[float, str]]:
    """The keys with their phases, in the order a round of the resync reaches them."""
    return sorted((resync_phase(key), key) for key in keys)


class Manager:
    def __init__(
        self,
        *,
        client: KubeClient,
        kube_metrics: KubeMetrics,
        settings: ControllerSettings | None = None,
        engine: EngineSettings | None = None,
        leader_election: LeaderElectionSettings | None = None,
        identity: str | None = None,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
    ) -> None:
        """`kube_metrics` must be the one `client` counts requests on; its registry gets the
        controller's metrics too. `leader_election` None: no election, this instance writes."""
        self.settings = settings = settings or ControllerSettings()
        self.identity = identity or default_identity()
        self.registry = kube_metrics.registry
        self._client = client
        self._rng = rng or random.Random()
        self._stop_requested = asyncio.Event()
        self._started = False
        self._stopping = False
        self._workers_running = False
        self._background = Tasks(name="informers", logger=_logger)
        self._workers = Tasks(name="workers", logger=_logger)
        # Workers many enough to wait on the API, reconciles few enough a turn (turns.py).
        self._turns = TurnBudget()
        self._elector_task: asyncio.Task[None] | None = None
        self._lost: LeadershipLost | None = None

        self.queue: WorkQueue[str] = WorkQueue(
            name=settings.name, metrics=kube_metrics, settings=settings.queue
        )
        self.metrics = ControllerMetrics(
            self.registry, controller=settings.name, max_workers=settings.concurrency
        )
        self.observations = Observations()
        if self.registry is not None:
            self.registry.register(self.observations)
            self.registry.register(
                InformerStates(lambda: [*self.informers, *self.config_maps.informers])
            )

        self.elector: LeaderElector | None = None
        if leader_election is not None:
            self.elector = LeaderElector(
                client=client,
                identity=self.identity,
                metrics=kube_metrics,
                settings=leader_election,
                clock=clock,
                rng=self._rng,
                on_stopped_leading=self._stop_writing,
            )

        # -- informers and the cache ---------------------------------------------
        self.informers: list[Informer[Any, Any]] = []
        hvpas = self._partitioned(HVPAS, hvpa_indexers())
        pods = self._partitioned(PODS, pod_indexers())
        targets = {
            kind: self._partitioned(TARGETS[kind], target_indexers()) for kind in TARGET_KINDS
        }
        # VPAs and HPAs are optional APIs: a cluster without the VPA CRD still
        # scales horizontally, and an Hvpa that needs a VPA holds its vertical axis.
        vpas = self._partitioned(OWNED_VPAS, vpa_indexers(), optional=True)
        hpas = self._partitioned(HPAS, hpa_indexers(), optional=True)
        self._node_informer: Informer[Any, NodeRecord] = self._informer(NODES, None, None)
        self.config_maps = ConfigMapWatches(
            client=client,
            tasks=self._background,
            settings=settings.watch,
            allowed=self._watches_namespace,
            rng=self._rng,
        )
        self.cache = Cache(
            hvpas=hvpas[0],
            pods=pods[0],
            nodes=self._node_informer.store,
            targets={kind: partitioned for kind, (partitioned, _) in targets.items()},
            vpas=vpas[0],
            hpas=hpas[0],
            config_maps=self.config_maps,
        )
        handlers = Handlers(
            cache=self.cache, enqueue=self.queue.add, on_hvpa_change=self._follow_config_maps
        )
        self.config_maps.add_handler(handlers.config_maps())
        self._register(hvpas[1], handlers.hvpas())
        self._register(pods[1], handlers.pods())
        for _, informers in targets.values():
            self._register(informers, handlers.targets())
        self._register(vpas[1], handlers.vpas())
        self._register(hpas[1], handlers.hpas())
        self._node_informer.add_handler(handlers.nodes())

        # -- the write path ----------------------------------------------------------
        self.applier = Applier(
            client=client,
            correlator=EventCorrelator(clock=clock),
            identity=self.identity,
            dry_run=settings.dry_run,
            is_leader=self.elector.is_leader if self.elector is not None else None,
        )
        self.metrics_reader = MetricsReader(
            client=client,
            timeout_seconds=settings.metrics_timeout_seconds,
            max_response_bytes=settings.metrics_max_response_bytes,
            share_pod_metrics_seconds=(
                settings.sync_period_seconds if settings.share_pod_metrics else 0.0
            ),
            hvpas_in=self.cache.metrics_readers_in,
            pod_name=self.cache.pod_name,
        )
        self.reconciler = Reconciler(
            cache=self.cache,
            reader=self.metrics_reader,
            applier=self.applier,
            observations=self.observations,
            clock=clock,
            engine=engine or EngineSettings(),
            settings=settings,
            vpa_api_served=lambda: all(informer.served for informer in vpas[1]),
            resize_discovery=ResizeDiscovery(
                client, clock=lambda: asyncio.get_running_loop().time()
            ),
        )

    # -- construction helpers ------------------------------------------------------

    def _watches_namespace(self, namespace: str) -> bool:
        return not self.settings.namespaces or namespace in self.settings.namespaces

    def _informer(
        self,
        resource: Resource[Any, Any],
        namespace: str | None,
        indexers: Any,
        optional: bool = False,
    ) -> Informer[Any, Any]:
        informer: Informer[Any, Any] = Informer(
            client=self._client,
            resource=resource,
            namespace=namespace,
            indexers=indexers,
            settings=self.settings.watch,
            rng=self._rng,
            optional=optional,
        )
        self.informers.append(informer)
        return informer

    def _partitioned(
        self, resource: Resource[Any, Any], indexers: Any, optional: bool = False
    ) -> tuple[Partitioned[Any], list[Informer[Any, Any]]]:
        """One informer over all namespaces, or one per watched namespace."""
        namespaces: tuple[str | None, ...] = self.settings.namespaces or (None,)
        informers = [
            self._informer(resource, namespace, indexers, optional) for namespace in namespaces
        ]
        stores: dict[str | None, Store[Any]] = {
            namespace: informer.store
            for namespace, informer in zip(namespaces, informers, strict=True)
        }
        return Partitioned(stores), informers

    @staticmethod
    def _register(informers: list[Informer[Any, Any]], handler: EventHandler[Any]) -> None:
        for informer in informers:
            informer.add_handler(handler)

    # -- the queue -----------------------------------------------------------------

    def _follow_config_maps(self) -> None:
        self.config_maps.sync(self.cache.config_map_refs())

    # -- state -----------------------------------------------------------------------

    @property
    def synced(self) -> bool:
        return all(informer.has_synced for informer in self.informers)

    def leading(self) -> bool:
        return self.elector is None or self.elector.is_leader()

    def ready(self) -> bool:
        """Caches synced, and leading or a healthy standby (its elector still running)."""
        if not self.synced or self._background.error is not None:
            return False
        if self.elector is None:
            return True
        return self.leading() or (self._elector_task is not None and not self._elector_task.done())

    def healthy(self) -> bool:
        return self._background.error is None and self._workers.error is None

    async def wait_synced(self) -> None:
        """Until every informer has listed once (`run` must be running)."""
        await wait_for_cache_sync(self.informers, freeze=False)

    def state(self) -> dict[str, Any]:
        """/debug/state: caches, queue, leader, and the last decision of each Hvpa (bounded)."""
        settings = self.settings
        pending = sorted(self.queue.pending())
        shown = pending[: settings.debug_max_queue_keys]
        retries = {key: self.queue.num_requeues(key) for key in self.cache.hvpa_keys()}
        leader: dict[str, Any] = {"enabled": self.elector is not None, "identity": self.identity}
        if self.elector is not None:
            leader.update(self.elector.state())
        return {
            "identity": self.identity,
            "dryRun": settings.dry_run,
            "namespaces": list(settings.namespaces) or None,
            "syncPeriodSeconds": settings.sync_period_seconds,
            "informers": [i.state() for i in [*self.informers, *self.config_maps.informers]],
            "queue": {
                "name": self.queue.name,
                "depth": len(self.queue),
                "processing": self.queue.processing,
                "waiting": self.queue.waiting,
                "keys": shown,
                "keysTruncated": len(pending) > len(shown),
                "retries": {key: count for key, count in retries.items() if count},
            },
            "workers": {"running": self._workers_running, "concurrency": settings.concurrency},
            "leader": leader,
            "hvpas": self.observations.state(
                max_hvpas=settings.debug_max_hvpas, max_lines=settings.debug_max_explanation_lines
            ),
        }

    # -- running ---------------------------------------------------------------------

    async def run(self) -> None:
        """Run until `stop()` (returns) or a failure (raises; LeadershipLost included); once."""
        if self._started:
            raise RuntimeError("a Manager runs once; build a new one")
        self._started = True
        for informer in self.informers:
            self._background.start(informer.run(), name=f"informer {informer.name}")
        if self.elector is not None:
            self._elector_task = self._background.start(
                self._lead(self.elector), name="leader-election"
            )
        try:
            if not await self._until(self._wait_synced()):
                return
            if self.elector is not None and not await self._until(self.elector.leading.wait()):
                return
            self._start_workers()
            await self._until(self._stop_requested.wait())
        finally:
            await self._shut_down()
        if self._lost is not None:
            raise self._lost

    async def _lead(self, elector: LeaderElector) -> None:
        """Run the elector; a lost lease stops the manager (an expected end, not a task failure)."""
        try:
            await elector.run()
        except LeadershipLost as lost:
            self._lost = lost
            self._stop_requested.set()

    def _stop_writing(self) -> None:
        """The elector's on_stopped_leading: no reconcile goes on after the lease is gone.

        Synchronous, so it runs at the instant of the loss, before any worker
        gets the loop again: the queue hands out no more keys, and every worker
        is cancelled wherever it waits (a request, a Retry-After sleep)."""
        self._stopping = True
        self.queue.shut_down()
        self._workers.cancel()

    async def _wait_synced(self) -> None:
        await wait_for_cache_sync(self.informers)
        _logger.info("caches synced", extra=fields(informers=len(self.informers)))

    async def _until(self, awaitable: Awaitable[object]) -> bool:
        """Wait for `awaitable`; False when a stop came first; raise when a background task failed."""
        goal = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self._stop_requested.wait())
        failure = asyncio.ensure_future(self._background.join())
        try:
            done, _ = await asyncio.wait({goal, stop, failure}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for future in (goal, stop, failure):
                future.cancel()
            for future in (goal, stop, failure):
                with contextlib.suppress(asyncio.CancelledError):
                    await future
        if failure in done:
            failure.result()  # raises the failed task's error
            raise RuntimeError("every background task ended")
        return goal in done

    def _start_workers(self) -> None:
        _logger.info(
            "starting workers",
            extra=fields(concurrency=self.settings.concurrency, dry_run=self.settings.dry_run),
        )
        for index in range(self.settings.concurrency):
            self._workers.start(self._work(), name=f"worker {index}")
        self._background.start(self._resync(), name="resync")
        self._workers_running = True
        for key in self.cache.hvpa_keys():
            self.queue.add(key, low_priority=True)

    def stop(self) -> None:
        """Ask `run` to stop; it returns once workers, elector and informers are down."""
        self._stop_requested.set()

    async def _shut_down(self) -> None:
        self._stopping = True
        self.queue.shut_down()
        if self._workers_running:
            await self._drain_workers()
        self._workers_running = False
        await self.metrics_reader.close()
        if self._elector_task is not None and not self._elector_task.done():
            self._elector_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._elector_task
        await self._background.stop()
        _logger.info("controller stopped", extra=fields(identity=self.identity))

    async def _drain_workers(self) -> None:
        """Let each worker finish its reconcile (up to the grace period), then cancel the rest."""
        grace = self.settings.shutdown_grace_seconds
        try:
            async with asyncio.timeout(grace):
                await self._workers.join()
        except TimeoutError:
            _logger.warning("workers did not finish in time", extra=fields(grace_seconds=grace))
        except Exception:
            # A worker that failed was logged by its task group; the shutdown goes on.
            _logger.debug("a worker had failed before the shutdown")
        await self._workers.stop()

    async def _resync(self) -> None:
        """Queue every Hvpa once per sync period, each at its own phase of the period.

        Queuing them all at one instant would put every Hvpa in front of whatever
        change arrives meanwhile (a VPA recommendation, a rollout) and make it wait
        for the whole backlog; a stable phase per key spreads them evenly and keeps
        each Hvpa's own period exact. The first round starts with the workers (when
        every Hvpa is queued once): started a period later, an Hvpa of a late phase
        went nearly two periods from its first decision to its second.

        Each key is added when its phase comes, not handed to the queue's delaying
        heap in advance: there a key keeps only its sooner deadline, so a retry
        pending at the round's start (a stale cache's, one second) swallowed the
        resync, and the Hvpa went up to two periods undecided.

        The resync's keys are low priority: a change queued meanwhile goes ahead of them
        (tests/integration/test_decision_rate.py)."""
        loop = asyncio.get_running_loop()
        period = self.settings.sync_period_seconds
        while True:
            round_start = loop.time()
            for phase, key in _resync_order(self.cache.hvpa_keys()):
                wait = round_start + period * phase - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if key in self.cache.hvpas:
                    self.queue.add(key, low_priority=True)
            await asyncio.sleep(max(0.0, round_start + period - loop.time()))

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                key = await self._next_key()
            except QueueShutDown:
                return
            if self._stopping:
                self.queue.done(key)
                continue
            self.metrics.worker_started()
            started = loop.time()
            try:
                result = await self._process(key)
            finally:
                self.metrics.worker_finished()
                self.queue.done(key)
            self.metrics.reconciled(result, loop.time() - started)

    async def _next_key(self) -> str:
        """The key to reconcile, in a turn of the loop with room for it (turns.py).

        The room is taken before the key, so the key is chosen when the room comes:
        a change's key queued meanwhile goes ahead of the resync's. A worker that
        found the queue empty waits for a key, then for room."""
        await self._turns.begin()
        key = self.queue.try_get()
        if key is not None:
            return key
        key = await self.queue.get()
        try:
            await self._turns.begin()
        except asyncio.CancelledError:
            self.queue.done(key)
            raise
        return key

    async def _process(self, key: str) -> str:
        """One reconcile and its consequence for the queue; the result label."""
        error = ""
        try:
            after = await self.reconciler.reconcile(key)
        except Conflict as conflict:
            # Rate-limited, as client-go's AddRateLimited: a 409 met again and again
            # backs off instead of spinning (the reconciler also waits for the watch).
            _logger.info("conflict; reconciling again", extra=fields(hvpa=key, error=str(conflict)))
            self.queue.add_rate_limited(key)
            result, error = "requeue", str(conflict)
        except NotLeader as lost:
            # The lease is going or gone; the elector reports that once, with its reason.
            _logger.info("not the leader; nothing written", extra=fields(hvpa=key, error=str(lost)))
            result, error = "error", str(lost)
        except KubeError as failed:
            _logger.warning("reconcile failed", extra=fields(hvpa=key, error=str(failed)))
            self.queue.add_rate_limited(key)
            result, error = "error", str(failed)
        except Exception as failed:
            _logger.exception("reconcile failed", extra=fields(hvpa=key))
            self.queue.add_rate_limited(key)
            result, error = "error", f"{type(failed).__name__}: {failed}"
        else:
            self.queue.forget(key)
            if after is None:
                result = "success"
            else:
                self.queue.add_after(key, after)
                result = "requeue_after"
        if key in self.cache.hvpas:
            observation = self.observations.get(key)
            observation.result, observation.error = result, error
        return result
