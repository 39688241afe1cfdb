"""bench.harness's helpers that compute a figure: a wrong sum is a wrong row."""

from __future__ import annotations

import asyncio
import gc
import time

from prometheus_client import CollectorRegistry, Counter

from bench.harness import LoopLag, LoopWatch, counter_total


def test_counter_total_sums_the_totals_of_the_label_sets_asked_for() -> None:
    registry = CollectorRegistry()
    reconciles = Counter("reconcile", "", ["result"], registry=registry)
    reconciles.labels(result="success").inc(3)
    reconciles.labels(result="requeue_after").inc(2)
    other = Counter("adds", "", registry=registry)
    other.inc(7)
    families = list(registry.collect())

    # Each family also has a `_created` sample (a Unix time): summed, it would swamp the count.
    assert counter_total(families, "reconcile") == 5
    assert counter_total(families, "reconcile", result="success") == 3
    assert counter_total(families, "adds") == 7
    assert counter_total(families, "missing") == 0


def _hold_the_loop(seconds: float) -> None:
    """A synchronous stretch of `seconds` of this thread's CPU time (longer on a busy
    machine), as a long callback would be: the loop cannot wake its sleeper."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


async def test_the_stall_sampler_names_the_code_that_held_the_loop() -> None:
    watch = LoopWatch(threshold=0.03, interval=0.005)
    watch.start()
    try:
        await asyncio.sleep(0.05)
        _hold_the_loop(0.3)
        await asyncio.sleep(0.05)
    finally:
        watch.stop()
    lag, sampler = watch.lag, watch.sampler

    held = sum(n for stack, n in sampler.samples.items() if "_hold_the_loop" in stack)
    # About 270 ms past the threshold at a sample every 5 ms; a busy machine loses some.
    assert held >= 10, sampler.samples
    assert lag.stalls, "the loop's own measure saw no stall"
    assert not any(getattr(callback, "__self__", None) is watch.pauses for callback in gc.callbacks)


async def test_a_stall_the_loop_computed_through_is_on_its_cpu_and_a_sleep_is_not() -> None:
    lag = LoopLag()
    lag_task = asyncio.create_task(lag.run())
    try:
        await asyncio.sleep(0.03)
        _hold_the_loop(0.15)
        await asyncio.sleep(0.03)
        time.sleep(0.15)  # noqa: ASYNC251 - blocked on purpose, as a process waiting for a CPU is
        await asyncio.sleep(0.03)
    finally:
        lag_task.cancel()
    assert len(lag.stalls) == len(lag.thread_cpu) == 2, lag.stalls
    computed, slept = lag.thread_cpu
    assert computed > 0.1
    assert slept < 0.05
