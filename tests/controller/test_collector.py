"""The controller process's collector: its thresholds and its pacer (hvpa.controller.collector)."""

from __future__ import annotations

import asyncio
import gc
import itertools
import os
from collections.abc import Iterator

import pytest

from hvpa.controller import collector
from hvpa.controller.collector import THRESHOLDS, _unpaced, pace_collector, paced_collector


@pytest.fixture
def thresholds_restored() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


async def test_the_paced_collector_sets_its_thresholds_and_runs_its_pacer_only_inside() -> None:
    before = gc.get_threshold()
    async with paced_collector() as pacer:
        young, middle, oldest = gc.get_threshold()
        assert (young, middle, oldest) == THRESHOLDS
        # Fewer young collections than Python's default, none switched off (0); the oldest
        # is the pacer's alone.
        assert young > 700 and middle >= 10 and oldest >= 10**9
        await asyncio.sleep(0)
        assert not pacer.done()
    await asyncio.sleep(0)
    assert pacer.cancelled()
    assert gc.get_threshold() == before


def _collections() -> list[int]:
    return [generation["collections"] for generation in gc.get_stats()]


async def test_the_pacer_collects_every_generation_on_its_clock() -> None:
    before = _collections()
    pacer = asyncio.create_task(
        pace_collector(young_every_seconds=0.005, middle_every=3, full_every_seconds=0.1)
    )
    await asyncio.sleep(0.35)
    pacer.cancel()
    young, middle, full = (n - m for n, m in zip(_collections(), before, strict=True))
    # About 70 turns: a middle collection every third, a full one every 0.1 s (each counts
    # once, in its own generation).
    assert young >= 20
    assert middle >= 8
    assert 2 <= full <= 4


async def test_the_pacer_trims_the_c_heap_on_its_clock() -> None:
    trims: list[float] = []
    loop = asyncio.get_running_loop()
    pacer = asyncio.create_task(
        pace_collector(
            young_every_seconds=0.005,
            trim_every_seconds=0.1,
            trim=lambda: trims.append(loop.time()) is None,
        )
    )
    await asyncio.sleep(0.35)
    pacer.cancel()
    assert len(trims) == 3
    assert all(later - earlier >= 0.1 for earlier, later in itertools.pairwise(trims))


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_freed_memory_is_handed_back_where_the_c_library_can() -> None:
    """glibc (every Linux image the controller ships in): 50 MB freed below an allocation
    still held stays resident (glibc gives back only a free top of its heap) until the
    trim. 47.6 MiB came back when this was written."""
    import platform

    if platform.libc_ver()[0] != "glibc":
        assert not collector.release_freed_memory()
        return
    # 100 kB each: below glibc's threshold for a mapping of its own, so from its heap.
    freed = [bytearray(100_000) for _ in range(500)]
    held = freed[-1]
    del freed
    before = _resident_bytes()
    assert collector.release_freed_memory()
    assert before - _resident_bytes() > 20 * 2**20
    del held


async def _replace(kept: list[list[int]], times: int) -> int:
    """Replace `kept`'s objects one by one, as a controller replaces what each decision
    keeps, yielding to the loop now and then; the largest young generation seen."""
    largest = 0
    for turn in range(times):
        kept[turn % len(kept)] = [turn]
        if turn % 500 == 0:
            largest = max(largest, len(gc.get_objects(0)))
            await asyncio.sleep(0.002)
    return largest


@pytest.mark.usefixtures("thresholds_restored")
async def test_replacing_what_is_kept_fills_the_young_generation_unless_paced() -> None:
    gc.set_threshold(*THRESHOLDS)
    kept = [[n] for n in range(20_000)]
    gc.collect()  # the kept objects start out old

    # Each new object is an allocation and each replaced one a free, so CPython's count
    # never reaches a young collection: the young generation fills with the survivors.
    unpaced = await _replace(kept, 40_000)
    assert unpaced >= 15_000

    gc.collect()
    pacer = asyncio.create_task(pace_collector(young_every_seconds=0.005))
    try:
        paced = await _replace(kept, 40_000)
    finally:
        pacer.cancel()
    assert paced <= 6_000


@pytest.mark.usefixtures("thresholds_restored")
async def test_a_paced_collector_whose_pacer_fails_gives_the_thresholds_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside the block, not only after it: a pacer that died leaves no process whose oldest
    generation nobody collects."""

    async def failing() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(collector, "pace_collector", failing)
    gc.set_threshold(700, 10, 10)
    async with paced_collector() as pacer:
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert pacer.done()
        assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.usefixtures("thresholds_restored")
async def test_a_pacer_that_fails_gives_cpythons_thresholds_back() -> None:
    async def failing() -> None:
        raise RuntimeError("boom")

    gc.set_threshold(*THRESHOLDS)
    failed = asyncio.create_task(failing())
    with pytest.raises(RuntimeError):
        await failed
    _unpaced((700, 10, 10), failed)
    assert gc.get_threshold() == (700, 10, 10)

    cancelled = asyncio.create_task(asyncio.sleep(1))
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    gc.set_threshold(*THRESHOLDS)
    _unpaced((700, 10, 10), cancelled)  # the context's own cancel: its finally restores
    assert gc.get_threshold() == THRESHOLDS
