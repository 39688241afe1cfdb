"""`hvpa recommend` on quantities it cannot read (issue 14, item 4): each scenario holding one
(a pod's request, a PodMetrics usage, an External metric, a VPA target of 1e51, 400 nines,
an exponent past int32) is an error line naming the field, the others in the directory are
still decided, and the exit code is 2 at the end; alone, it is one line on stderr."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from hvpa.cli import main
from hvpa.commands import BAD_INPUT

ROOT = Path(__file__).parents[2]
EXAMPLE = yaml.safe_load((ROOT / "examples/scenarios/hpa-cpu-scale-up.yaml").read_text())
EXTERNAL = yaml.safe_load(
    (ROOT / "tests/engine/scenarios/calc-configurable-tolerance-cm-external.yaml").read_text()
)
VERTICAL = yaml.safe_load((ROOT / "examples/scenarios/weighted-vertical.yaml").read_text())


def with_value(base: dict[str, Any], path: tuple[str | int, ...], value: str) -> dict[str, Any]:
    scenario = copy.deepcopy(base)
    node: Any = scenario
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    return scenario


REQUEST = ("pods", 0, "spec", "containers", 0, "resources", "requests", "cpu")
USAGE = ("podMetrics", 0, "containers", 0, "usage", "cpu")
EXTERNAL_VALUE = ("externalMetrics", 0, "value")
VPA_TARGET = ("vpa", "status", "recommendation", "containerRecommendations", 0, "target", "cpu")
POD_CPU = "Pod shop/web-0 spec.containers[app].resources.requests.cpu"
VPA_CPU = (
    "VerticalPodAutoscaler shoot--dev/etcd-vpa "
    "status.recommendation.containerRecommendations[etcd].target.cpu"
)
CASES = [
    pytest.param(EXAMPLE, REQUEST, "1e51", POD_CPU, id="pod-request"),
    pytest.param(EXAMPLE, USAGE, "9" * 400, "podMetrics[0]", id="pod-usage"),
    pytest.param(EXTERNAL, EXTERNAL_VALUE, "1e400", "externalMetrics[0].value", id="external"),
    pytest.param(VERTICAL, VPA_TARGET, "1e51", VPA_CPU, id="vpa-target"),
    pytest.param(EXAMPLE, REQUEST, "1e2147483648", POD_CPU, id="exponent"),
]


@pytest.mark.parametrize(("base", "path", "value", "where"), CASES)
def test_one_unreadable_scenario_among_several_is_an_error_line(
    base: dict[str, Any],
    path: tuple[str | int, ...],
    value: str,
    where: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(EXAMPLE))
    bad = tmp_path / "b.yaml"
    bad.write_text(yaml.safe_dump(with_value(base, path, value)))
    (tmp_path / "c.json").write_bytes(orjson.dumps(base))
    assert main(["recommend", "-f", str(tmp_path)]) == BAD_INPUT
    captured = capsys.readouterr()
    lines = [orjson.loads(line) for line in captured.out.splitlines()]
    assert [Path(line["scenario"]).name for line in lines] == ["a.yaml", "b.yaml", "c.json"]
    assert "replicas" in lines[0] and "replicas" in lines[2]
    assert lines[1]["error"].startswith(f"{bad}: {where}")
    assert value[:20] in lines[1]["error"]
    assert captured.err == ""


@pytest.mark.parametrize(("base", "path", "value", "where"), CASES)
def test_alone_it_is_one_line_on_stderr(
    base: dict[str, Any],
    path: tuple[str | int, ...],
    value: str,
    where: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = tmp_path / "b.yaml"
    bad.write_text(yaml.safe_dump(with_value(base, path, value)))
    assert main(["recommend", "-f", str(bad)]) == BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"hvpa recommend: {bad}: {where}") and err.count("\n") == 1
