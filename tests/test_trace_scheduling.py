"""The xdist scheduler that splits the simulation comparisons by trace (tests/trace_scheduling.py)."""

from __future__ import annotations

from trace_scheduling import TraceScheduling, trace_of

SPLIT = "tests/sim/test_sim_capacity_compare.py"


def _scheduler() -> TraceScheduling:
    scheduler = TraceScheduling.__new__(TraceScheduling)  # scopes need no session
    scheduler._split = frozenset({SPLIT})
    return scheduler


def test_a_split_module_is_grouped_by_the_trace_its_ids_name() -> None:
    scheduler = _scheduler()
    assert scheduler._split_scope(f"{SPLIT}::test_cpu[Weighted-steady]") == f"{SPLIT}::steady"
    assert scheduler._split_scope(f"{SPLIT}::test_rows[noisy]") == f"{SPLIT}::noisy"
    assert scheduler._split_scope(f"{SPLIT}::test_columns") == f"{SPLIT}::"


def test_any_other_module_is_grouped_by_its_file_as_loadfile_does() -> None:
    scheduler = _scheduler()
    other = "tests/sim/test_sim_runs.py"
    assert scheduler._split_scope(f"{other}::test_x[steady]") == other


def test_a_parameter_that_only_contains_a_trace_name_is_not_one() -> None:
    assert trace_of("t.py::test[steadyish-x]") == ""
    assert trace_of("t.py::test[ramp-Capacity]") == "ramp"
