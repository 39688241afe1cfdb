"""manifests/monitoring/prometheusrule.yaml, offline.

- Valid for the Prometheus Operator (models generated from its CRDs), and its groups
  pass `promtool check rules`.
- The unit tests in promtool/ (one file per alert, recording_rules.yaml for the
  recording rules) pass `promtool test rules`, and between them see every alert both
  fire and stay quiet, and check every recording rule.
- Every alert has a severity, a summary and a description, and a runbook_url at the
  section of docs/monitoring.md that says what it means, why its threshold and `for:`,
  how to check and what to do; an alert about one Hvpa names it in its summary.
- The label values the rules match are the names the controller uses: the gates and
  condition reasons of the engine, the controller and queue name, and the job the
  ServiceMonitor gives (the Service's name); the ServiceMonitor keeps the scraped
  `namespace` (honorLabels), which the per-Hvpa rules group by.

That the metrics the rules read exist is test_monitoring_metrics.py's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from manifest_kit import find, install_objects
from monitoring_kit import (
    PROMTOOL_TESTS,
    RULES_NAME,
    RUNBOOKS,
    alerts,
    prometheus_rule,
    recorded_names,
    rule_groups,
)

from hvpa.engine.conditions import (
    ABLE_TO_SCALE,
    SCALING_ACTIVE,
    SCALING_LIMITED,
    VERTICAL_SCALING_ACTIVE,
)
from hvpa.engine.horizontal.behavior import TOO_MANY_REPLICAS
from hvpa.engine.strategies.plan import REASONS
from hvpa.settings import ControllerSettings

SEVERITIES: Final = ("critical", "warning", "info")
UNIT_TESTS: Final = sorted(PROMTOOL_TESTS.glob("*.yaml"))
ALERT_NAMES: Final = [alert["alert"] for alert in alerts()]


def write_rules(directory: Path) -> Path:
    """The PrometheusRule's groups as a plain Prometheus rule file."""
    path = directory / RULES_NAME
    path.write_text(yaml.safe_dump({"groups": rule_groups()}, sort_keys=False))
    return path


def run_promtool(promtool: str, *args: str, cwd: Path) -> tuple[int, str]:
    done = subprocess.run(
        [promtool, *args], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )
    return done.returncode, done.stdout + done.stderr


# -- validity ----------------------------------------------------------------------------


def test_valid_for_the_prometheus_operator() -> None:
    """Against models generated from the operator's CRDs; they ignore unknown fields, so a
    round trip that loses nothing shows there were none."""
    from cloudcoil.models.prometheus_operator.v1 import PrometheusRule

    manifest = prometheus_rule()
    model = PrometheusRule.model_validate(manifest)
    assert model.model_dump(by_alias=True, exclude_unset=True, mode="json") == manifest


def test_promtool_check_rules(promtool: str, tmp_path: Path) -> None:
    write_rules(tmp_path)
    code, output = run_promtool(promtool, "check", "rules", RULES_NAME, cwd=tmp_path)
    assert code == 0, output
    assert f"SUCCESS: {len(alerts()) + len(recorded_names())} rules found" in output


@pytest.mark.parametrize("unit_test", UNIT_TESTS, ids=lambda path: path.stem)
def test_promtool_unit_tests(promtool: str, tmp_path: Path, unit_test: Path) -> None:
    write_rules(tmp_path)
    shutil.copy(unit_test, tmp_path / unit_test.name)
    code, output = run_promtool(promtool, "test", "rules", unit_test.name, cwd=tmp_path)
    assert code == 0, output


# -- what the unit tests cover ------------------------------------------------------------


def unit_test_cases() -> list[tuple[str, dict[str, Any]]]:
    """(file name, test group) of every promtool unit test."""
    return [
        (path.name, group)
        for path in UNIT_TESTS
        for group in yaml.safe_load(path.read_text(encoding="utf-8"))["tests"]
    ]


@pytest.mark.parametrize("alert", ALERT_NAMES)
def test_each_alert_is_seen_firing_and_quiet(alert: str) -> None:
    outcomes = [
        bool(case["exp_alerts"])
        for _, group in unit_test_cases()
        for case in group.get("alert_rule_test", [])
        if case["alertname"] == alert
    ]
    assert True in outcomes, f"no unit test sees {alert} fire"
    assert False in outcomes, f"no unit test sees {alert} stay quiet"


