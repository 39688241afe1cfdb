"""Load traces: the workload's total demand over time, built in or read from a CSV file.

A trace answers one question, `demand_at(seconds since the start)`: how much
CPU (millicores) and memory (bytes) the workload as a whole needs then. The
load model (load.py) spreads it over the ready pods; nothing in a trace
knows about pods or replicas, so the same trace drives every strategy alike.

Built-in shapes move a level between `low` and `high` (fractions of the peak
`cpu` and `memory`, which default to the scenario's peak); their times are
durations (`at=2h`) or shares of the run (`at=25%`):

    steady                          high all the time
    step:at=25%,until=75%           low, then high from `at` until `until` (100%: stays high)
    ramp:start=10%,top=40%,fall=60%,end=90%
                                    low, rising to high from `start` to `top`, falling from `fall` to `end`
    diurnal:period=100%             low + (high - low) x (1 - cos(2 pi t / period)) / 2: one day per period
    spike:at=50%,width=10m          low, high for `width` from `at`
    noisy:level=60%,amplitude=30%,every=2m
                                    a seeded random walk around `level`, new point every `every`

A CSV trace (`time,cpu,memory`, one header line, seconds and total demand as
quantities `500m`, `2Gi` or plain numbers of cores and bytes) is read as
given and interpolated linearly; before its first row it holds the first
value, after its last the last. What can go wrong: a malformed file raises
TraceError naming the file, the line and the problem.
"""

from __future__ import annotations

import csv
import math
import random
from bisect import bisect_right
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import InvalidOperation
from pathlib import Path
from typing import Final

from hvpa.durations import DurationError, parse_duration
from hvpa.quantity import QuantityError, parse

__all__ = [
    "TRACE_NAMES",
    "Demand",
    "Trace",
    "TraceError",
    "load_csv_trace",
    "parse_trace",
]


class TraceError(ValueError):
    """A trace that cannot be built: an unknown name or parameter, or a malformed CSV file."""


@dataclass(frozen=True, slots=True)
class Demand:
    """Total demand of the workload at one instant."""

    cpu_millicores: float
    memory_bytes: float


@dataclass(frozen=True, slots=True)
class Trace:
    """A named demand curve. `duration_seconds` is the trace's own length (a CSV file's last
    time), None for built-in shapes, which stretch to the run."""

    name: str
    demand_at: Callable[[float], Demand]
    duration_seconds: float | None = None


# ---------------------------------------------------------------- parameters

# A level is a share of the peak; a hundred times the peak is far past any useful trace, and a
# bound keeps `nan`, `inf` and `1e400` out of the arithmetic.
_MAX_LEVEL: Final = 100.0
# The largest total demand a trace may ask for: a million cores and a pebibyte, far past any one
# workload, and small enough that every sum the simulated cluster makes stays a finite float.
_MAX_CPU_MILLICORES: Final = 1e9
_MAX_MEMORY_BYTES: Final = float(2**50)
_MAX_SPELLING: Final = {True: "1M cores", False: "1Pi"}
# A noisy trace draws one point every `every`: at most this many points, so that a tiny `every`
# over a long run is refused instead of filling the memory before the run starts.
_MAX_NOISY_POINTS: Final = 1_000_000


