"""Delays between retries: client-go's exponential backoff manager and the queue's rate limiters.

All of them read time from an injected clock (the running loop's `time`,
so they follow the simulator's virtual time) and draw jitter from an injected
`random.Random`, so a test can fix both.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from typing import Protocol

from hvpa.kube.settings import BackoffSettings, QueueSettings

__all__ = [
    "Backoff",
    "BucketRateLimiter",
    "ItemExponentialRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "default_controller_rate_limiter",
]

Clock = Callable[[], float]


class Backoff:
    """Growing, jittered delays for one retrying loop (a reflector, a client request).

    As client-go's backoff manager: the base delay doubles per failure up to
    `max_seconds`, jitter adds up to `jitter` times the base on top (so
    clients failing together spread out, even at the cap), and after
    `reset_after_seconds` with no failure the next delay starts small again.
    """

    def __init__(
        self, settings: BackoffSettings, *, clock: Clock, rng: random.Random | None = None
    ) -> None:
        self._settings = settings
        self._clock = clock
        self._rng = rng or random.Random()
        self._base = settings.initial_seconds
        self._last: float | None = None

    def next_delay(self) -> float:
        """The delay before the next attempt, advancing the backoff."""
        settings = self._settings
        now = self._clock()
        if self._last is not None and now - self._last > settings.reset_after_seconds:
            self._base = settings.initial_seconds
        self._last = now
        base = self._base
        self._base = min(base * settings.factor, settings.max_seconds)
        return base + self._rng.random() * settings.jitter * base

    def reset(self) -> None:
        """Start from the initial delay again (after a success that proves health)."""
        self._base = self._settings.initial_seconds
        self._last = None


class RateLimiter(Protocol):
    """client-go's workqueue.RateLimiter: how long to wait before re-adding an item."""

    def when(self, item: Hashable) -> float: ...

    def forget(self, item: Hashable) -> None: ...

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialRateLimiter:
    """Per item: base * 2**failures, capped; `forget` starts the item over."""

    def __init__(self, *, base_seconds: float, max_seconds: float) -> None:
        self._base = base_seconds
        self._max = max_seconds
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        failures = self._failures.get(item, 0)
        self._failures[item] = failures + 1
        # 2**failures overflows a float past ~1024; by then the cap has long applied.
        if failures >= 64:
            return self._max
        return min(self._base * 2.0**failures, self._max)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class BucketRateLimiter:
    """An overall token bucket, as golang.org/x/time/rate's Reserve.

    Each call takes a token, borrowing from the future when the bucket is
    empty; the delay is how long until the borrowed token would have been
    refilled. This bounds the whole queue's retry rate (a storm of failing
    keys cannot retry faster than `qps` after the `burst`).
    """

    def __init__(self, *, qps: float, burst: int, clock: Clock) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("a token bucket needs a positive rate and a burst of at least 1")
        self._qps = qps
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._last: float | None = None

    def when(self, item: Hashable) -> float:
        now = self._clock()
        if self._last is not None and now > self._last:
            self._tokens = min(self._burst, self._tokens + (now - self._last) * self._qps)
        if self._last is None or now > self._last:
            self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self._qps

    def forget(self, item: Hashable) -> None:
        """The bucket is shared by all items: nothing to forget."""

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters; every limiter sees every call."""

    def __init__(self, limiters: Sequence[RateLimiter]) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self._limiters = tuple(limiters)

    def when(self, item: Hashable) -> float:
        return max(limiter.when(item) for limiter in self._limiters)

    def forget(self, item: Hashable) -> None:
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self._limiters)


def default_controller_rate_limiter(settings: QueueSettings, *, clock: Clock) -> RateLimiter:
    """client-go's DefaultControllerRateLimiter: per-item exponential, and an overall bucket."""
    return MaxOfRateLimiter(
        [
            ItemExponentialRateLimiter(
                base_seconds=settings.base_delay_seconds, max_seconds=settings.max_delay_seconds
            ),
            BucketRateLimiter(qps=settings.qps, burst=settings.burst, clock=clock),
        ]
    )
