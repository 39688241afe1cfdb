"""Structural schemas: how the API server prunes, defaults and validates a custom resource.

A CustomResourceDefinition's openAPIV3Schema is compiled once into a tree of
`Schema` nodes, and every write of a custom resource passes through it in the
real server's order:

1. `unknown_fields`/`prune`: fields the schema does not declare are dropped
   (reported first, for `fieldValidation=Strict|Warn`), except under
   `x-kubernetes-preserve-unknown-fields`; `apiVersion`, `kind` and
   `metadata` of the object and of `x-kubernetes-embedded-resource`s are
   kept, their metadata reduced to ObjectMeta's fields;
2. `apply_defaults`: a missing property with a `default` gets it (a copy,
   itself defaulted), a null one too; a null where the schema is not
   `nullable` and has no default is dropped;
3. `validate`: the OpenAPI value validations (type, format, enum, pattern,
   bounds, lengths, counts, required, anyOf/allOf/oneOf/not), each worded
   as kube-openapi words it and turned into a field error the way the
   apiextensions server turns them (Required, NotSupported, TooLong,
   TooMany, TypeInvalid, else Invalid), then list-type set and map
   uniqueness, then embedded resources' apiVersion and kind.

Quirks kept because clients meet them: an integer value is compared with
bounds and `multipleOf` truncated to integers (kube-openapi's native-type
path), and a check that names no field reports `<nil>` as its field.

Updates ratchet (CRDValidationRatcheting, on by default): a value equal to
the old object's at the same place is not validated again, so an object
stored under an older schema can still be updated elsewhere.

What is approximated: string formats other than date-time, date, byte,
uuid, int32/int64 and float are accepted unchecked; anyOf/oneOf report the
first failing branch where kube-openapi picks the one that matched most.
"""

from __future__ import annotations

import base64
import binascii
import copy
import math
import re
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from hvpa.sim.apiserver.errors import FieldError
from hvpa.sim.apiserver.gotext import go_json, go_quote, go_value

__all__ = [
    "MISSING",
    "OBJECT_META_FIELDS",
    "Schema",
    "compile_schema",
    "json_type",
    "list_map_key",
]

# ObjectMeta's fields: what survives pruning in `metadata` (and is a known field there).
OBJECT_META_FIELDS: Final = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
_TYPE_META: Final = ("apiVersion", "kind")
_INT32: Final = (-(2**31), 2**31 - 1)
_INT64: Final = (-(2**63), 2**63 - 1)
_FLOAT32_MAX: Final = 3.4028234663852886e38
_UUID_RE: Final = re.compile(
    r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$", re.IGNORECASE
)
_DATE_RE: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# How many valid list items a schema node remembers (Schema.valid_items) before it starts
# over: more than a status history holds (hvpa.api.status.MAX_HISTORY is 10,000 entries,
# but a history's items are small and repeat write after write).
_VALID_ITEMS_KEPT: Final = 20_000


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


@dataclass(frozen=True, slots=True)
class Rule:
    """One x-kubernetes-validations entry."""

    rule: str
    message: str = ""
    message_expression: str = ""
    reason: str = ""
    field_path: str = ""


