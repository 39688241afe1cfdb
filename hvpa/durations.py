"""Go duration strings (`90s`, `1m30s`, `300ms`, `1h`), as Gardener's Hvpa and metav1.Duration write them."""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Final

__all__ = ["DurationError", "format_duration", "human_duration", "parse_duration"]


class DurationError(ValueError):
    """A string that Go's time.ParseDuration would reject."""


_UNITS: Final = {
    "ns": Decimal("1e-9"),
    "us": Decimal("1e-6"),
    "µs": Decimal("1e-6"),
    "μs": Decimal("1e-6"),
    "ms": Decimal("1e-3"),
    "s": Decimal(1),
    "m": Decimal(60),
    "h": Decimal(3600),
}
_PART_RE: Final = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
# Go's time.Duration is an int64 of nanoseconds; ParseDuration refuses a longer one (~292 years).
_MAX_SECONDS: Final = Decimal((1 << 63) - 1).scaleb(-9)
# A number with more whole digits than this is past the maximum in any unit (10^20 ns > 2^63 ns),
# refused before Decimal arithmetic on it could overflow.
_MAX_WHOLE_DIGITS: Final = 20


def parse_duration(text: str | int | float) -> float:
    """Seconds in a Go duration; a bare number is taken as seconds (scenario settings allow it)."""
    if isinstance(text, bool):
        raise DurationError(f"{text!r} is not a duration")
    if isinstance(text, int | float):
        if isinstance(text, float) and not math.isfinite(text):
            raise DurationError(f"{text!r} is not a duration")
        if abs(Decimal(text)) > _MAX_SECONDS:
            raise _out_of_range(str(text))
        return float(text)
    if not isinstance(text, str):
        raise DurationError(f"{text!r} is not a duration (expected e.g. 90s, 5m, 1h30m)")
    source = text.strip()
    body = source
    sign = 1
    if body[:1] in ("+", "-"):
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return 0.0
    if not body:
        raise DurationError(f"{source!r} is not a duration (expected e.g. 90s, 5m, 1h30m)")
    total = Decimal(0)
    position = 0
    while position < len(body):
        match = _PART_RE.match(body, position)
        if match is None or match[1] in ("", "."):
            raise DurationError(f"{source!r} is not a duration (expected e.g. 90s, 5m, 1h30m)")
        if len(match[1].split(".")[0].lstrip("0")) > _MAX_WHOLE_DIGITS:
            raise _out_of_range(source)
        total += Decimal(match[1]) * _UNITS[match[2]]
        position = match.end()
    if total > _MAX_SECONDS:
        raise _out_of_range(source)
    return float(sign * total)


def _out_of_range(source: str) -> DurationError:
    shown = source if len(source) <= 40 else f"{source[:40]}..."
    return DurationError(
        f"{shown!r} is out of range (a duration ends at about 292 years, as in Go)"
    )


def format_duration(seconds: float) -> str:
    """Seconds as a Go duration string (`5m0s`, `1h0m0s`, `30s`, `1.5s`)."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    remaining = Decimal(str(abs(seconds)))
    hours, remaining = divmod(remaining, 3600)
    minutes, remaining = divmod(remaining, 60)
    secs = f"{remaining.normalize():f}" if remaining % 1 else str(int(remaining))
    if hours:
        return f"{sign}{int(hours)}h{int(minutes)}m{secs}s"
    if minutes:
        return f"{sign}{int(minutes)}m{secs}s"
    return f"{sign}{secs}s"


def human_duration(seconds: float) -> str:
    """A span as kubectl shows an age (apimachinery's duration.HumanDuration): `45s`,
    `3m20s`, `5h12m`, `3d4h`, `2y30d`; precise where the span is short, coarse where it
    is long, so a reader sees its size at a glance."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    whole = int(seconds)
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24 % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"
