"""Quantities: exact parsing, apimachinery's rounding, canonical formatting, and the bounds.

Tables marked "upstream" are ported from k8s.io/apimachinery
pkg/api/resource/quantity_test.go (the test function is named at each).
"""

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hvpa.quantity import (
    BINARY_CAP,
    UNITS_LIMIT,
    Format,
    Quantity,
    QuantityError,
    _human_decimal,
    format_bytes,
    format_human,
    format_human_bytes,
    format_human_memory,
    format_milli,
    is_quantity,
    milli_value,
    parse,
    parse_bytes,
    parse_milli,
)

DSI, BSI, DEX = Format.DECIMAL_SI, Format.BINARY_SI, Format.DECIMAL_EXPONENT


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


# upstream: TestQuantityParse's table, as (input, mantissa, scale, format): value mantissa x 10^scale.
UPSTREAM_PARSE = [
    ("0", 0, 0, DSI),
    ("0n", 0, 0, DSI),
    ("0u", 0, 0, DSI),
    ("0m", 0, 0, DSI),
    ("0Ki", 0, 0, BSI),
    ("0k", 0, 0, DSI),
    ("0Mi", 0, 0, BSI),
    ("0M", 0, 0, DSI),
    ("0Gi", 0, 0, BSI),
    ("0G", 0, 0, DSI),
    ("0Ti", 0, 0, BSI),
    ("0T", 0, 0, DSI),
    ("1", 1, 0, DSI),
    ("1Ki", 1024, 0, BSI),
    ("8Ki", 8 * 1024, 0, BSI),
    ("7Mi", 7 * 1024**2, 0, BSI),
    ("6Gi", 6 * 1024**3, 0, BSI),
    ("5Ti", 5 * 1024**4, 0, BSI),
    ("4Pi", 4 * 1024**5, 0, BSI),
    ("3Ei", 3 * 1024**6, 0, BSI),
    ("10Ti", 10 * 1024**4, 0, BSI),
    ("100Ti", 100 * 1024**4, 0, BSI),
    ("5n", 5, -9, DSI),
    ("4u", 4, -6, DSI),
    ("3m", 3, -3, DSI),
    ("9", 9, 0, DSI),
    ("8k", 8, 3, DSI),
    ("50k", 5, 4, DSI),
    ("7M", 7, 6, DSI),
    ("6G", 6, 9, DSI),
    ("5T", 5, 12, DSI),
    ("40T", 4, 13, DSI),
    ("300T", 3, 14, DSI),
    ("2P", 2, 15, DSI),
    ("1E", 1, 18, DSI),
    ("1E-3", 1, -3, DEX),
    ("1e3", 1, 3, DEX),
    ("1E6", 1, 6, DEX),
    ("1e9", 1, 9, DEX),
    ("1E12", 1, 12, DEX),
    ("1e15", 1, 15, DEX),
    ("1E18", 1, 18, DEX),
    ("1e14", 1, 14, DEX),
    ("1e13", 1, 13, DEX),
    ("100.035k", 100035, 0, DSI),
    ("0.001", 1, -3, DSI),
    ("0.0005k", 5, -1, DSI),
    ("0.005", 5, -3, DSI),
    ("0.05", 5, -2, DSI),
    ("0.5", 5, -1, DSI),
    ("0.00050k", 5, -1, DSI),
    ("0.00500", 5, -3, DSI),
    ("0.05000", 5, -2, DSI),
    ("0.50000", 5, -1, DSI),
    ("0.5e0", 5, -1, DEX),
    ("0.5e-1", 5, -2, DEX),
    ("0.5e-2", 5, -3, DEX),
    ("10.035M", 10035, 3, DSI),
    ("1.2e3", 12, 2, DEX),
    ("1.3E+6", 13, 5, DEX),
    ("1.40e9", 14, 8, DEX),
    ("1.53E12", 153, 10, DEX),
    ("1.6e15", 16, 14, DEX),
    ("1.7E18", 17, 17, DEX),
    ("9.01", 901, -2, DSI),
    ("8.1k", 81, 2, DSI),
    ("7.123456M", 7123456, 0, DSI),
    ("6.987654321G", 6987654321, 0, DSI),
    ("5.444T", 5444, 9, DSI),
    ("40.1T", 401, 11, DSI),
    ("300.2T", 3002, 11, DSI),
    ("2.5P", 25, 14, DSI),
    ("1.01E", 101, 16, DSI),
    # Things that saturate/round
    ("3.001n", 4, -9, DSI),
    ("1.1E-9", 2, -9, DEX),
    ("0.0000000001", 1, -9, DSI),
    ("0.0000000005", 1, -9, DSI),
    ("0.00000000050", 1, -9, DSI),
    ("0.5e-9", 1, -9, DEX),
    ("0.9n", 1, -9, DSI),
    ("0.00000012345", 124, -9, DSI),
    ("0.00000012354", 124, -9, DSI),
    ("9Ei", BINARY_CAP, 0, BSI),
    ("9223372036854775807Ki", BINARY_CAP, 0, BSI),
    ("12E", 12, 18, DSI),
    # fractional binary
    ("100.035Ki", 10243584, -2, BSI),
    ("0.5Mi", 512 * 1024, 0, BSI),
    ("0.05Gi", 536870912, -1, BSI),
    ("0.025Ti", 274877906944, -1, BSI),
    # "Things written by trolls"
    ("0.000000000001Ki", 2, -9, DSI),
    (".001", 1, -3, DSI),
    (".0001k", 100, -3, DSI),
    ("1.", 1, 0, DSI),
    ("1.G", 1, 9, DSI),
]