@dataclass(slots=True, eq=False)
class Schema:
    """One node of a compiled structural schema."""

    types: tuple[str, ...] = ()
    description: str = ""
    properties: dict[str, Schema] = field(default_factory=dict)
    additional: Schema | None = None
    items: Schema | None = None
    required: tuple[str, ...] = ()
    preserve_unknown: bool = False
    int_or_string: bool = False
    embedded: bool = False
    nullable: bool = False
    default: Any = MISSING
    list_type: str = ""
    map_keys: tuple[str, ...] = ()
    enum: tuple[Any, ...] = ()
    format: str = ""
    pattern: str = ""
    pattern_re: re.Pattern[str] | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    exclusive_maximum: bool = False
    multiple_of: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    max_properties: int | None = None
    any_of: tuple[Schema, ...] = ()
    all_of: tuple[Schema, ...] = ()
    one_of: tuple[Schema, ...] = ()
    not_: Schema | None = None
    rules: tuple[Rule, ...] = ()
    # Whether this node or one under it has CEL rules, a list type, an embedded resource:
    # subtrees without are not walked for them (a status write walked its whole history).
    has_rules: bool = False
    has_list_types: bool = False
    has_embedded: bool = False
    raw: Mapping[str, Any] = field(default_factory=dict)
    # Items already found valid under this node (as `items`), by `value_key`: an atomic list
    # has no old item to ratchet against, so every write of it validated every item again,
    # and a status write resends its whole history. Whether a value is valid depends on the
    # value alone (paths only name the errors), so a remembered one needs no second look.
    valid_items: set[Hashable] = field(default_factory=set, repr=False)

    # ------------------------------------------------------------------ the tree

    def child(self, key: str) -> Schema | None:
        """The schema of the object field `key`: its property, or additionalProperties."""
        found = self.properties.get(key)
        return found if found is not None else self.additional

    @property
    def is_object(self) -> bool:
        return "object" in self.types

    def walk(self) -> Iterator[Schema]:
        """This node and every node under it (properties, additionalProperties, items)."""
        yield self
        for child in self.properties.values():
            yield from child.walk()
        if self.additional is not None:
            yield from self.additional.walk()
        if self.items is not None:
            yield from self.items.walk()

    # ------------------------------------------------------------------ pruning

    def unknown_fields(self, value: Any, *, root: bool = True, patch: bool = False) -> list[str]:
        """The paths of the fields pruning would drop, sorted (strict decoding's order).

        `patch`: `value` is a merge or strategic merge patch, whose `$` directives are not
        fields and whose nulls delete."""
        found: list[str] = []
        self._unknown(value, "", found, root=root, patch=patch)
        return sorted(found)

    def _unknown(
        self, value: Any, path: str, found: list[str], *, root: bool, patch: bool = False
    ) -> None:
        if isinstance(value, dict):
            meta_kept = root or self.embedded
            for key, child_value in value.items():
                where = f"{path}.{key}" if path else key
                if patch and (key.startswith("$") or child_value is None):
                    continue
                if meta_kept and key in _TYPE_META:
                    continue
                if meta_kept and key == "metadata":
                    if isinstance(child_value, dict):
                        found.extend(
                            f"{where}.{k}" for k in child_value if k not in OBJECT_META_FIELDS
                        )
                    continue
                child = self.child(key)
                if child is None:
                    if not self.preserve_unknown:
                        found.append(where)
                    continue
                child._unknown(child_value, where, found, root=False, patch=patch)
        elif isinstance(value, list) and self.items is not None:
            for index, item in enumerate(value):
                self.items._unknown(item, f"{path}[{index}]", found, root=False, patch=patch)

    def prune(self, value: Any, *, root: bool = True) -> Any:
        """`value` without the fields the schema does not declare (in place where possible)."""
        if isinstance(value, dict):
            meta_kept = root or self.embedded
            for key in list(value):
                if meta_kept and key in _TYPE_META:
                    continue
                if meta_kept and key == "metadata":
                    metadata = value[key]
                    if isinstance(metadata, dict):
                        for name in [k for k in metadata if k not in OBJECT_META_FIELDS]:
                            del metadata[name]
                    continue
                child = self.child(key)
                if child is None:
                    if not self.preserve_unknown:
                        del value[key]
                    continue
                value[key] = child.prune(value[key], root=False)
        elif isinstance(value, list) and self.items is not None:
            for index, item in enumerate(value):
                value[index] = self.items.prune(item, root=False)
        return value

    # ------------------------------------------------------------------ defaulting

    def apply_defaults(self, value: Any) -> Any:
        """Defaults filled in and nulls of non-nullable fields resolved, in place."""
        if isinstance(value, dict):
            for key, prop in self.properties.items():
                current = value.get(key, MISSING)
                if current is None and not prop.nullable:
                    if prop.default is MISSING:
                        del value[key]
                        continue
                    current = MISSING
                if current is MISSING and prop.default is not MISSING:
                    value[key] = copy.deepcopy(prop.default)
            for key in list(value):
                child = self.child(key)
                if child is not None and value[key] is not None:
                    value[key] = child.apply_defaults(value[key])
        elif isinstance(value, list) and self.items is not None:
            for index, item in enumerate(value):
                if item is not None:
                    value[index] = self.items.apply_defaults(item)
        return value

    # ------------------------------------------------------------------ validation

    def validate(
        self, value: Any, old: Any = MISSING, *, name: str = "", field_prefix: str | None = None
    ) -> list[FieldError]:
        """Every error in `value` (the object, or a part of it called `name` in messages).

        `old` (an update) ratchets: parts equal to the old object's are not checked.
        `field_prefix` is prepended to the errors' field paths (`status` for /status)."""
        collected: list[_Error] = []
        self._validate(value, old, name, collected)
        errors = [error.field_error(field_prefix) for error in collected]
        if old is MISSING or old is None or not self._list_errors(old, name):
            errors += self._list_errors(value, name)
        errors += self._embedded_errors(value, name)
        return errors

    def _validate(self, value: Any, old: Any, path: str, out: list[_Error]) -> None:
        if old is not MISSING and old == value and type(old) is type(value):
            return
        if value is None:
            if self.types and not self.nullable:
                out.append(_type_error(path, ",".join(self._type_names()), "null"))
            return
        kind = json_type(value)
        self._check_type(value, kind, path, out)
        self._check_composition(value, path, out)
        if kind == "string":
            self._check_string(value, path, out)
            self._check_format(value, path, out)
        if kind in ("integer", "number"):
            self._check_number(value, path, out)
        if kind == "array":
            self._check_array(value, old, path, out)
        if self.enum:
            self._check_enum(value, path, out)
        if kind == "object":
            self._check_object(value, old, path, out)

    def _type_names(self) -> tuple[str, ...]:
        return ("integer", "string") if self.int_or_string else self.types

    def _check_type(self, value: Any, kind: str, path: str, out: list[_Error]) -> None:
        types = self._type_names()
        if not types:
            return
        integral_float = kind == "number" and float(value).is_integer()
        if kind in types or (integral_float and "integer" in types):
            return
        if kind == "integer" and "number" in types:
            return
        out.append(_type_error(path, ",".join(types), kind))

    def _check_composition(self, value: Any, path: str, out: list[_Error]) -> None:
        if self.any_of:
            failures = [branch._errors_for(value, path) for branch in self.any_of]
            if all(failures):
                out.append(_unnamed(f"{go_quote(path)} must validate at least one schema (anyOf)"))
                out.extend(failures[0])
        if self.one_of:
            failures = [branch._errors_for(value, path) for branch in self.one_of]
            valid = sum(1 for f in failures if not f)
            if valid != 1:
                why = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                out.append(
                    _unnamed(
                        f"{go_quote(path)} must validate one and only one schema (oneOf). {why}"
                    )
                )
                if valid == 0:
                    out.extend(failures[0])
        if self.all_of:
            failures = [branch._errors_for(value, path) for branch in self.all_of]
            for failure in failures:
                out.extend(failure)
            passed = sum(1 for f in failures if not f)
            if passed != len(failures):
                suffix = ". None validated" if passed == 0 else ""
                out.append(
                    _unnamed(f"{go_quote(path)} must validate all the schemas (allOf){suffix}")
                )
        if self.not_ is not None and not self.not_._errors_for(value, path):
            out.append(_unnamed(f"{go_quote(path)} must not validate the schema (not)"))

    def _errors_for(self, value: Any, path: str) -> list[_Error]:
        found: list[_Error] = []
        self._validate(value, MISSING, path, found)
        return found

    def _check_string(self, value: str, path: str, out: list[_Error]) -> None:
        length = len(value)
        if self.max_length is not None and length > self.max_length:
            out.append(_Error(path, "too_long", value, self.max_length))
        elif self.min_length is not None and length < self.min_length:
            out.append(
                _Error(path, "invalid", value, f"should be at least {self.min_length} chars long")
            )
        elif self.pattern_re is not None and not self.pattern_re.search(value):
            out.append(_Error(path, "invalid", value, f"should match '{self.pattern}'"))

    def _check_format(self, value: str, path: str, out: list[_Error]) -> None:
        if self.format and not _format_ok(self.format, value):
            out.append(_type_error(path, self.format, value))

    def _check_number(self, value: float, path: str, out: list[_Error]) -> None:
        if len(self.types) == 1 and self.types[0] in ("integer", "number"):
            range_error = _range_error(value, self.types[0], self.format, path)
            if range_error is not None:
                out.append(range_error)
        native_int = isinstance(value, int)
        if self.multiple_of is not None:
            factor: float = math.trunc(self.multiple_of) if native_int else self.multiple_of
            if factor <= 0:
                out.append(
                    _Error(
                        path,
                        "invalid",
                        value,
                        f"factor MultipleOf declared for {path} must be positive: {go_value(factor)}",
                        bare=True,
                    )
                )
            elif not _is_multiple(value, factor):
                out.append(
                    _Error(path, "invalid", value, f"should be a multiple of {go_value(factor)}")
                )
        if self.maximum is not None:
            bound: float = math.trunc(self.maximum) if native_int else self.maximum
            if value > bound or (self.exclusive_maximum and value == bound):
                words = "less than" if self.exclusive_maximum else "less than or equal to"
                out.append(_Error(path, "invalid", value, f"should be {words} {go_value(bound)}"))
        if self.minimum is not None:
            bound = math.trunc(self.minimum) if native_int else self.minimum
            if value < bound or (self.exclusive_minimum and value == bound):
                words = "greater than" if self.exclusive_minimum else "greater than or equal to"
                out.append(_Error(path, "invalid", value, f"should be {words} {go_value(bound)}"))

    def _check_array(self, value: list[Any], old: Any, path: str, out: list[_Error]) -> None:
        count = len(value)
        if self.min_items is not None and count < self.min_items:
            out.append(
                _Error(path, "invalid", count, f"should have at least {self.min_items} items")
            )
        if self.max_items is not None and count > self.max_items:
            out.append(_Error(path, "too_many", count, self.max_items))
        if self.items is None:
            return
        olds = self._correlated_items(value, old)
        for index, item in enumerate(value):
            if olds[index] is MISSING:
                self.items._validate_item(item, f"{path}[{index}]", out)
            else:
                self.items._validate(item, olds[index], f"{path}[{index}]", out)

    def _validate_item(self, item: Any, path: str, out: list[_Error]) -> None:
        """`_validate` of a list item with nothing to ratchet against, remembering the valid."""
        key = value_key(item)
        if key in self.valid_items:
            return
        found = len(out)
        self._validate(item, MISSING, path, out)
        if len(out) == found:
            if len(self.valid_items) >= _VALID_ITEMS_KEPT:
                self.valid_items.clear()
            self.valid_items.add(key)

    def _correlated_items(self, value: list[Any], old: Any) -> list[Any]:
        """The old item each new one is compared with: by key in a map list, by value in a set."""
        if not isinstance(old, list) or self.list_type not in ("map", "set"):
            return [MISSING] * len(value)
        if self.list_type == "set":
            return [item if item in old else MISSING for item in value]
        by_key = {list_map_key(item, self.map_keys): item for item in old if isinstance(item, dict)}
        return [
            by_key.get(list_map_key(item, self.map_keys), MISSING)
            if isinstance(item, dict)
            else MISSING
            for item in value
        ]

    def _check_enum(self, value: Any, path: str, out: list[_Error]) -> None:
        for allowed in self.enum:
            if value == allowed and (isinstance(value, bool) == isinstance(allowed, bool)):
                return
        out.append(_Error(path, "not_supported", value, list(self.enum)))

    def _check_object(self, value: dict[str, Any], old: Any, path: str, out: list[_Error]) -> None:
        count = len(value)
        if self.min_properties is not None and count < self.min_properties:
            out.append(
                _Error(
                    path, "invalid", count, f"should have at least {self.min_properties} properties"
                )
            )
        if self.max_properties is not None and count > self.max_properties:
            out.append(_Error(path, "too_many", count, self.max_properties))
        olds = old if isinstance(old, dict) else {}
        prefix = f"{path}." if path else ""
        if self.additional is not None:
            for key, item in value.items():
                if key not in self.properties:
                    self.additional._validate(item, olds.get(key, MISSING), prefix + key, out)
        for key, prop in self.properties.items():
            if key in value:
                prop._validate(value[key], olds.get(key, MISSING), prefix + key, out)
        for key in self.required:
            if key not in value:
                out.append(_Error(prefix + key, "required", None, ""))

    # ------------------------------------------------------------------ list types, embedded

    def _list_errors(self, value: Any, path: str) -> list[FieldError]:
        """x-kubernetes-list-type set and map: no two items alike (by value, or by key)."""
        errors: list[FieldError] = []
        if not self.has_list_types:
            return errors
        if isinstance(value, dict):
            for key, item in value.items():
                child = self.child(key)
                if child is not None:
                    errors += child._list_errors(item, f"{path}.{key}" if path else key)
        elif isinstance(value, list):
            seen: list[Any] = []
            for index, item in enumerate(value):
                where = f"{path}[{index}]"
                if self.list_type == "set":
                    if item in seen:
                        errors.append(FieldError.duplicate(where, item))
                    seen.append(item)
                elif self.list_type == "map" and isinstance(item, dict):
                    key_value = {k: item[k] for k in self.map_keys if k in item}
                    if key_value in seen:
                        errors.append(FieldError.duplicate(where, key_value))
                    seen.append(key_value)
                if self.items is not None:
                    errors += self.items._list_errors(item, where)
        return errors

    def _embedded_errors(self, value: Any, path: str) -> list[FieldError]:
        """An embedded resource names its apiVersion and kind."""
        errors: list[FieldError] = []
        if not self.has_embedded:
            return errors
        if isinstance(value, dict):
            if self.embedded and path:
                for key in _TYPE_META:
                    if not value.get(key):
                        errors.append(FieldError.required(f"{path}.{key}"))
            for key, item in value.items():
                child = self.child(key)
                if child is not None and not (self.embedded and key == "metadata"):
                    errors += child._embedded_errors(item, f"{path}.{key}" if path else key)
        elif isinstance(value, list) and self.items is not None:
            for index, item in enumerate(value):
                errors += self.items._embedded_errors(item, f"{path}[{index}]")
        return errors


