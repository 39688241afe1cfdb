"""Read a raw object (decoded JSON or YAML) into the typed Hvpa, reporting every structural problem.

msgspec's own decoder stops at the first error; this walks the raw object
against the same Struct definitions (through `msgspec.inspect`) and keeps
going: an unknown field, a wrong type, a value out of bounds or a missing
required field is reported with its path, the bad value is dropped (or, when
required, replaced by a placeholder so the walk can go on), and the rest is
still read. `hvpa.api.crd` renders the CRD schema from the same definitions.

Kubernetes conventions it follows: a null value is the same as an absent
field; a quantity is a string or an integer (the CRD's int-or-string), never a
float, because the API server would refuse a float there.
"""

from __future__ import annotations

import difflib
import operator
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from functools import cache
from typing import Any, Final

import msgspec
import msgspec.inspect as mi

from hvpa.api.base import DEFAULT_MAX_ITEMS, DEFAULT_MAX_LENGTH, DEFAULT_MAX_PROPERTIES
from hvpa.api.problems import Findings, show
from hvpa.quantity import is_quantity

__all__ = [
    "Normaliser",
    "Walk",
    "is_quantity_type",
    "max_items",
    "max_length",
    "max_properties",
    "struct_info",
    "type_info",
]

Normaliser = Callable[[dict[str, Any], str, "Walk"], dict[str, Any] | None]
"""Rewrites a struct's raw form before it is read (the three-stage form, v2beta1 metrics).

Returns the raw form to read at the same path, or None when nothing usable
is left (its problems are reported).
"""

_INVALID: Final = object()
_OPERATORS: Final = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
# Longer than any quantity the API server stores (apimachinery caps the digits it keeps).
QUANTITY_MAX_LENGTH: Final = 64


@cache
def type_info(tp: Any) -> mi.Type:
    return mi.type_info(tp)


def struct_info(cls: type) -> mi.StructType:
    info = type_info(cls)
    if not isinstance(info, mi.StructType):
        raise TypeError(f"{cls!r} is not a msgspec Struct")
    return info


def max_length(info: mi.StrType) -> int:
    return DEFAULT_MAX_LENGTH if info.max_length is None else info.max_length


def max_items(info: mi.ListType | mi.VarTupleType) -> int:
    return DEFAULT_MAX_ITEMS if info.max_length is None else info.max_length


def max_properties(info: mi.DictType) -> int:
    return DEFAULT_MAX_PROPERTIES if info.max_length is None else info.max_length


def is_quantity_type(types: tuple[mi.Type, ...]) -> bool:
    """`str | int | float` is how the API types spell a quantity (`hvpa.api.autoscaling.Quantity`)."""
    kinds = {type(t) for t in types if not isinstance(t, mi.NoneType)}
    return kinds == {mi.StrType, mi.IntType, mi.FloatType}


