"""The `hvpa` command line: one subcommand per module in `hvpa.commands`."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from typing import Final

__all__ = ["main"]

# Subcommands in the order `hvpa --help` lists them: name -> module in hvpa.commands.
COMMANDS: Final = {
    "run": "run",
    "explain": "explain",
    "recommend": "recommend",
    "sim": "sim",
    "validate": "validate",
    "version": "version",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hvpa",
        description="Scale a workload horizontally and vertically in tandem, from one decision.",
    )
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"hvpa.commands.{module_name}")
        sub = subcommands.add_parser(name, help=module.HELP, description=module.HELP)
        module.configure(sub)
        sub.set_defaults(handler=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        return 130
    return code
