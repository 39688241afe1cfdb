"""`python -m bench` (`make bench`): run every bench/bench_*.py and print one table.

Each module defines `run() -> list[dict]`, rows of {name, value, unit,
reference, ratio}: what was measured, in which unit, what it is compared
with (None when it stands alone) and value/reference. Figures are measured
in this one run, on this machine; bench/results.json keeps the last run for
tools that want them. Name fragments on the command line pick modules.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def main(argv: list[str]) -> int:
    modules = sorted(p.stem for p in HERE.glob("bench_*.py"))
    chosen = [m for m in modules if not argv or any(a in m for a in argv)]
    rows: list[dict[str, Any]] = []
    for name in chosen:
        module = importlib.import_module(f"bench.{name}")
        for row in module.run():
            rows.append({"module": name, **row})
    header = ("module", "name", "value", "unit", "reference", "ratio")
    table = [header] + [tuple(_cell(row.get(key)) for key in header) for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for line in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))
    (HERE / "results.json").write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
