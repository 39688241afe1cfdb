"""`hvpa version`."""

from __future__ import annotations

import argparse
import sys

from hvpa import __version__
from hvpa.commands import OK

HELP = "print the version"


def configure(parser: argparse.ArgumentParser) -> None:
    del parser


def run(args: argparse.Namespace) -> int:
    del args
    sys.stdout.write(f"hvpa {__version__}\n")
    return OK