@pytest.mark.parametrize("sign", ["", "+", "-"])
@pytest.mark.parametrize(("text", "mantissa", "scale", "fmt"), UPSTREAM_PARSE)
def test_upstream_parse_table(sign: str, text: str, mantissa: int, scale: int, fmt: Format) -> None:
    """upstream: TestQuantityParse, with its "-" and "+" loops: the sign changes nothing else."""
    quantity = parse(sign + text)
    expected = Decimal(mantissa).scaleb(scale)
    assert quantity.value == (-expected if sign == "-" else expected)
    assert quantity.format is fmt


# upstream: TestQuantityParse's invalid list.
UPSTREAM_INVALID = ["1.1.M", "1+1.0M", "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-"]
# hvpa's own: a number is required (upstream's scanner reads "m" or "+" alone as zero, its
# grammar does not), and digits are ASCII (Python's int() would read an Arabic-Indic one).
HVPA_INVALID = ["", "abc", "1.2.3", "1Kb", "m", "1 Gi", "Gi", "1e", "--1", "+", ".", "1\n2", "0x10"]


@pytest.mark.parametrize("text", [*UPSTREAM_INVALID, *HVPA_INVALID, "\u0661"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(QuantityError, match="not a quantity"):
        parse(text)


def test_surrounding_space_is_trimmed_as_unmarshal_json_does() -> None:
    # upstream refuses " 1" in ParseQuantity but its UnmarshalJSON trims first.
    assert parse(" 1 ").value == 1


def test_numbers_from_yaml_are_exact() -> None:
    assert parse(0.1).value == Decimal("0.1")
    assert parse(2).value == 2


@pytest.mark.parametrize("value", [True, None, [1], {"cpu": 1}, b"1"])
def test_only_strings_and_numbers_are_quantities(value: object) -> None:
    with pytest.raises(QuantityError, match="not a quantity"):
        parse(value)  # type: ignore[arg-type]
    assert not is_quantity(value)


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
        # upstream: TestQuantityParseEmit
        ("1Ki", "1Ki"),
        ("1Mi", "1Mi"),
        ("1024Mi", "1Gi"),
        ("1000M", "1G"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
        # upstream: TestQuantityString's alternate spellings
        ("307200Ki", "300Mi"),
        ("1025024Mi", "1001Gi"),
        ("1024Gi", "1Ti"),
        ("5000m", "5"),
        ("0.5", "500m"),
        ("0.001T", "1G"),
        ("1000u", "1m"),
        ("1.08", "1080m"),
        ("1080000000n", "1080m"),
        (".001e12", "1e9"),
        ("0.001e0", "1e-3"),
        ("00", "0"),
        # a decimal value past the E suffix is written with an exponent, as upstream now does
        ("1000E", "1e21"),
        ("1e400", "10e399"),
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    assert str(parse(text)) == canonical
    if parse(text).value:
        assert str(parse("-" + text)) == "-" + canonical


# upstream: TestParseQuantity (values around the int64 boundaries; None: the input is canonical).
@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("999999999999999999", None),
        ("999999999999999999.1", "999999999999999999100m"),
        ("9999999999999999999", None),
        ("1000000000000000000", "1E"),
        ("1.0E", "1E"),
        ("9999999999999999999000m", "9999999999999999999"),
        ("1.0000000000000000001E", "1000000000000000000100m"),
        ("1.000000000000000001E", "1000000000000000001"),
        ("10000000000000000000", "10E"),
        ("10.0000000000000000001E", "10000000000000000000100m"),
        ("9223372036854775806.1", "9223372036854775806100m"),
        ("9223372036854775807.0", "9223372036854775807"),
        ("9223372036854775808000m", "9223372036854775808"),
        ("9223372036854775808.1", "9223372036854775808100m"),
    ],
)
def test_upstream_canonical_at_the_int64_boundary(text: str, canonical: str | None) -> None:
    for sign in ("", "-"):
        assert str(parse(sign + text)) == sign + (canonical or text)


def test_milli_and_whole_round_away_from_zero_like_apimachinery() -> None:
    assert parse_milli("1.0001m") == 2
    assert parse_milli("1.5") == 1500
    assert parse_bytes("0.5") == 1
    assert parse_milli("1Gi") == 1073741824000
    # int64Amount.AsScaledInt64 (negativeScaleInt64) rounds a negative value away from zero too
    assert parse_milli("-1.5m") == -2
    assert parse_bytes("-0.5") == -1
    # and the parser rounds a value finer than 1n the same way (upstream: "-3.001n" is -4n)
    assert parse("-3.001n").value == Decimal("-4e-9")


def test_formatters() -> None:
    assert format_milli(1667) == "1667m"
    assert format_milli(2000) == "2"
    assert format_bytes(1_600_000_000) == "1600M"
    assert format_bytes(1 << 30, binary=True) == "1Gi"
    # apimachinery shows a binary-format value that is no multiple of 1024 without a suffix
    assert format_bytes(1_500_000_000, binary=True) == "1500000000"
    # exact for any size (the old formatter rounded past 28 digits)
    assert format_milli(10**40 + 1) == "10000000000000000000000000000000000000001m"
    # past Ei there is no binary suffix: the count in decimal
    assert format_bytes(1 << 70, binary=True) == "1180591620717411303424"


# -- the bounds ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("1e51", id="1e51"),
        pytest.param("1e400", id="1e400"),
        pytest.param("9" * 400, id="400-nines"),
        pytest.param("1e38", id="the-limit"),
        pytest.param("-1e38", id="the-negative-limit"),
        pytest.param("100000000000000000000000000000000000000.5", id="past-the-limit"),
        pytest.param("1e2147483647", id="largest-exponent"),
    ],
)
def test_huge_quantities_parse_exactly_and_refuse_conversion(text: str) -> None:
    """The API server stores them (upstream keeps any decimal quantity); hvpa reports them
    instead of computing with them (see hvpa.quantity on the bound)."""
    quantity = parse(text)
    assert quantity.value == Decimal(text)
    assert parse(str(quantity)).value == quantity.value
    with pytest.raises(QuantityError, match="beyond the largest quantity hvpa reads") as refused:
        quantity.milli()
    assert str(refused.value).startswith(text[:40])  # as written, not its canonical form
    with pytest.raises(QuantityError, match="beyond the largest quantity hvpa reads"):
        quantity.whole()
    assert not is_quantity(text)


