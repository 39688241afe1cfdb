"""The envelope's rows for what deciding every Hvpa each sync period asks of the controller:
the figures a reader compares with one core when the decision rate falls short."""

from __future__ import annotations

import pytest

from bench.bench_envelope import SETTLE_PERIODS, _what_a_period_needs


def test_a_decision_dearer_than_one_cores_budget_is_not_met_and_says_the_cores_needed() -> None:
    # 10,000 Hvpas every 15 s leave one core 1.5 ms a decision; 5,000 decisions in 10 CPU-s
    # cost 2 ms each, so every Hvpa each period takes 10,000 / 15 * 2 ms = 1.33 cores.
    per_decision, cores = _what_a_period_needs(
        10_000, 15.0, 5_000, 10.0, {"settled": True, "queued": 3}
    )
    assert per_decision.value == pytest.approx(2.0)
    assert per_decision.reference == pytest.approx(1.5)
    assert per_decision.met is False
    assert cores.value == pytest.approx(4 / 3)
    assert cores.ratio == pytest.approx(0.75)


def test_a_decision_within_the_budget_is_met() -> None:
    rows = _what_a_period_needs(1_000, 15.0, 1_000, 1.0, {"settled": True, "queued": 0})
    assert [row.met for row in rows] == [True, None]
    assert rows[1].value == pytest.approx(1_000 / 15 * 0.001)


def test_a_settle_that_gave_up_says_how_many_keys_were_still_queued() -> None:
    rows = _what_a_period_needs(10_000, 15.0, 5_000, 10.0, {"settled": False, "queued": 700})
    assert rows[-1].value == 700
    assert f"after {SETTLE_PERIODS} sync periods" in rows[-1].name


def test_no_decision_gives_no_cost_rows() -> None:
    assert _what_a_period_needs(10, 15.0, 0, 1.0, {"settled": True, "queued": 0}) == []
