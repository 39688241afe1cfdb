"""The work queue: dedup, one worker per key, re-add while processing, the low-priority lane,
delays, pending keys, rate-limited retries, forget, shutdown with and without drain, and its
metrics.

Everything runs in looptime's virtual time: delays of seconds or minutes
take no real time, and loop.time() says exactly when a key came back.
"""

import asyncio
import random

import pytest
from prometheus_client import CollectorRegistry

from hvpa.kube.metrics import KubeMetrics
from hvpa.kube.queue import QueueShutDown, WorkQueue
from hvpa.kube.settings import QueueSettings

pytestmark = pytest.mark.looptime


def about(expected: object) -> object:
    """Equal up to looptime's clock ticks (1 µs each)."""
    return pytest.approx(expected, abs=1e-5)


def sample(registry: CollectorRegistry, metric: str, name: str = "test") -> float:
    value = registry.get_sample_value(metric, {"name": name})
    assert value is not None, metric
    return value


async def next_key(queue: WorkQueue[str], within: float = 0.001) -> str | None:
    """The next key if one is ready within `within` seconds, else None (no key is lost)."""
    try:
        async with asyncio.timeout(within):
            return await queue.get()
    except TimeoutError:
        return None


async def test_duplicates_coalesce(metrics: KubeMetrics, registry: CollectorRegistry) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    for key in ["a", "b", "a", "a", "c", "b"]:
        queue.add(key)
    assert len(queue) == 3
    assert [await queue.get() for _ in range(3)] == ["a", "b", "c"]
    assert await next_key(queue) is None
    assert sample(registry, "workqueue_adds_total") == 3
    assert sample(registry, "workqueue_depth") == 0


async def test_a_key_is_never_processed_twice_at_once(metrics: KubeMetrics) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    queue.add("a")
    assert await queue.get() == "a"
    queue.add("a")  # changed while a worker holds it
    queue.add("a")
    assert len(queue) == 0
    assert await next_key(queue) is None, "a second worker must not get it"
    queue.done("a")
    assert len(queue) == 1, "re-added during processing: processed again after done"
    assert await queue.get() == "a"
    queue.done("a")
    assert await next_key(queue) is None, "and only once more"


async def test_done_without_re_add_does_not_requeue(metrics: KubeMetrics) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    queue.add("a")
    queue.done(await queue.get())
    queue.done("a")  # a stray second done is harmless
    assert len(queue) == 0


async def test_workers_never_overlap_on_a_key_and_see_every_change(metrics: KubeMetrics) -> None:
    """Random adds, in either lane, against four workers: no overlap per key, and every add
    is followed by a processing of its key that starts after it (level-triggered)."""
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    loop = asyncio.get_running_loop()
    rng = random.Random(42)
    active: set[str] = set()
    last_start: dict[str, float] = {}
    last_add: dict[str, float] = {}

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except QueueShutDown:
                return
            assert key not in active
            active.add(key)
            last_start[key] = loop.time()
            await asyncio.sleep(rng.uniform(0.0, 0.05))
            active.discard(key)
            queue.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    for _ in range(500):
        key = f"k{rng.randrange(10)}"
        queue.add(key, low_priority=rng.random() < 0.5)
        last_add[key] = loop.time()
        await asyncio.sleep(rng.uniform(0.0, 0.01))
    await asyncio.wait_for(queue.shut_down_with_drain(), timeout=10)
    await asyncio.gather(*workers)
    for key, added in last_add.items():
        assert last_start[key] >= added, key


async def test_low_priority_keys_wait_behind_the_others(metrics: KubeMetrics) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    queue.add("resync-1", low_priority=True)
    queue.add("resync-2", low_priority=True)
    queue.add("event-1")
    queue.add("event-2")
    assert len(queue) == 4
    assert [await queue.get() for _ in range(4)] == ["event-1", "event-2", "resync-1", "resync-2"]
    assert len(queue) == 0


async def test_try_get_takes_what_get_would_and_never_waits(metrics: KubeMetrics) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    assert queue.try_get() is None
    queue.add("resync-1", low_priority=True)
    queue.add("event-1")
    assert [queue.try_get(), queue.try_get(), queue.try_get()] == ["event-1", "resync-1", None]
    assert queue.processing == 2
    queue.add("event-1")  # re-added while processed: after `done`
    assert queue.try_get() is None
    queue.done("event-1")
    assert queue.try_get() == "event-1"


