"""The suite's tiers (tests/suite_tiers.py): what `make test` leaves to `make tables`, and
that CI runs both."""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from suite_tiers import TABLES_MARKER, TABLES_MODULES, left_out

ROOT = Path(__file__).parents[1]


@dataclass
class FakeItem:
    name: str
    markers: frozenset[str] = field(default_factory=frozenset)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


ITEMS = [
    FakeItem("table row", frozenset({"tables", "slow"})),
    FakeItem("engine rule"),
    FakeItem("other slow", frozenset({"slow"})),
]


def test_without_a_marker_expression_the_tables_are_left_out() -> None:
    assert [item.name for item in left_out(TABLES_MARKER, "", ITEMS)] == ["table row"]
    assert [item.name for item in left_out(TABLES_MARKER, "not slow", ITEMS)] == ["table row"]


def test_an_expression_naming_the_marker_decides_itself() -> None:
    assert left_out(TABLES_MARKER, "tables", ITEMS) == []
    assert left_out(TABLES_MARKER, "tables and not slow", ITEMS) == []


def test_the_marker_is_named_as_a_word() -> None:
    assert [item.name for item in left_out(TABLES_MARKER, "tablesque", ITEMS)] == ["table row"]


def test_the_suites_hook_leaves_out_a_tables_module_unless_asked() -> None:
    """The conftest's hook, run: collecting a tables module selects nothing by default."""
    module = sorted(TABLES_MODULES)[0]
    collect = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0"]
    collect += ["-p", "no:cacheprovider", module]
    result = subprocess.run(collect, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 5, result.stdout + result.stderr  # no tests collected
    assert " deselected" in result.stdout


def _marks_tables(module: Path) -> bool:
    """Whether the module's `pytestmark` holds `pytest.mark.tables`."""
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            return any(
                isinstance(part, ast.Attribute) and part.attr == TABLES_MARKER
                for part in ast.walk(node.value)
            )
    return False


def test_the_modules_marked_tables_are_the_ones_named() -> None:
    marked = {
        str(module.relative_to(ROOT))
        for module in (ROOT / "tests").rglob("test_*.py")
        if _marks_tables(module)
    }
    assert marked == TABLES_MODULES


def test_make_tables_runs_them_and_ci_runs_make_tables() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "tables: install\n\t$(PYTEST) -m tables $(ARGS)\n" in makefile
    phases = [
        line for line in (ROOT / ".ci/run").read_text().splitlines() if line.startswith("phase ")
    ]
    assert "phase tables make tables" in phases
