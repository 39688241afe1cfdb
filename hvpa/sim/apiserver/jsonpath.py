"""The JSONPath of CRD printer columns, as client-go's jsonpath package reads `{PATH}`.

Printer columns name a value with a path such as `.spec.replicas`,
`.status.conditions[0].type`, `.metadata.labels.app\\.kubernetes\\.io/name`,
`.items[*].name` or `.status.conditions[?(@.type=="Ready")].status`; the
column shows the first value found (nothing when there is none). Supported:
fields (with `\\.` escapes and `['quoted']` names), indexes (negative from
the end), slices `[a:b]`, `[*]`, `..name` (recursive descent), and filters
comparing a relative path with a string or a number (==, !=, <, <=, >, >=)
or testing that it exists. A path this reader cannot parse raises
JsonPathError; the CRD's columns are parsed when the CRD is served.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["JsonPath", "JsonPathError"]

_FILTER_RE: Final = re.compile(
    r"""^\?\(\s*@((?:\.[^\s=!<>]+)*)\s*(?:(==|!=|<=|>=|<|>)\s*('[^']*'|"[^"]*"|-?[0-9.]+))?\s*\)$"""
)
_SLICE_RE: Final = re.compile(r"^(-?\d*):(-?\d*)$")


class JsonPathError(ValueError):
    """A path client-go's jsonpath would refuse, or one this subset does not read."""


@dataclass(frozen=True, slots=True)
class _Step:
    kind: str  # field | recursive | index | slice | all | filter
    name: str = ""
    index: int = 0
    stop: int | None = None
    operator: str = ""
    operand: Any = None
    relative: tuple[str, ...] = ()


class JsonPath:
    def __init__(self, text: str) -> None:
        self.text = text
        body = text.strip()
        if body.startswith("{") and body.endswith("}"):
            body = body[1:-1].strip()
        self._steps = _parse(body)

    def values(self, document: Any) -> list[Any]:
        """Every value the path finds, in document order."""
        found = [document]
        for step in self._steps:
            found = [value for item in found for value in _apply(step, item)]
        return found

    def first(self, document: Any) -> Any:
        """The first value found, or None."""
        found = self.values(document)
        return found[0] if found else None


def _parse(body: str) -> list[_Step]:
    if body in ("", ".", "$", "$."):
        return []
    if body.startswith("$"):
        body = body[1:]
    if not body.startswith((".", "[")):
        raise JsonPathError(f"unrecognized JSONPath {body!r}: it must start with .")
    steps: list[_Step] = []
    position = 0
    while position < len(body):
        char = body[position]
        if body.startswith("..", position):
            name, position = _read_name(body, position + 2)
            steps.append(_Step("recursive", name=name))
        elif char == ".":
            name, position = _read_name(body, position + 1)
            if name == "*":
                steps.append(_Step("all"))
            elif name:
                steps.append(_Step("field", name=name))
        elif char == "[":
            end = _closing_bracket(body, position)
            steps.append(_bracket(body[position + 1 : end].strip()))
            position = end + 1
        else:
            raise JsonPathError(f"unexpected {char!r} at {position} in {body!r}")
    return steps


def _read_name(body: str, position: int) -> tuple[str, int]:
    name: list[str] = []
    while position < len(body) and body[position] not in ".[":
        if body[position] == "\\" and position + 1 < len(body):
            position += 1
        name.append(body[position])
        position += 1
    return "".join(name), position


def _closing_bracket(body: str, start: int) -> int:
    depth, quote = 0, ""
    for position in range(start, len(body)):
        char = body[position]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return position
    raise JsonPathError(f"unclosed [ in {body!r}")


def _bracket(inside: str) -> _Step:
    if inside == "*":
        return _Step("all")
    if len(inside) >= 2 and inside[0] == inside[-1] and inside[0] in "'\"":
        return _Step("field", name=inside[1:-1])
    if re.fullmatch(r"-?\d+", inside):
        return _Step("index", index=int(inside))
    sliced = _SLICE_RE.match(inside)
    if sliced is not None:
        start, stop = sliced.groups()
        return _Step("slice", index=int(start or 0), stop=int(stop) if stop else None)
    matched = _FILTER_RE.match(inside)
    if matched is None:
        raise JsonPathError(f"unsupported JSONPath expression [{inside}]")
    path, operator, literal = matched.groups()
    relative = tuple(p for p in (path or "").split(".") if p)
    operand: Any = None
    if literal is not None:
        operand = literal[1:-1] if literal[0] in "'\"" else float(literal)
    return _Step("filter", operator=operator or "", operand=operand, relative=relative)


def _apply(step: _Step, item: Any) -> Iterator[Any]:
    if step.kind == "field":
        if isinstance(item, dict) and step.name in item:
            yield item[step.name]
    elif step.kind == "recursive":
        yield from _descend(item, step.name)
    elif step.kind == "all":
        if isinstance(item, list):
            yield from item
        elif isinstance(item, dict):
            yield from item.values()
    elif step.kind == "index":
        if isinstance(item, list) and -len(item) <= step.index < len(item):
            yield item[step.index]
    elif step.kind == "slice":
        if isinstance(item, list):
            yield from item[step.index : step.stop]
    elif step.kind == "filter" and isinstance(item, list):
        for element in item:
            if _matches(step, element):
                yield element


def _descend(item: Any, name: str) -> Iterator[Any]:
    if isinstance(item, dict):
        if name in item:
            yield item[name]
        for value in item.values():
            yield from _descend(value, name)
    elif isinstance(item, list):
        for value in item:
            yield from _descend(value, name)


def _matches(step: _Step, element: Any) -> bool:
    value: Any = element
    for part in step.relative:
        if not isinstance(value, dict) or part not in value:
            return False
        value = value[part]
    if not step.operator:
        return True
    operand = step.operand
    if isinstance(operand, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
    elif not isinstance(value, str):
        return False
    if step.operator == "==":
        return bool(value == operand)
    if step.operator == "!=":
        return bool(value != operand)
    comparisons = {"<": value < operand, "<=": value <= operand, ">": value > operand}
    return bool(comparisons.get(step.operator, value >= operand))
