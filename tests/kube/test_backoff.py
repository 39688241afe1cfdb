"""Backoff and rate limiters: growth, caps, jitter bounds, reset, token bucket, combination."""

import random

import pytest

from hvpa.kube.backoff import (
    Backoff,
    BucketRateLimiter,
    ItemExponentialRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)
from hvpa.kube.settings import BackoffSettings, QueueSettings


class FixedRandom(random.Random):
    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value

    def random(self) -> float:
        return self.value


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("jitter_draw", "expected"),
    [
        pytest.param(0.0, [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0], id="no-jitter-drawn"),
        pytest.param(
            1.0, [1.6, 3.2, 6.4, 12.8, 25.6, 51.2, 60.0, 60.0], id="full-jitter-drawn-doubles"
        ),
    ],
)
def test_backoff_grows_to_the_cap(jitter_draw: float, expected: list[float]) -> None:
    clock = Clock()
    backoff = Backoff(BackoffSettings(), clock=clock, rng=FixedRandom(jitter_draw))
    delays = []
    for _ in expected:
        delays.append(backoff.next_delay())
        clock.now += 1.0
    assert delays == pytest.approx(expected)


def test_backoff_jitter_stays_within_one_base() -> None:
    clock = Clock()
    backoff = Backoff(BackoffSettings(), clock=clock, rng=random.Random(7))
    delays = [backoff.next_delay() for _ in range(3)]
    assert 0.8 <= delays[0] <= 1.6
    assert 1.6 <= delays[1] <= 3.2
    assert 3.2 <= delays[2] <= 6.4
    assert len(set(delays)) == 3


@pytest.mark.parametrize(
    ("quiet_seconds", "expected_next"),
    [
        pytest.param(119.0, 3.2, id="still-failing-keeps-growing"),
        pytest.param(121.0, 0.8, id="two-minutes-of-health-resets"),
    ],
)
def test_backoff_resets_after_health(quiet_seconds: float, expected_next: float) -> None:
    clock = Clock()
    backoff = Backoff(BackoffSettings(), clock=clock, rng=FixedRandom(0.0))
    backoff.next_delay()
    backoff.next_delay()
    clock.now += quiet_seconds
    assert backoff.next_delay() == pytest.approx(expected_next)


def test_backoff_reset() -> None:
    backoff = Backoff(BackoffSettings(), clock=Clock(), rng=FixedRandom(0.0))
    backoff.next_delay()
    backoff.next_delay()
    backoff.reset()
    assert backoff.next_delay() == pytest.approx(0.8)


def test_item_exponential_doubles_per_key_to_the_cap() -> None:
    limiter = ItemExponentialRateLimiter(base_seconds=0.005, max_seconds=1000.0)
    delays = [limiter.when("a") for _ in range(20)]
    assert delays[:4] == pytest.approx([0.005, 0.01, 0.02, 0.04])
    assert delays[17] == pytest.approx(655.36)
    assert delays[18:] == [1000.0, 1000.0]
    assert limiter.num_requeues("a") == 20
    assert limiter.when("b") == pytest.approx(0.005), "keys back off independently"
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == pytest.approx(0.005)


def test_item_exponential_survives_huge_failure_counts() -> None:
    limiter = ItemExponentialRateLimiter(base_seconds=0.005, max_seconds=1000.0)
    for _ in range(2000):
        delay = limiter.when("a")
    assert delay == 1000.0


def test_token_bucket_burst_then_rate() -> None:
    clock = Clock()
    bucket = BucketRateLimiter(qps=10.0, burst=100, clock=clock)
    assert [bucket.when(i) for i in range(100)] == [0.0] * 100
    assert [bucket.when(i) for i in range(3)] == pytest.approx([0.1, 0.2, 0.3])
    clock.now += 1.0  # ten tokens back: repays the three borrowed, seven left
    assert [bucket.when(i) for i in range(8)] == pytest.approx([0.0] * 7 + [0.1])
    clock.now += 1000.0
    assert sum(1 for i in range(150) if bucket.when(i) == 0.0) == 100, "refill stops at the burst"


def test_token_bucket_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="positive rate"):
        BucketRateLimiter(qps=0.0, burst=1, clock=Clock())


def test_default_limiter_takes_the_longer_delay() -> None:
    clock = Clock()
    limiter = default_controller_rate_limiter(QueueSettings(burst=2, qps=1.0), clock=clock)
    assert limiter.when("a") == pytest.approx(0.005)  # the bucket has tokens; per-key rules
    assert limiter.when("b") == pytest.approx(0.005)
    assert limiter.when("c") == pytest.approx(1.0)  # the bucket is empty; it rules
    assert limiter.num_requeues("a") == 1
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


def test_max_of_needs_a_limiter() -> None:
    with pytest.raises(ValueError, match="at least one"):
        MaxOfRateLimiter([])
