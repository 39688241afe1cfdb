"""The guarded task group: failures logged and re-raised by join, stop cancels and
reports a task that refuses to stop, no start while stopping."""

import asyncio
import contextlib
import logging

import pytest

from hvpa.aio import Tasks

pytestmark = pytest.mark.looptime


async def test_join_reraises_the_first_failure(caplog: pytest.LogCaptureFixture) -> None:
    async def fails() -> None:
        await asyncio.sleep(1)
        raise RuntimeError("boom")

    tasks = Tasks(name="test")
    tasks.start(asyncio.sleep(100), name="sleeper")
    tasks.start(fails(), name="failer")
    with pytest.raises(RuntimeError, match="boom"):
        await tasks.join()
    assert tasks.names == ["sleeper"]
    assert any(
        r.getMessage() == "background task failed" and r.levelno == logging.ERROR
        for r in caplog.records
    )
    await tasks.stop()
    assert len(tasks) == 0


async def test_join_returns_when_all_finish() -> None:
    tasks = Tasks(name="test")
    tasks.start(asyncio.sleep(1), name="a")
    tasks.start(asyncio.sleep(2), name="b")
    await tasks.join()
    assert asyncio.get_running_loop().time() == pytest.approx(2.0, abs=0.01)


async def test_stop_cancels_and_names_a_task_that_refuses(caplog: pytest.LogCaptureFixture) -> None:
    released = asyncio.Event()

    async def stubborn() -> None:
        while not released.is_set():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(100)

    tasks = Tasks(name="test")
    polite = tasks.start(asyncio.sleep(100), name="polite")
    tasks.start(stubborn(), name="stubborn")
    await asyncio.sleep(0)
    await tasks.stop(grace_seconds=3)
    assert polite.cancelled()
    refusals = [r for r in caplog.records if r.getMessage() == "background task refuses to stop"]
    assert [r.__dict__["fields"]["task"] for r in refusals] == ["stubborn"]
    with pytest.raises(RuntimeError, match="stopping"):
        tasks.start(asyncio.sleep(1), name="late")
    released.set()
    await asyncio.sleep(200)


async def test_context_manager_stops_tasks() -> None:
    async with Tasks(name="test") as tasks:
        task = tasks.start(asyncio.sleep(100), name="a")
    assert task.cancelled()


async def test_cancel_cancels_at_once_from_synchronous_code() -> None:
    tasks = Tasks(name="test")
    started = tasks.start(asyncio.sleep(100), name="a")
    await asyncio.sleep(1)
    tasks.cancel()
    with pytest.raises(RuntimeError, match="stopping"):
        tasks.start(asyncio.sleep(1), name="late")
    await asyncio.sleep(0)
    assert started.cancelled()
    assert asyncio.get_running_loop().time() == pytest.approx(1.0, abs=0.01)
    await tasks.stop()


@pytest.mark.parametrize("steps", range(6))
async def test_join_cancelled_as_a_task_ends_is_cancelled(steps: int) -> None:
    # One task ends normally while join is being cancelled: join must end too, whatever
    # loop iteration the cancel lands in (it once swallowed the cancel and waited on).
    tasks = Tasks(name="test")
    tasks.start(asyncio.sleep(1), name="short")
    tasks.start(asyncio.sleep(1000), name="long")
    joiner = asyncio.ensure_future(tasks.join())
    await asyncio.sleep(1)
    for _ in range(steps):
        await asyncio.sleep(0)
    joiner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(joiner, timeout=10)
    await tasks.stop()