@pytest.mark.parametrize(
    ("text", "units"),
    [
        pytest.param("9223372036854775807", 2**63 - 1, id="int64-max"),
        pytest.param("9223372036854775808", 2**63, id="int64-max-plus-one"),
        pytest.param("-9223372036854775809", -(2**63) - 1, id="below-int64-min"),
        pytest.param("12E", 12 * 10**18, id="12E"),
        pytest.param("1e30", 10**30, id="issue-14-saturation-metric"),
        pytest.param("9" * 38, UNITS_LIMIT - 1, id="38-nines"),
    ],
)
def test_past_int64_and_below_the_limit_converts_exactly(text: str, units: int) -> None:
    """Where upstream's Value() overflows, hvpa reads on (the engine saturates)."""
    quantity = parse(text)
    assert quantity.whole() == units
    assert quantity.milli() == units * 1000
    assert is_quantity(text)


def test_a_huge_integer_is_read_without_its_text() -> None:
    # Python refuses str() of an int past 4300 digits; YAML gives such ints for `cpu: 999...`.
    quantity = parse(10**5000)
    assert quantity.value == Decimal(10) ** 5000
    assert str(quantity) == "100e4998"
    with pytest.raises(QuantityError):
        quantity.milli()


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("1e2147483648", id="int32-max-plus-one"),
        pytest.param("1e-2147483649", id="int32-min-minus-one"),
        pytest.param("1e" + "9" * 5000, id="5000-digit-exponent"),
        pytest.param("1000e2147483647", id="value-exponent-past-int32"),
        pytest.param("1e99999999999999999999", id="past-int64"),
    ],
)
def test_an_exponent_beyond_int32_is_refused(text: str) -> None:
    """upstream reads the exponent as an int64 and narrows it to int32 unchecked (it wraps);
    hvpa refuses it, so every canonical form it writes parses again."""
    with pytest.raises(QuantityError, match="exponent is out of range"):
        parse(text)


