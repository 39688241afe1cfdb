"""The suite's tiers: `make test` runs every test but those marked `tables`, `make tables`
runs those, and CI runs both (.ci/run).

The `tables` tests pin docs/strategies.md's comparison tables with six-hour
simulations, 51 of them: about two thirds of the suite's CPU, paid again by
every `make test` for tables that move only when a strategy's decisions do.
They are left out unless the marker expression names the marker, as the
end-to-end suite is unless it names `e2e` (tests/e2e/conftest.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Protocol, TypeVar

TABLES_MARKER: Final = "tables"
# The modules whose pytestmark holds the marker (tests/test_suite_tiers.py checks it), each
# split by trace over the workers (tests/trace_scheduling.py).
TABLES_MODULES: Final = frozenset(
    {
        "tests/sim/test_sim_capacity_compare.py",
        "tests/sim/test_sim_capacity_inplace.py",
        "tests/sim/baselines/test_sim_vpa_and_hpa_compare.py",
    }
)
TABLES_MARKER_HELP: Final = (
    f"{TABLES_MARKER}: pins a table of docs/strategies.md with six-hour simulations; "
    "run by `make tables` (-m tables) and CI, left out otherwise"
)
TABLES_LEFT_OUT: Final = (
    "docs/strategies.md's tables (six-hour simulations) left out: `make tables` runs them"
)


class Marked(Protocol):
    """What is read of a collected test: pytest.Item's marker lookup."""

    def get_closest_marker(self, name: str) -> object | None: ...


def tables_asked_for(markexpr: str) -> bool:
    """Whether the marker expression decides about the tables' tests itself (`-m tables`,
    `-m 'tables and not slow'`, `-m 'not tables'`)."""
    return TABLES_MARKER in markexpr


Item = TypeVar("Item", bound=Marked)


def tables_left_out(markexpr: str, items: Sequence[Item]) -> list[Item]:
    """The items to deselect: those marked `tables`, unless the expression names the marker."""
    if tables_asked_for(markexpr):
        return []
    return [item for item in items if item.get_closest_marker(TABLES_MARKER) is not None]
