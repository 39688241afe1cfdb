"""Kubernetes resource quantities, parsed exactly and formatted canonically.

Every quantity in hvpa passes through this module. Values are held as
`Decimal` (exact) and the engine works in integers: CPU in millicores,
memory and other byte counts in bytes, HPA metric values in milli-units as
upstream does (`MilliValue()`). Nothing here uses floating point, so two
quantities are equal exactly when the API server would say they are.

Formatting follows apimachinery's canonical form: the suffix family of the
original spelling is kept (binary `Ki`/`Mi`/..., decimal `m`/`k`/`M`/...,
or an `e` exponent), the mantissa is an integer, and the largest suffix that
keeps it an integer is chosen (`1.5Gi` -> `1536Mi`, `0.5` -> `500m`,
`2000` -> `2k`, `1500` stays `1500`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal, InvalidOperation, localcontext
from enum import Enum
from functools import lru_cache
from typing import Final

__all__ = [
    "Format",
    "Quantity",
    "QuantityError",
    "format_bytes",
    "format_cpu",
    "format_milli",
    "parse",
    "parse_bytes",
    "parse_cpu_millis",
    "parse_milli",
]


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


class Format(Enum):
    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


_BINARY_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIXES: Final = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DECIMAL_BY_EXPONENT: Final = {exponent: suffix for suffix, exponent in _DECIMAL_SUFFIXES.items()}

_QUANTITY_RE: Final = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$"
)

# apimachinery keeps at most nanounit precision; values are rounded up to it.
_NANO: Final = Decimal("1e-9")


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact quantity and the suffix family it was written in."""

    value: Decimal
    format: Format = Format.DECIMAL_SI

    def __str__(self) -> str:
        return _format(self.value, self.format)

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __le__(self, other: Quantity) -> bool:
        return self.value <= other.value

    def milli(self) -> int:
        """The value in milli-units, rounded up like apimachinery's MilliValue()."""
        return _ceil(self.value * 1000)

    def whole(self) -> int:
        """The value in whole units, rounded up like apimachinery's Value()."""
        return _ceil(self.value)


def parse(text: str | int | float) -> Quantity:
    """Parse a quantity as the API server does; raise QuantityError if it is not one.

    Numbers (YAML and JSON allow `cpu: 2` and `cpu: 0.5`) are read as their
    decimal spelling, so `0.1` means exactly one tenth.
    """
    if isinstance(text, bool):
        raise QuantityError(f"quantities must match the regular expression: got {text!r}")
    if isinstance(text, int | float):
        text = repr(text) if isinstance(text, float) else str(text)
    return _parse_cached(text.strip())


@lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Quantity:
    match = _QUANTITY_RE.match(text)
    if match is None:
        raise QuantityError(
            f"{text!r} is not a quantity (expected a number with an optional suffix "
            "such as 100m, 2, 1.5Gi, 500M or 1e3)"
        )
    number = Decimal(match["number"])
    suffix = match["suffix"] or ""
    if suffix in _BINARY_SUFFIXES:
        value, fmt = number * (1 << _BINARY_SUFFIXES[suffix]), Format.BINARY_SI
    elif len(suffix) > 1 and suffix[0] in "eE":
        value, fmt = number.scaleb(int(suffix[1:])), Format.DECIMAL_EXPONENT
    else:
        value, fmt = number.scaleb(_DECIMAL_SUFFIXES[suffix]), Format.DECIMAL_SI
    if value != 0 and abs(value) < _NANO:
        value = _NANO.copy_sign(value)
    return Quantity(_round_up_to_nano(value), fmt)


def _round_up_to_nano(value: Decimal) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 60
        return value.quantize(_NANO, rounding=ROUND_CEILING).normalize() if value % _NANO else value


def _ceil(value: Decimal) -> int:
    with localcontext() as ctx:
        ctx.prec = 60
        return int(value.to_integral_value(rounding=ROUND_CEILING))


def _format(value: Decimal, fmt: Format) -> str:
    if value == 0:
        return "0"
    if fmt is Format.BINARY_SI and abs(value) >= 1024 and value == value.to_integral_value():
        integer = int(value)
        shift = 60
        while shift > 0 and integer % (1 << shift):
            shift -= 10
        if shift:
            suffix = next(s for s, bits in _BINARY_SUFFIXES.items() if bits == shift)
            return f"{integer >> shift}{suffix}"
        return str(integer)
    exponent, mantissa = _decimal_mantissa(value)
    if fmt is Format.DECIMAL_EXPONENT:
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"


def _decimal_mantissa(value: Decimal) -> tuple[int, int]:
    """The largest exponent (a multiple of 3, -9..18) that leaves an integer mantissa."""
    for exponent in range(18, -10, -3):
        scaled = value.scaleb(-exponent)
        if scaled == scaled.to_integral_value():
            return exponent, int(scaled)
    return -9, _ceil(value.scaleb(9))


# The engine's integer units. Each has one parser and one formatter.


def parse_milli(text: str | int | float) -> int:
    """Milli-units of any quantity (CPU millicores, or HPA metric values)."""
    return parse(text).milli()


def parse_cpu_millis(text: str | int | float) -> int:
    """CPU in millicores, rounded up as the kubelet does."""
    return parse(text).milli()


def parse_bytes(text: str | int | float) -> int:
    """A byte count (memory, storage), rounded up to a whole byte."""
    return parse(text).whole()


def format_milli(milli: int) -> str:
    """Milli-units in canonical decimal form (`1500m`, `2`, `3k`)."""
    return _format(Decimal(milli) / 1000, Format.DECIMAL_SI)


def format_cpu(millicores: int) -> str:
    return format_milli(millicores)


def format_bytes(count: int, binary: bool = False) -> str:
    """Bytes in canonical form; binary suffixes (`Mi`) when asked and exact."""
    return _format(Decimal(count), Format.BINARY_SI if binary else Format.DECIMAL_SI)


def ceil_div(numerator: int, denominator: int) -> int:
    """Integer ceiling division, exact for any size."""
    return -(-numerator // denominator)


def is_quantity(text: object) -> bool:
    try:
        parse(text)  # type: ignore[arg-type]
    except (QuantityError, InvalidOperation, TypeError):
        return False
    return True
