"""Quantities: exact parsing, apimachinery's rounding, canonical formatting."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hvpa.quantity import (
    Format,
    QuantityError,
    format_bytes,
    format_milli,
    parse,
    parse_bytes,
    parse_milli,
)


@pytest.mark.parametrize(
    ("text", "value", "fmt"),
    [
        pytest.param("100m", Decimal("0.1"), Format.DECIMAL_SI, id="milli"),
        pytest.param("2", Decimal(2), Format.DECIMAL_SI, id="plain"),
        pytest.param("1.5Gi", Decimal(1610612736), Format.BINARY_SI, id="binary-fraction"),
        pytest.param("500M", Decimal(500_000_000), Format.DECIMAL_SI, id="mega"),
        pytest.param("1e3", Decimal(1000), Format.DECIMAL_EXPONENT, id="exponent"),
        pytest.param("1E3", Decimal(1000), Format.DECIMAL_EXPONENT, id="upper-exponent"),
        pytest.param("1E", Decimal(10) ** 18, Format.DECIMAL_SI, id="exa"),
        pytest.param(".5", Decimal("0.5"), Format.DECIMAL_SI, id="leading-dot"),
        pytest.param("+5k", Decimal(5000), Format.DECIMAL_SI, id="sign"),
        pytest.param("-1Ki", Decimal(-1024), Format.BINARY_SI, id="negative"),
        pytest.param("10n", Decimal("1e-8"), Format.DECIMAL_SI, id="nano"),
    ],
)
def test_parse(text: str, value: Decimal, fmt: Format) -> None:
    quantity = parse(text)
    assert quantity.value == value
    assert quantity.format is fmt


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "1Kb", "m", "1 Gi", "Gi", "1e", "--1"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(QuantityError, match="not a quantity"):
        parse(text)


def test_numbers_from_yaml_are_exact() -> None:
    assert parse(0.1).value == Decimal("0.1")
    assert parse(2).value == 2


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1.5Gi", "1536Mi"),
        ("0.5", "500m"),
        ("2000", "2k"),
        ("1500", "1500"),
        ("1000m", "1"),
        ("1Gi", "1Gi"),
        ("1024", "1024"),
        ("512Ki", "512Ki"),
        ("0.5Ki", "512"),
        ("1600M", "1600M"),
        ("0", "0"),
        ("0Gi", "0"),
        ("100m", "100m"),
        ("1e3", "1e3"),
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    assert str(parse(text)) == canonical


def test_milli_and_whole_round_up_like_apimachinery() -> None:
    assert parse_milli("1.0001m") == 2
    assert parse_milli("1.5") == 1500
    assert parse_bytes("0.5") == 1
    assert parse_milli("1Gi") == 1073741824000


def test_formatters() -> None:
    assert format_milli(1667) == "1667m"
    assert format_milli(2000) == "2"
    assert format_bytes(1_600_000_000) == "1600M"
    assert format_bytes(1 << 30, binary=True) == "1Gi"
    # apimachinery shows a binary-format value that is no multiple of 1024 without a suffix
    assert format_bytes(1_500_000_000, binary=True) == "1500000000"


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_milli_round_trip(milli: int) -> None:
    assert parse_milli(format_milli(milli)) == milli


@given(st.integers(min_value=0, max_value=1 << 62), st.booleans())
def test_bytes_round_trip(count: int, binary: bool) -> None:
    assert parse_bytes(format_bytes(count, binary)) == count
