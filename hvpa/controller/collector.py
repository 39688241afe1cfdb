"""The garbage collector's thresholds for a controller process (`hvpa run`).

A controller's heap at steady state is its caches (frozen out of the
collector's sight once they synced: `hvpa.kube.store.freeze_heap`) and what
each decision leaves for a sync period: the decision and its explanation
kept for /debug/state and the `hvpa_*` series, the status, the PodMetrics
answer kept for the namespace. Those outlive two young collections, so they
reach the oldest generation, and with Python's defaults (700, 10, 10) every
tenth collection of the middle one scanned all of them again: at 3,000 Hvpas
(docs/benchmarks.md) ten full collections in 30 s, the longest 607 ms, 18.7%
of the controller's CPU, and none of them found anything to free (the
controller's objects do not form cycles; reference counting frees them).

So the young generation is allowed more allocations before a collection (a
decision's temporaries die before one, instead of being promoted), and the
oldest is collected a tenth as often. Cycles, should some code make them,
are still collected, later. Not set for the simulator or tests, which run
the Manager in a process of their own making: only the controller's own
process chooses its collector.

Raising the thresholds was not enough at 10,000 Hvpas (docs/benchmarks.md):
CPython counts a young collection's due allocations *less the objects freed
since*, of any age. A controller at steady state replaces what it keeps: each
decision's results replace the last period's, so frees match allocations and
the count hardly moves while the young generation fills with the new
survivors. A collection, when it came, scanned 50,000 to 120,000 objects and
held the loop for 100 to 320 ms, on the CPU; every trigger answered at the
p99 waited behind one. So `pace_collector` collects on a clock instead: the
young generation every YOUNG_EVERY_SECONDS, the middle one every
MIDDLE_EVERY-th time, so each holds only what a fraction of a second left;
the oldest every FULL_EVERY_SECONDS (the thresholds leave it to the pacer
alone: with the middle generation collected twenty times as often, CPython's
own rule would start a full collection far more often than before). A
collection's work per object is what it was; it is only split into pieces
that each fit in a trigger's latency budget.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Final

__all__ = [
    "FULL_EVERY_SECONDS",
    "MIDDLE_EVERY",
    "THRESHOLDS",
    "YOUNG_EVERY_SECONDS",
    "pace_collector",
    "tune_collector",
]

# (young, middle, oldest): allocations (less frees) before a young collection, young
# collections per middle one, middle ones per full one (Python's defaults: 700, 10, 10).
# The oldest is out of CPython's reach: pace_collector runs the full collections.
THRESHOLDS: Final = (10_000, 10, 1_000_000_000)

# The pacer's clock: a young collection every 50 ms, a middle one every tenth (CPython's
# own ratio), a full one every 10 minutes (about as often as the thresholds above made
# one at 10,000 Hvpas before the pacer).
YOUNG_EVERY_SECONDS: Final = 0.05
MIDDLE_EVERY: Final = 10
FULL_EVERY_SECONDS: Final = 600.0


def tune_collector() -> None:
    """Set THRESHOLDS for this process (run pace_collector beside it)."""
    gc.set_threshold(*THRESHOLDS)


async def pace_collector(
    *,
    young_every_seconds: float = YOUNG_EVERY_SECONDS,
    middle_every: int = MIDDLE_EVERY,
    full_every_seconds: float = FULL_EVERY_SECONDS,
) -> None:
    """Collect on the loop's clock until cancelled (why: the module's docstring)."""
    loop = asyncio.get_running_loop()
    full_due = loop.time() + full_every_seconds
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
