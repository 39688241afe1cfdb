"""`hvpa sim --compare` as a test: Capacity no worse than Gardener's Weighted 50/50.

ENGINE.md §5 sets the aim: utilization (demand / allocated), under-provisioned
minutes and rollouts, no worse than Weighted. Each case runs the capacity
scenario under one trace for 90 minutes with both strategies (the same
seed, so the same report every time) and compares the three figures, with
margins for what is noise rather than a difference: one point of
utilization, one 5-second tick of under-provisioning. Memory utilization
must be clearly better (five points), since sizing pods to the demand is
what Capacity is for. docs/strategies.md has the six-hour table, and says
where the aim is not met and why (ramps, diurnal, noisy: Weighted's CPU
utilization runs above its own target while it is pinned at maxReplicas).
"""

from __future__ import annotations

from typing import Any

import pytest

from hvpa.sim.runner import RunOptions, simulate
from hvpa.sim.scenarios import builtin_scenario
from hvpa.sim.traces import parse_trace

DURATION_SECONDS = 90 * 60
UTILIZATION_MARGIN = 0.01
UNDER_PROVISIONED_MARGIN_MINUTES = 5 / 60
MEMORY_UTILIZATION_LEAD = 0.05


def summary(strategy: str, trace: str) -> dict[str, Any]:
    scenario = builtin_scenario("capacity").with_strategy(strategy)
    report = simulate(
        RunOptions(
            scenario=scenario,
            trace=parse_trace(trace, duration_seconds=DURATION_SECONDS, peak=scenario.peak, seed=1),
            duration_seconds=DURATION_SECONDS,
            seed=1,
        )
    )
    result: dict[str, Any] = report["summary"]
    return result


@pytest.mark.slow
@pytest.mark.parametrize("trace", ["steady", "step", "spike"])
def test_capacity_is_no_worse_than_weighted(trace: str) -> None:
    capacity, weighted = summary("Capacity", trace), summary("Weighted", trace)
    for resource in ("cpu", "memory"):
        assert (
            capacity["utilization"][resource]
            >= weighted["utilization"][resource] - UTILIZATION_MARGIN
        ), resource
    assert (
        capacity["utilization"]["memory"]
        >= weighted["utilization"]["memory"] + MEMORY_UTILIZATION_LEAD
    )
    assert (
        capacity["underProvisionedMinutes"]["total"]
        <= weighted["underProvisionedMinutes"]["total"] + UNDER_PROVISIONED_MARGIN_MINUTES
    )
    assert capacity["rollouts"] <= weighted["rollouts"]
