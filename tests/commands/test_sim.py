"""`hvpa sim`'s output directory: one that cannot be created is refused before anything is
simulated (exit 2), a report that cannot be written after the run is one line and exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from hvpa.cli import main
from hvpa.commands import BAD_INPUT, FAILED


def test_an_output_directory_that_cannot_be_created_is_refused_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert main(["sim", "--duration", "1h", "-o", str(blocker / "out")]) == BAD_INPUT
    captured = capsys.readouterr()
    assert captured.err == (
        f"hvpa sim: cannot create the output directory {blocker / 'out'}: Not a directory\n"
    )
    assert captured.out == ""  # refused before the run's header line


def test_a_report_that_cannot_be_written_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "report.json").mkdir()  # the run's report cannot take its place
    assert main(["sim", "--duration", "2m", "--no-plot", "-o", str(tmp_path)]) == FAILED
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == f"hvpa sim: Is a directory: {tmp_path / 'report.json'}"
