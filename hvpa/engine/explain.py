"""The explanation: every input figure and every rule that fired, in order.

Rules append plain sentences as they fire; `indented()` nests the lines of a
step under the line that introduced it, so `hvpa explain` reads as an
outline and the JSON output keeps the same lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Final

__all__ = ["Explanation", "counted", "names"]

_INDENT: Final = "  "
# Name lists are cut to this many, so 10,000 pods do not make 10,000-name lines.
_NAMES_SHOWN: Final = 5


class Explanation:
    __slots__ = ("_depth", "lines")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._depth = 0

    def add(self, line: str) -> None:
        self.lines.append(_INDENT * self._depth + line)

    @contextmanager
    def indented(self) -> Iterator[None]:
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1


def names(items: Iterable[str]) -> str:
    """A sorted, shortened list of names for an explanation line."""
    ordered = sorted(items)
    shown = ", ".join(ordered[:_NAMES_SHOWN])
    hidden = len(ordered) - _NAMES_SHOWN
    return f"{shown} (+{hidden} more)" if hidden > 0 else shown


def counted(count: int, noun: str) -> str:
    """`1 replica`, `3 replicas`, `1 ready pod`: a count with its noun in the right number
    (every noun hvpa counts takes an `s`)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
