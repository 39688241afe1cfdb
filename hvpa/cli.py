"""The `hvpa` command line: one subcommand per module in `hvpa.commands`.

`main` owns what every command shares: an interrupt exits 130, and a closed
output pipe (`hvpa recommend -f dir/ | head -1`) ends the command quietly
with 141, as a tool ended by SIGPIPE would, instead of a BrokenPipeError
traceback (Python ignores SIGPIPE, so the write raises instead).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Final

from hvpa import __version__
from hvpa.commands import INTERRUPTED, PIPE_CLOSED

__all__ = ["main"]

# Subcommands in the order `hvpa --help` lists them: name -> module in hvpa.commands.
COMMANDS: Final = {
    "run": "run",
    "explain": "explain",
    "recommend": "recommend",
    "sim": "sim",
    "validate": "validate",
    "version": "version",
    "completion": "completion",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hvpa",
        description="Scale a workload horizontally and vertically in tandem, from one decision.",
    )
    parser.add_argument(
        "--version", action="version", version=f"hvpa {__version__}", help="print the version"
    )
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(f"hvpa.commands.{module_name}")
        sub = subcommands.add_parser(name, help=module.HELP, description=module.HELP)
        module.configure(sub)
        sub.set_defaults(handler=module.run)
    # `hvpa completion` writes its script from the whole parser it belongs to.
    subcommands.choices["completion"].set_defaults(parser=parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _dispatch(argv)
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        _discard_output()
        return PIPE_CLOSED


def _dispatch(argv: Sequence[str] | None) -> int:
    """Parse and run; stdout is flushed here, so a pipe closed by then fails this flush and
    not the interpreter's at exit (which prints "Exception ignored ..." and exits 120)."""
    try:
        args = build_parser().parse_args(argv)
    finally:
        sys.stdout.flush()  # the --help text, before argparse's SystemExit leaves
    code: int = args.handler(args)
    sys.stdout.flush()
    return code


def _discard_output() -> None:
    """Point stdout at /dev/null, so what is still buffered for the closed pipe is dropped at
    exit instead of failing again (Python's documented recipe for SIGPIPE). A stdout without
    a file descriptor (a test's capture) needs nothing."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)