def test_the_smallest_exponent_rounds_up_to_a_nanounit() -> None:
    assert parse("1e-2147483648").value == Decimal("1e-9")
    assert parse("1e-2147483648").milli() == 1


def test_long_texts_are_exact_and_messages_short() -> None:
    long_fraction = "1." + "0" * 100_000 + "1"
    assert parse(long_fraction).value == Decimal("1.000000001")
    with pytest.raises(QuantityError) as refused:
        parse("x" * 100_000)
    assert len(str(refused.value)) < 200


def test_binary_cap_keeps_the_sign() -> None:
    assert parse("-9Ei").value == -BINARY_CAP
    assert str(parse("9Ei")) == str(BINARY_CAP)


# -- properties ------------------------------------------------------------------------------

_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


@st.composite
def quantity_texts(draw: st.DrawFn) -> str:
    """Texts in the grammar, with long mantissas and exponents up to and past int32."""
    sign = draw(st.sampled_from(["", "+", "-"]))
    whole = draw(st.text("0123456789", max_size=30))
    fraction = draw(st.none() | st.text("0123456789", max_size=30))
    if not whole and not fraction:
        whole = "0"
    number = whole if fraction is None else f"{whole}.{fraction}"
    exponent = st.integers(-(2**32), 2**32).map(lambda e: f"e{e}")
    suffix = draw(st.sampled_from(_SUFFIXES) | exponent)
    return f"{sign}{number}{suffix}"


def _away_from_zero(value: Fraction) -> int:
    return int(value) if value.denominator == 1 else int(value) + (1 if value > 0 else -1)


@given(quantity_texts() | st.text(max_size=40))
def test_every_text_parses_exactly_or_is_refused(text: str) -> None:
    """Nothing but QuantityError, for parsing and for every conversion of what parsed."""
    try:
        quantity = parse(text)
    except QuantityError:
        return
    canonical = str(quantity)
    assert parse(canonical).value == quantity.value
    assert str(parse(canonical)) == canonical
    try:
        milli = quantity.milli()
    except QuantityError:
        assert quantity.value.copy_abs() >= UNITS_LIMIT
        return
    assert milli == _away_from_zero(Fraction(quantity.value) * 1000)
    assert quantity.whole() == _away_from_zero(Fraction(quantity.value))


@given(st.integers(min_value=-(10**15), max_value=10**15))
def test_milli_round_trip(milli: int) -> None:
    assert parse_milli(format_milli(milli)) == milli


@given(st.integers(min_value=0, max_value=1 << 62), st.booleans())
def test_bytes_round_trip(count: int, binary: bool) -> None:
    assert parse_bytes(format_bytes(count, binary)) == count


def test_quantity_compares_by_value() -> None:
    assert Quantity(Decimal(1)) < Quantity(Decimal(2)) <= Quantity(Decimal(2))


