"""`hvpa sim --compare` as a test: Capacity against Gardener's Weighted 50/50.

ENGINE.md §5 sets the aim: utilization (demand / allocated), under-provisioned
minutes and rollouts, no worse than Weighted. These tests pin the six-hour
table of docs/strategies.md (the capacity scenario, seed 1, so the same
report every time), with margins for what is noise rather than a
difference: one point of utilization, one 5-second tick of
under-provisioning. Memory utilization must be clearly better (five points),
since sizing pods to the demand is what Capacity is for. What is not met is
stated there and pinned here as it stands: CPU utilization on noisy (pods
3.4 times larger than Weighted's round the count up by more), and rollouts
(the adoption, and the curve's vertical segment), which are not asserted.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import pytest

from hvpa.sim.runner import RunOptions, simulate
from hvpa.sim.scenarios import builtin_scenario
from hvpa.sim.traces import parse_trace

DURATION_SECONDS = 6 * 3600
UTILIZATION_MARGIN = 0.01
UNDER_PROVISIONED_MARGIN_MINUTES = 5 / 60
MEMORY_UTILIZATION_LEAD = 0.05
# A pair of six-hour runs (Capacity and Weighted) takes about 15 s alone (docs/simulator.md:
# about 90 s for the six pairs); the first test of a trace pays for it, and under xdist
# (`make test`, --dist loadfile) every test of this file runs on one worker, so once. 300 s
# was measured too short on a 2-core machine at load 15 to 20 (the run got 28% of a core);
# 600 s is forty times the quiet time.
PAIR_TIMEOUT_SECONDS = 600


@functools.cache
def report(strategy: str, trace: str) -> dict[str, Any]:
    """One run per strategy and trace, shared by the tests below (each takes seconds)."""
    scenario = builtin_scenario("capacity").with_strategy(strategy)
    return simulate(
        RunOptions(
            scenario=scenario,
            trace=parse_trace(trace, duration_seconds=DURATION_SECONDS, peak=scenario.peak, seed=1),
            duration_seconds=DURATION_SECONDS,
            seed=1,
        )
    )


def summary(strategy: str, trace: str) -> dict[str, Any]:
    result: dict[str, Any] = report(strategy, trace)["summary"]
    return result


def perfect_count_utilization(strategy: str, trace: str) -> float:
    """The CPU utilization the best replica count would reach with the pods the run had.

    Each minute: ceil(demand / (target x pod request)) replicas within min/max, as
    if the count followed the demand instantly and exactly. A pod of 840m rounds up
    by more than one of 250m, so this bound is lower for larger pods; a strategy's
    distance from it is what its decisions cost, like for like.
    """
    spec = builtin_scenario("capacity").hvpa["spec"]["hpa"]["template"]["spec"]
    target = spec["metrics"][0]["resource"]["target"]["averageUtilization"] / 100
    demand = allocated = 0.0
    for row in report(strategy, trace)["series"][1:]:
        size = row["podRequestCpuCores"]
        count = math.ceil(row["demandCpuCores"] / (target * size))
        count = min(max(count, spec["minReplicas"]), spec["maxReplicas"])
        demand += row["demandCpuCores"]
        allocated += count * size
    return demand / allocated


ALL_TRACES = ["steady", "step", "spike", "ramp", "diurnal", "noisy"]


@pytest.mark.slow
@pytest.mark.timeout(PAIR_TIMEOUT_SECONDS)
@pytest.mark.parametrize("trace", ALL_TRACES)
def test_memory_is_better_and_under_provisioning_no_worse(trace: str) -> None:
    capacity, weighted = summary("Capacity", trace), summary("Weighted", trace)
    assert (
        capacity["utilization"]["memory"]
        >= weighted["utilization"]["memory"] + MEMORY_UTILIZATION_LEAD
    )
    assert (
        capacity["underProvisionedMinutes"]["total"]
        <= weighted["underProvisionedMinutes"]["total"] + UNDER_PROVISIONED_MARGIN_MINUTES
    )


@pytest.mark.slow
@pytest.mark.timeout(PAIR_TIMEOUT_SECONDS)
@pytest.mark.parametrize("trace", ["steady", "step", "spike", "ramp", "diurnal"])
def test_cpu_utilization_is_no_worse(trace: str) -> None:
    """Not on noisy: there a perfect count of Capacity's 862m pods reaches 62%, of
    Weighted's 250m pods 67.5%, and Capacity is 1.4 points behind (the test below
    compares the two like for like)."""
    capacity, weighted = summary("Capacity", trace), summary("Weighted", trace)
    assert capacity["utilization"]["cpu"] >= weighted["utilization"]["cpu"] - UTILIZATION_MARGIN


@pytest.mark.slow
@pytest.mark.timeout(PAIR_TIMEOUT_SECONDS)
@pytest.mark.parametrize("trace", ALL_TRACES)
def test_capacity_is_as_close_to_a_perfect_count_of_its_pods_as_weighted(trace: str) -> None:
    """Like for like: each strategy's CPU utilization against the best a count could do
    with the pods it had. Capacity's pods are the curve's (3.4 times Weighted's), so its
    bound is lower; its decisions may cost no more than Weighted's do."""
    gaps = {
        strategy: perfect_count_utilization(strategy, trace)
        - summary(strategy, trace)["utilization"]["cpu"]
        for strategy in ("Capacity", "Weighted")
    }
    assert gaps["Capacity"] <= gaps["Weighted"] + UTILIZATION_MARGIN, gaps
