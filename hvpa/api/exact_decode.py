"""A fast decode of a model that takes exactly what the structure walk takes, or declines.

`hvpa.api.structure.Walk` reads a raw object against the model types and
reports every problem; it is pure Python, about half a millisecond for a
status with a history. msgspec decodes the same JSON into the same types in
microseconds, but the two do not accept the same documents: the walk bounds
every string, list and map that names no bound of its own (253 characters,
64 items, 64 entries), and reads a quantity (`str | int | float`) only as a
string or an integer that parses as a quantity. msgspec knows neither rule.

`ExactDecoder` decodes with msgspec, then checks the decoded value for those
rules only. It returns the value when both hold, which is then the value the
walk would have returned with no problem; otherwise None, and the caller
walks (which names the problems). What msgspec refuses is refused by the walk
too (unknown fields, a missing required field, a wrong type, a bound or a
pattern written in the type), so a refusal costs only the walk it would
have cost anyway. Where the two would differ in the value itself, the check
declines: a float field decoded from an integer (msgspec makes it 5.0, the
walk keeps 5). A null the walk takes for an absent field is a type error to
msgspec, so such a document is walked.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, Generic, TypeVar

import msgspec
import msgspec.inspect as mi

from hvpa.api.structure import (
    QUANTITY_MAX_LENGTH,
    is_quantity_type,
    max_items,
    max_length,
    max_properties,
    type_info,
)
from hvpa.quantity import is_quantity

__all__ = ["ExactDecoder"]

T = TypeVar("T", bound=msgspec.Struct)

# Whether a decoded value keeps the walk's rules; None: nothing of the type needs a look.
Check = Callable[[Any], bool]


def _never(_: Any) -> bool:
    return False


def _quantity(value: Any) -> bool:
    if isinstance(value, float):
        return False
    if isinstance(value, str) and len(value) > QUANTITY_MAX_LENGTH:
        return False
    return is_quantity(value)


class _Str:
    def __init__(self, limit: int) -> None:
        self.limit = limit

    def __call__(self, value: Any) -> bool:
        return len(value) <= self.limit


class _Optional:
    def __init__(self, check: Check) -> None:
        self.check = check

    def __call__(self, value: Any) -> bool:
        return value is None or self.check(value)


class _Items:
    """A list or tuple: its length where the type names no bound, and each item."""

    def __init__(self, limit: int | None, item: Check | None) -> None:
        self.limit = limit
        self.item = item

    def __call__(self, value: Any) -> bool:
        if self.limit is not None and len(value) > self.limit:
            return False
        item = self.item
        return item is None or all(item(v) for v in self._members(value))

    @staticmethod
    def _members(value: Any) -> Any:
        return value


class _Fixed:
    """A fixed-length tuple: each position's own check."""

    def __init__(self, items: tuple[Check | None, ...]) -> None:
        self.items = items

    def __call__(self, value: Any) -> bool:
        return all(c is None or c(v) for c, v in zip(self.items, value, strict=True))


class _Map(_Items):
    """A mapping: its size where the type names no bound, and each value."""

    @staticmethod
    def _members(value: Any) -> Any:
        return value.values()


class _Struct:
    """The fields whose types need a look, by attribute name."""

    def __init__(self, fields: tuple[tuple[str, Check], ...]) -> None:
        self.fields = fields

    def __call__(self, value: Any) -> bool:
        return all(check(getattr(value, name)) for name, check in self.fields)


@cache
def _struct_check(cls: type[msgspec.Struct]) -> Check | None:
    info = type_info(cls)
    assert isinstance(info, mi.StructType)
    fields = tuple(
        (field.name, check) for field in info.fields if (check := _check(field.type)) is not None
    )
    return _Struct(fields) if fields else None


def _check(info: mi.Type) -> Check | None:
    """What to check of a value decoded as `info` (None: msgspec's checks are the walk's)."""
    if isinstance(info, mi.Metadata):
        info = info.type
    if isinstance(info, mi.UnionType):
        if is_quantity_type(info.types):
            check: Check | None = _quantity
        else:
            members = [t for t in info.types if not isinstance(t, mi.NoneType)]
            if len(members) != 1:
                return _never  # the walk reads no other union
            check = _check(members[0])
        has_none = any(isinstance(t, mi.NoneType) for t in info.types)
        return _Optional(check) if check is not None and has_none else check
    if isinstance(info, mi.StructType):
        return _struct_check(info.cls)
    if isinstance(info, mi.ListType | mi.VarTupleType):
        limit = max_items(info) if info.max_length is None else None
        item = _check(info.item_type)
        return _Items(limit, item) if limit is not None or item is not None else None
    if isinstance(info, mi.TupleType):
        items = tuple(_check(t) for t in info.item_types)
        return _Fixed(items) if any(c is not None for c in items) else None
    if isinstance(info, mi.DictType):
        limit = max_properties(info) if info.max_length is None else None
        item = _check(info.value_type)
        return _Map(limit, item) if limit is not None or item is not None else None
    if isinstance(info, mi.StrType):
        return _Str(max_length(info)) if info.max_length is None else None
    if isinstance(info, mi.FloatType):
        return _never  # msgspec turns an integer into a float; the walk keeps it
    return None


class ExactDecoder(Generic[T]):
    """Decodes JSON into the struct `tp` when the structure walk would take it as it is;
    else None (so `tp` must not admit None itself)."""

    def __init__(self, tp: type[T]) -> None:
        self._decode = msgspec.json.Decoder(tp).decode
        self._check = _struct_check(tp)

    def decode(self, data: bytes | msgspec.Raw) -> T | None:
        try:
            value: T = self._decode(data)
        except msgspec.DecodeError:
            return None
        check = self._check
        if check is not None and not check(value):
            return None
        return value
