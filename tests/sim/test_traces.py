"""Traces: the built-in shapes and their parameters, seeded noise, and CSV files good and malformed."""

from __future__ import annotations

from pathlib import Path

import pytest

from hvpa.sim.traces import Demand, TraceError, load_csv_trace, parse_trace

PEAK = Demand(4000.0, 4 * 2**30)
HOUR = 3600.0


def level(spec: str, t: float, *, duration: float = 10 * HOUR, seed: int = 1) -> float:
    """The trace's CPU demand at `t` as a share of the peak."""
    trace = parse_trace(spec, duration_seconds=duration, peak=PEAK, seed=seed)
    return trace.demand_at(t).cpu_millicores / PEAK.cpu_millicores


@pytest.mark.parametrize(
    ("spec", "t", "expected"),
    [
        pytest.param("steady", 0.0, 1.0, id="steady-high"),
        pytest.param("steady:high=50%", 5 * HOUR, 0.5, id="steady-level"),
        pytest.param("step", 2 * HOUR, 0.2, id="step-before"),
        pytest.param("step", 3 * HOUR, 1.0, id="step-during"),
        pytest.param("step", 8 * HOUR, 0.2, id="step-after"),
        pytest.param("step:at=1h,until=100%", 9.9 * HOUR, 1.0, id="step-stays"),
        pytest.param("ramp", 0.5 * HOUR, 0.2, id="ramp-low"),
        pytest.param("ramp", 2.5 * HOUR, 0.6, id="ramp-rising"),
        pytest.param("ramp", 5 * HOUR, 1.0, id="ramp-top"),
        pytest.param("ramp", 7.5 * HOUR, 0.6, id="ramp-falling"),
        pytest.param("ramp", 9.5 * HOUR, 0.2, id="ramp-low-again"),
        pytest.param("diurnal", 0.0, 0.2, id="diurnal-night"),
        pytest.param("diurnal", 5 * HOUR, 1.0, id="diurnal-noon"),
        pytest.param("diurnal:period=4h", 2 * HOUR, 1.0, id="diurnal-period"),
        pytest.param("spike", 5 * HOUR + 60, 1.0, id="spike-on"),
        pytest.param("spike", 5 * HOUR + 601, 0.2, id="spike-off"),
        pytest.param("spike:at=1h,width=30m,low=0,high=0.5", HOUR + 1, 0.5, id="spike-params"),
    ],
)
def test_builtin_shapes(spec: str, t: float, expected: float) -> None:
    assert level(spec, t) == pytest.approx(expected)


def test_cpu_and_memory_override_the_peak() -> None:
    trace = parse_trace("steady:cpu=500m,memory=1Gi", duration_seconds=HOUR, peak=PEAK, seed=1)
    assert trace.demand_at(10.0) == Demand(500.0, float(2**30))


