"""What the engine derives from a spec, remembered per spec object (hvpa/engine/memo.py)."""

from __future__ import annotations

import pytest
from decide_kit import hvpa_object

from hvpa.api import parse_hvpa
from hvpa.engine.memo import ByIdentity


class Counted:
    """A derive that counts its calls, so a test sees what was remembered."""

    def __init__(self) -> None:
        self.calls: list[object] = []

    def __call__(self, key: object) -> str:
        self.calls.append(key)
        return f"derived {len(self.calls)}"


def test_the_same_object_is_derived_once() -> None:
    derive = Counted()
    memo = ByIdentity(derive)
    spec = parse_hvpa(hvpa_object()).spec
    assert (memo(spec), memo(spec)) == ("derived 1", "derived 1")
    assert len(derive.calls) == 1


def test_an_equal_object_is_not_taken_for_it() -> None:
    """Equal specs may differ in what equality overlooks (an integer and an equal float):
    only the very object is remembered."""
    derive = Counted()
    memo = ByIdentity(derive)
    first, second = parse_hvpa(hvpa_object()).spec, parse_hvpa(hvpa_object()).spec
    assert first == second and first is not second
    assert (memo(first), memo(second)) == ("derived 1", "derived 2")


def test_it_is_bounded_and_forgets_the_least_recently_used() -> None:
    derive = Counted()
    memo = ByIdentity(derive, size=2)
    a, b, c = (parse_hvpa(hvpa_object(name=name)).spec for name in "abc")
    memo(a)
    memo(b)
    memo(a)  # a is now the more recent of the two
    memo(c)  # b goes
    assert len(memo) == 2
    memo(a)
    memo(b)
    assert derive.calls == [a, b, c, b]


def test_an_error_is_not_remembered() -> None:
    calls: list[object] = []

    def refuse(key: object) -> str:
        calls.append(key)
        raise ValueError("no")

    memo = ByIdentity(refuse)
    key = object()
    for _ in range(2):
        with pytest.raises(ValueError, match="no"):
            memo(key)
    assert calls == [key, key] and len(memo) == 0
