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
"""

from __future__ import annotations

import gc
from typing import Final

__all__ = ["THRESHOLDS", "tune_collector"]

# (young, middle, oldest): allocations before a young collection, young collections per
# middle one, middle ones per full one (Python's defaults: 700, 10, 10).
THRESHOLDS: Final = (10_000, 10, 100)


def tune_collector() -> None:
    """Set THRESHOLDS for this process."""
    gc.set_threshold(*THRESHOLDS)
