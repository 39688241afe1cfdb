"""The run's picture (hvpa.sim.plot): what it shows and where, read back from the figure."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hvpa.sim.plot import NEED_NOTE, maintenance_spans, plot_available, write_plot

SECOND_IN_HOURS = 1 / 3600  # a window's end is inclusive, to the second


def scenario(start: str, hours: float, window: dict[str, str] | None) -> dict[str, Any]:
    return {
        "start": start,
        "durationSeconds": hours * 3600,
        "maintenanceTimeWindow": window,
    }


def test_a_window_inside_the_run_is_one_span_in_hours_from_the_start() -> None:
    # 20:30 start; the window 22:00-23:00 UTC is 1.5 h to 2.5 h (and a second) in
    spans = maintenance_spans(
        scenario("2025-01-05T20:30:00Z", 6, {"begin": "220000+0000", "end": "230000+0000"})
    )
    assert spans == [(1.5, pytest.approx(2.5 + SECOND_IN_HOURS))]


def test_a_window_across_midnight_and_a_zone_offset() -> None:
    # 23:00-01:00 at +0100 is 22:00-00:00 UTC; a 2-day run from 23:00 UTC starts inside the
    # first one (cut at 0) and meets two more; the last is cut at the run's end
    spans = maintenance_spans(
        scenario("2025-01-05T23:00:00Z", 48, {"begin": "230000+0100", "end": "010000+0100"})
    )
    assert spans == [
        (0.0, pytest.approx(1.0 + SECOND_IN_HOURS)),
        (23.0, pytest.approx(25.0 + SECOND_IN_HOURS)),
        (47.0, 48.0),
    ]


@pytest.mark.parametrize(
    "window",
    [None, {"begin": "22:00", "end": "230000+0000"}, {"begin": "220000+0000"}],
    ids=["none", "malformed", "no-end"],
)
def test_no_readable_window_shades_nothing(window: dict[str, str] | None) -> None:
    assert maintenance_spans(scenario("2025-01-05T20:30:00Z", 6, window)) == []


def report() -> dict[str, Any]:
    """Six hours, a row a minute: a spike of demand the pods follow (the numbers do not matter,
    only that every column has data under where a legend would sit)."""
    rows = []
    for minute in range(361):
        high = 180 <= minute < 200
        rows.append(
            {
                "time": minute * 60.0,
                "demandCpuCores": 4.0 if high else 1.0,
                "needCpuCores": 4.2 if high else 1.1,
                "allocatedCpuCores": 5.0 if high else 1.5,
                "servingCpuCores": 5.0 if high else 1.5,
                "demandMemoryBytes": 4.0 * 2**30 if high else 2**30,
                "needMemoryBytes": 4.5 * 2**30 if high else 1.2 * 2**30,
                "allocatedMemoryBytes": 4.0 * 2**30,
                "servingMemoryBytes": 4.0 * 2**30,
                "replicas": 10 if high else 6,
                "readyPods": 10 if high else 6,
                "pendingPods": 0,
                "podRequestCpuCores": 0.5,
                "podLimitCpuCores": 1.0,
                "podRequestMemoryBytes": 400 * 2**20,
                "podLimitMemoryBytes": 800 * 2**20,
            }
        )
    return {
        "scenario": {
            "name": "proposal-1",
            "strategy": "Weighted",
            "trace": "spike",
            "seed": 1,
            **scenario("2025-01-05T20:30:00Z", 6, {"begin": "220000+0000", "end": "230000+0000"}),
        },
        "summary": {"podRequests": {"container": "app"}},
        "series": rows,
    }


@pytest.mark.skipif(
    not plot_available() and os.environ.get("CI") != "true",
    reason="matplotlib is not installed (a dev dependency: in CI its absence fails)",
)
def test_the_picture_keeps_legends_off_the_data_and_each_resource_on_its_axis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    kept: list[Figure] = []
    monkeypatch.setattr(plt, "close", kept.append)  # the test reads the figure after the save
    write_plot(report(), tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 0
    (figure,) = kept
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    axes = figure.axes
    # one axis per resource: no twin axis puts CPU and memory on one panel
    labels = [axis.get_ylabel() for axis in axes]
    assert len(axes) == 5 and len(set(labels)) == 5
    assert ["CPU" in label for label in labels] == [True, False, False, True, False]
    assert ["memory" in label for label in labels] == [False, True, False, False, True]
    for axis in axes:
        legend = axis.get_legend()
        assert legend is not None
        # the legend stands right of the panel, where no line is drawn
        assert legend.get_window_extent(renderer).x0 >= axis.get_window_extent(renderer).x1
        # the maintenance window, 1.5 h to 2.5 h into the run, shaded on every panel
        spans = [(p.get_x(), p.get_x() + p.get_width()) for p in axis.patches]  # type: ignore[attr-defined]
        assert spans == [(1.5, pytest.approx(2.5 + SECOND_IN_HOURS))]
    assert "maintenance window" in [t.get_text() for t in axes[0].get_legend().get_texts()]
    # "need (ready pods)" is explained on the picture
    assert any(text.get_text() == NEED_NOTE for text in axes[-1].texts)
    plt.close(figure)
