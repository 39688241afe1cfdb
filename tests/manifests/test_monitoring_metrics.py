"""Every metric the alerts, the recording rules and the dashboard read exists in the
controller's /metrics, with the labels they match on: a renamed metric or label fails
here instead of silencing an alert or blanking a panel.

The exposition is the leader's scrape at the end of recorded_run.py's run (two instances
with leader election, every kind of write, an invalid Hvpa: every family has a sample),
plus the process and Python series `hvpa run` also serves from prometheus_client's
default registry. A selector may also name a recording rule of the PrometheusRule, or
`up`, which Prometheus writes itself; and the labels Prometheus adds to every scraped
series (the ServiceMonitor's target labels) may be matched on any metric. Every selector
of a scraped metric names the job, since workqueue_* and rest_client_* are the names of
every Go controller's metrics too.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Final

import pytest
from monitoring_kit import (
    Selector,
    dashboard,
    dashboard_expressions,
    recorded_names,
    rules,
    selectors,
)
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from recorded_run import record_run

# Written by Prometheus for each target, not by the controller.
PROMETHEUS_SERIES: Final = {"up"}
# What Prometheus (through the ServiceMonitor) adds to every series it scrapes.
TARGET_LABELS: Final = frozenset(
    {"job", "instance", "namespace", "pod", "service", "endpoint", "container"}
)
# `hvpa run` serves prometheus_client's default registry: these collectors come with it.
DEFAULT_COLLECTOR_PREFIXES: Final = ("process_", "python_")


def sample_labels(exposition: str) -> dict[str, frozenset[str]]:
    """Each sample name (with _total, _bucket, _count, _sum) -> its label names."""
    labels: dict[str, set[str]] = defaultdict(set)
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            labels[sample.name] |= set(sample.labels)
    return {name: frozenset(names) for name, names in labels.items()}


def exposed() -> dict[str, frozenset[str]]:
    found = sample_labels(record_run().exposition)
    defaults = sample_labels(generate_latest(REGISTRY).decode())
    found.update(
        {
            name: labels
            for name, labels in defaults.items()
            if name.startswith(DEFAULT_COLLECTOR_PREFIXES)
        }
    )
    return found


EXPRESSIONS: Final = [
    pytest.param(rule["expr"], id=f"rule {rule.get('alert') or rule['record']}") for rule in rules()
] + [pytest.param(expr, id=where) for where, expr in dashboard_expressions(dashboard())]


def unknown(selector: Selector, metrics: dict[str, frozenset[str]], recorded: set[str]) -> str:
    """What of the selector the controller does not expose, or ''."""
    if selector.metric in recorded or selector.metric in PROMETHEUS_SERIES:
        return ""
    if selector.metric not in metrics:
        return f"no metric {selector.metric}"
    missing = selector.labels - metrics[selector.metric] - TARGET_LABELS
    if missing:
        return f"{selector.metric} has no label {sorted(missing)}"
    if "job" not in selector.labels:
        return f"{selector.metric} without a job: another controller's series would match"
    return ""


@pytest.fixture(scope="module")
def metrics() -> dict[str, frozenset[str]]:
    return exposed()


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_every_selector_reads_an_exposed_metric(
    expr: str, metrics: dict[str, frozenset[str]]
) -> None:
    found = selectors(expr)
    assert found, "an expression with no metric"
    problems = [unknown(s, metrics, recorded_names()) for s in found]
    assert [p for p in problems if p] == []


def test_the_checker_catches_a_renamed_metric_and_label(metrics: dict[str, frozenset[str]]) -> None:
    """The check above can fail: a name or label one letter off is reported."""
    cases = {
        'hvpa_desired_replica{job="j"}': "no metric hvpa_desired_replica",
        'hvpa_scaling_blocked{job="j", gate="Rollout"}': "has no label ['gate']",
        "hvpa_invalid_spec": "without a job",
    }
    for expr, complaint in cases.items():
        (selector,) = selectors(expr)
        assert complaint in unknown(selector, metrics, recorded_names()), expr


# -- the PromQL reader -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        pytest.param("up", [("up", set())], id="bare"),
        pytest.param(
            'sum by (namespace, name) (rate(a_total{job="j", x=~"1|2"}[5m]))',
            [("a_total", {"job", "x"})],
            id="aggregation-function-range",
        ),
        pytest.param(
            "a / on (job, instance) group_left (pod) b unless ignoring (le) c",
            [("a", set()), ("b", set()), ("c", set())],
            id="vector-matching",
        ),
        pytest.param(
            "sum without (pod) (a) > bool 0 and b offset 5m or c",
            [("a", set()), ("b", set()), ("c", set())],
            id="keywords",
        ),
        pytest.param(
            'histogram_quantile(0.99, sum(rate(a_bucket{by="x"}[$__rate_interval])) by (le))',
            [("a_bucket", {"by"})],
            id="trailing-by-grafana-variable",
        ),
        pytest.param(
            'label_replace(a{b!="c"}, "dst", "$1", "src", "(.*)") - time()',
            [("a", {"b"})],
            id="strings-are-not-metrics",
        ),
        pytest.param(
            'rec:name:max{namespace=~"$namespace"} * on () group_left max(x) [10m:1m]',
            [("rec:name:max", {"namespace"}), ("x", set())],
            id="recorded-name-subquery",
        ),
    ],
)
def test_selectors(expr: str, expected: list[tuple[str, set[str]]]) -> None:
    assert [(s.metric, set(s.labels)) for s in selectors(expr)] == expected
