"""`hvpa sim --compare` as a test: Capacity against Weighted (Gardener's 50/50) and HpaPreferred.

The six-hour comparison of docs/strategies.md (the capacity scenario, seed
1, every trace `hvpa sim` ships), run here and rendered as the Markdown
table the page shows, so the page cannot drift from what the simulator
says: when a change moves a number, this test fails with the new table to
paste. Then the claims the page makes of that table, as relations, so that
a regenerated table that breaks one fails too:
- memory utilization: Capacity ahead of both on every trace, by at least
  MEMORY_LEAD (sizing pods to the demand is what Capacity is for);
- CPU utilization: no worse than either on every trace;
- under-provisioned minutes: no worse than either (with the 15% headroom
  Capacity had before `headroom`, noisy's walk outran it by one 5 s tick:
  1.00 against 0.92 minutes);
- rollouts: the adoption, and two per level change that lasts longer than
  the demand window (pods sized for it, then back), no more: where Capacity
  cannot match Weighted's none, the page says why.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

import pytest
from sim_kit import six_hour_summary

from hvpa.sim.report import compare_markdown
from hvpa.sim.traces import TRACE_NAMES

# Eighteen six-hour runs, shared by the tests of one process (sim_kit.six_hour_summary): whichever test
# comes first runs them: 4 min 50 s of CPU, 27 min beside other jobs on two cores.
pytestmark = [pytest.mark.tables, pytest.mark.timeout(3600)]

STRATEGIES: Final = ("Capacity", "Weighted", "HpaPreferred")
BASELINES: Final = STRATEGIES[1:]
DOCS: Final = Path(__file__).parents[2] / "docs" / "strategies.md"
TABLE: Final = re.compile(r"<!-- compare-table -->\n(.*?)<!-- /compare-table -->", re.DOTALL)
MEMORY_LEAD: Final = 0.10
# The adoption (the workload's 250m / 512Mi pods to the curve's size), plus two per level
# change that outlasts the demand window (pods sized for it, then back): a step up and
# down, a ramp's top and bottom, a day's. Noisy never settles; a 10-minute spike may.
MOST_ROLLOUTS: Final = {
    "steady": 1,
    "step": 3,
    "ramp": 3,
    "diurnal": 3,
    "spike": 3,
    "noisy": 1,
}


def summary(strategy: str, trace: str) -> dict[str, Any]:
    """The capacity scenario's six-hour run, shared by the tests of one process (sim_kit)."""
    return six_hour_summary("capacity", strategy, trace)


def page_rows(trace: str) -> list[str]:
    """The rows of docs/strategies.md's comparison for `trace`, one per strategy."""
    found = TABLE.search(DOCS.read_text())
    assert found is not None, "docs/strategies.md lost its <!-- compare-table --> markers"
    return [row for row in found.group(1).splitlines() if row.startswith(f"| {trace} |")]


def fresh_rows(trace: str) -> list[str]:
    """What the simulator gives for `trace`, as the page's rows."""
    table = compare_markdown([(trace, s, summary(s, trace)) for s in STRATEGIES])
    return table.splitlines()[2:]


def test_the_page_has_the_tables_columns_and_one_row_per_trace_and_strategy() -> None:
    found = TABLE.search(DOCS.read_text())
    assert found is not None, "docs/strategies.md lost its <!-- compare-table --> markers"
    header = compare_markdown([]).splitlines()
    lines = found.group(1).splitlines()
    assert lines[:2] == header
    assert [row.split(" | ")[:2] for row in lines[2:]] == [
        [f"| {trace}", strategy] for trace in TRACE_NAMES for strategy in STRATEGIES
    ]


# One test per trace, so that xdist may run the traces' runs on different workers
# (tests/conftest.py, pytest_xdist_make_scheduler): the eighteen runs in one test held the
# whole suite for them.
@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACE_NAMES)
def test_the_page_shows_the_rows_the_simulator_gives(trace: str) -> None:
    fresh = fresh_rows(trace)
    assert page_rows(trace) == fresh, (
        "docs/strategies.md's comparison is stale; now:\n" + "\n".join(fresh)
    )


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACE_NAMES)
@pytest.mark.parametrize("baseline", BASELINES)
def test_memory_utilization_is_ahead(trace: str, baseline: str) -> None:
    ours, theirs = summary("Capacity", trace), summary(baseline, trace)
    assert ours["utilization"]["memory"] >= theirs["utilization"]["memory"] + MEMORY_LEAD


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACE_NAMES)
@pytest.mark.parametrize("baseline", BASELINES)
def test_cpu_utilization_is_no_worse(trace: str, baseline: str) -> None:
    ours, theirs = summary("Capacity", trace), summary(baseline, trace)
    assert ours["utilization"]["cpu"] >= theirs["utilization"]["cpu"]


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACE_NAMES)
@pytest.mark.parametrize("baseline", BASELINES)
def test_under_provisioning_is_no_worse(trace: str, baseline: str) -> None:
    ours, theirs = summary("Capacity", trace), summary(baseline, trace)
    assert ours["underProvisionedMinutes"]["total"] <= theirs["underProvisionedMinutes"]["total"]


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACE_NAMES)
def test_rollouts_are_the_adoption_and_two_per_settled_level_change(trace: str) -> None:
    assert summary("Capacity", trace)["rollouts"] <= MOST_ROLLOUTS[trace]