async def test_an_add_moves_a_waiting_low_key_to_the_front_lane(
    metrics: KubeMetrics, registry: CollectorRegistry
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    for key in ("a", "b", "c"):
        queue.add(key, low_priority=True)
    queue.add("event")
    queue.add("c")  # an event for a key the resync queued
    queue.add("event", low_priority=True)  # and a resync of a key an event queued
    assert len(queue) == 4
    assert [await queue.get() for _ in range(4)] == ["event", "c", "a", "b"]
    assert await next_key(queue) is None, "the moved key's old place is not handed out"
    assert sample(registry, "workqueue_adds_total") == 4


async def test_a_key_moved_out_of_the_low_lane_and_back_waits_at_its_new_place(
    metrics: KubeMetrics,
) -> None:
    """Moving a key to the front lane leaves nothing of it in the low one: queued low again
    later, it waits behind the keys queued before it."""
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    queue.add("a", low_priority=True)
    queue.add("b", low_priority=True)
    queue.add("a")
    queue.done(await queue.get())
    queue.add("x", low_priority=True)
    queue.add("a", low_priority=True)
    assert [await queue.get() for _ in range(3)] == ["b", "x", "a"]
    assert await next_key(queue) is None


async def test_a_key_added_while_processed_comes_back_in_the_lane_of_its_adds(
    metrics: KubeMetrics,
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    queue.add("a")
    queue.add("b")
    assert await queue.get() == "a"
    assert await queue.get() == "b"
    queue.add("a", low_priority=True)  # only the resync while it was processed: low
    queue.add("b", low_priority=True)
    queue.add("b")  # an event too: the front lane
    queue.add("c")
    queue.done("a")
    queue.done("b")
    assert [await queue.get() for _ in range(3)] == ["c", "b", "a"]


async def test_shut_down_with_drain_waits_for_low_keys(metrics: KubeMetrics) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    queue.add("a", low_priority=True)
    drained = asyncio.create_task(queue.shut_down_with_drain())
    await asyncio.sleep(1)
    assert not drained.done()
    queue.done(await queue.get())
    await asyncio.wait_for(drained, timeout=1)
    with pytest.raises(QueueShutDown):
        await queue.get()


@pytest.mark.parametrize(
    ("delays", "due"),
    [
        pytest.param([5.0], 5.0, id="one-delay"),
        pytest.param([10.0, 2.0], 2.0, id="sooner-deadline-wins"),
        pytest.param([2.0, 10.0], 2.0, id="later-deadline-does-not-postpone"),
        pytest.param([0.0], 0.0, id="zero-is-now"),
    ],
)
async def test_add_after(metrics: KubeMetrics, delays: list[float], due: float) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for delay in delays:
        queue.add_after("a", delay)
    assert await queue.get() == "a"
    assert loop.time() - start == about(due)
    queue.done("a")
    assert await next_key(queue, within=60) is None, "delivered once"
    assert queue.waiting == 0


async def test_delays_deliver_in_deadline_order(metrics: KubeMetrics) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    loop = asyncio.get_running_loop()
    start = loop.time()
    for key, delay in [("c", 3.0), ("a", 1.0), ("b", 2.0)]:
        queue.add_after(key, delay)
    seen = []
    for _ in range(3):
        key = await queue.get()
        seen.append((key, loop.time() - start))
        queue.done(key)
    assert seen == [("a", about(1.0)), ("b", about(2.0)), ("c", about(3.0))]


async def test_pending_keys_are_queued_re_added_or_waiting(metrics: KubeMetrics) -> None:
    """What /debug/state lists: every key a worker will still get, and no other."""
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    queue.add("a")
    queue.add_after("b", 5.0)
    assert queue.pending() == {"a", "b"}
    assert await queue.get() == "a"
    assert queue.pending() == {"b"}, "being processed is not pending"
    queue.add("a")
    assert queue.pending() == {"a", "b"}, "re-added while processed"
    queue.done("a")
    queue.done(await queue.get())
    assert queue.pending() == {"b"}
    assert await queue.get() == "b"
    queue.done("b")
    assert queue.pending() == set()


async def test_rate_limited_retries_back_off_until_forgotten(
    metrics: KubeMetrics, registry: CollectorRegistry
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    loop = asyncio.get_running_loop()
    waits = []
    for _ in range(4):
        start = loop.time()
        queue.add_rate_limited("a")
        assert await queue.get() == "a"
        waits.append(loop.time() - start)
        queue.done("a")
    assert waits == about([0.005, 0.01, 0.02, 0.04])
    assert queue.num_requeues("a") == 4
    assert sample(registry, "workqueue_retries_total") == 4
    queue.forget("a")
    assert queue.num_requeues("a") == 0
    start = loop.time()
    queue.add_rate_limited("a")
    await queue.get()
    assert loop.time() - start == about(0.005)


async def test_rate_limited_retries_share_the_token_bucket(metrics: KubeMetrics) -> None:
    queue: WorkQueue[str] = WorkQueue(
        name="test", metrics=metrics, settings=QueueSettings(qps=10.0, burst=5)
    )
    loop = asyncio.get_running_loop()
    start = loop.time()
    for index in range(8):
        queue.add_rate_limited(f"k{index}")
    arrivals = []
    for _ in range(8):
        queue.done(await queue.get())
        arrivals.append(loop.time() - start)
    # The first call of each key waits 5 ms; the bucket's 5 tokens cover five keys,
    # the other three wait 0.1, 0.2, 0.3 s for tokens.
    assert max(arrivals) == about(0.3)


async def test_shut_down_refuses_adds_hands_out_queued_keys_then_stops(
    metrics: KubeMetrics,
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    queue.add("a")
    queue.add_after("later", 1.0)
    queue.shut_down()
    queue.add("b")
    queue.add_after("c", 1.0)
    queue.add_rate_limited("d")
    assert queue.shutting_down
    assert queue.waiting == 0, "delayed keys are dropped"
    assert await queue.get() == "a"
    with pytest.raises(QueueShutDown):
        await queue.get()


async def test_shut_down_wakes_idle_workers(metrics: KubeMetrics) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await asyncio.sleep(1)
    queue.shut_down()
    results = await asyncio.gather(*getters, return_exceptions=True)
    assert all(isinstance(result, QueueShutDown) for result in results)


async def test_shut_down_with_drain_waits_for_queued_and_processing(
    metrics: KubeMetrics,
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    loop = asyncio.get_running_loop()
    finished: list[tuple[str, float]] = []

    async def worker() -> None:
        while True:
            try:
                key = await queue.get()
            except QueueShutDown:
                return
            await asyncio.sleep(2.0)
            finished.append((key, loop.time()))
            queue.done(key)

    for key in ["a", "b", "c"]:
        queue.add(key)
    worker_task = asyncio.create_task(worker())
    await asyncio.sleep(0.5)
    start = loop.time()
    await queue.shut_down_with_drain()
    assert [key for key, _ in finished] == ["a", "b", "c"]
    assert loop.time() - start == about(5.5)
    await worker_task


async def test_shut_down_with_drain_of_an_idle_queue_returns_at_once(
    metrics: KubeMetrics,
) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    async with asyncio.timeout(0.001):
        await queue.shut_down_with_drain()


async def test_a_cancelled_getter_passes_its_wake_up_on(metrics: KubeMetrics) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.add("a")  # wakes `first`...
    first.cancel()  # ...which is cancelled before it runs
    assert await asyncio.wait_for(second, timeout=1) == "a"


async def test_timing_metrics(metrics: KubeMetrics, registry: CollectorRegistry) -> None:
    queue: WorkQueue[str] = WorkQueue(name="test", metrics=metrics)
    queue.add("a")
    await asyncio.sleep(3.0)
    key = await queue.get()
    await asyncio.sleep(7.0)
    assert sample(registry, "workqueue_unfinished_work_seconds") == about(7.0)
    assert sample(registry, "workqueue_longest_running_processor_seconds") == about(7.0)
    queue.done(key)
    assert sample(registry, "workqueue_queue_duration_seconds_sum") == about(3.0)
    assert sample(registry, "workqueue_work_duration_seconds_sum") == about(7.0)
    assert sample(registry, "workqueue_work_duration_seconds_count") == 1
    assert sample(registry, "workqueue_unfinished_work_seconds") == 0.0