class Walk:
    """One read of one raw object; problems go to `findings`."""

    def __init__(self, findings: Findings, normalisers: Mapping[type, Normaliser]) -> None:
        self.findings = findings
        self._normalisers = normalisers

    def read(self, raw: Any, tp: Any, path: str, *, fold_case: bool = False) -> Any:
        """The typed value of `raw`, or a placeholder when it cannot be read (its problems are reported)."""
        info = type_info(tp)
        value = self._value(raw, info, path, fold_case)
        return _placeholder(info) if value is _INVALID else value

    def _bad(self, path: str, message: str) -> object:
        self.findings.structural(path, message)
        return _INVALID

    def _value(self, raw: Any, info: mi.Type, path: str, fold: bool) -> Any:
        description = ""
        if isinstance(info, mi.Metadata):
            description = (info.extra_json_schema or {}).get("description", "")
            info = info.type
        if isinstance(info, mi.AnyType):
            return raw
        if isinstance(info, mi.UnionType):
            return self._union(raw, info, path, fold)
        if isinstance(info, mi.StructType):
            return self._struct(raw, info, path, fold)
        if isinstance(info, mi.ListType | mi.VarTupleType):
            return self._sequence(raw, info, path, fold)
        if isinstance(info, mi.TupleType):
            if not isinstance(raw, list) or len(raw) != len(info.item_types):
                return self._bad(
                    path, f"must be a list of {len(info.item_types)} items (got {show(raw)})"
                )
            items = [
                self._value(r, t, f"{path}[{i}]", fold)
                for i, (r, t) in enumerate(zip(raw, info.item_types, strict=True))
            ]
            return _INVALID if _INVALID in items else tuple(items)
        if isinstance(info, mi.DictType):
            return self._dict(raw, info, path, fold)
        if isinstance(info, mi.LiteralType):
            if raw in info.values and type(raw) is type(info.values[0]):
                return raw
            return self._bad(
                path, f"must be one of {', '.join(map(str, info.values))} (got {show(raw)})"
            )
        if isinstance(info, mi.StrType):
            if not isinstance(raw, str):
                return self._bad(path, f"must be a string (got {show(raw)})")
            if info.min_length is not None and len(raw) < info.min_length:
                return self._bad(path, "must not be empty")
            if len(raw) > max_length(info):
                return self._bad(
                    path, f"must be at most {max_length(info)} characters (got {len(raw)})"
                )
            if info.pattern is not None and not _matches(info.pattern, raw):
                wanted = description or f"match {info.pattern}"
                return self._bad(path, f"must be {wanted} (got {show(raw)})")
            return raw
        if isinstance(info, mi.BoolType):
            if isinstance(raw, bool):
                return raw
            return self._bad(path, f"must be true or false (got {show(raw)})")
        if isinstance(info, mi.IntType):
            if isinstance(raw, bool) or not isinstance(raw, int):
                return self._bad(path, f"must be an integer (got {show(raw)})")
            return self._bounded(raw, info, path)
        if isinstance(info, mi.FloatType):
            if isinstance(raw, bool) or not isinstance(raw, int | float):
                return self._bad(path, f"must be a number (got {show(raw)})")
            return self._bounded(raw, info, path)
        if isinstance(info, mi.DateTimeType):
            return self._time(raw, path)
        raise TypeError(f"{path}: no reader for {info!r}")

    def _bounded(self, raw: float, info: mi.IntType | mi.FloatType, path: str) -> object:
        for bound, word in ((info.ge, ">="), (info.gt, ">"), (info.le, "<="), (info.lt, "<")):
            if bound is not None and not _OPERATORS[word](raw, bound):
                return self._bad(path, f"must be {word} {bound} (got {show(raw)})")
        return raw

    def _time(self, raw: Any, path: str) -> object:
        if isinstance(raw, datetime) and raw.tzinfo is not None:
            return raw
        if isinstance(raw, str):
            try:
                return msgspec.convert(raw, datetime)
            except msgspec.ValidationError:
                pass
        return self._bad(
            path,
            f'must be an RFC 3339 time with a zone, e.g. "2024-05-01T10:00:00Z" (got {show(raw)})',
        )

    def _union(self, raw: Any, info: mi.UnionType, path: str, fold: bool) -> Any:
        if raw is None and any(isinstance(t, mi.NoneType) for t in info.types):
            return None
        if is_quantity_type(info.types):
            return self._quantity(raw, path)
        members = [t for t in info.types if not isinstance(t, mi.NoneType)]
        if len(members) == 1:
            return self._value(raw, members[0], path, fold)
        raise TypeError(f"{path}: no reader for {info!r}")

    def _quantity(self, raw: Any, path: str) -> object:
        if isinstance(raw, float):
            return self._bad(
                path,
                f'must be a quantity string or an integer; write "{raw}" in quotes (got {raw})',
            )
        if isinstance(raw, bool) or not isinstance(raw, str | int):
            return self._bad(path, f'must be a quantity such as "250m" or "1Gi" (got {show(raw)})')
        if isinstance(raw, str) and len(raw) > QUANTITY_MAX_LENGTH:
            return self._bad(
                path, f"must be at most {QUANTITY_MAX_LENGTH} characters (got {len(raw)})"
            )
        if not is_quantity(raw):
            return self._bad(path, f'must be a quantity such as "250m" or "1Gi" (got {show(raw)})')
        return raw

    def _sequence(
        self, raw: Any, info: mi.ListType | mi.VarTupleType, path: str, fold: bool
    ) -> object:
        if not isinstance(raw, list):
            return self._bad(path, f"must be a list (got {show(raw)})")
        if info.min_length is not None and len(raw) < info.min_length:
            return self._bad(
                path,
                f"must have at least {info.min_length} item{'s' if info.min_length > 1 else ''}",
            )
        if len(raw) > max_items(info):
            return self._bad(path, f"must have at most {max_items(info)} items (got {len(raw)})")
        items = [
            self._value(item, info.item_type, f"{path}[{index}]", fold)
            for index, item in enumerate(raw)
        ]
        good = [item for item in items if item is not _INVALID]
        return tuple(good) if isinstance(info, mi.VarTupleType) else good

    def _dict(self, raw: Any, info: mi.DictType, path: str, fold: bool) -> object:
        if not isinstance(raw, dict):
            return self._bad(path, f"must be an object (got {show(raw)})")
        if len(raw) > max_properties(info):
            return self._bad(
                path, f"must have at most {max_properties(info)} entries (got {len(raw)})"
            )
        out: dict[str, Any] = {}
        for key, item in raw.items():
            if not isinstance(key, str):
                self._bad(f"{path}.{key}", "keys must be strings")
                continue
            value = self._value(item, info.value_type, f"{path}.{key}", fold)
            if value is not _INVALID:
                out[key] = value
        return out

    def _struct(self, raw: Any, info: mi.StructType, path: str, fold: bool) -> object:
        if not isinstance(raw, dict):
            return self._bad(path, f"must be an object (got {show(raw)})")
        normaliser = self._normalisers.get(info.cls)
        if normaliser is not None:
            normalised = normaliser(raw, path, self)
            if normalised is None:
                self.findings.moot(path)
                return _INVALID
            raw = normalised
        fields = {field.encode_name: field for field in info.fields}
        folded = {name.lower(): name for name in fields}
        seen: dict[str, str] = {}
        kwargs: dict[str, Any] = {}
        for key, item in raw.items():
            name = key if key in fields else folded.get(str(key).lower()) if fold else None
            child = f"{path}.{key}" if path else str(key)
            if name is None:
                suggestion = _close_match(str(key), list(fields))
                self._bad(child, _unknown(suggestion))
                if suggestion is not None and suggestion not in raw:
                    # A misspelt field: the one it means is missing only because of the
                    # typo, which is the one problem to report.
                    self.findings.moot(f"{path}.{suggestion}" if path else suggestion)
                continue
            if name in seen:
                self._bad(child, f"duplicate of {seen[name]}")
                continue
            seen[name] = str(key)
            if item is None:
                continue
            field = fields[name]
            value = self._value(item, field.type, f"{path}.{name}" if path else name, fold)
            if value is _INVALID:
                if field.required:
                    kwargs[field.name] = _placeholder(field.type)
                continue
            kwargs[field.name] = value
        for field in info.fields:
            if field.required and field.name not in kwargs:
                if field.encode_name not in seen or raw.get(seen[field.encode_name]) is None:
                    self._bad(
                        f"{path}.{field.encode_name}" if path else field.encode_name, "required"
                    )
                kwargs[field.name] = _placeholder(field.type)
        return info.cls(**kwargs)


