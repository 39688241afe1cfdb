"""The pieces of the metrics listener's access check that need no API server: the bearer
token's form, and the bounded, expiring cache of review answers. The reviews themselves,
against the in-repo API server, are in tests/integration/test_server.py."""

from __future__ import annotations

import pytest

from hvpa.server.access import _bearer_token, _Expiring


@pytest.mark.parametrize(
    ("header", "token"),
    [
        pytest.param("Bearer abc", "abc", id="bearer"),
        pytest.param("bearer abc ", "abc", id="case-and-space"),
        pytest.param("Bearer ", None, id="empty"),
        pytest.param("Basic abc", None, id="basic"),
        pytest.param("", None, id="none"),
    ],
)
def test_bearer_token(header: str, token: str | None) -> None:
    assert _bearer_token(header) == token


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_entries_expire_after_their_own_ttl() -> None:
    clock = Clock()
    cache: _Expiring[str, bool] = _Expiring(10, clock)
    cache.put("allowed", True, 300)
    cache.put("denied", False, 30)
    clock.now = 29.9
    assert (cache.get("allowed"), cache.get("denied")) == (True, False)
    clock.now = 30
    assert (cache.get("allowed"), cache.get("denied")) == (True, None)
    clock.now = 300
    assert cache.get("allowed") is None


def test_the_oldest_entries_go_past_the_bound() -> None:
    cache: _Expiring[int, int] = _Expiring(3, Clock())
    for key in range(5):
        cache.put(key, key, 60)
    assert len(cache) == 3
    assert [cache.get(key) for key in range(5)] == [None, None, 2, 3, 4]
