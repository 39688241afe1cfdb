"""An xdist scheduler: tests grouped by file, as `--dist loadfile` groups them, except that
the modules it is given are grouped by the trace their test ids name.

xdist's own way to group across files (`xdist_group` with `--dist loadgroup`) is not
honoured under the pytest this project pins (pytest-xdist issue 1386), and it could not
split one module anyway; the scheduler sees only node ids, so the trace is read from them.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadFileScheduling

from hvpa.sim.traces import TRACE_NAMES


class TraceScheduling(LoadFileScheduling):
    """LoadFileScheduling whose scope of a node in a `split` module is `path::trace`."""

    def __init__(self, config: Any, log: Any, split: frozenset[str]) -> None:
        super().__init__(config, log)
        self._split = split

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        if path not in self._split:
            return path
        return f"{path}::{trace_of(nodeid)}"


def trace_of(nodeid: str) -> str:
    """The trace a test id names among its parameters (`[Weighted-steady]`), or ''."""
    _, bracket, parameters = nodeid.partition("[")
    if not bracket:
        return ""
    names = parameters.removesuffix("]").split("-")
    return next((name for name in names if name in TRACE_NAMES), "")
