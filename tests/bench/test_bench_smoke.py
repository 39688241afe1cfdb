"""The benchmarks run at a tiny size, so they cannot rot: each module's rows have the shape
`python -m bench` prints and bench/results.json keeps. Nothing here is timed or compared;
the figures of a tiny run mean nothing."""

from __future__ import annotations

import importlib
import importlib.util
import json
import math
from pathlib import Path

import pytest

from bench.__main__ import main as bench_main
from bench.harness import Row

MODULES = [
    pytest.param("bench_engine", id="engine"),
    pytest.param("bench_ingest", id="ingest"),
    pytest.param("bench_memory", id="memory", marks=pytest.mark.slow),
    pytest.param("bench_sync", id="sync", marks=pytest.mark.slow),
    pytest.param("bench_controller", id="controller", marks=pytest.mark.slow),
    pytest.param("bench_envelope", id="envelope", marks=pytest.mark.slow),
    pytest.param("bench_kopf", id="kopf", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("module", MODULES)
def test_rows_have_the_table_shape(module: str) -> None:
    if module == "bench_kopf" and importlib.util.find_spec("kopf") is None:
        # kopf comes with the bench extra (make bench), not the dev one: without it the
        # comparison cannot run, and the test says so instead of passing on nothing
        assert importlib.import_module("bench.bench_kopf").run("tiny") == []
        pytest.skip("kopf is not installed: the bench extra (make bench) installs it")
    rows = importlib.import_module(f"bench.{module}").run("tiny")
    assert rows
    names = [row.name for row in rows]
    assert len(set(names)) == len(names)
    for row in rows:
        assert isinstance(row, Row)
        assert row.name and row.unit
        assert math.isfinite(row.value) and row.value >= 0
        if row.reference is None:
            assert row.ratio is None
        else:
            assert row.ratio is not None and math.isfinite(row.ratio) and row.ratio > 0
        assert (row.met is None) == (not row.target)
        assert set(row.as_dict()) == {"value", "unit", "reference", "ratio", "target", "met"}


def test_the_command_prints_the_table_and_writes_results(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import bench.__main__ as command

    monkeypatch.setattr(command, "HERE", tmp_path)
    (tmp_path / "bench_engine.py").touch()
    monkeypatch.setattr(command, "SIZE_OF_QUICK", "tiny")
    assert bench_main(["--quick", "engine"]) == 0
    out = capsys.readouterr().out
    assert "decisions/s" in out and "ratio" in out
    results = json.loads((tmp_path / "results.json").read_text())
    assert results and all(
        set(v) >= {"value", "unit", "reference", "ratio"} for v in results.values()
    )
