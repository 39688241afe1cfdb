"""README.md and docs/: commands work as written, the CLI reference matches the parsers, links
resolve.

- ```sh blocks of the README and of the docs this module runs (RUN) are run
  line by line with bash from the repository root, `.venv/bin` first on the
  PATH: each must exit 0. They are the offline-safe ones by convention.
- ```shell blocks (and every block of the other docs) need a cluster, Docker
  or a long run: their `hvpa` command lines must parse with hvpa's own
  argument parser, their `kubectl -k/-f` paths and `make` targets must exist.
- The README's CLI reference lists, per command, exactly the flags its parser
  has.
- Relative links point at files that exist, and README anchors at headings.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Final

import pytest

from hvpa.cli import COMMANDS, build_parser

ROOT: Final = Path(__file__).resolve().parents[2]
README: Final = ROOT / "README.md"
# Docs whose sh blocks are run; the others' commands are only parsed.
RUN: Final = (
    README,
    ROOT / "docs" / "migration-from-gardener.md",
    ROOT / "docs" / "cluster-proportional.md",
    ROOT / "docs" / "architecture.md",
)
DOCS: Final = (README, *sorted((ROOT / "docs").glob("*.md")))

FENCE: Final = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(path: Path, language: str | None = None) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [m.group(2) for m in FENCE.finditer(text) if language in (None, m.group(1))]


def command_lines(block: str) -> Iterator[str]:
    """Lines of a shell block, continuation lines joined, comment-only lines dropped."""
    pending = ""
    for raw in block.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        if line.strip() and not line.lstrip().startswith("#"):
            yield line.strip()


def _id(path: Path, line: str) -> str:
    return f"{path.name}: {line.split('#')[0].strip()}"


RUNNABLE: Final = [
    pytest.param(line, id=_id(path, line))
    for path in RUN
    if path.exists()
    for block in blocks(path, "sh")
    for line in command_lines(block)
]


def test_every_doc_we_run_exists() -> None:
    missing = [path.name for path in RUN if not path.exists()]
    assert missing == []


@pytest.mark.parametrize("line", RUNNABLE)
def test_sh_command_works_as_written(line: str) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", line],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"{line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


# -- commands that cannot run here ---------------------------------------------------------


def _pipeline_parts(line: str) -> Iterator[list[str]]:
    words = shlex.split(line, comments=True)
    part: list[str] = []
    redirected = False
    for word in [*words, "|"]:
        if redirected:  # the file after `>`: no argument of the command
            redirected = False
        elif word in (">", ">>"):
            redirected = True
        elif word in ("|", "&&", "&", ";"):
            if part:
                yield part
            part = []
        else:
            part.append(word)


CHECKED: Final = [
    pytest.param(line, id=_id(path, line))
    for path in DOCS
    for block in (blocks(path) if path not in RUN else blocks(path, "shell"))
    for line in command_lines(block)
    if re.match(r"(hvpa|kubectl|make|docker)\b", line)
]


@pytest.mark.parametrize("line", CHECKED)
def test_other_command_is_well_formed(line: str) -> None:
    for words in _pipeline_parts(line):
        program, args = words[0], words[1:]
        if program == "hvpa":
            try:
                parsed = build_parser().parse_args(args)
            except SystemExit:
                pytest.fail(f"hvpa cannot parse: {shlex.join(args)}")
            # argparse also takes an unambiguous prefix (--compar for --compare): the docs
            # must spell every option as --help lists it.
            options = _parser_flags(parsed.command) | {"-h", "--help"}
            written = {word.split("=", 1)[0] for word in args if word.startswith("-")}
            assert written - {"-"} <= options, f"not an option of hvpa {parsed.command}"
        elif program == "make":
            makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
            for target in args:
                assert re.search(rf"^{re.escape(target)}:", makefile, re.MULTILINE), target
        elif program == "kubectl":
            for flag, value in pairwise(args):
                if flag in ("-k", "-f") and value != "-":
                    assert (ROOT / value).exists(), f"{flag} {value}"
        elif program == "docker" and args[:1] == ["build"]:
            assert args[-1] == "." and (ROOT / "Dockerfile").exists()


# -- the CLI reference -----------------------------------------------------------------------


def _reference_sections() -> dict[str, str]:
    text = README.read_text(encoding="utf-8")
    reference = text.split("\n## CLI reference\n", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^### `hvpa (\w+)`\n", reference, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def _documented_flags(section: str) -> set[str]:
    flags: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first_cell = line.split(" | ", 1)[0]
            flags |= set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)", first_cell))
    return flags


def _parser_flags(command: str) -> set[str]:
    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    sub = subparsers.choices[command]
    return {
        option
        for action in sub._actions
        for option in action.option_strings
        if option not in ("-h", "--help")
    }


def test_cli_reference_covers_every_command() -> None:
    assert list(_reference_sections()) == list(COMMANDS)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_cli_reference_lists_exactly_the_flags(command: str) -> None:
    assert _documented_flags(_reference_sections()[command]) == _parser_flags(command)


# -- links -------------------------------------------------------------------------------------

LINK: Final = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_relative_links_resolve(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    broken = []
    for target in LINK.findall(text):
        if re.match(r"\w+://", target) or target.startswith("mailto:"):
            continue
        file, _, anchor = target.partition("#")
        linked = path.parent / file if file else path
        checks_anchor = anchor and linked.suffix == ".md"
        if not linked.exists() or (checks_anchor and anchor not in _anchors(linked)):
            broken.append(target)
    assert broken == []


# -- quoted output ---------------------------------------------------------------------------


@pytest.mark.slow
def test_readme_sim_summary_is_what_make_sim_prints(tmp_path: Path) -> None:
    """The README quotes `hvpa sim`'s summary and draws conclusions from its numbers."""
    (quoted,) = [b for b in blocks(README, "") if b.startswith("hvpa sim: proposal-1")]
    done = subprocess.run(
        [Path(sys.executable).parent / "hvpa", "sim", "--no-plot", "-o", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    summary = done.stdout.split("\nreport: ", 1)[0]
    assert quoted.rstrip("\n") == summary