# -- spellings for a reader ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "spelled"),
    [
        pytest.param(641 << 20, "641Mi", id="whole-mebibytes"),
        pytest.param(1536 << 20, "1.5Gi", id="two-decimals-exact"),
        # 1.125Gi needs three decimals: the next suffix down says it exactly
        pytest.param(1152 << 20, "1152Mi", id="three-decimals-go-down"),
        pytest.param(2 << 30, "2Gi", id="whole-gibibytes"),
        pytest.param(1000 << 20, "1000Mi", id="under-a-gibibyte"),
        pytest.param(512 << 10, "512Ki", id="under-a-mebibyte"),
        # the 672138k: Gardener's 1000-byte rounding, no multiple of 1Ki
        pytest.param(672_138_000, "672.138M", id="not-binary"),
        # a multiple of 1Ki above 1Mi that is no whole MiB reads better in decimal
        pytest.param(656_385 << 10, "672.13824M", id="kibibytes-above-a-mebibyte"),
        pytest.param(1_000_000_000, "1G", id="decimal-exact"),
        pytest.param(999, "999", id="bytes"),
        pytest.param(0, "0", id="zero"),
        pytest.param(-(3 << 20), "-3Mi", id="negative"),
        # past int64 a binary suffix would be capped when parsed back: decimal instead
        pytest.param(1 << 70, "1180.591620717411303424E", id="past-int64"),
    ],
)
def test_human_bytes(count: int, spelled: str) -> None:
    assert format_human_bytes(count) == spelled
    assert parse_bytes(spelled) == count


@pytest.mark.parametrize(
    ("milli", "spelled"),
    [
        pytest.param(250, "250m", id="millicores"),
        pytest.param(1500, "1.5", id="cores-with-a-fraction"),
        pytest.param(1001, "1.001", id="every-decimal-kept"),
        pytest.param(2000, "2", id="whole-cores"),
        pytest.param(20_000_000, "20k", id="thousands"),
        pytest.param(-1500, "-1.5", id="negative"),
        pytest.param(0, "0", id="zero"),
    ],
)
def test_human_milli(milli: int, spelled: str) -> None:
    assert format_human(milli) == spelled
    assert parse_milli(spelled) == milli


def test_human_memory_reads_milli_bytes() -> None:
    assert format_human_memory((641 << 20) * 1000) == "641Mi"
    # a fraction of a byte (memory: 100m written by hand) is kept exactly
    assert format_human_memory(100) == "100m"


@given(st.integers(min_value=-(1 << 80), max_value=1 << 80))
def test_human_bytes_are_exact(count: int) -> None:
    assert parse_bytes(format_human_bytes(count)) == count


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_human_milli_is_exact(milli: int) -> None:
    assert parse_milli(format_human(milli)) == milli


def _binary_reading(count: int) -> str | None:
    """The binary spelling `format_human_bytes` promises, from its definition in fractions:
    the largest suffix from Mi up whose mantissa is at least 1 and exact in two decimals."""
    if not (1 << 20 <= abs(count) <= BINARY_CAP and count % (1 << 20) == 0):
        return None
    for suffix, bits in (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20)):
        mantissa = Fraction(abs(count), 1 << bits)
        if mantissa >= 1 and (mantissa * 100).denominator == 1:
            whole, hundredths = divmod(int(mantissa * 100), 100)
            decimals = f".{hundredths:02d}".rstrip("0").rstrip(".")
            return f"{'-' if count < 0 else ''}{whole}{decimals}{suffix}"
    return None


@given(
    st.integers(min_value=20, max_value=62).flatmap(
        lambda bits: st.integers(min_value=1, max_value=BINARY_CAP >> bits).map(
            lambda units: units << bits
        )
    )
)
def test_human_bytes_binary_spelling(count: int) -> None:
    """Whole MiB up to the cap, as multiples of 2^20 to 2^62 so that every suffix's
    fractions come up (a count exact in hundredths of a TiB, PiB or EiB), are spelled as
    the fractions say; integer arithmetic must not round a mantissa."""
    expected = _binary_reading(count)
    assert expected is not None
    assert format_human_bytes(count) == expected