def _level(text: str) -> float:
    """`0.2` or `20%`, from 0 to a hundred times the peak."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise TraceError(f"{text!r} is not a level (e.g. 0.2 or 20%)") from None
    if not 0 <= value <= _MAX_LEVEL:  # also false for nan
        raise TraceError(f"{text!r} is not a level from 0 to 100 (e.g. 0.2 or 20%)")
    return value


def _time(text: str, duration: float) -> float:
    """`25%` of the run, or a duration (`2h`, `90s`); never before the start."""
    if text.lstrip().startswith("-"):
        raise TraceError(f"{text!r} is negative")
    if text.endswith("%"):
        return _level(text) * duration
    try:
        return parse_duration(text)
    except DurationError:
        raise TraceError(f"{text!r} is not a time (e.g. 2h, 90s or 25%)") from None


def _quantity(text: str, *, milli: bool, what: str = "quantity") -> float:
    """CPU as millicores or memory as bytes, from 0 to the largest demand a trace may have;
    `what` names the value where it is not a quantity at all."""
    try:
        value = parse(text)
    except (QuantityError, InvalidOperation):
        raise TraceError(f"{text!r} is not a {what}") from None
    too_large = TraceError(f"{text!r} is not a quantity from 0 to {_MAX_SPELLING[milli]}")
    try:
        millis = value.milli()  # past 1e38 hvpa holds no quantity as a number
    except QuantityError:
        raise too_large from None
    if millis < 0:
        raise TraceError(f"{text!r} is negative")
    number = float(millis if milli else value.whole())
    if number > (_MAX_CPU_MILLICORES if milli else _MAX_MEMORY_BYTES):
        raise too_large
    return number


@dataclass(frozen=True, slots=True)
class _Shape:
    """A built-in shape: its parameters with defaults, and the level it gives at a time."""

    defaults: Mapping[str, str]
    level: Callable[
        [float, Mapping[str, float], float, float, random.Random], Callable[[float], float]
    ]
    times: frozenset[str] = frozenset()


def _steady(
    duration: float, p: Mapping[str, float], low: float, high: float, rng: random.Random
) -> Callable[[float], float]:
    return lambda t: high


def _step(
    duration: float, p: Mapping[str, float], low: float, high: float, rng: random.Random
) -> Callable[[float], float]:
    at, until = p["at"], p["until"]
    if at > until:
        raise TraceError("needs at <= until")
    return lambda t: high if at <= t < until or (t >= at and until >= duration) else low


def _ramp(
    duration: float, p: Mapping[str, float], low: float, high: float, rng: random.Random
) -> Callable[[float], float]:
    start, top, fall, end = p["start"], p["top"], p["fall"], p["end"]
    if not start <= top <= fall <= end:
        raise TraceError("needs start <= top <= fall <= end")

    def level(t: float) -> float:
        if t < start or t >= end:
            return low
        if t < top:
            return low + (high - low) * (t - start) / (top - start)
        if t < fall:
            return high
        return high - (high - low) * (t - fall) / (end - fall)

    return level


def _diurnal(
    duration: float, p: Mapping[str, float], low: float, high: float, rng: random.Random
) -> Callable[[float], float]:
    period = p["period"]
    if period <= 0:
        raise TraceError("period must be positive")
    return lambda t: low + (high - low) * (1 - math.cos(2 * math.pi * t / period)) / 2


def _spike(
    duration: float, p: Mapping[str, float], low: float, high: float, rng: random.Random
) -> Callable[[float], float]:
    at, width = p["at"], p["width"]
    if width <= 0:
        raise TraceError("width must be positive")
    return lambda t: high if at <= t < at + width else low


def _noisy(
    duration: float, p: Mapping[str, float], low: float, high: float, rng: random.Random
) -> Callable[[float], float]:
    """A random walk pulled back to `level`: knots every `every` seconds, linear in between.
    The knots are drawn once from the seeded generator, so a seed gives one curve."""
    every = p["every"]
    if every <= 0:
        raise TraceError("every must be positive")
    if duration / every > _MAX_NOISY_POINTS:
        raise TraceError(
            f"every {every:g}s draws more than {_MAX_NOISY_POINTS} points over the run: "
            f"make it at least {duration / _MAX_NOISY_POINTS:.3g}s"
        )
    level, amplitude = p["level"], p["amplitude"]
    knots: list[float] = []
    value = level
    for _ in range(int(duration // every) + 2):
        knots.append(min(max(value, low), high))
        value += 0.5 * (level - value) + rng.uniform(-amplitude, amplitude)

    def at(t: float) -> float:
        index = min(int(t // every), len(knots) - 2)
        fraction = min(max(t / every - index, 0.0), 1.0)
        return knots[index] + (knots[index + 1] - knots[index]) * fraction

    return at


_SHAPES: Final[dict[str, _Shape]] = {
    "steady": _Shape({}, _steady),
    "step": _Shape({"at": "25%", "until": "75%"}, _step, frozenset({"at", "until"})),
    "ramp": _Shape(
        {"start": "10%", "top": "40%", "fall": "60%", "end": "90%"},
        _ramp,
        frozenset({"start", "top", "fall", "end"}),
    ),
    "diurnal": _Shape({"period": "100%"}, _diurnal, frozenset({"period"})),
    "spike": _Shape({"at": "50%", "width": "10m"}, _spike, frozenset({"at", "width"})),
    "noisy": _Shape(
        {"level": "60%", "amplitude": "30%", "every": "2m"}, _noisy, frozenset({"every"})
    ),
}
TRACE_NAMES: Final = tuple(_SHAPES)
_COMMON: Final = {"low": "20%", "high": "100%"}


def _split_parameters(spec: str) -> tuple[str, dict[str, str]]:
    name, _, rest = spec.partition(":")
    given: dict[str, str] = {}
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise TraceError(f"trace {name}: {item!r} is not key=value")
        given[key.strip()] = value.strip()
    return name.strip(), given


def parse_trace(spec: str, *, duration_seconds: float, peak: Demand, seed: int) -> Trace:
    """A trace from `--trace`: a CSV file (a name ending in .csv) or `NAME[:key=value,...]`.

    `peak` is the demand at level 1 unless `cpu=` / `memory=` say otherwise;
    `duration_seconds` is the run's length, which shares (`25%`) refer to.
    """
    if spec.endswith(".csv"):
        return load_csv_trace(Path(spec))
    name, given = _split_parameters(spec)
    shape = _SHAPES.get(name)
    if shape is None:
        raise TraceError(
            f"unknown trace {name!r}: expected one of {', '.join(TRACE_NAMES)} or a .csv file"
        )
    allowed = {**_COMMON, **shape.defaults, "cpu": "", "memory": ""}
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise TraceError(
            f"trace {name}: unknown parameter {', '.join(unknown)} "
            f"(known: {', '.join(sorted(allowed))})"
        )
    try:
        cpu, memory, values = _parameters(shape, given, duration_seconds, peak)
        low, high = values["low"], values["high"]
        if not low <= high:
            raise TraceError("needs 0 <= low <= high")
        level = shape.level(duration_seconds, values, low, high, random.Random(seed))
    except TraceError as error:
        raise TraceError(f"trace {name}: {error}") from None
    label = name if not given else f"{name}:{','.join(f'{k}={v}' for k, v in given.items())}"

    def demand_at(t: float) -> Demand:
        share = level(t)  # once per call: the cluster asks at every tick
        return Demand(cpu * share, memory * share)

    return Trace(label, demand_at)


def _parameters(
    shape: _Shape, given: Mapping[str, str], duration: float, peak: Demand
) -> tuple[float, float, dict[str, float]]:
    """The peak CPU and memory and every level and time; a bad one raises TraceError naming
    it."""
    values: dict[str, float] = {}
    for key, default in {**_COMMON, **shape.defaults}.items():
        text = given.get(key, default)
        parse_one = (lambda t: _time(t, duration)) if key in shape.times else _level
        values[key] = _named(key, parse_one, text)
    cpu = peak.cpu_millicores
    if "cpu" in given:
        cpu = _named("cpu", lambda t: _quantity(t, milli=True), given["cpu"])
    memory = peak.memory_bytes
    if "memory" in given:
        memory = _named("memory", lambda t: _quantity(t, milli=False), given["memory"])
    return cpu, memory, values


def _named(key: str, parse_one: Callable[[str], float], text: str) -> float:
    """`parse_one(text)`, its TraceError prefixed with the parameter's name."""
    try:
        return parse_one(text)
    except TraceError as error:
        raise TraceError(f"{key}: {error}") from None


