"""Values printed the way the Go API server prints them in its messages.

Error messages embed values with Go's formatting verbs: `%v` of a float64
drops a trailing `.0` and switches to an exponent at 1e+06 (Python's `repr`
does neither), `%q` quotes a string, and complex values are rendered with
`encoding/json`, which sorts map keys and escapes `<`, `>` and `&`. A client
that compares messages, or a person reading both servers' answers side by
side, sees the same text.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Final

import orjson

__all__ = ["go_json", "go_quote", "go_v", "go_value"]

_HTML_ESCAPES: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def go_float(value: float) -> str:
    """`%v` of a float64: the shortest digits, in exponent form below 1e-4 or from 1e+06 up."""
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if str(value).startswith("-") else "0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    assert isinstance(exponent, int)
    shown = "".join(str(d) for d in digits).rstrip("0") or "0"
    # Where the decimal point falls after the first digit (the exponent of %e).
    point = len(digits) + exponent - 1
    prefix = "-" if sign else ""
    if point < -4 or point >= 6:
        mantissa = shown[0] + ("." + shown[1:] if len(shown) > 1 else "")
        return f"{prefix}{mantissa}e{'-' if point < 0 else '+'}{abs(point):02d}"
    if point < 0:
        return f"{prefix}0.{'0' * (-point - 1)}{shown}"
    whole, fraction = shown[: point + 1], shown[point + 1 :]
    whole = whole.ljust(point + 1, "0")
    return f"{prefix}{whole}.{fraction}" if fraction else f"{prefix}{whole}"


def go_quote(text: str) -> str:
    """`%q` of a string (printable characters kept, the rest escaped)."""
    return orjson.dumps(text).decode()


def go_json(value: Any) -> str:
    """`encoding/json`'s rendering of a decoded JSON value: sorted keys, HTML characters escaped."""
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    for character, escaped in _HTML_ESCAPES.items():
        text = text.replace(character, escaped)
    return text


def go_value(value: Any) -> str:
    """`%v` of a value decoded from JSON: numbers and booleans bare, strings as they are."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, int):
        return str(value)
    if value is None:
        return "<nil>"
    if isinstance(value, str):
        return value
    return go_json(value)


def go_v(value: Any) -> str:
    """`%v` of decoded JSON as Go holds it (unstructured content): maps as `map[k:v]` with
    sorted keys, slices as `[a b]`, scalars as go_value prints them."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    return go_value(value)