# ====================================================================== errors


@dataclass(frozen=True, slots=True)
class _Error:
    """A kube-openapi validation error before it becomes a field error.

    `kind`: required, not_supported (detail: the allowed values), too_long
    (detail: the limit), too_many (detail: the limit), type (value: the JSON
    type found, detail: the message), invalid (detail: the message after the
    path), unnamed (a composite error: no field, the message whole)."""

    path: str
    kind: str
    value: Any
    detail: Any
    bare: bool = False

    def field_error(self, prefix: str | None) -> FieldError:
        where = _field_path(prefix, self.path)
        if self.kind == "required":
            return FieldError.required(where)
        if self.kind == "not_supported":
            return FieldError.not_supported(
                where, self.value, [v if isinstance(v, str) else go_json(v) for v in self.detail]
            )
        if self.kind == "too_long":
            return FieldError.too_long(where, int(self.detail))
        if self.kind == "too_many":
            return FieldError.too_many(where, int(self.value), int(self.detail))
        if self.kind == "type":
            return FieldError.type_invalid(where, self.value, str(self.detail))
        if self.kind == "unnamed":
            return FieldError.invalid(_field_path(prefix, ""), "", str(self.detail))
        message = str(self.detail) if self.bare else f"{self.path} in body {self.detail}"
        return FieldError.invalid(where, self.value, message)


