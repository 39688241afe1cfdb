"""`hvpa.cli.main`: what every command shares. A closed output pipe ends a command quietly
with 141 (in-process, and for real through a pipe whose reader is gone), an interrupt exits
130, and the exit codes in hvpa.commands are the ones the README's CLI reference lists."""

from __future__ import annotations

import argparse
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hvpa import commands
from hvpa.cli import build_parser, main

ROOT = Path(__file__).parents[2]
SCENARIOS = ROOT / "examples" / "scenarios"


class ClosedPipe(io.StringIO):
    """stdout whose reader went away after `keep` characters (as `head -c` would)."""

    def __init__(self, keep: int = 0) -> None:
        super().__init__()
        self.keep = keep

    def write(self, text: str) -> int:
        if self.tell() + len(text) > self.keep:
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


@pytest.mark.parametrize(
    ("argv", "keep"),
    [
        pytest.param(["version"], 0, id="version"),
        pytest.param(["recommend", "-f", str(SCENARIOS)], 200, id="recommend-directory"),
        pytest.param(["recommend", "-o", "text", "-f", str(SCENARIOS)], 0, id="recommend-text"),
        pytest.param(["validate", "-f", str(ROOT / "manifests" / "examples")], 0, id="validate"),
        pytest.param(["sim", "--list"], 10, id="sim-list"),
    ],
)
def test_a_closed_pipe_ends_the_command_quietly_with_141(
    argv: list[str], keep: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", ClosedPipe(keep))
    assert main(argv) == commands.PIPE_CLOSED == 141
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param(["recommend", "-f", str(SCENARIOS)], id="recommend"),
        pytest.param(["version"], id="version"),
        pytest.param(["--help"], id="help"),
    ],
)
def test_a_real_closed_pipe_leaves_no_message(argv: list[str]) -> None:
    """The reader is gone before the first write: the write or the last flush meets EPIPE.
    Without the handling: a BrokenPipeError traceback, or "Exception ignored ...
    BrokenPipeError" from the interpreter's own last flush and exit 120."""
    # Buffered as a user's shell runs it: PYTHONUNBUFFERED would write through at once and
    # hide a failure of the interpreter's last flush.
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    process = subprocess.Popen(
        [sys.executable, "-m", "hvpa", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()
    stderr = process.stderr.read()
    assert process.wait(timeout=60) == commands.PIPE_CLOSED
    assert stderr == b""


def test_an_interrupt_exits_130(monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr("hvpa.commands.version.run", interrupted)
    assert main(["version"]) == commands.INTERRUPTED == 130


def test_the_readme_lists_the_exit_codes() -> None:
    """The CLI reference's exit-code table and hvpa.commands agree, code by code."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    reference = text.split("\n## CLI reference\n", 1)[1].split("\n### ", 1)[0]
    documented = {int(code) for code in re.findall(r"^\| `(\d+)` \|", reference, re.MULTILINE)}
    assert documented == set(commands.EXIT_CODES)


def parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """`hvpa` and each of its subcommands' parsers."""
    top = build_parser()
    (subparsers,) = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    return [("hvpa", top), *((f"hvpa {name}", sub) for name, sub in subparsers.choices.items())]


@pytest.mark.parametrize(("command", "parser"), parsers(), ids=[name for name, _ in parsers()])
def test_every_option_says_what_it_does_and_its_default(
    command: str, parser: argparse.ArgumentParser
) -> None:
    """`--help` describes every flag and argument, and every flag that takes a value says
    what it is when not given (its default, or that it is required)."""
    lacking = []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        text = (action.help or "").lower()
        takes_a_value = bool(action.option_strings) and action.nargs != 0
        if not text or (takes_a_value and "default" not in text and not action.required):
            lacking.append("/".join(action.option_strings) or action.dest)
    assert lacking == [], f"{command}: {lacking}"
