"""manifests/monitoring/dashboards/hvpa.json, offline: it parses as a Grafana dashboard an
import can take (uid, title, schema version, panels placed on the 24-column grid with
unique ids), every data source it names is the `datasource` variable (nothing of the
author's Grafana), every panel has queries that parse as PromQL (`promtool check rules` on
them as recording rules, Grafana's variables filled in), and every variable it uses is
defined.

That the metrics and recording rules its queries read exist is
test_monitoring_metrics.py's."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import pytest
import yaml
from monitoring_kit import dashboard, dashboard_expressions, panels

BOARD: Final = dashboard()
VARIABLE_DATASOURCE: Final = {"type": "prometheus", "uid": "${datasource}"}
# Grafana's own: the query's step and the chosen time range.
GRAFANA_VARIABLES: Final = {"__rate_interval", "__interval", "__range"}


def datasources(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(path, value) of every `datasource` key anywhere in the dashboard."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "datasource":
                yield f"{path}.{key}", value
            yield from datasources(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from datasources(item, f"{path}[{index}]")


def test_importable() -> None:
    assert BOARD["uid"] == "hvpa"
    assert BOARD["title"]
    assert isinstance(BOARD["schemaVersion"], int)
    assert "id" not in BOARD, "an id is the author's Grafana's; an import assigns one"
    assert "__inputs" not in BOARD, "the data source is a variable, not an import input"


def test_every_data_source_is_the_variable() -> None:
    (variable,) = [v for v in BOARD["templating"]["list"] if v["type"] == "datasource"]
    assert (variable["name"], variable["query"]) == ("datasource", "prometheus")
    found = list(datasources(BOARD))
    assert found, "the panels name their data source"
    assert [(path, value) for path, value in found if value != VARIABLE_DATASOURCE] == []


def test_panels_are_placed_with_unique_ids() -> None:
    ids = [panel["id"] for panel in panels(BOARD)]
    assert len(ids) == len(set(ids))
    for panel in panels(BOARD):
        place = panel["gridPos"]
        assert place["x"] >= 0 and place["w"] > 0 and place["x"] + place["w"] <= 24, panel["title"]
        assert place["h"] > 0 and place["y"] >= 0, panel["title"]


@pytest.mark.parametrize(
    "panel", [p for p in panels(BOARD) if p["type"] != "row"], ids=lambda p: p["title"]
)
def test_every_panel_queries(panel: dict[str, Any]) -> None:
    targets = panel["targets"]
    assert targets and all(target["expr"].strip() for target in targets)
    ref_ids = [target["refId"] for target in targets]
    assert len(ref_ids) == len(set(ref_ids))
    assert panel.get("description"), "a panel says what it shows and which alert it backs"


def test_every_variable_used_is_defined() -> None:
    defined = {variable["name"] for variable in BOARD["templating"]["list"]}
    text = str(BOARD)
    used = set(re.findall(r"\$\{?(\w+)", text))
    assert used - GRAFANA_VARIABLES <= defined


def filled_in(expr: str) -> str:
    """The query as Grafana sends it: its step for `$__rate_interval`, a value for the rest."""
    expr = re.sub(r"\$__(rate_)?interval\b", "1m", expr)
    return re.sub(r"\$\{?\w+\}?", "x", expr)


def test_every_query_parses(promtool: str, tmp_path: Path) -> None:
    queries = [filled_in(expr) for _, expr in dashboard_expressions(BOARD)]
    rules = [
        {"record": f"dashboard:query_{index}:check", "expr": q} for index, q in enumerate(queries)
    ]
    (tmp_path / "queries.yaml").write_text(
        yaml.safe_dump({"groups": [{"name": "q", "rules": rules}]})
    )
    done = subprocess.run(
        [promtool, "check", "rules", "queries.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
