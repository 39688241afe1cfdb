"""`hvpa version` and the command line's entry points."""

import subprocess
import sys

import pytest

from hvpa import __version__
from hvpa.cli import main


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    assert capsys.readouterr().out == f"hvpa {__version__}\n"


def test_python_dash_m() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "hvpa", "version"], check=True, capture_output=True, text=True
    )
    assert out.stdout.strip() == f"hvpa {__version__}"


def test_unknown_command_exits_2() -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["frobnicate"])
    assert exit_info.value.code == 2


def test_dash_dash_version(capsys: pytest.CaptureFixture[str]) -> None:
    """As every command-line tool answers it (exit 0, the version on stdout)."""
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"hvpa {__version__}\n"