def _placeholder(info: mi.Type) -> Any:
    """A stand-in for an unreadable required value; its problem is already reported."""
    if isinstance(info, mi.Metadata):
        return _placeholder(info.type)
    if isinstance(info, mi.UnionType):
        return _placeholder(next(t for t in info.types if not isinstance(t, mi.NoneType)))
    if isinstance(info, mi.StructType):
        return info.cls(**{f.name: _placeholder(f.type) for f in info.fields if f.required})
    if isinstance(info, mi.LiteralType):
        return info.values[0]
    if isinstance(info, mi.VarTupleType | mi.TupleType):
        return ()
    if isinstance(info, mi.ListType):
        return []
    if isinstance(info, mi.DictType):
        return {}
    if isinstance(info, mi.DateTimeType):
        return _EPOCH
    if isinstance(info, mi.BoolType):
        return False
    if isinstance(info, mi.IntType):
        return 0
    if isinstance(info, mi.FloatType):
        return 0.0
    return ""


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def _matches(pattern: str, text: str) -> bool:
    return _compiled(pattern).search(text) is not None


def _close_match(key: str, names: list[str]) -> str | None:
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.75)
    return close[0] if close else None


def _unknown(suggestion: str | None) -> str:
    return f'unknown field (did you mean "{suggestion}"?)' if suggestion else "unknown field"
