"""Scenario files through `hvpa recommend`, compared with their expected output.

tests/engine/scenarios/ holds upstream HPA test cases rendered as real
objects (see its generate.py) with upstream's expected results;
tests/engine/scenarios/gardener/ holds Gardener hvpa-controller's test
cases the same way (its own generate.py), with Gardener's expected results
or, where those are a documented Gardener fault, the corrected ones;
examples/scenarios/ holds the worked examples of the design, every one
checked here. An expected file pins a subset of the
output: keys it leaves out may hold anything, a list must have the same
length and match item by item, quantities compare by value (`1000m` is `1`),
and an `error` or `message` matches when the actual text contains it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
import pytest
import yaml

from hvpa.cli import main
from hvpa.quantity import QuantityError, parse

ROOT = Path(__file__).parents[2]
SCENARIOS = Path(__file__).parent / "scenarios"
GARDENER = SCENARIOS / "gardener"
EXAMPLES = ROOT / "examples" / "scenarios"
_TEXT_KEYS = ("error", "message")


def _same_quantity(expected: str, actual: str) -> bool:
    try:
        return parse(expected).value == parse(actual).value
    except QuantityError:
        return False


def mismatches(expected: Any, actual: Any, path: str = "") -> list[str]:
    """Where `actual` departs from the subset `expected` pins down."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        found: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                found.append(f"{path}.{key}: missing")
            elif key in _TEXT_KEYS and isinstance(value, str):
                if value not in str(actual[key]):
                    found.append(f"{path}.{key}: {actual[key]!r} does not contain {value!r}")
            else:
                found.extend(mismatches(value, actual[key], f"{path}.{key}"))
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: expected {len(expected)} items, got {actual!r}"]
        return [
            problem
            for index, (want, got) in enumerate(zip(expected, actual, strict=True))
            for problem in mismatches(want, got, f"{path}[{index}]")
        ]
    if isinstance(expected, str) and isinstance(actual, str) and _same_quantity(expected, actual):
        return []
    if expected != actual or type(expected) is not type(actual):
        return [f"{path}: expected {expected!r}, got {actual!r}"]
    return []


def recommend(paths: list[Path], capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    args = ["recommend"]
    for path in paths:
        args += ["-f", str(path)]
    code = main(args)
    lines = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0, [line for line in lines if "error" in line]
    return lines


def _cases(directory: Path, names: tuple[str, ...] | None = None) -> list[Any]:
    stems = sorted(p.name.removesuffix(".expected.json") for p in directory.glob("*.expected.json"))
    return [
        pytest.param(directory / stem, id=stem) for stem in stems if names is None or stem in names
    ]


def _check(scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "-f", str(scenario.with_suffix(".yaml"))]) == 0
    result = orjson.loads(capsys.readouterr().out)
    expected = json.loads(scenario.with_suffix(".expected.json").read_text())
    assert mismatches(expected, result) == []


@pytest.mark.parametrize("scenario", _cases(SCENARIOS))
def test_upstream_scenario(scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(scenario, capsys)


@pytest.mark.parametrize("scenario", _cases(GARDENER))
def test_gardener_scenario(scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(scenario, capsys)


@pytest.mark.parametrize("scenario", _cases(EXAMPLES))
def test_example(scenario: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check(scenario, capsys)


def test_every_upstream_scenario_in_one_run(capsys: pytest.CaptureFixture[str]) -> None:
    """The directory form: one line per scenario, in name order, each naming its file."""
    lines = recommend([SCENARIOS], capsys)
    expected = sorted(p.name for p in SCENARIOS.glob("*.yaml"))
    assert [Path(line["scenario"]).name for line in lines] == expected


def _generator(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"generate_{path.parent.name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Its dataclasses look their module up by name while they are made.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _files(directory: Path) -> dict[str, bytes]:
    names = (*directory.glob("*.yaml"), *directory.glob("*.expected.json"))
    return {path.name: path.read_bytes() for path in names}


@pytest.mark.parametrize(
    "directory", [pytest.param(SCENARIOS, id="upstream"), pytest.param(GARDENER, id="gardener")]
)
def test_generated_files_are_current(directory: Path, tmp_path: Path) -> None:
    """The committed scenarios and expectations are exactly what their generate.py writes.

    An edited case whose files were not regenerated, a hand edit of a
    generated file, or a file no case writes any more fails here. (The CRD,
    the other generated file, has tests/api/test_hvpa_crd.py.)
    """
    _generator(directory / "generate.py").write_all(tmp_path)
    generated, committed = _files(tmp_path), _files(directory)
    assert sorted(generated) == sorted(committed)
    stale = sorted(name for name in generated if generated[name] != committed[name])
    assert stale == [], f"regenerate with .venv/bin/python {directory / 'generate.py'}"


@pytest.mark.parametrize(
    ("expected", "actual", "problems"),
    [
        pytest.param(
            {"a": "1000m"}, {"a": "1", "b": 2}, 0, id="quantities by value, extra keys free"
        ),
        pytest.param({"a": [1, 2]}, {"a": [1]}, 1, id="lists keep their length"),
        pytest.param(
            {"error": "no pods"}, {"error": "x: no pods returned"}, 0, id="errors by substring"
        ),
        pytest.param({"a": 1}, {"a": True}, 1, id="a boolean is not a number"),
        pytest.param({"a": {"b": 3}}, {"a": {"b": 4}}, 1, id="nested values"),
    ],
)
def test_comparison(expected: Any, actual: Any, problems: int) -> None:
    assert len(mismatches(expected, actual)) == problems


def _decide(scenario: dict[str, Any], path: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    path.write_text(json.dumps(scenario))
    assert main(["recommend", "-f", str(path)]) == 0
    return orjson.loads(capsys.readouterr().out)


def test_scaled_to_zero_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """HPAScaleToZero across decisions: the status one decision writes is the next one's input.

    TestScaleDownCM/scale down to zero object metric with HPAScaleToZero
    enabled takes 5 pods to 0 (ScaledToZero=True); with
    that status and the metric back at 40 against a target of 20, the next
    decision brings the target back (ceil(40 / 20) = 2 from zero) and sets
    ScaledToZero=False. The same target at zero without hvpa's status is
    left alone (ScalingDisabled).
    """
    down = yaml.safe_load((SCENARIOS / "scale-down-to-zero-cm-object.yaml").read_text())
    first = _decide(down, tmp_path / "down.json", capsys)
    assert first["replicas"] == {"current": 5, "desired": 0}
    assert _condition(first, "ScaledToZero") == ("True", "ScaledToZero")

    up = dict(down, pods=[])
    up["hvpa"] = dict(down["hvpa"], status=first["status"])
    up["target"]["spec"]["replicas"] = 0
    up["target"]["status"]["replicas"] = 0
    up["customMetrics"][0]["value"] = "40"
    second = _decide(up, tmp_path / "up.json", capsys)
    assert second["replicas"] == {"current": 0, "desired": 2}
    assert _condition(second, "ScaledToZero") == ("False", "NotScaledToZero")

    up["hvpa"] = dict(down["hvpa"])
    stranger = _decide(up, tmp_path / "stranger.json", capsys)
    assert stranger["replicas"] == {"current": 0, "desired": 0}
    assert _condition(stranger, "ScalingActive") == ("False", "ScalingDisabled")


def _condition(output: dict[str, Any], kind: str) -> tuple[str, str]:
    found = next(c for c in output["conditions"] if c["type"] == kind)
    return found["status"], found["reason"]
