"""Field selectors (`?fieldSelector=`), the field values objects are matched on, and the
string form of a workload's selector that /scale reports.

Label selectors are parsed by hvpa.labels, shared with the controller, so the
server and its client agree on what a selector selects. Field selectors are an
API server concern only: each resource supports a fixed set of field labels
and rejects the rest with 400, as the real server does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hvpa.labels import LabelSelector, SelectorError
from hvpa.sim.apiserver.errors import BadRequest
from hvpa.sim.apiserver.resources import ResourceType

__all__ = [
    "FieldSelector",
    "field_values",
    "parse_label_selector",
    "selector_string",
]

_ALWAYS: frozenset[str] = frozenset({"metadata.name", "metadata.namespace"})


@dataclass(frozen=True, slots=True)
class FieldSelector:
    """A conjunction of `field=value` / `field!=value` terms."""

    terms: tuple[tuple[str, bool, str], ...] = ()  # (field, equals, value)

    @property
    def empty(self) -> bool:
        return not self.terms

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all((fields.get(name, "") == value) is equals for name, equals, value in self.terms)

    @classmethod
    def parse(cls, text: str, rtype: ResourceType) -> FieldSelector:
        """Parse and check every field against what the resource supports (400 otherwise)."""
        terms: list[tuple[str, bool, str]] = []
        for part in _split_unescaped(text, ","):
            if not part:
                continue
            term = _parse_term(part)
            if term is None:
                raise BadRequest(f"invalid selector: '{text}'; can't understand '{part}'")
            name = term[0]
            if name not in _ALWAYS and name not in rtype.field_labels:
                raise BadRequest(
                    f'"{name}" is not a known field selector: only "metadata.name", "metadata.namespace"'
                    if not rtype.field_labels
                    else f"field label not supported: {name}"
                )
            terms.append(term)
        return cls(tuple(terms))


def _split_unescaped(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts]


def _unescape(text: str) -> str:
    out: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)


def _parse_term(part: str) -> tuple[str, bool, str] | None:
    for operator, equals in (("!=", False), ("==", True), ("=", True)):
        index = _find_unescaped(part, operator)
        if index >= 0:
            name = part[:index].strip()
            if not name:
                return None
            return name, equals, _unescape(part[index + len(operator) :].strip())
    return None


def _find_unescaped(text: str, needle: str) -> int:
    index = 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text.startswith(needle, index):
            return index
        index += 1
    return -1


def parse_label_selector(text: str) -> LabelSelector:
    try:
        return LabelSelector.parse(text)
    except SelectorError as error:
        raise BadRequest(str(error)) from error


def field_values(rtype: ResourceType, obj: Mapping[str, Any]) -> dict[str, str]:
    """The values of every field label the resource supports, as the server's GetAttrs gives them."""
    metadata = obj.get("metadata") or {}
    values = {
        "metadata.name": str(metadata.get("name", "")),
        "metadata.namespace": str(metadata.get("namespace", "")),
    }
    for label, parts in rtype.field_paths:
        if label == "source" and rtype.group == "":
            value: Any = (obj.get("source") or {}).get("component", "")
        else:
            value = obj
            for part in parts:
                value = value.get(part) if isinstance(value, dict) else None
        if isinstance(value, bool):
            values[label] = "true" if value else "false"
        else:
            values[label] = "" if value is None else str(value)
    return values


def selector_string(selector: Mapping[str, Any] | None) -> str:
    """metav1.LabelSelector in the string form Scale.status.selector carries; "" when absent or invalid."""
    if not selector:
        return ""
    try:
        return str(LabelSelector.from_dict(selector))
    except SelectorError:
        return ""
