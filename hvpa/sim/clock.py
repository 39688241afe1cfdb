"""One virtual clock for the whole simulation: an event loop whose time jumps when nothing is ready.

The API server, the cluster model and the real controller all run on one
`SimEventLoop`, talking over loopback HTTP. Inside virtual time (`start_virtual_time()`) the
loop's clock is looptime's: when every task waits for a timer and no socket
has data, the clock jumps to the next timer instead of sleeping, so an hour
of five-second ticks takes a fraction of a second, and the order of events
depends only on the program, not on the machine's speed. That is what makes
a run deterministic for a seed.

`switch_to_real_time()` switches the loop to real time (for
`--keep-running`). looptime alone would make the clock jump back from the
virtual time to the machine's monotonic clock, which strands every timer set
in virtual time (a resync due at virtual 6 h would wait for real 6 h); this
loop instead continues from where the virtual clock stopped, so timers fire
as many real seconds later as they were due virtual seconds later.

`SimClock` turns loop time into POSIX seconds from a chosen start, the
`clock` both the API server (timestamps) and the controller (`now`) take.
"""

from __future__ import annotations

import asyncio
import contextlib

import looptime

__all__ = ["SimClock", "SimEventLoop"]


class SimEventLoop(looptime.LoopTimeEventLoop, asyncio.SelectorEventLoop):
    """A selector event loop with looptime's clock, off until `start_virtual_time()`.

    No no-op cycles before a jump (looptime's `noop_cycles`, 42 by default): before it
    moves the clock to the next timer, looptime runs that many loop iterations that only
    poll the sockets, to give work from outside the loop a moment to arrive. Nothing here
    comes from outside the loop: the sockets are loopback ones whose data is readable as
    soon as the writer's `send` returns, and executor calls (the resolver's threads) are
    waited for in real time by looptime whatever this count. A jump happens only when no
    callback is ready, so the iterations ran nothing; they were 410,000 of the 482,000
    iterations of a six-hour run (capacity scenario, step trace). One is still made.
    """

    def __init__(self) -> None:
        super().__init__(start=0.0)
        # Created off, as looptime's own pytest plugin creates its loops.
        self.setup_looptime(_enabled=False, noop_cycles=0)
        self._real_offset = 0.0
        self._virtual: contextlib.AbstractContextManager[None] | None = None

    def time(self) -> float:
        # `_virtual` is set exactly while looptime's clock is on (start_virtual_time): cheaper
        # than looptime's property on the loop's hottest call (twice per iteration).
        if self._virtual is not None:
            return super().time()
        return super().time() + self._real_offset

    def start_virtual_time(self) -> None:
        """From now on the clock jumps to the next timer whenever nothing is ready.

        Call it before anything sets a timer: a timer set in real time would
        be due at a virtual time far in the future.
        """
        if self._virtual is not None:
            raise RuntimeError("the loop already runs in virtual time")
        self._virtual = self.looptime_enabled()
        self._virtual.__enter__()

    def switch_to_real_time(self) -> None:
        """From now on the clock follows the machine's, continuing from the virtual time reached."""
        if self._virtual is None:
            return
        virtual_now = super().time()
        self._virtual.__exit__(None, None, None)
        self._virtual = None
        self._real_offset = virtual_now - super().time()


class SimClock:
    """POSIX seconds: `start_epoch` plus the loop time elapsed since this clock was made."""

    def __init__(self, loop: asyncio.AbstractEventLoop, *, start_epoch: float) -> None:
        self._loop = loop
        self._origin = loop.time()
        self.start_epoch = start_epoch

    def __call__(self) -> float:
        return self.start_epoch + self._loop.time() - self._origin

    def elapsed(self) -> float:
        return self._loop.time() - self._origin
