"""The suite's tiers: `make test` runs every test but those marked `tables` (and the
end-to-end suite's, marked `e2e`), `make tables` runs those, and CI runs all three
(.ci/run).

The `tables` tests pin docs/strategies.md's comparison tables with six-hour
simulations, 51 of them: about two thirds of the suite's CPU, paid again by
every `make test` for tables that move only when a strategy's decisions do.
A tier is left out unless the marker expression names its marker
(`-m tables`, `-m e2e`); then the expression decides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Protocol, TypeVar

import pytest

TABLES_MARKER: Final = "tables"
TABLES_MARKER_HELP: Final = (
    f"{TABLES_MARKER}: pins a table of docs/strategies.md with six-hour simulations; "
    "run by `make tables` (-m tables) and CI, left out otherwise"
)
TABLES_LEFT_OUT: Final = (
    "docs/strategies.md's tables (six-hour simulations) left out: `make tables` runs them"
)
# The modules whose pytestmark holds the marker (tests/test_suite_tiers.py checks it), each
# split by trace over the workers (tests/conftest.py, tests/trace_scheduling.py).
TABLES_MODULES: Final = frozenset(
    {
        "tests/sim/test_sim_capacity_compare.py",
        "tests/sim/test_sim_capacity_inplace.py",
        "tests/sim/baselines/test_sim_vpa_and_hpa_compare.py",
    }
)


class Marked(Protocol):
    """What is read of a collected test: pytest.Item's marker lookup."""

    def get_closest_marker(self, name: str) -> object | None: ...


Item = TypeVar("Item", bound=Marked)


def named(marker: str, markexpr: str) -> bool:
    """Whether the marker expression names `marker` (`-m tables`, `-m 'not tables'`), as a
    word: then it decides about the tier itself."""
    return re.search(rf"\b{re.escape(marker)}\b", markexpr) is not None


def left_out(marker: str, markexpr: str, items: Sequence[Item]) -> list[Item]:
    """The items to deselect: those marked `marker`, unless the expression names it."""
    if named(marker, markexpr):
        return []
    return [item for item in items if item.get_closest_marker(marker) is not None]


def deselect_unless_named(config: pytest.Config, items: list[pytest.Item], marker: str) -> None:
    """Deselect the tier of `marker` (pytest_collection_modifyitems), reported as deselected."""
    dropped = left_out(marker, config.option.markexpr or "", items)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        leaving = {id(item) for item in dropped}
        items[:] = [item for item in items if id(item) not in leaving]
