"""`hvpa recommend`: run the engine on scenario files and print the Decision.

One scenario prints one JSON document (a YAML one with `-o yaml`, its
explanation with `-o text`); several (`-f` repeated, or a directory: its
*.yaml, *.yml and *.json sorted by name, except the *.expected.json that hold
expected outputs) print one JSON object per line (with `-o yaml`, one YAML
document each, separated by `---`), in input order, each with a `scenario`
field naming its file. A scenario that
cannot be read or decided (a ScenarioError: every bad quantity, time, selector or object
shape is one) prints an `error` object for its line and the rest still run; the exit
code (hvpa.commands) is 2 if any failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Final

from hvpa.commands import BAD_INPUT, OK, write_document

HELP = "print what hvpa would decide for a scenario"
_SUFFIXES: Final = (".yaml", ".yml", ".json")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-f",
        "--filename",
        action="append",
        required=True,
        metavar="PATH",
        help="a scenario file, a directory of them (*.yaml, *.yml, *.json), or - for stdin; repeatable",
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=("json", "yaml", "text"),
        default="json",
        help="json or yaml: the Decision; text: its explanation (default json)",
    )


def _expand(paths: list[str]) -> list[str]:
    files: list[str] = []
    for path in paths:
        if path != "-" and Path(path).is_dir():
            # `NAME.expected.json` beside a scenario holds its expected output, not a scenario.
            files.extend(
                str(p)
                for p in sorted(Path(path).iterdir())
                if p.suffix in _SUFFIXES and p.is_file() and not p.name.endswith(".expected.json")
            )
        else:
            files.append(path)
    return files


def _decide(path: str) -> dict[str, Any]:
    from hvpa.engine.decide import decide
    from hvpa.engine.decision import decision_to_dict
    from hvpa.scenario import load_scenario

    scenario = load_scenario(path)
    decision = decide(scenario.hvpa, scenario.snapshot, scenario.now, scenario.settings)
    return decision_to_dict(decision)


def run(args: argparse.Namespace) -> int:
    from hvpa.scenario import ScenarioError

    files = _expand(args.filename)
    if not files:
        sys.stderr.write("hvpa recommend: no scenario files found\n")
        return BAD_INPUT
    several = len(files) > 1
    failed = False
    out = sys.stdout
    for path in files:
        try:
            result = _decide(path)
        except ScenarioError as error:
            failed = True
            # One line: a YAML error spans several ("while parsing...\n  in ...").
            message = f"{path}: {' '.join(str(error).split())}"
            if several:
                write_document(
                    out, {"scenario": path, "error": message}, args.output, several=several
                )
            else:
                sys.stderr.write(f"hvpa recommend: {message}\n")
            continue
        if args.output == "text":
            if several:
                out.write(f"# {path}\n")
            out.write("\n".join(result["explanation"]) + "\n")
        else:
            document = {"scenario": path, **result} if several else result
            write_document(out, document, args.output, several=several)
    out.flush()
    return BAD_INPUT if failed else OK
