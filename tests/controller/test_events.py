"""The event correlator, as client-go's: an identical event patches the first one's count,
a flood of similar messages folds into one combined Event, the spam filter drops what
exceeds its bucket and refills with time, and names stay unique when the clock stands still."""

from __future__ import annotations

import pytest

from hvpa.controller.events import (
    EventCorrelator,
    EventSettings,
    EventWrite,
    InvolvedObject,
    RecordedEvent,
    WriteKind,
)

WEB = InvolvedObject("autoscaling.k8s.io/v1alpha1", "Hvpa", "default", "web", "uid-1")


class Clock:
    def __init__(self) -> None:
        self.now = 1_750_000_000.0

    def __call__(self) -> float:
        return self.now


def event(message: str = "New size: 4", reason: str = "SuccessfulRescale") -> RecordedEvent:
    return RecordedEvent(WEB, "Normal", reason, message)


def written(correlator: EventCorrelator, recorded: RecordedEvent) -> EventWrite:
    write = correlator.correlate(recorded, reporting_instance="me")
    assert write is not None
    correlator.written(write)
    return write


def test_first_creates_then_identical_ones_patch_the_count() -> None:
    clock = Clock()
    correlator = EventCorrelator(clock=clock)
    first = written(correlator, event())
    assert first.kind is WriteKind.CREATE
    body = first.body
    assert (body["count"], body["type"], body["reason"], body["reportingInstance"]) == (
        1,
        "Normal",
        "SuccessfulRescale",
        "me",
    )
    assert body["involvedObject"] == {
        "apiVersion": "autoscaling.k8s.io/v1alpha1",
        "kind": "Hvpa",
        "namespace": "default",
        "name": "web",
        "uid": "uid-1",
    }
    assert body["firstTimestamp"] == body["lastTimestamp"] == "2025-06-15T15:06:40Z"
    clock.now += 60
    second = written(correlator, event())
    third = written(correlator, event())
    assert (second.kind, second.name) == (WriteKind.PATCH, first.name)
    assert second.body == {
        "count": 2,
        "lastTimestamp": "2025-06-15T15:07:40Z",
        "message": "New size: 4",
    }
    assert third.body["count"] == 3
    assert written(correlator, event("New size: 8")).kind is WriteKind.CREATE


def test_similar_messages_fold_into_one_combined_event() -> None:
    correlator = EventCorrelator(clock=Clock())
    kinds = [written(correlator, event(f"New size: {n}")) for n in range(14)]
    assert [w.kind for w in kinds[:10]] == [WriteKind.CREATE] * 10
    assert kinds[10].kind is WriteKind.CREATE
    assert kinds[10].body["message"] == "(combined from similar events): New size: 10"
    assert [w.kind for w in kinds[11:]] == [WriteKind.PATCH] * 3
    assert {w.name for w in kinds[10:]} == {kinds[10].name}


def test_the_spam_filter_drops_and_refills() -> None:
    clock = Clock()
    correlator = EventCorrelator(
        clock=clock, settings=EventSettings(burst=3, refill_per_second=1 / 300)
    )
    results = [correlator.correlate(event(), reporting_instance="me") for _ in range(4)]
    assert [r is None for r in results] == [False, False, False, True]
    clock.now += 299
    assert correlator.correlate(event(), reporting_instance="me") is None
    clock.now += 1
    assert correlator.correlate(event(), reporting_instance="me") is not None


def test_a_lost_event_is_created_again() -> None:
    correlator = EventCorrelator(clock=Clock())
    first = written(correlator, event())
    patch = correlator.correlate(event(), reporting_instance="me")
    assert patch is not None and patch.kind is WriteKind.PATCH
    correlator.lost(patch)
    again = correlator.correlate(event(), reporting_instance="me")
    assert again is not None and again.kind is WriteKind.CREATE
    assert again.name != first.name


@pytest.mark.parametrize("count", [2, 50])
def test_names_are_unique_when_the_clock_stands_still(count: int) -> None:
    correlator = EventCorrelator(clock=Clock(), settings=EventSettings(burst=100, max_similar=100))
    names = {written(correlator, event(f"m{n}")).name for n in range(count)}
    assert len(names) == count
    assert all(name.startswith("web.") for name in names)


def test_long_messages_are_cut() -> None:
    write = written(EventCorrelator(clock=Clock()), event("x" * 5000))
    assert len(write.body["message"]) == 1024
