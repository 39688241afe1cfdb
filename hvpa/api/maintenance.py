"""`spec.maintenanceTimeWindow`: one pattern for the schema and the parse.

Gardener's layout `150405-0700` (HHMMSS and a zone offset, `220000+0100`).
`WINDOW_TIME_PATTERN` is the CRD's pattern for `begin` and `end` (so the API
server and `hvpa validate` refuse a bad time) and the same pattern's groups
are what `parse_maintenance_window` reads: one definition of a valid window
time, parsed once, in the API layer; the engine receives a
`MaintenanceWindow` and never sees the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "WINDOW_TIME_PATTERN",
    "MaintenanceWindow",
    "MaintenanceWindowError",
    "parse_maintenance_window",
]

# Hours 00-23, minutes and seconds 00-59, a sign, zone hours 00-23 and minutes 00-59:
# eleven characters at fixed places, which the parse reads once the pattern matched.
WINDOW_TIME_PATTERN: Final = (
    r"^([01][0-9]|2[0-3])[0-5][0-9][0-5][0-9][+-]([01][0-9]|2[0-3])[0-5][0-9]$"
)
_WINDOW_TIME: Final = re.compile(WINDOW_TIME_PATTERN)
_DAY: Final = 86_400


class MaintenanceWindowError(ValueError):
    """A window time outside the pattern (a spec that skipped validation)."""


@dataclass(frozen=True, slots=True)
class MaintenanceWindow:
    """A daily window, held as UTC seconds of the day, as Gardener's utils.MaintenanceTimeWindow.

    Both ends are inclusive, to the second. An end before the begin spans
    midnight; an end equal to the begin is that one second.
    """

    begin: int
    end: int
    text: str

    def contains(self, now: float) -> bool:
        moment = int(now // 1) % _DAY
        if self.end < self.begin:
            return not (self.end < moment < self.begin)
        return self.begin <= moment <= self.end


def _seconds_of_day_utc(text: str) -> int:
    # Searched as the schema check searches it (msgspec's pattern check), so both agree.
    if _WINDOW_TIME.search(text) is None:
        raise MaintenanceWindowError(
            f"{text!r} is not a time of day HHMMSS+ZZZZ (e.g. 220000+0100)"
        )
    hour, minute, second = text[0:2], text[2:4], text[4:6]
    sign, zone_hours, zone_minutes = text[6], text[7:9], text[9:11]
    offset = (int(zone_hours) * 3600 + int(zone_minutes) * 60) * (1 if sign == "+" else -1)
    return (int(hour) * 3600 + int(minute) * 60 + int(second) - offset) % _DAY


def parse_maintenance_window(begin: str, end: str) -> MaintenanceWindow:
    """`maintenanceTimeWindow{begin, end}`; raises MaintenanceWindowError on a bad time."""
    return MaintenanceWindow(_seconds_of_day_utc(begin), _seconds_of_day_utc(end), f"{begin}-{end}")
