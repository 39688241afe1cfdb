"""The run's picture: demand against allocated capacity, replicas, and per-pod requests over time.

Five panels sharing the time axis (hours): CPU and memory (demand, what the
ready pods need, what is allocated, what the ready pods requested), the
replica count (spec, ready pods, pending pods), and the main container's
CPU and memory request and limit, each resource on its own panel and axis
(one twin axis for both would let a CPU line be read against the memory
scale). Legends stand outside the panels, so they never cover a line; the
Hvpa's maintenance window, when it has one, is shaded on every panel (a
scale-down waits for it); a note under the picture says what "need" is.
matplotlib is an optional extra (`pip install 'hvpa[plot]'`);
`plot_available()` says whether it can be imported, and the command skips
the plot with a message when it cannot. The Agg backend is used, so no
display is needed.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from hvpa.api.maintenance import MaintenanceWindowError, parse_maintenance_window

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["maintenance_spans", "plot_available", "write_plot"]

GIB: Final = 2**30
_DAY: Final = 86_400
NEED_NOTE: Final = (
    "need (ready pods): what the ready pods would use if never throttled, the demand plus "
    "each pod's own base use; above 'requested by ready pods' the pods are under-provisioned"
)


def plot_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def maintenance_spans(scenario: Mapping[str, Any]) -> list[tuple[float, float]]:
    """The maintenance window's occurrences within the run, as (begin, end) hours from its
    start; [] without a window (or with one the plot cannot read: it is only a picture)."""
    window_spec = scenario.get("maintenanceTimeWindow")
    if not isinstance(window_spec, Mapping):
        return []
    try:
        window = parse_maintenance_window(str(window_spec["begin"]), str(window_spec["end"]))
        start = datetime.fromisoformat(str(scenario["start"])).timestamp()
    except (KeyError, ValueError, MaintenanceWindowError):
        return []
    duration = float(scenario["durationSeconds"])
    length = (window.end - window.begin) % _DAY + 1  # both ends inclusive, to the second
    first_day = start - start % _DAY - _DAY  # a window that began the day before may still run
    spans: list[tuple[float, float]] = []
    day = first_day
    while day <= start + duration:
        begin = day + window.begin - start
        end = begin + length
        if end > 0 and begin < duration:
            spans.append((max(begin, 0.0) / 3600, min(end, duration) / 3600))
        day += _DAY
    return spans


def write_plot(report: dict[str, Any], path: Path) -> None:
    """Draw `report`'s series into a PNG at `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["series"]
    scenario = report["scenario"]
    hours = [row["time"] / 3600 for row in rows]
    figure, axes = plt.subplots(
        5, 1, figsize=(13, 13), sharex=True, layout="constrained", height_ratios=[3, 3, 2, 2, 2]
    )
    figure.suptitle(
        f"hvpa sim: {scenario['name']} ({scenario['strategy']}), trace {scenario['trace']}, "
        f"seed {scenario['seed']}"
    )
    _resource_panel(axes[0], rows, hours, "Cpu", "Cores", 1.0, "CPU (cores)")
    _resource_panel(axes[1], rows, hours, "Memory", "Bytes", GIB, "memory (GiB)")
    _replica_panel(axes[2], rows, hours)
    container = report["summary"]["podRequests"]["container"]
    _pod_panel(axes[3], rows, hours, "Cpu", "Cores", 1.0, f"{container}\nCPU (cores)")
    _pod_panel(axes[4], rows, hours, "Memory", "Bytes", GIB, f"{container}\nmemory (GiB)")
    spans = maintenance_spans(scenario)
    for panel, axis in enumerate(axes):
        for number, (begin, end) in enumerate(spans):
            named = panel == 0 and number == 0  # one legend entry says what the shade is
            axis.axvspan(
                begin, end, color="gold", alpha=0.25, label="maintenance window" if named else None
            )
        axis.grid(alpha=0.3)
        axis.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
    axes[-1].set_xlabel("time (hours)")
    # an axes' text, not the figure's, so that the layout makes room for it under the last panel
    axes[-1].text(0.0, -0.35, NEED_NOTE, transform=axes[-1].transAxes, fontsize="small", va="top")
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _column(rows: list[dict[str, Any]], name: str, scale: float = 1.0) -> list[float]:
    """One column of the series, NaN where it has no value (a gap in the line)."""
    return [math.nan if row[name] is None else row[name] / scale for row in rows]


def _resource_panel(
    axis: Axes,
    rows: list[dict[str, Any]],
    hours: list[float],
    resource: str,
    unit_key: str,
    scale: float,
    label: str,
) -> None:
    """Demand, need, allocated and serving of one resource, summed over the workload."""
    axis.plot(
        hours, _column(rows, f"demand{resource}{unit_key}", scale), label="demand", color="black"
    )
    axis.plot(
        hours,
        _column(rows, f"need{resource}{unit_key}", scale),
        label="need (ready pods), see below",
        color="grey",
        linestyle=":",
    )
    axis.step(
        hours,
        _column(rows, f"allocated{resource}{unit_key}", scale),
        where="post",
        label="allocated",
        color="tab:blue",
    )
    axis.step(
        hours,
        _column(rows, f"serving{resource}{unit_key}", scale),
        where="post",
        label="requested by ready pods",
        color="tab:green",
        linestyle="--",
    )
    axis.set_ylabel(label)
    axis.set_ylim(bottom=0)


def _replica_panel(axis: Axes, rows: list[dict[str, Any]], hours: list[float]) -> None:
    for column, label, color, style in (
        ("replicas", "spec.replicas", "tab:blue", "-"),
        ("readyPods", "ready pods", "tab:green", "--"),
        ("pendingPods", "pending pods", "tab:red", ":"),
    ):
        axis.step(
            hours, _column(rows, column), where="post", label=label, color=color, linestyle=style
        )
    axis.set_ylabel("replicas")
    axis.set_ylim(bottom=0)


def _pod_panel(
    axis: Axes,
    rows: list[dict[str, Any]],
    hours: list[float],
    resource: str,
    unit_key: str,
    scale: float,
    label: str,
) -> None:
    """The main container's request and limit of one resource: one pod's size."""
    color = "tab:orange" if resource == "Cpu" else "tab:purple"
    axis.step(
        hours,
        _column(rows, f"podRequest{resource}{unit_key}", scale),
        where="post",
        label="request",
        color=color,
    )
    axis.step(
        hours,
        _column(rows, f"podLimit{resource}{unit_key}", scale),
        where="post",
        label="limit",
        color=color,
        linestyle=":",
    )
    axis.set_ylabel(label)
    axis.set_ylim(bottom=0)