@given(
    st.integers(min_value=-(10**45), max_value=10**45)
    | st.integers(min_value=-(1 << 1100), max_value=1 << 1100)
)
def test_human_spelling_is_the_decimal_one(number: int) -> None:
    """The reader's decimal spelling, computed with integers, is the one the Decimal steps
    give (`_human_decimal`, which spells amounts past 1,024 bits)."""
    assert format_human(number) == (
        f"{number}m" if 0 < abs(number) < 1000 else _human_decimal(Decimal(f"{number}e-3"))
    )
    if _binary_reading(number) is None and not (1 << 10 <= abs(number) < 1 << 20):
        assert format_human_bytes(number) == _human_decimal(Decimal(number))


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("123456789n", id="cpu-as-metrics-server-writes-it"),
        pytest.param("1n", id="one-nano-rounds-up"),
        pytest.param("1000000n", id="nano-exact"),
        pytest.param("1500u", id="micro"),
        pytest.param("250m", id="milli"),
        pytest.param("0", id="zero"),
        pytest.param("007", id="leading-zeros"),
        pytest.param("40960Ki", id="memory-as-the-kubelet-writes-it"),
        pytest.param("999999999999999999T", id="largest-decimal-fast"),
        pytest.param("8388607Ti", id="binary-at-the-cap"),
        pytest.param("8388608Ti", id="binary-past-the-cap"),
        pytest.param("999999999999999999Ti", id="binary-far-past-the-cap"),
        pytest.param("1000000000000000000n", id="nineteen-digits"),
        pytest.param("5Pi", id="peta-binary"),
        pytest.param("2E", id="exa"),
        pytest.param(" 100m ", id="spaces"),
        pytest.param("-100m", id="negative"),
        pytest.param("1.5Gi", id="fraction"),
        pytest.param("19.52", id="fraction-as-the-status-history-writes-it"),
        pytest.param("41.913172725G", id="memory-as-the-status-history-writes-it"),
        pytest.param("0.0000000001", id="fraction-below-a-nano-rounds-up"),
        pytest.param("000.500", id="zeros-each-side"),
        pytest.param("8388607.5Ti", id="binary-fraction-below-the-cap"),
        # 2^63 - 2^40 * 10^-18: within a byte of 2^63, above the cap
        pytest.param("8388607.999999999999999999Ti", id="binary-fraction-past-the-cap"),
        pytest.param("1.", id="point-without-fraction"),
        pytest.param(".5", id="fraction-without-digits-before"),
        pytest.param("1.5e3", id="fraction-and-exponent"),
        pytest.param("1e3", id="exponent"),
        pytest.param(2, id="int"),
        pytest.param(0.5, id="float"),
    ],
)
def test_milli_value_is_parse_milli(text: str | int | float) -> None:
    """The integer reading of digits and a suffix gives what the Decimal one gives, up to the
    binary cap (8388607Ti is 2^63 - 2^40, below it; 8388608Ti is 2^63, capped to 2^63 - 1)."""
    assert milli_value(text) == parse(text).milli()


@given(
    digits=st.integers(min_value=0, max_value=10**19),
    suffix=st.sampled_from(["", "n", "u", "m", "k", "M", "G", "T", "P", "E"])
    | st.sampled_from(["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]),
)
def test_milli_value_agrees_with_parse_on_digits_and_a_suffix(digits: int, suffix: str) -> None:
    text = f"{digits}{suffix}"
    try:
        expected: int | type[QuantityError] = parse(text).milli()
    except QuantityError:
        expected = QuantityError
    if expected is QuantityError:
        with pytest.raises(QuantityError):
            milli_value(text)
    else:
        assert milli_value(text) == expected


@given(
    whole=st.integers(min_value=0, max_value=10**19),
    fraction=st.text("0123456789", min_size=1, max_size=20),
    suffix=st.sampled_from(["", "n", "u", "m", "k", "M", "G", "T", "P", "E"])
    | st.sampled_from(["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]),
)
def test_milli_value_agrees_with_parse_on_a_fraction(
    whole: int, fraction: str, suffix: str
) -> None:
    """A point and decimals too (the spelling of `format_human`, which the status history
    keeps): the integer reading rounds up and caps as the Decimal one does."""
    text = f"{whole}.{fraction}{suffix}"
    assert milli_value(text) == parse(text).milli()


def test_milli_value_refuses_what_parse_refuses() -> None:
    with pytest.raises(QuantityError):
        milli_value("12x")
    with pytest.raises(QuantityError):
        milli_value("1e51")
