"""A coalescing, rate-limited work queue with client-go's semantics, on asyncio.

Handlers put keys in; workers take keys out and reconcile them. The rules,
from client-go's util/workqueue:

- A key waits in the queue at most once (the dirty set): ten events for one
  Hvpa before a worker gets to it make one reconcile, not ten.
- A key is never handed to two workers at once (the processing set). Added
  again while a worker holds it, it is marked dirty and queued once the
  worker calls `done`, so the change is reconciled after, not during.
- `add_after` delays an add (a timer per earliest deadline, not per key);
  a key already waiting keeps the earlier of its two deadlines.
- `add_rate_limited` delays by the rate limiter: per key 5 ms doubling to
  1000 s, and overall a 10 qps / 100 burst token bucket, the longer wins.
  `forget` after a success resets the key's backoff.
- Two lanes: a key added with `low_priority` (the resync's) waits behind
  every key an event or a retry added, and such an add moves a
  low key already waiting to the front lane. controller-runtime's priority
  queue gives its resync and initial list a low priority for the same
  reason: at 10,000 Hvpas the resync queues 667 keys a second, and a change
  behind them waited seconds for its write (docs/benchmarks.md).
- `shut_down` refuses new adds and wakes idle workers; keys already queued
  are still handed out, then `get` raises `QueueShutDown`.
  `shut_down_with_drain` also waits until the queue is empty and no worker
  holds a key (so it needs running workers; bound it with a timeout).

Timing uses the running loop's clock, so it follows virtual time in tests
and in the simulator. Call it from the loop's thread only.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections import OrderedDict, deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from hvpa.kube.backoff import RateLimiter, default_controller_rate_limiter
from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.settings import QueueSettings

__all__ = ["QueueShutDown", "WorkQueue"]

K = TypeVar("K", bound=Hashable)


class QueueShutDown(Exception):
    """`get` on a queue that is shut down and empty: the worker should return."""


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


class WorkQueue(Generic[K]):
    def __init__(
        self,
        *,
        name: str,
        metrics: KubeMetrics,
        settings: QueueSettings | None = None,
        rate_limiter: RateLimiter | None = None,
    ) -> None:
        self.name = name
        self._rate_limiter = rate_limiter or default_controller_rate_limiter(
            settings or QueueSettings(), clock=_loop_time
        )
        self._queue: deque[K] = deque()
        # The low lane, in order; a key moved to the front lane leaves it (an OrderedDict:
        # taking a plain dict's first item again and again costs more each time).
        self._low: OrderedDict[K, None] = OrderedDict()
        self._dirty: set[K] = set()
        # Keys re-added while a worker held them whose adds were all low priority: the lane
        # they go to on `done` (a waiting key's lane is where it waits).
        self._low_after_done: set[K] = set()
        self._processing: dict[K, float] = {}  # key -> when a worker took it
        self._added_at: dict[K, float] = {}  # key -> when it was first queued
        self._getters: deque[asyncio.Future[None]] = deque()
        self._idle: asyncio.Event | None = None
        self._shutting_down = False
        self._loop: asyncio.AbstractEventLoop | None = None
        # Delaying: a heap of (deadline, sequence, key); `_waiting` has each key's
        # current deadline, so superseded heap entries are recognised and skipped.
        self._heap: list[tuple[float, int, K]] = []
        self._waiting: dict[K, float] = {}
        self._sequence = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0

        self._depth = metrics.queue_depth.labels(name)
        self._adds = metrics.queue_adds.labels(name)
        self._latency = metrics.queue_latency.labels(name)
        self._work_duration = metrics.work_duration.labels(name)
        self._retries = metrics.queue_retries.labels(name)
        metrics.unfinished_work.labels(name).set_function(self._unfinished_seconds)
        metrics.longest_running.labels(name).set_function(self._longest_running_seconds)

    # -- state -------------------------------------------------------------

    def __len__(self) -> int:
        """Keys ready for a worker (not those waiting on a delay or being processed)."""
        return len(self._queue) + len(self._low)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    @property
    def processing(self) -> int:
        return len(self._processing)

    @property
    def waiting(self) -> int:
        """Keys waiting for a delay to pass."""
        return len(self._waiting)

    def pending(self) -> set[K]:
        """Every key a worker will get: queued, re-added while processed, or waiting on a delay."""
        return self._dirty | self._waiting.keys()

    def _now(self) -> float:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
        return self._loop.time()

    # -- adding --------------------------------------------------------------

    def add(self, key: K, *, low_priority: bool = False) -> None:
        """Queue a key unless it is already queued; a key being processed is queued after `done`.

        `low_priority`: behind every key added without it. Added without it, a key
        waiting in the low lane moves to the front one."""
        if self._shutting_down:
            return
        if key in self._dirty:
            if not low_priority:
                self._low_after_done.discard(key)
                if key in self._low:
                    del self._low[key]
                    self._queue.append(key)
            return
        self._adds.inc()
        self._dirty.add(key)
        self._added_at.setdefault(key, self._now())
        if key in self._processing:
            if low_priority:
                self._low_after_done.add(key)
            return
        self._enqueue(key, low_priority=low_priority)

    def _enqueue(self, key: K, *, low_priority: bool) -> None:
        """Put a dirty key in its lane and wake a worker."""
        if low_priority:
            self._low[key] = None
        else:
            self._queue.append(key)
        self._depth.set(len(self))
        self._wake_one()

    def add_after(self, key: K, delay_seconds: float) -> None:
        """Queue a key after a delay; a key already waiting keeps the sooner deadline."""
        if self._shutting_down:
            return
        if delay_seconds <= 0:
            self.add(key)
            return
        deadline = self._now() + delay_seconds
        current = self._waiting.get(key)
        if current is not None and current <= deadline:
            return
        self._waiting[key] = deadline
        heapq.heappush(self._heap, (deadline, next(self._sequence), key))
        self._schedule()

    def add_rate_limited(self, key: K) -> None:
        """Queue a key after its backoff (a retry after a failure)."""
        if self._shutting_down:
            return
        self._retries.inc()
        self.add_after(key, self._rate_limiter.when(key))

    def forget(self, key: K) -> None:
        """The key succeeded: its next failure backs off from the start again."""
        self._rate_limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return self._rate_limiter.num_requeues(key)

    def _schedule(self) -> None:
        """Keep one timer, at the earliest deadline of the waiting keys."""
        while self._heap and self._waiting.get(self._heap[0][2]) != self._heap[0][0]:
            heapq.heappop(self._heap)
        if not self._heap:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            return
        deadline = self._heap[0][0]
        if self._timer is not None:
            if self._timer_at <= deadline:
                return
            self._timer.cancel()
        loop = self._loop or asyncio.get_running_loop()
        self._loop = loop
        self._timer = loop.call_at(deadline, self._on_timer)
        self._timer_at = deadline

    def _on_timer(self) -> None:
        self._timer = None
        now = self._now()
        while self._heap and self._heap[0][0] <= now:
            deadline, _, key = heapq.heappop(self._heap)
            if self._waiting.get(key) == deadline:
                del self._waiting[key]
                self.add(key)
        self._schedule()

    # -- taking --------------------------------------------------------------

    async def get(self) -> K:
        """The next key; the caller must call `done(key)` when finished with it.

        Raises QueueShutDown once the queue is shut down and empty.
        """
        while not self._queue and not self._low:
            if self._shutting_down:
                raise QueueShutDown(self.name)
            getter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(getter)
            try:
                await getter
            except asyncio.CancelledError:
                # Woken and cancelled in the same cycle: pass the wake-up on.
                if getter.done() and not getter.cancelled():
                    self._wake_one()
                raise
        return self._take()

    def try_get(self) -> K | None:
        """The next key if one is waiting (the caller must call `done(key)`), else None."""
        return self._take() if self._queue or self._low else None

    def _take(self) -> K:
        key = self._queue.popleft() if self._queue else self._low.popitem(last=False)[0]
        self._depth.set(len(self))
        now = self._now()
        added = self._added_at.pop(key, None)
        if added is not None:
            self._latency.observe(now - added)
        self._processing[key] = now
        self._dirty.discard(key)
        return key

    def done(self, key: K) -> None:
        """The worker has finished with the key; queue it again if it was re-added meanwhile."""
        started = self._processing.pop(key, None)
        if started is None:
            return
        self._work_duration.observe(self._now() - started)
        if key in self._dirty:
            self._enqueue(key, low_priority=key in self._low_after_done)
        self._low_after_done.discard(key)
        self._check_idle()

    def _wake_one(self) -> None:
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                return

    # -- shutting down -------------------------------------------------------

    def shut_down(self) -> None:
        """Refuse new adds, drop delayed keys, and let idle workers return."""
        self._shutting_down = True
        self._waiting.clear()
        self._heap.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
        self._check_idle()

    async def shut_down_with_drain(self) -> None:
        """Shut down, then wait until every queued key has been processed and is done."""
        self.shut_down()
        if self._idle is None:
            self._idle = asyncio.Event()
        self._check_idle()
        await self._idle.wait()

    def _check_idle(self) -> None:
        if self._idle is not None and not len(self) and not self._processing:
            self._idle.set()

    # -- metrics -------------------------------------------------------------

    def _unfinished_seconds(self) -> float:
        if self._loop is None or not self._processing:
            return 0.0
        now = self._loop.time()
        return sum(now - started for started in self._processing.values())

    def _longest_running_seconds(self) -> float:
        if self._loop is None or not self._processing:
            return 0.0
        now = self._loop.time()
        return max(now - started for started in self._processing.values())
