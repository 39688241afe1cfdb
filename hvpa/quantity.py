"""Kubernetes resource quantities, parsed exactly and formatted canonically.

Every quantity in hvpa passes through this module. Values are held as
`Decimal` (exact) and the engine works in integers: CPU in millicores,
memory and other byte counts in bytes, HPA metric values in milli-units as
upstream does (`MilliValue()`). Nothing here uses floating point, so two
quantities are equal exactly when the API server would say they are.

Parsing follows apimachinery's `ParseQuantity` (k8s.io/apimachinery
pkg/api/resource/quantity.go): the grammar of its doc comment, a value
finer than a nanounit rounded away from zero to the next one, a binary-SI
value capped at 2^63-1 (`9Ei` reads as 9223372036854775807) and one
between -1 and 1 shown in decimal. Where upstream's scanner is laxer than
its own grammar (it reads `m` or `+` alone as zero) hvpa keeps to the
grammar: a number is required.

Where the bounds are, and why:

- The exponent written after `e`, and the exponent of the value itself
  (`1000e2147483647` is 1e2147483650), must fit an int32. Upstream reads
  the first as an int64 and keeps the value's scale in an int32, so a wider
  one wraps around; here it is refused instead, and every canonical form
  hvpa writes parses again.
- Any other quantity parses, however large or long, exactly: a Decimal
  holds its digits and its exponent apart, so `1e400` or four hundred nines
  cost what their text costs and formatting never expands them.
- Converting to the engine's integers (`milli`, `whole`) is refused with
  QuantityError from 10^38 units on (UNITS_LIMIT). Upstream's accessors
  (`Value()`, `MilliValue()`) overflow int64 silently long before; hvpa
  computes in Python integers and saturates where upstream converts (the
  engine's job), so it reads past int64 (a metric of 1e30 is read, and
  saturates), but not without end: 10^38 is about the range of a 128-bit
  integer, twice upstream's int64 in bits, and every sum and product the
  engine forms from such amounts (in milli-units, over a million pods, as
  a percentage) stays below 10^50, far inside a float64 (1.8e308), so no
  conversion to float can overflow. `1e51`, `1e400` or four hundred nines
  are refused.

Formatting follows apimachinery's canonical form: the suffix family of the
original spelling is kept (binary `Ki`/`Mi`/..., decimal `m`/`k`/`M`/...,
or an `e` exponent), the mantissa is an integer, and the largest suffix that
keeps it an integer is chosen (`1.5Gi` -> `1536Mi`, `0.5` -> `500m`,
`2000` -> `2k`, `1500` stays `1500`); a decimal value beyond the `E` suffix
is written with an exponent (`1e21`), as upstream now does.

People read quantities in explanations, Events and status, and those are
spelled by `format_human*`: exact (the text parses back to the same value),
but chosen for a reader rather than for apimachinery's canonical rules,
which spell 672,138,000 bytes `672138k` and 1.5 cores `1500m`:

- memory that is a whole number of MiB in a binary suffix (`641Mi`,
  `1.5Gi` where two decimals are exact, `1152Mi` where they are not);
  below 1Mi, a whole number of KiB as `512Ki`;
- anything else in decimal with the largest suffix that leaves a whole
  part, with as many decimals as it takes to stay exact (`672.138M`,
  `1.5` cores, `250m`, `20k`). A decimal mantissa below 1000 is read at a
  glance; the shorter `672138k` makes a reader count digits.

Every function here raises QuantityError (a ValueError) and nothing else
for any input, so a caller handles bad input with one `except`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import MAX_EMAX, MAX_PREC, MIN_EMIN, ROUND_UP, Context, Decimal
from enum import Enum
from functools import lru_cache
from typing import Final

__all__ = [
    "BINARY_CAP",
    "UNITS_LIMIT",
    "Format",
    "Quantity",
    "QuantityError",
    "format_bytes",
    "format_cpu",
    "format_human",
    "format_human_bytes",
    "format_human_memory",
    "format_human_resource",
    "format_milli",
    "milli_value",
    "parse",
    "parse_bytes",
    "parse_cpu_millis",
    "parse_milli",
]


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity, or an amount hvpa cannot use."""


class Format(Enum):
    DECIMAL_SI = "DecimalSI"
    BINARY_SI = "BinarySI"
    DECIMAL_EXPONENT = "DecimalExponent"


# apimachinery's int64 maximum (`maxAllowed`): the parser caps a binary quantity at it.
BINARY_CAP: Final = (1 << 63) - 1
_BINARY_CAP_DECIMAL: Final = Decimal(BINARY_CAP)
# The magnitude from which a quantity is not converted to an integer (see the docstring).
UNITS_LIMIT: Final = 10**38
_UNITS_LIMIT_DECIMAL: Final = Decimal(UNITS_LIMIT)

