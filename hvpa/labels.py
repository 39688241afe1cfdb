"""Label selectors: the structured form (`matchLabels`, `matchExpressions`) and the string form.

One implementation serves the engine (which pods belong to a target), the
store's indexes, and the in-repo API server's `labelSelector=` parameter, so
all three agree on what a selector selects.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["LabelSelector", "Requirement", "SelectorError"]


class SelectorError(ValueError):
    """A selector that the API server would reject."""


_OPERATORS: Final = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist | Equals | NotEquals | Gt | Lt
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in ("In", "Equals"):
            return self.key in labels and labels[self.key] in self.values
        if op in ("NotIn", "NotEquals"):
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if op in ("Gt", "Lt"):
            if self.key not in labels:
                return False
            try:
                have, bound = int(labels[self.key]), int(self.values[0])
            except ValueError:
                return False
            return have > bound if op == "Gt" else have < bound
        raise SelectorError(f"unknown operator {op!r}")

    def __str__(self) -> str:
        if self.operator == "Equals":
            return f"{self.key}={self.values[0]}"
        if self.operator == "NotEquals":
            return f"{self.key}!={self.values[0]}"
        if self.operator == "Exists":
            return self.key
        if self.operator == "DoesNotExist":
            return f"!{self.key}"
        if self.operator in ("Gt", "Lt"):
            return f"{self.key}{'>' if self.operator == 'Gt' else '<'}{self.values[0]}"
        word = "in" if self.operator == "In" else "notin"
        return f"{self.key} {word} ({','.join(sorted(self.values))})"


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed selector. An empty selector selects everything, as in the API.

    `nothing=True` is the selector that selects nothing (a nil selector on a
    workload), which the API never lets match.
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False
    # (key, values) of each `key=value` and `key in (...)` requirement: a label matched must
    # carry one of the values, so an index by label value narrows the search to them. Made
    # once: the store and the shared PodMetrics read it at every query.
    anchors: tuple[tuple[str, tuple[str, ...]], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        anchors = tuple(
            (r.key, r.values) for r in self.requirements if r.operator in ("In", "Equals")
        )
        object.__setattr__(self, "anchors", anchors)

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(requirement.matches(labels) for requirement in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements and not self.nothing

    def __str__(self) -> str:
        """The string form, requirements sorted by key, as apimachinery's
        `LabelSelectorAsSelector(...).String()` writes it (e.g. a Scale's `status.selector`)."""
        return ",".join(str(r) for r in sorted(self.requirements, key=lambda r: r.key))

    @classmethod
    def from_dict(cls, selector: Mapping[str, Any] | None) -> LabelSelector:
        """From a metav1.LabelSelector as JSON; raise SelectorError naming the bad part."""
        if selector is None:
            return cls(nothing=True)
        requirements: list[Requirement] = []
        match_labels = selector.get("matchLabels") or {}
        if not isinstance(match_labels, Mapping):
            raise SelectorError("matchLabels must be a map of strings")
        for key, value in sorted(match_labels.items()):
            requirements.append(Requirement(str(key), "Equals", (str(value),)))
        for index, expression in enumerate(selector.get("matchExpressions") or []):
            if not isinstance(expression, Mapping):
                raise SelectorError(f"matchExpressions[{index}] must be an object")
            key, operator = expression.get("key"), expression.get("operator")
            values = tuple(str(v) for v in (expression.get("values") or []))
            if not key:
                raise SelectorError(f"matchExpressions[{index}].key: required")
            if operator not in _OPERATORS:
                raise SelectorError(
                    f"matchExpressions[{index}].operator: {operator!r} is not one of {', '.join(_OPERATORS)}"
                )
            if operator in ("In", "NotIn") and not values:
                raise SelectorError(
                    f"matchExpressions[{index}].values: must be non-empty for {operator}"
                )
            if operator in ("Exists", "DoesNotExist") and values:
                raise SelectorError(
                    f"matchExpressions[{index}].values: must be empty for {operator}"
                )
            requirements.append(Requirement(str(key), str(operator), values))
        return cls(tuple(requirements))

    @classmethod
    def parse(cls, text: str) -> LabelSelector:
        """From the string form used in `?labelSelector=` (`a=b,c!=d,e in (x,y),!f`)."""
        requirements = [_parse_requirement(part) for part in _split_top_level(text)]
        return cls(tuple(requirements))


_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_VALUE = r"[-A-Za-z0-9_.]*"
_SET_RE: Final = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s+\(([^)]*)\)\s*$")
_CMP_RE: Final = re.compile(rf"^\s*({_KEY})\s*(==|=|!=|>|<)\s*({_VALUE})\s*$")
_EXISTS_RE: Final = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if current or parts:
        parts.append("".join(current))
    return [p for p in parts if p.strip()] if text.strip() else []


def _parse_requirement(part: str) -> Requirement:
    if match := _SET_RE.match(part):
        values = tuple(v.strip() for v in match[3].split(",") if v.strip())
        return Requirement(match[1], "In" if match[2] == "in" else "NotIn", values)
    if match := _CMP_RE.match(part):
        operator = {"=": "Equals", "==": "Equals", "!=": "NotEquals", ">": "Gt", "<": "Lt"}[
            match[2]
        ]
        return Requirement(match[1], operator, (match[3],))
    if match := _EXISTS_RE.match(part):
        return Requirement(match[2], "DoesNotExist" if match[1] else "Exists")
    raise SelectorError(f"unable to parse requirement: {part.strip()!r}")
