"""A count of the running loop's turns, for tests of what runs in which turn."""

from __future__ import annotations

import asyncio


class LoopTurns:
    """Counts the turns of the running loop from its creation (0: the turn it was made in),
    with a callback that goes around the loop once a turn until `stop`."""

    def __init__(self) -> None:
        self.now = 0
        self._ticking = True
        asyncio.get_running_loop().call_soon(self._tick)

    def _tick(self) -> None:
        self.now += 1
        if self._ticking:
            asyncio.get_running_loop().call_soon(self._tick)

    def stop(self) -> None:
        self._ticking = False
