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
from typing import Annotated, Any

import msgspec

__all__ = ["Model", "NonNegative", "Positive", "Time", "plain"]


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


NonNegative = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]
Time = Annotated[datetime, msgspec.Meta(tz=True)]
"""An RFC 3339 time with a zone, as metav1.Time writes it (`2024-05-01T10:00:00Z`)."""


def plain(value: Any) -> Any:
    """The JSON form of a model value: dicts, lists, strings, numbers (times as RFC 3339 strings).

    `msgspec.to_builtins` would keep tuples as tuples, which neither YAML
    dumpers nor code expecting decoded JSON are ready for.
    """
    return msgspec.json.decode(msgspec.json.encode(value))
