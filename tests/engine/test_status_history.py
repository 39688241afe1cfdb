"""The samples a decision reads back from its status and writes (hvpa/engine/status.py).

Each decision reads the usage and demand samples the previous one wrote and
writes them back: a quantity is read as its own spelling (not as another
that merely compares equal), and each sample is written as itself.
"""

from __future__ import annotations

from datetime import UTC, datetime

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


def _written(sample: Sample) -> ResourceSample:
    """The sample as write_status keeps it in `status.history.usage`."""
    status = write_status(
        HVPA, (), (None, (), ()), 1, 1, None, (), sample.time, DemandHistory(usage=(sample,))
    )
    assert status.history is not None and status.history.usage is not None
    return status.history.usage[0]


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