def _field_path(prefix: str | None, path: str) -> str:
    if prefix:
        return f"{prefix}.{path}" if path else prefix
    return path or "<nil>"


def _type_error(path: str, expected: str, found: Any) -> _Error:
    """kube-openapi's InvalidType: a string found is quoted into the message."""
    if isinstance(found, str):
        message = f"{path} in body must be of type {expected}: {go_quote(found)}"
    else:
        message = f"{path} in body must be of type {expected}"
    return _Error(path, "type", found, message)


def _unnamed(message: str) -> _Error:
    return _Error("", "unnamed", "", message)


def _range_error(value: float, kind: str, fmt: str, path: str) -> _Error | None:
    """IsValueValidAgainstRange: an integer schema takes no fraction, int32 no more than 32 bits.

    Only a format that fits the type counts (int32/int64; float/double)."""
    if kind == "integer":
        fmt = fmt if fmt in ("int32", "int64") else ""
        if isinstance(value, float) and not value.is_integer():
            ok = False
        else:
            low, high = _INT32 if fmt == "int32" else _INT64
            ok = low <= int(value) <= high
        if not ok:
            shown = f"with format {fmt}" if fmt else "(default format)"
            return _unnamed(f"Checked value must be of type integer {shown} in {path}")
    elif fmt == "float" and abs(float(value)) > _FLOAT32_MAX:
        return _unnamed(f"Checked value must be of type number with format {fmt} in {path}")
    return None


