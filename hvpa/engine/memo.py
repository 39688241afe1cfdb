"""What a decision derives from the spec alone, remembered for the very spec object it came from.

The controller parses an Hvpa's spec once per content (its watch events reuse
the parse while the spec's JSON is unchanged, hvpa/controller/resources.py)
and hands the same frozen spec object to every decision until then, so the
defaults, the gate settings and Capacity's parameters are the same at every
decision in between. Remembering them by identity costs one dictionary look
up and cannot confuse two specs: an entry holds its spec, so that object's id
is not given to another while the entry lives, and a changed spec is a new
object, a miss. A caller that builds a new spec at every decision (`hvpa
recommend`, tests) only misses.

Bounded: 16,384 entries per kind, more than the 10,000 Hvpas one controller is
sized for (docs/benchmarks.md), so a sync period's round over every Hvpa
still finds its own; a spec churned by its tenant ages out.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Final, Generic, TypeVar

__all__ = ["SPECS_REMEMBERED", "ByIdentity"]

SPECS_REMEMBERED: Final = 16_384

K = TypeVar("K")
V = TypeVar("V")


class ByIdentity(Generic[K, V]):
    """`derive(key)` remembered for the object `key` is (not for objects equal to it).

    Only for keys that are never changed in place (frozen structs of frozen
    parts) and a `derive` that reads nothing else. An exception is not
    remembered: the next call derives again and raises again. Not for
    several threads at once: decisions are made on the controller's one
    event loop (the lru_caches beside it are thread-safe, this is not).
    """

    def __init__(self, derive: Callable[[K], V], size: int = SPECS_REMEMBERED) -> None:
        self._derive = derive
        self._size = size
        self._entries: OrderedDict[int, tuple[K, V]] = OrderedDict()

    def __call__(self, key: K) -> V:
        entries = self._entries
        found = entries.get(id(key))
        if found is not None and found[0] is key:
            entries.move_to_end(id(key))
            return found[1]
        value = self._derive(key)
        entries[id(key)] = (key, value)
        entries.move_to_end(id(key))
        if len(entries) > self._size:
            entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        return len(self._entries)
