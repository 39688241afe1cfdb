"""spec.maintenanceTimeWindow: the schema and the parse agree, because they are one pattern.

The CRD's pattern for `begin`/`end` (what the API server and `hvpa validate`
accept) and `parse_maintenance_window` (what the engine's MaintenanceWindow
gate reads) are the same definition: a time the schema accepts always
parses, and one it refuses never does.
"""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hvpa.api.maintenance import MaintenanceWindowError, parse_maintenance_window
from hvpa.api.spec import MaintenanceTimeWindow

# Window times and near misses: eleven (or ten, or twelve) characters of digits and signs.
TIMES = st.text(alphabet="0123456789+- \n", min_size=10, max_size=12)


def schema_accepts(text: str) -> bool:
    try:
        msgspec.convert({"begin": text, "end": "000000+0000"}, MaintenanceTimeWindow)
    except msgspec.ValidationError:
        return False
    return True


def parses(text: str) -> bool:
    try:
        parse_maintenance_window(text, "000000+0000")
    except MaintenanceWindowError:
        return False
    return True


@given(TIMES)
def test_schema_and_parse_agree(text: str) -> None:
    assert schema_accepts(text) == parses(text)


@pytest.mark.parametrize(
    ("text", "valid"),
    [
        pytest.param("220000+0100", True, id="valid"),
        pytest.param("235959-2359", True, id="the last second, the widest offset"),
        pytest.param("240000+0000", False, id="hour 24"),
        pytest.param("226000+0000", False, id="minute 60"),
        pytest.param("220060+0000", False, id="second 60"),
        pytest.param("220000+2400", False, id="zone 24"),
        pytest.param("220000 0100", False, id="no sign"),
    ],
)
def test_both_sides_of_the_pattern(text: str, valid: bool) -> None:
    assert schema_accepts(text) is valid
    assert parses(text) is valid


def test_parsed_to_utc_seconds_of_the_day() -> None:
    """160554+0200 is 14:05:54 UTC (Gardener's timewindow_test.go #ParseMaintenanceTime)."""
    window = parse_maintenance_window("160554+0200", "170000+0200")
    assert (window.begin, window.end) == (14 * 3600 + 5 * 60 + 54, 15 * 3600)
