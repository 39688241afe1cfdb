"""The samples a decision reads back from its status and writes (hvpa/engine/status.py).

Each decision reads the usage and demand samples the previous one wrote and
writes them back: a quantity is read as its own spelling (not as another
that merely compares equal), and each sample is written as itself.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import msgspec
import pytest
from decide_kit import hvpa_object

from hvpa.api import parse_hvpa
from hvpa.api.status import History, HvpaStatus, ResourceSample
from hvpa.engine.demand import DemandHistory, Sample
from hvpa.engine.status import read_demand_history, write_status
from hvpa.records import Resources

MOMENT = datetime(2025, 1, 6, 2, 36, 45, tzinfo=UTC)
# 2**60 bytes: the float 2.0**60 compares (and hashes) equal to the integer, but a float
# quantity is read as its shortest decimal spelling, repr(2.0**60) = "1.152921504606847e+18",
# which is 1152921504606847000 bytes, not 1152921504606846976.
EXACT = 2**60
AS_FLOAT_SPELLS = 1_152_921_504_606_847_000
HVPA = parse_hvpa(hvpa_object())


def _usage(memory: int | float) -> HvpaStatus:
    return HvpaStatus(history=History(usage=(ResourceSample(time=MOMENT, memory=memory),)))


def test_an_integer_and_an_equal_float_are_read_each_as_its_own_spelling() -> None:
    assert float(EXACT) == EXACT  # equal as values, yet different quantities
    as_int = read_demand_history(_usage(EXACT)).usage[0].amounts.memory
    as_float = read_demand_history(_usage(float(EXACT))).usage[0].amounts.memory
    again = read_demand_history(_usage(EXACT)).usage[0].amounts.memory
    assert (as_int, as_float, again) == (EXACT * 1000, AS_FLOAT_SPELLS * 1000, EXACT * 1000)


def _usage_written(
    status: HvpaStatus | None, kept: DemandHistory, now: float = MOMENT.timestamp()
) -> tuple[ResourceSample, ...]:
    """`history.usage` as write_status writes it for an Hvpa with `status` that keeps `kept`
    (nothing else decided: one replica, no change)."""
    hvpa = HVPA if status is None else msgspec.structs.replace(HVPA, status=status)
    written = write_status(hvpa, (), (None, (), ()), 1, 1, None, (), now, kept)
    assert written.history is not None and written.history.usage is not None
    return written.history.usage


def _written(sample: Sample) -> ResourceSample:
    """The sample as write_status keeps it in `status.history.usage`."""
    return _usage_written(None, DemandHistory(usage=(sample,)), sample.time)[0]


def test_samples_that_differ_in_any_field_are_written_each_as_itself() -> None:
    second = MOMENT.timestamp()
    samples = [
        Sample(second, Resources(cpu=1500, memory=None)),
        Sample(second, Resources(cpu=2500, memory=None)),
        Sample(second, Resources(cpu=1500, memory=2**30 * 1000)),
        Sample(second + 1, Resources(cpu=1500, memory=None)),
    ]
    written = [_written(sample) for sample in samples]
    assert [(w.time.second, w.cpu, w.memory) for w in written] == [
        (45, "1.5", None),
        (45, "2.5", None),
        (45, "1.5", "1Gi"),
        (46, "1.5", None),
    ]


def _round_trip(entries: tuple[ResourceSample, ...]) -> tuple[ResourceSample, ...]:
    """What a decision that keeps every sample it read writes back into `history.usage`."""
    status = HvpaStatus(history=History(usage=entries))
    return _usage_written(status, read_demand_history(status))


def _spelled_anew(entry: ResourceSample) -> ResourceSample:
    return _written(read_demand_history(HvpaStatus(history=History(usage=(entry,)))).usage[0])


def test_a_sample_kept_as_the_status_spelled_it_is_written_as_that_entry() -> None:
    entries = tuple(
        ResourceSample(time=MOMENT + timedelta(seconds=15 * i), cpu="19.52", memory="41.913172725G")
        for i in range(3)
    )
    written = _round_trip(entries)
    assert all(w is e for w, e in zip(written, entries, strict=True))
    # the oldest pruned, as each decision prunes it: the rest are still the status's entries
    status = HvpaStatus(history=History(usage=entries))
    read = read_demand_history(status)
    pruned = _usage_written(status, DemandHistory(usage=read.usage[1:]))
    assert all(w is e for w, e in zip(pruned, entries[1:], strict=True))


# Spelled otherwise than hvpa spells them: each is written in hvpa's spelling, as if the
# sample were new (a time with microseconds loses them, metav1.Time keeps whole seconds).
OTHERWISE = (
    ResourceSample(time=MOMENT, cpu="1500m", memory="1Gi"),
    ResourceSample(time=MOMENT, cpu="1.5", memory="1073741824"),
    ResourceSample(time=MOMENT + timedelta(seconds=15), cpu=2, memory="1Gi"),
    ResourceSample(time=MOMENT + timedelta(seconds=30, microseconds=500), cpu="2"),
    ResourceSample(
        time=(MOMENT + timedelta(seconds=45)).astimezone(timezone(timedelta(hours=1))), cpu="2"
    ),
)


@pytest.mark.parametrize(
    "entry", OTHERWISE, ids=["cpu-in-milli", "memory-in-bytes", "number", "microseconds", "offset"]
)
def test_a_sample_the_status_spelled_otherwise_is_spelled_anew(entry: ResourceSample) -> None:
    (written,) = _round_trip((entry,))
    assert written == _spelled_anew(entry)
    assert msgspec.json.encode(written) == msgspec.json.encode(_spelled_anew(entry))
    assert msgspec.json.encode(written) != msgspec.json.encode(entry)


def test_samples_out_of_order_or_twice_are_each_spelled_as_they_are_read() -> None:
    later, earlier = MOMENT + timedelta(seconds=30), MOMENT
    entries = (
        ResourceSample(time=later, cpu="3"),
        ResourceSample(time=earlier, cpu="1500m"),
        ResourceSample(time=earlier, cpu="1.5"),
        ResourceSample(time=later, cpu="3000m"),
    )
    written = _round_trip(entries)
    assert [(w.time, w.cpu) for w in written] == [
        (later, "3"),
        (earlier, "1.5"),
        (earlier, "1.5"),
        (later, "3"),
    ]
    assert written[0] is entries[0]  # spelled as the status held it: that very entry


def test_a_new_sample_beside_an_entry_of_the_same_amounts_keeps_its_own_time() -> None:
    entry = ResourceSample(time=MOMENT, cpu="3")
    status = HvpaStatus(history=History(usage=(entry,)))
    new = Sample(MOMENT.timestamp() - 15, Resources(cpu=3000))
    written = _usage_written(status, DemandHistory(usage=(new,)))
    assert [(w.time, w.cpu) for w in written] == [(MOMENT - timedelta(seconds=15), "3")]
