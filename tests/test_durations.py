"""Go duration strings as Gardener's stabilizationDuration and PodMetrics windows use them;
spans as kubectl shows ages."""

import pytest

from hvpa.durations import DurationError, format_duration, human_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("1m30s", 90),
        ("5m", 300),
        ("1h", 3600),
        ("300ms", 0.3),
        ("0", 0),
        ("2h45m0s", 9900),
        ("1.5s", 1.5),
        (120, 120),
    ],
)
def test_parse(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5", "m", "1x", "1h-5m", "s", None, ["5m"], {"s": 1}])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(DurationError):
        parse_duration(text)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("9" * 1_000_001 + "s", id="a-million-digits"),  # was decimal.Overflow
        pytest.param(
            "2562048h", id="past-int64-nanoseconds"
        ),  # 2562047h47m16.854775807s is Go's max
        pytest.param("9223372036.854775808s", id="one-nanosecond-past"),
    ],
)
def test_a_duration_past_gos_range_is_refused(text: str) -> None:
    with pytest.raises(DurationError, match="out of range"):
        parse_duration(text)


@pytest.mark.parametrize(
    "seconds",
    [
        pytest.param(10**400, id="an-int-too-large-for-a-float"),  # was OverflowError
        pytest.param(9223372037, id="one-second-past"),
        pytest.param(-9223372037, id="one-second-past-negative"),
        pytest.param(1e300, id="a-float-past-the-range"),
    ],
)
def test_a_bare_number_past_gos_range_is_refused(seconds: float) -> None:
    with pytest.raises(DurationError, match="out of range"):
        parse_duration(seconds)


@pytest.mark.parametrize("seconds", [float("inf"), float("-inf"), float("nan")])
def test_a_number_that_is_not_finite_is_refused(seconds: float) -> None:
    with pytest.raises(DurationError, match="not a duration"):
        parse_duration(seconds)


def test_gos_longest_duration_parses() -> None:
    assert parse_duration("2562047h47m16.854775807s") == 9223372036.854775807


@pytest.mark.parametrize(
    ("seconds", "text"), [(0, "0s"), (30, "30s"), (300, "5m0s"), (3600, "1h0m0s"), (1.5, "1.5s")]
)
def test_format(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        # apimachinery's duration_test.go (TestHumanDuration): the same boundaries.
        pytest.param(-2, "<invalid>", id="future"),
        pytest.param(-1, "0s", id="skew"),
        pytest.param(119, "119s", id="seconds"),
        pytest.param(120, "2m", id="two-minutes"),
        pytest.param(176, "2m56s", id="minutes-seconds"),
        pytest.param(600, "10m", id="ten-minutes"),
        pytest.param(3 * 3600, "3h", id="hours"),
        pytest.param(3 * 3600 + 60, "3h1m", id="hours-minutes"),
        pytest.param(8 * 3600, "8h", id="eight-hours"),
        pytest.param(48 * 3600, "2d", id="days"),
        pytest.param(50 * 3600, "2d2h", id="days-hours"),
        pytest.param(8 * 86400, "8d", id="eight-days"),
        pytest.param(689 * 86400, "689d", id="689-days"),
        pytest.param(730 * 86400, "2y", id="years"),
        pytest.param(740 * 86400, "2y10d", id="years-days"),
        pytest.param(8 * 365 * 86400, "8y", id="eight-years"),
    ],
)
def test_ages_read_as_kubectl_shows_them(seconds: float, shown: str) -> None:
    assert human_duration(seconds) == shown