# ---------------------------------------------------------------- CSV


def _csv_value(text: str, *, cpu: bool, where: str) -> float:
    """Cores or a CPU quantity as millicores; bytes or a memory quantity as bytes."""
    what = "CPU quantity" if cpu else "memory quantity"
    try:
        # In range: not negative, not past the largest demand.
        return _quantity(text.strip(), milli=cpu, what=what)
    except TraceError as error:
        raise TraceError(f"{where}: {error}") from None


def load_csv_trace(path: Path) -> Trace:
    """Read `time,cpu,memory` rows; raises TraceError naming the line at fault."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise TraceError(f"{path}: cannot read: {error.strerror or error}") from None
    rows = list(csv.reader(text.splitlines()))
    header = [cell.strip().lower() for cell in rows[0]] if rows else []
    if header != ["time", "cpu", "memory"]:
        raise TraceError(f"{path}:1: the header must be time,cpu,memory (got {','.join(header)!r})")
    times: list[float] = []
    demands: list[Demand] = []
    for number, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            continue
        where = f"{path}:{number}"
        if len(row) != 3:
            raise TraceError(f"{where}: expected 3 columns (time,cpu,memory), got {len(row)}")
        try:
            seconds = float(row[0])
        except ValueError:
            raise TraceError(
                f"{where}: time {row[0].strip()!r} is not a number of seconds"
            ) from None
        if not math.isfinite(seconds) or seconds < 0:
            raise TraceError(f"{where}: time {row[0].strip()!r} must be a finite number >= 0")
        if times and seconds <= times[-1]:
            raise TraceError(f"{where}: times must increase ({seconds:g} after {times[-1]:g})")
        times.append(seconds)
        demands.append(
            Demand(
                _csv_value(row[1], cpu=True, where=where),
                _csv_value(row[2], cpu=False, where=where),
            )
        )
    if not times:
        raise TraceError(f"{path}: no rows after the header")

    def demand_at(t: float) -> Demand:
        index = bisect_right(times, t)
        if index == 0:
            return demands[0]
        if index == len(times):
            return demands[-1]
        t0, t1 = times[index - 1], times[index]
        d0, d1 = demands[index - 1], demands[index]
        share = (t - t0) / (t1 - t0)
        return Demand(
            d0.cpu_millicores + (d1.cpu_millicores - d0.cpu_millicores) * share,
            d0.memory_bytes + (d1.memory_bytes - d0.memory_bytes) * share,
        )

    return Trace(path.name, demand_at, duration_seconds=times[-1] or None)
