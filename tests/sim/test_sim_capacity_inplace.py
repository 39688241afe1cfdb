"""`hvpa sim --compare` in place: Capacity against Weighted and HpaPreferred, pods resized through pods/resize.

docs/strategies.md's "In place" table holds six traces of the capacity
scenario with `spec.vpa.resizeMode: InPlaceOrRollout` (seed 1, 6 h). Its
eighteen runs cost about five minutes of one core, too much beside the
Rollout comparison's eighteen (test_sim_capacity_compare.py), so this
module pins three traces, one run per trace and strategy (shared, sim_kit.six_hour_summary):
- step: a settled level change up and down, where Weighted's vertical half
  acts in place and Capacity resized by rollouts three times;
- ramp: a slow rise and fall, where Capacity's count moves while its pods
  keep their size within the band;
- spike: a burst shorter than the demand window.
Steady (where Capacity is behind Weighted on CPU, the page says why),
diurnal (the ramp's shape, slower) and noisy (the most costly run) are
left to the page.

What is pinned, on those three: the page's rows are what the simulator
gives, and the verdicts the page states of them, as relations: Capacity's
CPU and memory utilization at least either baseline's, its
under-provisioned minutes at most either's, and no rollout and no pod
restart at all.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

import pytest
from sim_kit import six_hour_summary

from hvpa.sim.report import COMPARE_COLUMNS, compare_markdown

# Nine six-hour runs (the three strategies on three traces), made by whichever test asks
# first: 2 min 13 s of CPU in all, 3.5 min beside other jobs on two cores; past the default
# per-test timeout.
pytestmark = [pytest.mark.tables, pytest.mark.timeout(1800)]

RESIZE_MODE: Final = "InPlaceOrRollout"
TRACES: Final = ("step", "ramp", "spike")
STRATEGIES: Final = ("Capacity", "Weighted", "HpaPreferred")
BASELINES: Final = STRATEGIES[1:]
# The page's columns, in the order of the full comparison.
COLUMN_TITLES: Final = (
    "util CPU",
    "util mem",
    "under-prov min",
    "replica changes",
    "rollouts",
    "in-place resizes",
    "pod restarts",
    "pods replaced",
)
COLUMNS: Final = tuple(c for c in COMPARE_COLUMNS if c.title in COLUMN_TITLES)
DOCS: Final = Path(__file__).parents[2] / "docs" / "strategies.md"
TABLE: Final = re.compile(r"<!-- inplace-table -->\n(.*?)<!-- /inplace-table -->", re.DOTALL)


def summary(strategy: str, trace: str) -> dict[str, Any]:
    """The capacity scenario's six-hour run in place, shared by the tests of one process
    (sim_kit)."""
    return six_hour_summary("capacity", strategy, trace, RESIZE_MODE)


def test_the_columns_are_the_pages() -> None:
    assert tuple(c.title for c in COLUMNS) == COLUMN_TITLES


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACES)
def test_the_page_shows_the_rows_the_simulator_gives(trace: str) -> None:
    found = TABLE.search(DOCS.read_text())
    assert found is not None, "docs/strategies.md lost its <!-- inplace-table --> markers"
    fresh = compare_markdown(
        [(trace, strategy, summary(strategy, trace)) for strategy in STRATEGIES], COLUMNS
    )
    rows = fresh.splitlines()[2:]
    page = found.group(1).splitlines()
    assert [line for line in page if line.startswith(f"| {trace} |")] == rows, (
        f"docs/strategies.md's in-place rows for {trace} are stale; now:\n{fresh}"
    )


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("baseline", BASELINES)
@pytest.mark.parametrize("resource", ["cpu", "memory"])
def test_utilization_is_no_worse(trace: str, baseline: str, resource: str) -> None:
    ours, theirs = summary("Capacity", trace), summary(baseline, trace)
    assert ours["utilization"][resource] >= theirs["utilization"][resource]


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACES)
@pytest.mark.parametrize("baseline", BASELINES)
def test_under_provisioning_is_no_worse(trace: str, baseline: str) -> None:
    ours, theirs = summary("Capacity", trace), summary(baseline, trace)
    assert ours["underProvisionedMinutes"]["total"] <= theirs["underProvisionedMinutes"]["total"]


@pytest.mark.slow
@pytest.mark.parametrize("trace", TRACES)
def test_no_pod_is_rolled_or_restarted(trace: str) -> None:
    ours = summary("Capacity", trace)
    assert (ours["rollouts"], ours["podsReplaced"], ours["podRestarts"]) == (0, 0, 0)
    assert ours["inPlaceResizes"] > 0