def _is_multiple(value: float, factor: float) -> bool:
    if isinstance(value, int) and isinstance(factor, int):
        return value % factor == 0
    quotient = (1 / factor * value) if factor < 1 else (value / factor)
    return float(quotient).is_integer()


def _format_ok(fmt: str, value: str) -> bool:
    if fmt in ("date-time", "datetime"):
        try:
            datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return False
        return "T" in value.upper()
    if fmt == "date":
        return bool(_DATE_RE.match(value))
    if fmt == "byte":
        try:
            base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return False
        return True
    if fmt == "uuid":
        return bool(_UUID_RE.match(value))
    return True


def value_key(value: Any) -> Hashable:
    """A decoded JSON value as a hashable key, equal only for values validation cannot tell
    apart: the Python type goes with every scalar (1, 1.0 and True are three values)."""
    if isinstance(value, dict):
        return ("{", tuple([(key, value_key(item)) for key, item in value.items()]))
    if isinstance(value, list):
        return ("[", tuple([value_key(item) for item in value]))
    return (type(value), value)


def json_type(value: Any) -> str:
    """The JSON type of a decoded value, as kube-openapi names it in messages."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def list_map_key(item: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(go_json(item.get(k)) for k in keys)


# ====================================================================== compiling


def compile_schema(
    raw: Mapping[str, Any], components: Mapping[str, Mapping[str, Any]] | None = None
) -> Schema:
    """The Schema of an openAPIV3Schema (assumed structural: the CRD was accepted).

    `components` resolves `$ref`s to `#/components/schemas/NAME` (and a reference
    wrapped in a one-item allOf), as in the built-in kinds' schemas; they must not
    refer to themselves."""
    raw = _resolved(raw, components)
    node = Schema(raw=raw)
    kind = raw.get("type")
    node.types = (kind,) if isinstance(kind, str) else tuple(kind or ())
    node.description = str(raw.get("description") or "")
    node.properties = {
        k: compile_schema(v, components) for k, v in (raw.get("properties") or {}).items()
    }
    additional = raw.get("additionalProperties")
    if isinstance(additional, Mapping):
        node.additional = compile_schema(additional, components)
    elif additional is True:
        node.preserve_unknown = True
    items = raw.get("items")
    if isinstance(items, Mapping):
        node.items = compile_schema(items, components)
    node.required = tuple(raw.get("required") or ())
    node.preserve_unknown = node.preserve_unknown or bool(
        raw.get("x-kubernetes-preserve-unknown-fields")
    )
    node.int_or_string = bool(raw.get("x-kubernetes-int-or-string"))
    node.embedded = bool(raw.get("x-kubernetes-embedded-resource"))
    if node.embedded and not node.types:
        node.types = ("object",)
    node.nullable = bool(raw.get("nullable"))
    if "default" in raw:
        node.default = raw["default"]
    node.list_type = str(raw.get("x-kubernetes-list-type") or "")
    node.map_keys = tuple(raw.get("x-kubernetes-list-map-keys") or ())
    node.enum = tuple(raw.get("enum") or ())
    node.format = str(raw.get("format") or "")
    if raw.get("pattern"):
        node.pattern = str(raw["pattern"])
        node.pattern_re = _compile_pattern(node.pattern)
    node.minimum = raw.get("minimum")
    node.maximum = raw.get("maximum")
    node.exclusive_minimum = bool(raw.get("exclusiveMinimum"))
    node.exclusive_maximum = bool(raw.get("exclusiveMaximum"))
    node.multiple_of = raw.get("multipleOf")
    node.min_length = raw.get("minLength")
    node.max_length = raw.get("maxLength")
    node.min_items = raw.get("minItems")
    node.max_items = raw.get("maxItems")
    node.min_properties = raw.get("minProperties")
    node.max_properties = raw.get("maxProperties")
    node.any_of = tuple(compile_schema(s) for s in raw.get("anyOf") or ())
    node.all_of = tuple(compile_schema(s) for s in raw.get("allOf") or ())
    node.one_of = tuple(compile_schema(s) for s in raw.get("oneOf") or ())
    if isinstance(raw.get("not"), Mapping):
        node.not_ = compile_schema(raw["not"])
    node.rules = tuple(
        Rule(
            rule=str(r.get("rule", "")),
            message=str(r.get("message") or ""),
            message_expression=str(r.get("messageExpression") or ""),
            reason=str(r.get("reason") or ""),
            field_path=str(r.get("fieldPath") or ""),
        )
        for r in raw.get("x-kubernetes-validations") or ()
    )
    children = [*node.properties.values(), node.additional, node.items]
    node.has_rules = bool(node.rules) or any(c is not None and c.has_rules for c in children)
    node.has_list_types = node.list_type in ("set", "map") or any(
        c is not None and c.has_list_types for c in children
    )
    node.has_embedded = node.embedded or any(c is not None and c.has_embedded for c in children)
    return node


def _resolved(
    raw: Mapping[str, Any], components: Mapping[str, Mapping[str, Any]] | None
) -> Mapping[str, Any]:
    """`raw` with a reference replaced by what it names (its own description kept)."""
    if components is None:
        return raw
    target = raw.get("$ref")
    all_of = raw.get("allOf")
    if target is None and isinstance(all_of, list) and len(all_of) == 1:
        target = all_of[0].get("$ref")
    if not isinstance(target, str):
        return raw
    named = components[target.rsplit("/", 1)[-1]]
    if "description" in raw:
        return {**named, "description": raw["description"]}
    return named


def _compile_pattern(pattern: str) -> re.Pattern[str] | None:
    """ECMA-262 patterns as Go's RE2 reads them; one Python cannot read matches nothing."""
    try:
        return re.compile(pattern)
    except re.error:
        return re.compile(r"(?!)")
