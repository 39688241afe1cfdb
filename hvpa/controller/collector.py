"""The garbage collector of a controller process (`hvpa run`): its thresholds and its pacer.

A controller's heap at steady state is its caches (frozen out of the
collector's sight once they synced: `hvpa.kube.store.freeze_heap`) and what
each decision leaves for a sync period: the decision and its explanation
kept for /debug/state and the `hvpa_*` series, the status, the PodMetrics
answer kept for the namespace. The controller's objects do not form cycles
(reference counting frees them), so the collector finds nothing at steady
state, and its pauses are pure cost.

First the thresholds were raised, from Python's (700, 10, 10) to (10,000,
10, 100): with the defaults, at 3,000 Hvpas (docs/benchmarks.md), ten full
collections in 30 s, the longest 607 ms, 18.7 % of the controller's CPU.
That was not enough at 10,000 Hvpas: CPython counts a young collection's due
allocations *less the objects freed since*, of any age. A controller at
steady state replaces what it keeps (each decision's results replace the last
period's), so frees match allocations and the count hardly moves while the
young generation fills with the new survivors. A census at 3,000 Hvpas found
young generations of 54,000 objects and middle ones of 122,000; at 10,000
Hvpas a collection held the loop 190 to 320 ms, on the CPU, and the slowest
triggers' answers overlapped those pauses (docs/benchmarks.md).

So the collector is paced on the loop's clock (`paced_collector`): the young
generation every YOUNG_EVERY_SECONDS, the middle one every MIDDLE_EVERY-th
time, so each holds only what a fraction of a second left. The oldest is out
of CPython's reach (THRESHOLDS): with the middle generation collected twenty
times as often, CPython's own rule would start a full collection far more
often than before. The pacer runs one every FULL_EVERY_SECONDS, about as
often as the earlier (10,000, 10, 100) did at 10,000 Hvpas, so cycles, should
some code make them, are still collected. A full collection is not split: it
scans everything kept outside the frozen caches at once (545-631 ms at
10,000 Hvpas; the envelope benchmark times one). The young and middle
collections come in pieces that each fit in a trigger's latency budget; an
object that outlives 50 ms is promoted sooner than before, and the
collector's share of the CPU measured 3.5-6.3 % at 10,000 Hvpas against
4.1-5.2 % before (docs/benchmarks.md).

What the collector (or reference counting) frees goes back to the C heap,
not to the system: glibc keeps freed chunks for its next allocations, and
the start's peak (the first lists of every pod, the first read of every
namespace's PodMetrics) stays in the process's RSS. The pacer hands the free
pages back every TRIM_EVERY_SECONDS (`release_freed_memory`, glibc's
malloc_trim; nothing where the C library has none): 16 MiB of 221 at 3,000
Hvpas, a few milliseconds each time (docs/benchmarks.md).

Not for the simulator or tests, which run the Manager in a process of their
own making: only the controller's own process chooses its collector.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import gc
import logging
from collections.abc import AsyncIterator, Callable
from typing import Final

from hvpa.logs import fields

logger = logging.getLogger(__name__)

__all__ = [
    "FULL_EVERY_SECONDS",
    "MIDDLE_EVERY",
    "THRESHOLDS",
    "TRIM_EVERY_SECONDS",
    "YOUNG_EVERY_SECONDS",
    "pace_collector",
    "paced_collector",
    "release_freed_memory",
]

# (young, middle, oldest): allocations (less frees) before a young collection, young
# collections per middle one, middle ones per full one (Python's defaults: 700, 10, 10).
# The oldest is out of CPython's reach: the pacer runs the full collections.
THRESHOLDS: Final = (10_000, 10, 1_000_000_000)

# The pacer's clock: a young collection every 50 ms, a middle one every tenth (CPython's
# own ratio), a full one every 10 minutes.
YOUNG_EVERY_SECONDS: Final = 0.05
MIDDLE_EVERY: Final = 10
FULL_EVERY_SECONDS: Final = 600.0
# Free pages of the C heap handed back to the system every half minute.
TRIM_EVERY_SECONDS: Final = 30.0


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None where the C library has none (musl, macOS)."""
    try:
        malloc_trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    malloc_trim.argtypes, malloc_trim.restype = [ctypes.c_size_t], ctypes.c_int
    return malloc_trim


_MALLOC_TRIM: Final = _malloc_trim()


def release_freed_memory() -> bool:
    """Hand the C heap's free pages back to the system; False where it cannot be done."""
    if _MALLOC_TRIM is None:
        return False
    _MALLOC_TRIM(0)
    return True


@contextlib.asynccontextmanager
async def paced_collector() -> AsyncIterator[asyncio.Task[None]]:
    """THRESHOLDS and the pacer for as long as the block runs (the pacer's task); the
    thresholds before it, after. One piece, so that the thresholds, which leave the full
    collections to the pacer, are never set without it."""
    before = gc.get_threshold()
    gc.set_threshold(*THRESHOLDS)
    pacer = asyncio.create_task(pace_collector(), name="collector-pacer")
    pacer.add_done_callback(functools.partial(_unpaced, before))
    try:
        yield pacer
    finally:
        pacer.cancel()
        gc.set_threshold(*before)


def _unpaced(thresholds: tuple[int, int, int], pacer: asyncio.Task[None]) -> None:
    """A pacer that stopped other than by cancellation leaves CPython's thresholds (the
    ones before), not a process whose oldest generation nobody collects."""
    if pacer.cancelled():
        return
    gc.set_threshold(*thresholds)
    logger.error(
        "the collector's pacer stopped; CPython's thresholds are back",
        extra=fields(error=repr(pacer.exception())),
    )


async def pace_collector(
    *,
    young_every_seconds: float = YOUNG_EVERY_SECONDS,
    middle_every: int = MIDDLE_EVERY,
    full_every_seconds: float = FULL_EVERY_SECONDS,
    trim_every_seconds: float = TRIM_EVERY_SECONDS,
    trim: Callable[[], bool] = release_freed_memory,
) -> None:
    """Collect, and trim the C heap, on the loop's clock until cancelled (why: the
    module's docstring)."""
    loop = asyncio.get_running_loop()
    full_due = loop.time() + full_every_seconds
    trim_due = loop.time() + trim_every_seconds
    young = 0
    while True:
        await asyncio.sleep(young_every_seconds)
        young += 1
        if loop.time() >= full_due:
            gc.collect(2)
            full_due = loop.time() + full_every_seconds
        elif young % middle_every == 0:
            gc.collect(1)
        else:
            gc.collect(0)
        if loop.time() >= trim_due:
            trim()
            trim_due = loop.time() + trim_every_seconds
