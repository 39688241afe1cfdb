"""The base of the Hvpa types, and the annotations their structure is read from.

The msgspec Structs of `hvpa.api.spec`, `hvpa.api.status` and
`hvpa.api.resource` are the one description of the Hvpa's structure: field
names, types, enums (`Literal`), bounds and patterns (`msgspec.Meta`). The
checker in `hvpa.api.structure` walks a raw object against them to report
every problem at once, and `hvpa.api.crd` renders the CRD's openAPIV3Schema
from them, so the two cannot drift apart.

The structs are frozen and hold tuples, so a parsed Hvpa can be passed to the
pure engine and shared without copying; change one with
`msgspec.structs.replace`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final

import msgspec

__all__ = [
    "DEFAULT_MAX_ITEMS",
    "DEFAULT_MAX_LENGTH",
    "DEFAULT_MAX_PROPERTIES",
    "INT32_MAX",
    "INT64_MAX",
    "INT64_MIN",
    "Int32",
    "Int64",
    "Model",
    "NonNegative",
    "Positive",
    "Text",
    "Time",
    "plain",
]

INT32_MAX: Final = 2**31 - 1
INT64_MAX: Final = 2**63 - 1
INT64_MIN: Final = -(2**63)
# What a string, a list or a map may hold when its field names no bound of its own: every
# value an Hvpa holds is bounded, so the API server can estimate the cost of the CRD's CEL
# rules and no tenant can store megabytes in one field. 253 is a DNS subdomain, the longest
# Kubernetes name; fields that need more (messages, label keys) say so.
DEFAULT_MAX_LENGTH: Final = 253
DEFAULT_MAX_ITEMS: Final = 64
DEFAULT_MAX_PROPERTIES: Final = 64


class Model(
    msgspec.Struct,
    rename="camel",
    omit_defaults=True,
    forbid_unknown_fields=True,
    frozen=True,
):
    """camelCase on the wire; fields left at their defaults are not written back.

    A nested struct defaulting to a shared empty instance (`hpa`, `vpa`) is
    omitted only when it is that instance, so `hpa: {}` written by a user
    survives parse and serialise, while an absent `hpa` stays absent.
    Every subclass repeats `frozen=True, kw_only=True`: msgspec does not
    inherit `kw_only` (needed to keep Gardener's field order, a required field
    after optional ones), and mypy does not see an inherited `frozen`.
    """


Int32 = Annotated[int, msgspec.Meta(ge=-(2**31), le=INT32_MAX)]
"""An int32 of the Go API it mirrors (replica counts, seconds, percentages)."""
Int64 = Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)]
"""An int64 of the Go API (generations, CPA's ladder); the CRD says `format: int64` (hvpa.api.crd)."""
NonNegative = Annotated[int, msgspec.Meta(ge=0, le=INT32_MAX)]
Positive = Annotated[int, msgspec.Meta(ge=1, le=INT32_MAX)]
Text = Annotated[str, msgspec.Meta(max_length=32768)]
"""A message for people (a condition's, an error's): metav1.Condition's bound."""
Time = Annotated[datetime, msgspec.Meta(tz=True)]
"""An RFC 3339 time with a zone, as metav1.Time writes it (`2024-05-01T10:00:00Z`)."""


def plain(value: Any) -> Any:
    """The JSON form of a model value: dicts, lists, strings, numbers (times as RFC 3339 strings).

    `msgspec.to_builtins` would keep tuples as tuples, which neither YAML
    dumpers nor code expecting decoded JSON are ready for.
    """
    return msgspec.json.decode(msgspec.json.encode(value))
