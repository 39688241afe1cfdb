"""The `hvpa` command: `run`, `sim`, `recommend`, `explain`, `validate`, `version`.

Each subcommand imports what it needs only when it runs, so `hvpa recommend`
and `hvpa validate` start without loading a Kubernetes client.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from hvpa import __version__

__all__ = ["main"]

Command = Callable[[argparse.Namespace], int]


def _version(_: argparse.Namespace) -> int:
    sys.stdout.write(f"hvpa {__version__}\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hvpa",
        description="Scale a workload horizontally and vertically in tandem, from one decision.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    version = commands.add_parser("version", help="print the version")
    version.set_defaults(handler=_version)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command = args.handler
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
