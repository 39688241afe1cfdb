"""How many reconciles one turn of the event loop begins.

The workers are many so that reconciles waiting on the API (a write, a metrics
read) do not hold the others back; but a reconcile that waits on nothing
runs from its key to its end in one callback, and at steady state most do (a
resync whose metrics are kept and whose status is unchanged). Every worker
that has a key then runs one in the same turn of the loop: with 20 workers,
some 20 milliseconds of reconciles before the loop reads a socket again, and
a change's answer passes through three such turns (its watch event read, its
reconcile, its write). A budget per turn keeps the turns short and leaves the
workers for waiting: a worker past the budget waits for the next turn, in
the order it came (docs/benchmarks.md, the envelope's trigger latency).
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Final

__all__ = ["RECONCILES_PER_TURN", "TurnBudget"]

# About a millisecond each at steady state.
RECONCILES_PER_TURN: Final = 4


class TurnBudget:
    """At most `per_turn` reconciles begin in one turn of the running loop."""

    def __init__(self, per_turn: int = RECONCILES_PER_TURN) -> None:
        if per_turn < 1:
            raise ValueError("a turn must begin at least one reconcile")
        self._per_turn = per_turn
        self._begun = 0
        self._turn_ends_scheduled = False
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def begin(self) -> None:
        """Return when the caller's reconcile may begin: in this turn while the budget
        lasts and nobody waits before it, else in a later turn, first come first served."""
        loop = asyncio.get_running_loop()
        if self._begun < self._per_turn and not self._waiting:
            self._count(loop)
            return
        granted: asyncio.Future[None] = loop.create_future()
        self._waiting.append(granted)
        await granted

    def _count(self, loop: asyncio.AbstractEventLoop) -> None:
        self._begun += 1
        if not self._turn_ends_scheduled:
            self._turn_ends_scheduled = True
            loop.call_soon(self._next_turn, loop)

    def _next_turn(self, loop: asyncio.AbstractEventLoop) -> None:
        """Runs in the turn after one that began reconciles: grant the first waiters the
        next turn's budget (a cancelled waiter's share goes to the one after it). Their
        tasks run in the next turn, and this runs again after them."""
        self._turn_ends_scheduled = False
        self._begun = 0
        while self._waiting and self._begun < self._per_turn:
            granted = self._waiting.popleft()
            if not granted.done():
                granted.set_result(None)
                self._begun += 1
        if self._begun:
            self._turn_ends_scheduled = True
            loop.call_soon(self._next_turn, loop)