# An exponent after `e` must fit the int32 upstream keeps a scale in.
_MAX_EXPONENT: Final = (1 << 31) - 1
_MIN_EXPONENT: Final = -(1 << 31)
_MAX_EXPONENT_DIGITS: Final = len(str(_MAX_EXPONENT))

_BINARY_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_BY_SHIFT: Final = {bits: suffix for suffix, bits in _BINARY_SUFFIXES.items()}
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
    r"(?P<number>[+-]?(?:[0-9]+(?:\.(?P<fraction>[0-9]*))?|\.(?P<bare_fraction>[0-9]+)))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE](?P<exponent>[+-]?[0-9]+))?"
)

# apimachinery keeps at most nanounit precision; finer values round away from zero.
_NANO: Final = Decimal("1e-9")

# Arithmetic that never rounds unless asked to (quantize with ROUND_UP) and never
# overflows: every operation below is exact at this precision, and its cost is that
# of the digits actually present, not of the precision.
_EXACT: Final = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN, rounding=ROUND_UP)

# Texts longer than this are parsed without the cache, so a hostile object
# cannot fill it with megabytes of digits.
_CACHED_LENGTH: Final = 64
# How much of an offending text an error message repeats.
_SHOWN_LENGTH: Final = 40


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact quantity and the suffix family it was written in.

    `written` is the text it was parsed from (empty when built otherwise), kept so that
    a refusal quotes what the user wrote (`1e400`), not its canonical form (`10e399`);
    it takes no part in equality."""

    value: Decimal
    format: Format = Format.DECIMAL_SI
    written: str = field(default="", compare=False)

    def __str__(self) -> str:
        return _format(self.value, self.format)

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __le__(self, other: Quantity) -> bool:
        return self.value <= other.value

    def milli(self) -> int:
        """The value in milli-units, rounded away from zero like apimachinery's MilliValue().

        Raises QuantityError from UNITS_LIMIT units on (MilliValue() overflows far sooner)."""
        return _integer(self, 3)

    def whole(self) -> int:
        """The value in whole units, rounded away from zero like apimachinery's Value().

        Raises QuantityError from UNITS_LIMIT units on (Value() overflows far sooner)."""
        return _integer(self, 0)


def parse(text: str | int | float) -> Quantity:
    """Parse a quantity as the API server does; raise QuantityError if it is not one.

    Numbers (YAML and JSON allow `cpu: 2` and `cpu: 0.5`) are read as their
    decimal spelling, so `0.1` means exactly one tenth; an integer of any size
    is read exactly (without a detour through its text, which Python limits
    to 4300 digits).
    """
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise QuantityError(
            f"{_shown(repr(text))} is not a quantity (expected a string or a number)"
        )
    if isinstance(text, int):
        return Quantity(Decimal(text), Format.DECIMAL_SI)  # no text: Python caps int -> str
    if isinstance(text, float):
        text = repr(text)
    text = text.strip()
    if len(text) > _CACHED_LENGTH:
        return _parse_text(text)
    return _parse_cached(text)


@lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Quantity:
    return _parse_text(text)


def _parse_text(text: str) -> Quantity:
    """The three steps of ParseQuantity: read number and suffix, scale, round and cap."""
    match = _QUANTITY_RE.fullmatch(text)
    if match is None:
        raise QuantityError(
            f"{_shown(repr(text))} is not a quantity (expected a number with an optional suffix "
            "such as 100m, 2, 1.5Gi, 500M or 1e3)"
        )
    number = Decimal(match["number"])
    # The number's own exponent, from its text (Decimal keeps trailing zeros: 1.50 is 150e-2).
    exponent = -len(match["fraction"] or match["bare_fraction"] or "")
    suffix = match["suffix"] or ""
    if match["exponent"] is not None:
        shift = _exponent(match["exponent"], text)
        value, fmt, exponent = _shifted(number, shift), Format.DECIMAL_EXPONENT, exponent + shift
    elif suffix in _BINARY_SUFFIXES:
        factor = Decimal(1 << _BINARY_SUFFIXES[suffix])
        value, fmt = _EXACT.multiply(number, factor), Format.BINARY_SI
    else:
        shift = _DECIMAL_SUFFIXES[suffix]
        value, fmt, exponent = _shifted(number, shift), Format.DECIMAL_SI, exponent + shift
    if exponent < -9:
        # Finer than a nanounit: rounded away from zero to the next one (upstream's inf.RoundUp).
        value = value.quantize(_NANO, context=_EXACT)
    if value.adjusted() > _MAX_EXPONENT:
        raise _exponent_out_of_range(text)
    if fmt is Format.BINARY_SI and value.copy_abs() > _BINARY_CAP_DECIMAL:
        value = _BINARY_CAP_DECIMAL.copy_sign(value)
    if fmt is Format.BINARY_SI and not value.is_zero() and value.copy_abs() < 1:
        fmt = Format.DECIMAL_SI
    return Quantity(value, fmt, text)


def _exponent(digits: str, text: str) -> int:
    """The exponent after `e`, if it fits an int32 (checked on its digits before int() reads them)."""
    sign = "-" if digits.startswith("-") else ""
    significant = digits.lstrip("+-").lstrip("0") or "0"
    if len(significant) <= _MAX_EXPONENT_DIGITS:
        exponent = int(sign + significant)
        if _MIN_EXPONENT <= exponent <= _MAX_EXPONENT:
            return exponent
    raise _exponent_out_of_range(text)


def _exponent_out_of_range(text: str) -> QuantityError:
    return QuantityError(
        f"{_shown(repr(text))}: the exponent is out of range "
        f"(from {_MIN_EXPONENT} to {_MAX_EXPONENT}, as apimachinery keeps it)"
    )


def _shifted(number: Decimal, exponent: int) -> Decimal:
    """number x 10^exponent, exactly: the digits are kept, only the exponent moves (no
    rounding at _EXACT's precision, no overflow within its exponent range)."""
    return number.scaleb(exponent, context=_EXACT)


def _integer(quantity: Quantity, decimals: int) -> int:
    """The value x 10^decimals as an integer, rounded away from zero; QuantityError out of range."""
    value = quantity.value
    if value.copy_abs() >= _UNITS_LIMIT_DECIMAL:
        shown = quantity.written or _format(value, Format.DECIMAL_EXPONENT)
        raise QuantityError(
            f"{_shown(shown)} is beyond the largest quantity hvpa reads "
            "(its magnitude must stay below 1e38)"
        )
    return int(_shifted(value, decimals).to_integral_value(context=_EXACT))


def _shown(text: str) -> str:
    if len(text) <= _SHOWN_LENGTH:
        return text
    return f"{text[:_SHOWN_LENGTH]}... ({len(text)} characters)"


# ---------------------------------------------------------------------------
# Canonical form


def _format(value: Decimal, fmt: Format) -> str:
    if value.is_zero():
        return "0"
    if fmt is Format.BINARY_SI:
        binary = _binary_form(value)
        if binary is not None:
            return binary
        fmt = Format.DECIMAL_SI
    sign, mantissa, exponent = _decimal_mantissa(value)
    if fmt is Format.DECIMAL_SI and exponent in _DECIMAL_BY_EXPONENT:
        return f"{sign}{mantissa}{_DECIMAL_BY_EXPONENT[exponent]}"
    return f"{sign}{mantissa}e{exponent}" if exponent else f"{sign}{mantissa}"


def _binary_form(value: Decimal) -> str | None:
    """`1536Mi` for a whole number of bytes from 1024 to BINARY_CAP; None to format it in decimal.

    Upstream shows a binary quantity between -1024 and 1024, or one with a
    fraction, in decimal; past Ei there is no suffix, so the count is written
    out (a parsed binary quantity never exceeds BINARY_CAP)."""
    magnitude = value.copy_abs()
    if magnitude < 1024 or magnitude > _BINARY_CAP_DECIMAL:
        return None
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    if exponent < 0 and value != value.to_integral_value(context=_EXACT):
        return None
    integer = int(value)
    shift = 60
    while shift > 0 and integer % (1 << shift):
        shift -= 10
    if shift:
        return f"{integer >> shift}{_BINARY_BY_SHIFT[shift]}"
    return str(integer)


def _decimal_mantissa(value: Decimal) -> tuple[str, str, int]:
    """Sign, integer mantissa and exponent (a multiple of 3, as large as possible).

    Works on the digits, so `1e400` or a mantissa of four hundred nines costs
    what its text costs (apimachinery's infDecAmount.AsCanonicalBytes)."""
    sign, digit_tuple, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    significant = digits.rstrip("0")
    exponent += len(digits) - len(significant)
    padding = exponent % 3
    return ("-" if sign else ""), significant + "0" * padding, exponent - padding


# The engine's integer units. Each has one parser and one formatter.
#
# The parsers and the reader's formatter are cached: a decision reads and writes the same few
# spellings over and over (each status's history, every pod's requests), and a quantity's
# Decimal arithmetic was a tenth of a simulated run. `typed`: True and 1 are different inputs.
_SPELLINGS: Final = 4096


# Digits, perhaps a point and more digits, and a suffix, no sign or exponent: how the kubelet
# and metrics-server write usage (`123456789n`, `40960Ki`) and how `format_human` writes the
# status history (`19.52`, `41.913172725G`). At most 18 digits each side, so the largest,
# 999...9.99...9T, is below 1e33 milli (UNITS_LIMIT is far); the binary ones are checked
# against BINARY_CAP.
_PLAIN_RE: Final = re.compile(r"([0-9]{1,18})(?:\.([0-9]{1,18}))?(Ki|Mi|Gi|Ti|[numkMGT])?")
# 10^n for the n decimals a plain spelling has (up to 18) and the places a reader's spelling
# scales by (up to 3 + 15 + 3 = 21), computed once, with room to spare.
_TENS: Final[tuple[int, ...]] = tuple(10**n for n in range(40))
# suffix -> (multiply, divide) from the digits to milli-units
_PLAIN_TO_MILLI: Final = {
    **{
        suffix: (10 ** (3 + e), 1) if e >= -3 else (1, 10 ** (-3 - e))
        for suffix, e in _DECIMAL_SUFFIXES.items()
        if e <= 12
    },
    **{suffix: (1000 << bits, 1) for suffix, bits in _BINARY_SUFFIXES.items() if bits <= 40},
}


def milli_value(text: str | int | float) -> int:
    """`parse(text).milli()`, reading the common spellings, digits with or without a
    fraction and a suffix, with integer arithmetic instead of Decimal: a PodMetrics answer
    holds an amount per container and resource, each spelled differently, and so does each
    Hvpa's status history, so no cache helps, and Decimal made reading one slower. Anything
    else goes through `parse`."""
    if isinstance(text, str):
        plain = _PLAIN_RE.fullmatch(text)
        if plain is not None:
            # The number is digits / 10^places: 19.52 is 1952 / 10^2.
            whole, fraction, suffix = plain.groups("")
            digits, scale = int(whole + fraction), _TENS[len(fraction)]
            if (
                suffix not in _BINARY_SUFFIXES
                or digits << _BINARY_SUFFIXES[suffix] <= BINARY_CAP * scale
            ):
                multiply, divide = _PLAIN_TO_MILLI[suffix]
                return -(-digits * multiply // (divide * scale))  # rounded up: away from zero
    return parse(text).milli()


@lru_cache(maxsize=_SPELLINGS, typed=True)
def parse_milli(text: str | int | float) -> int:
    """Milli-units of any quantity (CPU millicores, or HPA metric values), cached by spelling:
    for amounts a few spellings repeat (requests, targets); `milli_value` reads the ones
    that do not (usage), uncached."""
    return milli_value(text)


def parse_cpu_millis(text: str | int | float) -> int:
    """CPU in millicores, rounded up as the kubelet does (milli() rounds away from zero)."""
    return parse_milli(text)


@lru_cache(maxsize=_SPELLINGS, typed=True)
def parse_bytes(text: str | int | float) -> int:
    """A byte count (memory, storage), rounded up to a whole byte."""
    return parse(text).whole()


def format_milli(milli: int) -> str:
    """Milli-units in canonical decimal form (`1500m`, `2`, `3k`)."""
    return _format(_shifted(Decimal(milli), -3), Format.DECIMAL_SI)


def format_cpu(millicores: int) -> str:
    return format_milli(millicores)


def format_bytes(count: int, binary: bool = False) -> str:
    """Bytes in canonical form; binary suffixes (`Mi`) when asked and exact."""
    return _format(Decimal(count), Format.BINARY_SI if binary else Format.DECIMAL_SI)


# -- spellings for a reader ----------------------------------------------------------------

_MEBI: Final = 1 << 20
_KIBI: Final = 1 << 10
# A binary mantissa is shown with at most this many decimals (1.5Gi, 1.25Gi); past it the
# next suffix down says the same exactly (1.125Gi is 1152Mi).
_BINARY_DECIMALS: Final = 2
_HUMAN_BINARY: Final = ("Ei", "Pi", "Ti", "Gi", "Mi")
_BINARY_HUNDREDTHS: Final = 10**_BINARY_DECIMALS
# Past this many bits a reader's spelling goes through Decimal: str() of a Python integer
# stops at 4,300 digits, and no amount the engine computes comes near (UNITS_LIMIT is
# 10^38 units, 10^41 milli-units, about 137 bits).
_INTEGER_SPELLING_BITS: Final = 1024


def format_human(milli: int) -> str:
    """Milli-units for a reader: `250m`, `1.5`, `2`, `20k`, `1.234567M` (exact).

    Below one unit in millis, as everyone writes CPU; from one unit on, in decimal
    with the largest suffix that leaves a whole part, and every decimal it needs."""
    if abs(milli) < 1000:
        return f"{milli}m" if milli else "0"
    return _human_scaled(milli, 3)


def format_human_bytes(count: int) -> str:
    """A byte count for a reader: `641Mi`, `1.5Gi`, `512Ki`, else `672.138M` (exact)."""
    magnitude = abs(count)
    sign = "-" if count < 0 else ""
    if _MEBI <= magnitude <= BINARY_CAP and magnitude % _MEBI == 0:
        for suffix in _HUMAN_BINARY:
            bits = _BINARY_SUFFIXES[suffix]
            # The mantissa, magnitude / 2^bits, in hundredths when two decimals hold it exactly.
            hundredths, rest = divmod(magnitude * _BINARY_HUNDREDTHS, 1 << bits)
            if magnitude >> bits and not rest:
                return f"{sign}{_decimals(hundredths, _BINARY_DECIMALS)}{suffix}"
    if _KIBI <= magnitude < _MEBI and magnitude % _KIBI == 0:
        return f"{sign}{magnitude // _KIBI}Ki"
    return _human_scaled(count, 0)


def format_human_memory(milli: int) -> str:
    """Memory in milli-bytes (the engine's unit) for a reader: bytes as `format_human_bytes`
    spells them; a fraction of a byte (only a hand-written `100m` of memory has one) in
    decimal, exactly."""
    if milli % 1000:
        return format_human(milli)
    return format_human_bytes(milli // 1000)


# Resources counted in bytes; every other resource (cpu, a metric) in plain units.
_BYTE_RESOURCES: Final = frozenset({"memory", "ephemeral-storage", "storage"})


def format_human_resource(resource: str, milli: int) -> str:
    """An amount of `resource` in milli-units for a reader: memory as `format_human_memory`,
    CPU and anything else as `format_human`. Not cached: the status history's amounts are
    each a different value at scale, so a cache would only miss."""
    if resource in _BYTE_RESOURCES:
        return format_human_memory(milli)
    return format_human(milli)


def _human_scaled(number: int, places: int) -> str:
    """`_human_decimal(number / 10^places)` in integer arithmetic, the same text: every
    decision spells the amounts it explains and the whole status history it keeps, each a
    different value, so no cache helps, and the Decimal steps cost more."""
    magnitude = abs(number)
    if magnitude.bit_length() > _INTEGER_SPELLING_BITS:
        return _human_decimal(_shifted(Decimal(number), -places))
    if not number:
        return "0"
    exponent = 0
    while exponent < _DECIMAL_SUFFIXES["E"] and magnitude >= _TENS[places + exponent + 3]:
        exponent += 3
    sign = "-" if number < 0 else ""
    return f"{sign}{_decimals(magnitude, places + exponent)}{_DECIMAL_BY_EXPONENT[exponent]}"


def _decimals(magnitude: int, places: int) -> str:
    """magnitude / 10^places as `_plain` writes it: no exponent, no trailing zeros."""
    if not places:
        return str(magnitude)
    whole, fraction = divmod(magnitude, _TENS[places])
    if not fraction:
        return str(whole)
    return f"{whole}.{str(fraction).rjust(places, '0').rstrip('0')}"


def _human_decimal(value: Decimal) -> str:
    """`value` with the largest decimal suffix (up to E) that leaves a whole part."""
    if value.is_zero():
        return "0"
    exponent = 0
    magnitude = value.copy_abs()
    while exponent < _DECIMAL_SUFFIXES["E"] and magnitude >= _shifted(Decimal(1), exponent + 3):
        exponent += 3
    return f"{_plain(_shifted(value, -exponent))}{_DECIMAL_BY_EXPONENT[exponent]}"


def _plain(value: Decimal) -> str:
    """A Decimal's digits without an exponent or trailing zeros (`1.5`, `641`, `0.25`)."""
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def ceil_div(numerator: int, denominator: int) -> int:
    """Integer ceiling division, exact for any size."""
    return -(-numerator // denominator)


def is_quantity(text: object) -> bool:
    """Whether `text` is a quantity hvpa can use: it parses and converts to an integer."""
    try:
        # The status decoder asks this of every sample of a status history at every watch
        # event: milli_value reads the common spellings without Decimal, the rest as parse.
        milli_value(text)  # type: ignore[arg-type]
    except QuantityError:
        return False
    return True
