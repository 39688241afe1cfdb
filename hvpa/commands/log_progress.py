"""Progress written to a log rather than a terminal: nothing while the job is quick, then lines.

In a CI log a progress line from a job that ends within a second or two is
noise, while a job of minutes that prints nothing looks stuck. So a command
that is not writing to a terminal stays quiet for its first QUIET_SECONDS of
wall time and then writes the lines its own pace calls for (`hvpa sim` every
tenth of the run, `hvpa validate` every thousand documents), each saying how
long the job has taken so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final, TextIO

__all__ = ["QUIET_SECONDS", "LogProgress"]

QUIET_SECONDS: Final = 2.0


class LogProgress:
    """The wall time a job has taken, and the lines it writes once past QUIET_SECONDS."""

    def __init__(self, stream: TextIO, *, wall: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._wall = wall
        self._started = wall()

    def spent(self) -> float | None:
        """The wall seconds since the start, or None while they are under QUIET_SECONDS (a
        line is not yet due)."""
        spent = self._wall() - self._started
        return spent if spent >= QUIET_SECONDS else None

    def write(self, line: str) -> None:
        """One line, flushed at once (a log is read while the job runs)."""
        self._stream.write(f"{line}\n")
        self._stream.flush()
