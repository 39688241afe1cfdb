"""The vpaWeight interval lookup, as Gardener's getVpaWeightFromIntervals does it."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from hvpa.engine.strategies.weights import lookup_vpa_weight


@dataclass(frozen=True)
class Interval:
    vpa_weight: int
    start_replica_count: int | None = None
    last_replica_count: int | None = None


def iv(weight: int, start: int | None = None, last: int | None = None) -> Interval:
    return Interval(weight, start, last)


# Gardener's tables (hvpa_controller_test.go "Initial HPA scaling", "Middle VPA scaling").
INITIAL_HPA = (iv(0, 1, 1), iv(100, 2, 2), iv(0, 3, 4))
MIDDLE = (iv(40, 1, 1), iv(100, 2, 2), iv(0, 3, 4))
# Gardener's kube-apiserver shape: horizontal below max, vertical at max.
APISERVER = (iv(100, 4, 4), iv(0, 1, 3))


@pytest.mark.parametrize(
    ("intervals", "current", "desired", "weight", "interval"),
    [
        pytest.param((iv(60),), 2, 2, 60, 0, id="one-open-interval"),
        pytest.param(INITIAL_HPA, 1, 2, 0, 0, id="gardener-initial-hpa"),
        pytest.param(MIDDLE, 2, 3, 0, 2, id="100-wants-more-looks-ahead"),
        pytest.param(MIDDLE, 2, 1, 40, 0, id="100-wants-fewer-looks-back"),
        pytest.param(MIDDLE, 2, 2, 100, 1, id="100-steady"),
        pytest.param(APISERVER, 4, 4, 100, 0, id="apiserver-at-max"),
        pytest.param(APISERVER, 4, 3, 100, None, id="apiserver-fraction-listed-later-is-not-looked-back-to"),
        pytest.param(APISERVER, 2, 3, 0, 1, id="apiserver-below-max"),
        pytest.param((iv(0, 1, 5), iv(100, 6, 10)), 8, 9, 100, 1, id="no-later-fraction-stays-100"),
        pytest.param((iv(100, 1, 3), iv(50, 4, 10)), 2, 1, 100, None, id="no-earlier-fraction-stays-100"),
        pytest.param((iv(20, 7, 10), iv(100, 1, 3)), 2, 1, 20, 0, id="earlier-in-list-order-not-replicas"),
        pytest.param((iv(100, 1, 2), iv(100, 3, 4), iv(30, 5, 6)), 1, 3, 30, 2, id="look-ahead-skips-100s"),
        pytest.param((iv(30, 1, 10), iv(70, 3, 5)), 4, 4, 30, 0, id="first-match-in-list-order"),
        pytest.param((iv(50, 5, 10),), 2, 3, 0, None, id="no-match-is-0"),
        pytest.param((), 2, 3, 0, None, id="no-intervals-is-0"),
        pytest.param((iv(40, 0, 0),), 2, 2, 40, 0, id="zero-bounds-are-min-max"),
        pytest.param((iv(40, None, None),), 1, 1, 0, None, id="open-bounds-below-min"),
        pytest.param((iv(40, 3, None),), 8, 9, 40, 0, id="open-last-is-max"),
        pytest.param((iv(40, 3, None),), 9, 9, 0, None, id="open-last-not-past-max"),
    ],
)  # fmt: skip
def test_lookup(
    intervals: tuple[Interval, ...], current: int, desired: int, weight: int, interval: int | None
) -> None:
    found = lookup_vpa_weight(intervals, current, desired, min_replicas=2, max_replicas=8)
    assert found.weight == weight
    assert found.interval == interval
    assert found.explanation
