"""manifests/monitoring/ read for the tests: the PrometheusRule's groups, the dashboard, and the
metric selectors of a PromQL expression.

`selectors` is a small PromQL reader, enough for the expressions written here: it finds
each metric a vector selector names, with the label names its matchers use. String
literals, range and subquery brackets and Grafana's `$variables` are skipped; an
identifier followed by `(` is a function or an aggregation, the parenthesised list after
`by`, `without`, `on`, `ignoring`, `group_left` and `group_right` holds label names, and
the binary operators and modifiers that are words are keywords, never metrics.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from manifest_kit import MANIFESTS, ROOT, documents

MONITORING: Final = MANIFESTS / "monitoring"
RULE_FILE: Final = MONITORING / "prometheusrule.yaml"
SERVICE_MONITOR_FILE: Final = MONITORING / "servicemonitor.yaml"
DASHBOARD_FILE: Final = MONITORING / "dashboards" / "hvpa.json"
RUNBOOKS: Final = ROOT / "docs" / "monitoring.md"
PROMTOOL_TESTS: Final = Path(__file__).parent / "promtool"
# The file name the promtool unit tests load the extracted rule groups from.
RULES_NAME: Final = "rules.yaml"


def prometheus_rule() -> dict[str, Any]:
    (rule,) = documents(RULE_FILE)
    return rule


def rule_groups() -> list[dict[str, Any]]:
    groups: list[dict[str, Any]] = prometheus_rule()["spec"]["groups"]
    return groups


def rules() -> list[dict[str, Any]]:
    return [rule for group in rule_groups() for rule in group["rules"]]


def alerts() -> list[dict[str, Any]]:
    return [rule for rule in rules() if "alert" in rule]


def recorded_names() -> set[str]:
    return {rule["record"] for rule in rules() if "record" in rule}


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD_FILE.read_text(encoding="utf-8"))
    return loaded


def panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, those inside collapsed rows too."""
    for panel in board["panels"]:
        yield panel
        yield from panel.get("panels", [])


def dashboard_expressions(board: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(where, PromQL) of every panel target and every query variable."""
    for panel in panels(board):
        for target in panel.get("targets", []):
            yield f"panel {panel['title']!r} {target.get('refId', '')}", target["expr"]
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            text = query["query"] if isinstance(query, dict) else query
            yield f"variable {variable['name']}", _variable_expression(text)


def _variable_expression(query: str) -> str:
    """The PromQL inside Grafana's label_values(EXPR, label) and query_result(EXPR)."""
    found = re.fullmatch(r"label_values\((.*),\s*\w+\)", query.strip())
    if found:
        return found.group(1)
    found = re.fullmatch(r"query_result\((.*)\)", query.strip())
    return found.group(1) if found else query


# -- PromQL selectors ------------------------------------------------------------------

_KEYWORDS: Final = frozenset(
    {"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2", "start", "end"}
)
_GROUPING: Final = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
_TOKEN: Final = re.compile(
    r"""(?P<string>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`[^`]*`)
      |(?P<variable>\$\{[^}]*\}|\$\w+)
      |(?P<number>\d[\w.]*)
      |(?P<name>[A-Za-z_:][\w:]*)
      |(?P<matcher>=~|!~|!=|=)
      |(?P<punct>[{}()\[\],])
      |(?P<other>\S)""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Selector:
    metric: str
    labels: frozenset[str]


def _tokens(expr: str) -> list[tuple[str, str]]:
    return [
        (found.lastgroup or "", found.group())
        for found in _TOKEN.finditer(expr)
        if found.lastgroup not in ("string", "variable", "number")
    ]


def _skip_brackets(tokens: list[tuple[str, str]], index: int) -> int:
    """The index after the `]` closing the `[` at `index`."""
    while tokens[index][1] != "]":
        index += 1
    return index + 1


def _skip_parenthesised(tokens: list[tuple[str, str]], index: int) -> int:
    """The index after the `)` closing a label list starting at `index` (if one does)."""
    if index < len(tokens) and tokens[index][1] == "(":
        while tokens[index][1] != ")":
            index += 1
        return index + 1
    return index


def _matcher_labels(tokens: list[tuple[str, str]], index: int) -> tuple[frozenset[str], int]:
    """Label names of the matchers in the `{` at `index`, and the index after its `}`."""
    labels: set[str] = set()
    index += 1
    while tokens[index][1] != "}":
        kind, text = tokens[index]
        if kind == "name" and tokens[index + 1][0] == "matcher":
            labels.add(text)
        index += 1
    return frozenset(labels), index + 1


def selectors(expr: str) -> list[Selector]:
    """The vector selectors of a PromQL expression, in order."""
    tokens = _tokens(expr)
    found: list[Selector] = []
    index = 0
    while index < len(tokens):
        kind, text = tokens[index]
        following = tokens[index + 1][1] if index + 1 < len(tokens) else ""
        if text == "[":
            index = _skip_brackets(tokens, index)
        elif text == "{":  # a selector without a metric name
            _, index = _matcher_labels(tokens, index)
        elif kind != "name":
            index += 1
        elif text.lower() in _GROUPING:
            index = _skip_parenthesised(tokens, index + 1)
        elif text.lower() in _KEYWORDS or following == "(" or following in ("by", "without"):
            index += 1  # a keyword, a function, or an aggregation (`sum by (...) (...)`)
        elif following == "{":
            labels, index = _matcher_labels(tokens, index + 1)
            found.append(Selector(text, labels))
        else:
            found.append(Selector(text, frozenset()))
            index += 1
    return found
