"""The simulation's loop: virtual time runs hours in moments, then real time continues from there."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from hvpa.sim.clock import SimClock, SimEventLoop


def test_virtual_time_jumps_and_real_time_continues_from_it() -> None:
    async def scenario() -> tuple[float, float, float, float]:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, SimEventLoop)
        loop.start_virtual_time()
        clock = SimClock(loop, start_epoch=1000.0)
        started = time.perf_counter()
        for _ in range(720):
            await asyncio.sleep(5.0)
        virtual = clock()
        real_for_an_hour = time.perf_counter() - started
        fired: list[float] = []
        loop.call_later(0.2, lambda: fired.append(clock()))
        loop.switch_to_real_time()
        switched = clock()
        started = time.perf_counter()
        await asyncio.sleep(0.3)
        return virtual, real_for_an_hour, switched, fired[0] if fired else -1.0

    with asyncio.Runner(loop_factory=SimEventLoop) as runner:
        virtual, real_for_an_hour, switched, fired = runner.run(scenario())
    assert virtual == 1000.0 + 3600.0
    assert real_for_an_hour < 5.0
    # No jump back to the machine's clock: on from 4600 s, and a timer set in virtual time
    # fires as many real seconds later as it was due.
    assert 4600.0 <= switched < 4600.1
    assert 4600.2 <= fired < 4601.0


def test_a_jump_to_the_next_timer_takes_no_idle_iterations() -> None:
    """A jump comes after one iteration that finds nothing to run, not after 42 (looptime's
    default no-op cycles, which were most of a six-hour run's loop iterations)."""
    sleeps = 100

    async def scenario() -> int:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, SimEventLoop)
        loop.start_virtual_time()
        # Every loop iteration polls the selector once (BaseEventLoop._run_once); looptime
        # has put its own select there, which this counts calls of.
        selector: Any = loop._selector  # type: ignore[attr-defined]
        select = selector.select
        polls = 0

        def counted(timeout: float | None = None) -> Any:
            nonlocal polls
            polls += 1
            return select(timeout)

        selector.select = counted
        try:
            for _ in range(sleeps):
                await asyncio.sleep(5.0)
        finally:
            selector.select = select
        return polls

    with asyncio.Runner(loop_factory=SimEventLoop) as runner:
        polls = runner.run(scenario())
    # Per sleep: the iteration that finds no callback ready (the jump), the one that runs
    # the timer's callback. 42 idle iterations a jump would make it 44.
    assert polls <= 3 * sleeps