def test_noisy_is_deterministic_per_seed_and_stays_within_low_and_high() -> None:
    times = [t * 37.0 for t in range(500)]
    first = [level("noisy", t, seed=3) for t in times]
    assert first == [level("noisy", t, seed=3) for t in times]
    assert first != [level("noisy", t, seed=4) for t in times]
    assert all(0.2 <= value <= 1.0 for value in first)
    assert max(first) - min(first) > 0.2


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param("wavy", "unknown trace 'wavy'", id="unknown-name"),
        pytest.param("step:when=1h", "unknown parameter when", id="unknown-parameter"),
        pytest.param("step:at", "'at' is not key=value", id="not-key-value"),
        pytest.param("step:at=soon", "'soon' is not a time", id="bad-time"),
        pytest.param("steady:high=lots", "'lots' is not a level", id="bad-level"),
        pytest.param("steady:cpu=fast", "'fast' is not a quantity", id="bad-quantity"),
        pytest.param("ramp:top=5%,start=50%", "start <= top", id="ramp-order"),
        pytest.param("steady:low=0.9,high=0.1", "low <= high", id="low-above-high"),
        # every input is checked: the parameter is named, nothing is simulated
        pytest.param(
            "spike:width=-10m", "trace spike: width: '-10m' is negative", id="negative-width"
        ),
        pytest.param("spike:width=0s", "trace spike: width must be positive", id="zero-width"),
        pytest.param("spike:at=-1h", "trace spike: at: '-1h' is negative", id="negative-time"),
        pytest.param("step:at=80%,until=20%", "trace step: needs at <= until", id="step-order"),
        pytest.param(
            "steady:high=nan", "trace steady: high: 'nan' is not a level from 0", id="nan-level"
        ),
        pytest.param(
            "steady:high=1e400", "'1e400' is not a level from 0 to 100", id="infinite-level"
        ),
        pytest.param(
            "steady:low=-20%", "trace steady: low: '-20%' is not a level", id="negative-level"
        ),
        pytest.param(
            "noisy:amplitude=inf",
            "trace noisy: amplitude: 'inf' is not a level",
            id="inf-amplitude",
        ),
        pytest.param("steady:cpu=-1", "trace steady: cpu: '-1' is negative", id="negative-cpu"),
        pytest.param(
            "steady:memory=1e51", "trace steady: memory: '1e51' is not a quantity", id="huge-memory"
        ),
    ],
)
def test_bad_trace_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(TraceError, match=message):
        parse_trace(spec, duration_seconds=HOUR, peak=PEAK, seed=1)


def test_csv_trace_interpolates_and_holds_its_ends(tmp_path: Path) -> None:
    path = tmp_path / "load.csv"
    path.write_text("time,cpu,memory\n60,500m,1Gi\n120, 1.5 ,2147483648\n\n180,2,3Gi\n")
    trace = load_csv_trace(path)
    assert trace.name == "load.csv"
    assert trace.duration_seconds == 180
    assert trace.demand_at(0.0) == Demand(500.0, float(2**30))
    assert trace.demand_at(90.0) == Demand(1000.0, 1.5 * 2**30)
    assert trace.demand_at(150.0) == Demand(1750.0, 2.5 * 2**30)
    assert trace.demand_at(999.0) == Demand(2000.0, 3.0 * 2**30)
    assert parse_trace(str(path), duration_seconds=1.0, peak=PEAK, seed=1).demand_at(90.0) == (
        trace.demand_at(90.0)
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("", ":1: the header must be time,cpu,memory", id="empty"),
        pytest.param("t,c,m\n0,1,1\n", ":1: the header must be time,cpu,memory", id="bad-header"),
        pytest.param("time,cpu,memory\n", "no rows after the header", id="no-rows"),
        pytest.param("time,cpu,memory\n0,1\n", ":2: expected 3 columns", id="columns"),
        pytest.param("time,cpu,memory\nnoon,1,1\n", ":2: time 'noon' is not a number", id="time"),
        pytest.param("time,cpu,memory\n-5,1,1\n", ":2: time '-5' must be", id="negative-time"),
        pytest.param("time,cpu,memory\n0,1,1\n0,2,2\n", ":3: times must increase", id="order"),
        pytest.param("time,cpu,memory\n0,lots,1\n", ":2: 'lots' is not a CPU quantity", id="cpu"),
        pytest.param("time,cpu,memory\n0,1,1Gb\n", ":2: '1Gb' is not a memory quantity", id="mem"),
        pytest.param("time,cpu,memory\n0,-1,1\n", ":2: '-1' is negative", id="negative"),
        pytest.param(
            "time,cpu,memory\n0,1,1e51\n", ":2: '1e51' is not a quantity from 0 to 1Pi", id="huge"
        ),
    ],
)
def test_malformed_csv_names_the_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(TraceError, match=message) as caught:
        load_csv_trace(path)
    assert str(caught.value).startswith(str(path))


def test_missing_csv_file(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="cannot read"):
        load_csv_trace(tmp_path / "absent.csv")
