"""`python -m bench` (`make bench`): run every bench/bench_*.py and print one table.

    python -m bench                 # everything, full size (about 7 minutes on 2 cores)
    python -m bench --quick         # smaller loads, same rows
    python -m bench ingest memory   # only modules whose name contains a fragment

Each module defines `run(size) -> list[Row]` (see bench/harness.py): what
was measured, in which unit, the reference it is compared with (measured in
this same run, on this machine), their ratio (above 1 = hvpa does better),
the target and whether it was met. bench/results.json keeps the last run
as `{name: {value, unit, reference, ratio, target, met}}`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.harness import Row, Size, note, nproc

HERE = Path(__file__).parent
# What --quick runs (the smoke test makes it "tiny").
SIZE_OF_QUICK: Size = "quick"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _table(rows: list[tuple[str, Row]]) -> str:
    header = ("module", "name", "value", "unit", "reference", "ratio", "target", "met")
    lines = [header] + [
        (
            module,
            row.name,
            _cell(row.value),
            row.unit,
            _cell(row.reference),
            _cell(row.ratio),
            row.target or "-",
            _cell(row.met),
        )
        for module, row in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller loads (about 1.5 minutes)")
    parser.add_argument("only", nargs="*", help="run only modules whose name contains one")
    args = parser.parse_args(argv)
    size: Size = SIZE_OF_QUICK if args.quick else "full"
    modules = sorted(p.stem for p in HERE.glob("bench_*.py"))
    chosen = [m for m in modules if not args.only or any(a in m for a in args.only)]
    rows: list[tuple[str, Row]] = []
    started = time.monotonic()
    for name in chosen:
        note(f"bench: {name} ({size})...")
        module_started = time.monotonic()
        module = importlib.import_module(f"bench.{name}")
        module_rows = module.run(size)
        rows.extend((name.removeprefix("bench_"), row) for row in module_rows)
        note(f"bench: {name} done in {time.monotonic() - module_started:.0f} s")
    print(
        f"hvpa benchmarks, {size} size, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, nproc={nproc()}, "
        f"{time.monotonic() - started:.0f} s; ratio > 1 means hvpa does better than the reference"
    )
    print(_table(rows))
    results = {row.name: row.as_dict() for _, row in rows}
    (HERE / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
