"""`hvpa recommend`: inputs (files, directories, stdin, JSON and YAML), outputs, errors, start-up."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from hvpa.cli import main

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "scenarios" / "hpa-cpu-scale-up.yaml"
VERTICAL = ROOT / "examples" / "scenarios" / "weighted-vertical.yaml"


def example() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(EXAMPLE.read_text())
    return loaded


def write(path: Path, scenario: Any) -> Path:
    path.write_text(yaml.safe_dump(scenario) if path.suffix != ".json" else json.dumps(scenario))
    return path


def test_one_scenario_prints_the_decision(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "-f", str(EXAMPLE)]) == 0
    output = orjson.loads(capsys.readouterr().out)
    assert list(output) == [
        "replicas",
        "containers",
        "horizontal",
        "vertical",
        "blocked",
        "conditions",
        "status",
        "explanation",
    ]
    assert output["replicas"] == {"current": 3, "desired": 5}
    assert output["status"]["history"]["recommendations"][-1]["replicas"] == 5


def test_yaml_output_is_the_json_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["recommend", "-f", str(EXAMPLE)]) == 0
    as_json = orjson.loads(capsys.readouterr().out)
    assert main(["recommend", "-o", "yaml", "-f", str(EXAMPLE)]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == as_json
    # several: one YAML document each, in order, an error among them as in JSON
    bad = write(tmp_path / "bad.yaml", {"hvpa": {}})
    assert main(["recommend", "-o", "yaml", "-f", str(EXAMPLE), "-f", str(bad)]) == 2
    first, second = yaml.safe_load_all(capsys.readouterr().out)
    assert (first["scenario"], first["replicas"]) == (str(EXAMPLE), as_json["replicas"])
    assert second["scenario"] == str(bad) and "error" in second


def test_text_output_is_the_explanation(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "-o", "text", "-f", str(EXAMPLE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Hvpa shop/web at 2026-11-21T12:00:00Z"
    assert lines[-1] == "decision: 3 -> 5 replicas"


def test_text_output_explains_both_axes_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    """The figures and the rules of the vertical axis, in the order they fired."""
    assert main(["recommend", "-o", "text", "-f", str(VERTICAL)]) == 0
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    expected = [
        "container etcd: requests cpu 500m, memory 1G; limits cpu 1, memory 2G",
        "horizontal scaling is off (spec.hpa.deploy is false)",
        "vertical: etcd: VPA target cpu 1, memory 2G (lowerBound cpu 800m, memory 1.8G; "
        "upperBound cpu 1.5, memory 3G)",
        "weight: interval 1 [1..1] vpaWeight 60 contains 1 replica",
        "vertical: etcd cpu: 500m + trunc((1 - 500m) x 60/100) = 800m",
        "gate: vertical up etcd cpu 500m -> 800m passes (step 300m >= minChange 200m)",
        "vertical: etcd cpu: limit 1.6 (ratio 1/500m kept)",
        "vertical: etcd memory: 1.6G rounded up to a whole MiB: 1526Mi",
        "decision: etcd requests cpu 500m, memory 1G -> cpu 800m, memory 1526Mi; "
        "limits cpu 1, memory 2G -> cpu 1.6, memory 3052Mi",
        "decision: keep 1 replica",
    ]
    assert [line for line in lines if line in expected] == expected


def test_other_autoscalers_in_the_scenario_hold_what_they_drive(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = example()
    scenario["autoscalers"] = [
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
            },
        }
    ]
    assert main(["recommend", "-f", str(write(tmp_path / "s.yaml", scenario))]) == 0
    output = orjson.loads(capsys.readouterr().out)
    assert output["replicas"] == {"current": 3, "desired": 3}
    assert [(b["axis"], b["reason"]) for b in output["blocked"]] == [
        ("horizontal", "ConflictingAutoscaler")
    ]
    able = next(c for c in output["conditions"] if c["type"] == "AbleToScale")
    assert (able["status"], able["reason"]) == ("False", "ConflictingAutoscaler")
    assert "HorizontalPodAutoscaler shop/web" in able["message"]


@pytest.mark.parametrize("suffix", [".json", ".yaml", ".yml"])
def test_json_and_yaml_files(
    tmp_path: Path, suffix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / f"scenario{suffix}", example())
    assert main(["recommend", "-f", str(path)]) == 0
    assert orjson.loads(capsys.readouterr().out)["replicas"]["desired"] == 5


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(json.dumps(example()), id="JSON"),
        pytest.param(yaml.safe_dump(example()), id="YAML"),
    ],
)
def test_stdin(
    text: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    assert main(["recommend", "-f", "-"]) == 0
    assert orjson.loads(capsys.readouterr().out)["replicas"]["desired"] == 5


def test_several_scenarios_print_one_line_each_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slower = example()
    slower["hvpa"]["spec"]["hpa"]["template"]["spec"]["metrics"][0]["resource"]["target"][
        "averageUtilization"
    ] = 50
    second = write(tmp_path / "b.yaml", slower)
    first = write(tmp_path / "a.json", example())
    assert main(["recommend", "-f", str(second), "-f", str(first)]) == 0
    lines = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["scenario"], line["replicas"]["desired"]) for line in lines] == [
        (str(second), 3),
        (str(first), 5),
    ]


def test_a_directory_runs_its_scenarios_sorted_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("c.yml", "a.yaml", "b.json"):
        write(tmp_path / name, example())
    (tmp_path / "a.expected.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("not a scenario")
    assert main(["recommend", "-f", str(tmp_path)]) == 0
    lines = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [Path(line["scenario"]).name for line in lines] == ["a.yaml", "b.json", "c.yml"]


def _broken(change: str) -> Any:
    scenario = example()
    if change == "unknown key":
        scenario["expected"] = {}
    elif change == "no hvpa":
        del scenario["hvpa"]
    elif change == "no target":
        del scenario["target"]
    elif change == "bad quantity":
        scenario["pods"][0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    elif change == "bad time":
        scenario["now"] = "yesterday"
    elif change == "invalid hvpa":
        scenario["hvpa"]["spec"]["hpa"]["template"]["spec"]["maxReplicas"] = 0
    elif change == "unknown setting":
        scenario["settings"] = {"tolerence": 0.2}
    elif change == "bad duration":
        scenario["settings"] = {"cpuInitializationPeriod": "soon"}
    elif change == "negative duration":
        scenario["settings"] = {"initialReadinessDelay": "-30s"}
    elif change == "shrinking limit factor":
        scenario["settings"] = {"scaleUpLimitFactor": 0.5}
    elif change == "target mismatch":
        scenario["target"]["metadata"]["name"] = "api"
    elif change == "not a list":
        scenario["pods"] = {"name": "web-0"}
    elif change == "bad metric value":
        scenario["externalMetrics"] = [{"metricName": "qps", "value": "many"}]
    elif change == "bad autoscaler":
        scenario["autoscalers"] = [{"kind": "HorizontalPodAutoscaler", "metadata": {"name": 3}}]
    elif change == "autoscaler of another kind":
        scenario["autoscalers"] = [{"kind": "Deployment", "metadata": {"name": "web"}}]
    elif change == "negative request":
        scenario["pods"][0]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "-1"
    elif change == "negative limit":
        scenario["target"]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"][
            "memory"
        ] = "-1Gi"
    elif change == "negative replicas":
        scenario["target"]["spec"]["replicas"] = -2
    return scenario


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param("unknown key", "unknown key expected", id="unknown key"),
        pytest.param("no hvpa", "hvpa: required", id="no hvpa"),
        pytest.param("no target", "target: required", id="no target"),
        pytest.param("bad quantity", "'lots' is not a quantity", id="bad quantity"),
        pytest.param("bad time", "now: 'yesterday' is not an RFC 3339 time", id="bad time"),
        pytest.param("invalid hvpa", "hvpa: spec.hpa.template.spec.maxReplicas", id="invalid Hvpa"),
        pytest.param(
            "unknown setting", "settings.tolerence: unknown setting", id="unknown setting"
        ),
        pytest.param("bad duration", "settings.cpuInitializationPeriod", id="bad duration"),
        pytest.param(
            "negative duration",
            "settings.initialReadinessDelay: must not be negative",
            id="negative duration",
        ),
        pytest.param(
            "shrinking limit factor",
            "settings.scaleUpLimitFactor: must be at least 1",
            id="scale-up limit factor below 1",
        ),
        pytest.param("target mismatch", "does not match hvpa spec.targetRef", id="target mismatch"),
        pytest.param("not a list", "pods: must be a list of objects", id="not a list"),
        pytest.param("bad metric value", "externalMetrics[0].value", id="bad metric value"),
        pytest.param("bad autoscaler", "autoscalers[0]", id="bad autoscaler"),
        pytest.param(
            "autoscaler of another kind",
            "autoscalers[0] (web): kind 'Deployment' is not HorizontalPodAutoscaler or "
            "VerticalPodAutoscaler",
            id="autoscaler of another kind",
        ),
        pytest.param(
            "negative request",
            "pod web-0 container app: resources.requests must not be negative",
            id="negative request",
        ),
        pytest.param(
            "negative limit",
            "target (Deployment web) container app: resources.limits must not be negative",
            id="negative limit",
        ),
        pytest.param(
            "negative replicas",
            "target (Deployment web): spec.replicas must not be negative",
            id="negative replicas",
        ),
    ],
)
def test_a_malformed_scenario_is_named_and_exits_2(
    change: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "scenario.yaml", _broken(change))
    assert main(["recommend", "-f", str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"hvpa recommend: {path}: ")
    assert message in captured.err
    assert "Traceback" not in captured.err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("hvpa: [unclosed", "not valid YAML", id="invalid YAML"),
        pytest.param("- just\n- a list\n", "a scenario must be an object", id="not an object"),
    ],
)
def test_unreadable_documents(
    content: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "scenario.yaml"
    path.write_text(content)
    assert main(["recommend", "-f", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "-f", str(tmp_path / "nowhere.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_one_bad_scenario_among_several(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path / "a.yaml", example())
    bad = write(tmp_path / "b.yaml", _broken("bad time"))
    also_good = write(tmp_path / "c.yaml", copy.deepcopy(example()))
    assert main(["recommend", "-f", str(tmp_path)]) == 2
    lines = [orjson.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["scenario"] for line in lines] == [str(good), str(bad), str(also_good)]
    assert "replicas" in lines[0] and "replicas" in lines[2]
    assert lines[1]["error"].startswith(f"{bad}: now:")


def test_settings_change_the_decision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = example()
    scenario["settings"] = {"tolerance": 0.7}
    assert main(["recommend", "-f", str(write(tmp_path / "s.yaml", scenario))]) == 0
    assert orjson.loads(capsys.readouterr().out)["replicas"]["desired"] == 3


def test_starts_without_a_kubernetes_client() -> None:
    """`hvpa recommend` must start fast: it never imports kubernetes_asyncio or aiohttp."""
    code = (
        "import sys\n"
        "from hvpa.cli import main\n"
        f"main(['recommend', '-o', 'text', '-f', {str(EXAMPLE)!r}])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('kubernetes_asyncio', 'aiohttp'))\n"
        "print('IMPORTED', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert out.splitlines()[-1] == "IMPORTED []"


def test_huge_usage_over_one_byte_requests_never_scales_down(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Memory usage of 1e30 bytes against requests of one byte (memory "1"): issue 14, item 3.

    The utilization, 1e32 %, does not fit an int32; Go's conversion would
    wrap it (possibly negative, read as a scale-down to minReplicas). hvpa
    saturates it, so the count goes up (to the scale-up limit, max(2 x 3,
    4) = 6) and ScalingActive stays True.
    """
    scenario = example()
    metric = scenario["hvpa"]["spec"]["hpa"]["template"]["spec"]["metrics"][0]
    metric["resource"] = {
        "name": "memory",
        "target": {"type": "Utilization", "averageUtilization": 80},
    }
    for obj in (
        scenario["target"]["spec"]["template"]["spec"],
        *(p["spec"] for p in scenario["pods"]),
    ):
        obj["containers"][0]["resources"] = {"requests": {"cpu": "1", "memory": "1"}}
    for item in scenario["podMetrics"]:
        item["containers"][0]["usage"]["memory"] = "1e30"
    assert main(["recommend", "-f", str(write(tmp_path / "huge.yaml", scenario))]) == 0
    output = orjson.loads(capsys.readouterr().out)
    assert output["replicas"] == {"current": 3, "desired": 6}
    assert output["horizontal"]["metrics"][0]["currentUtilization"] == 2**31 - 1
    active = next(c for c in output["conditions"] if c["type"] == "ScalingActive")
    assert (active["status"], active["reason"]) == ("True", "ValidMetricFound")