def test_each_alert_has_its_own_unit_test_file() -> None:
    per_alert = {path.stem for path in UNIT_TESTS} - {"recording_rules"}
    assert per_alert == set(ALERT_NAMES)


def test_each_recording_rule_is_checked() -> None:
    checked = {
        case["expr"].strip()
        for _, group in unit_test_cases()
        for case in group.get("promql_expr_test", [])
    }
    assert recorded_names() <= checked


def test_unit_tests_load_the_extracted_rules() -> None:
    for path in UNIT_TESTS:
        assert yaml.safe_load(path.read_text(encoding="utf-8"))["rule_files"] == [RULES_NAME]


# -- labels, annotations, runbooks --------------------------------------------------------

PER_HVPA: Final = re.compile(r"namespace_name:|hvpa_invalid_spec")


@pytest.mark.parametrize("alert", alerts(), ids=lambda rule: rule["alert"])
def test_each_alert_is_labelled_and_explained(alert: dict[str, Any]) -> None:
    assert alert["labels"]["severity"] in SEVERITIES
    annotations = alert["annotations"]
    assert set(annotations) == {"summary", "description", "runbook_url"}
    if PER_HVPA.search(alert["expr"]):
        assert "Hvpa {{ $labels.namespace }}/{{ $labels.name }}" in annotations["summary"]
        assert "{{ $labels.namespace }}/{{ $labels.name }}" in annotations["description"]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading (as tests/docs checks the docs' links)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def runbook_sections() -> dict[str, str]:
    """Anchor -> text of each `###` section of docs/monitoring.md."""
    text = RUNBOOKS.read_text(encoding="utf-8")
    parts = re.split(r"^### (.+)$", text, flags=re.MULTILINE)
    return {
        _slug(heading): body.split("\n## ", 1)[0]
        for heading, body in zip(parts[1::2], parts[2::2], strict=True)
    }


# What each runbook section has, as bold lead-ins.
RUNBOOK_PARTS: Final = ("**Meaning.**", "**Threshold.**", "**Check.**", "**Act.**")


@pytest.mark.parametrize("alert", alerts(), ids=lambda rule: rule["alert"])
def test_each_alert_has_a_runbook(alert: dict[str, Any]) -> None:
    url = alert["annotations"]["runbook_url"]
    anchor = alert["alert"].lower()
    assert url == f"docs/monitoring.md#{anchor}"
    section = runbook_sections().get(anchor)
    assert section is not None, f"docs/monitoring.md has no section ### {alert['alert']}"
    for part in RUNBOOK_PARTS:
        assert part in section, f"{alert['alert']}: no {part}"
    if "for" in alert:
        assert f"`for: {alert['for']}`" in section, "the runbook argues the alert's `for:`"


# -- the names the rules match --------------------------------------------------------------

SERVICE_NAME: Final = find(install_objects(), "Service", "hvpa-metrics")["metadata"]["name"]
CONDITION_REASONS: Final = {TOO_MANY_REPLICAS[0]}
# label -> the values a rule may match it against, from where the controller names them.
KNOWN_VALUES: Final = {
    "job": {SERVICE_NAME},
    "controller": {ControllerSettings().name},
    "name": {ControllerSettings().name},  # the work queue's name
    "reason": set(REASONS) | CONDITION_REASONS,
    "condition": {ABLE_TO_SCALE, SCALING_ACTIVE, SCALING_LIMITED, VERTICAL_SCALING_ACTIVE},
    "status": {"True", "False", "Unknown"},
}
MATCHER: Final = re.compile(r'(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"')


def matched_values() -> list[pytest.ParameterSet]:
    return [
        pytest.param(label, value, id=f"{rule.get('alert') or rule['record']}:{label}={value}")
        for rule in (r for group in rule_groups() for r in group["rules"])
        for label, _, pattern in MATCHER.findall(rule["expr"])
        for value in pattern.split("|")
    ]


@pytest.mark.parametrize(("label", "value"), matched_values())
def test_matched_label_values_are_the_controllers_names(label: str, value: str) -> None:
    assert label in KNOWN_VALUES, f"a rule matches {label}, which this test does not know"
    assert value in KNOWN_VALUES[label]


def test_service_monitor_gives_the_job_and_keeps_the_hvpa_namespace() -> None:
    monitor = find(install_objects(), "ServiceMonitor")
    assert "jobLabel" not in monitor["spec"], "the job label is then the Service's name"
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["honorLabels"] is True
