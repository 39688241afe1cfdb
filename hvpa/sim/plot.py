"""The run's picture: demand against allocated capacity, replicas, and per-pod requests over time.

Four panels sharing the time axis (hours): CPU and memory (demand, what the
ready pods need, what is allocated, what the ready pods requested), the
replica count (spec, ready pods, pending pods), and the main container's
request and limit. matplotlib is an optional extra (`pip install
'hvpa[plot]'`); `plot_available()` says whether it can be imported, and the
command skips the plot with a message when it cannot. The Agg backend is
used, so no display is needed.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

__all__ = ["plot_available", "write_plot"]


def plot_available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def write_plot(report: dict[str, Any], path: Path) -> None:
    """Draw `report`'s series into a PNG at `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["series"]
    scenario = report["scenario"]
    hours = [row["time"] / 3600 for row in rows]
    gib = 2**30

    def column(name: str, scale: float = 1.0) -> list[float | None]:
        return [None if row[name] is None else row[name] / scale for row in rows]

    figure, axes = plt.subplots(4, 1, figsize=(11, 11), sharex=True)
    figure.suptitle(
        f"hvpa sim: {scenario['name']} ({scenario['strategy']}), trace {scenario['trace']}, "
        f"seed {scenario['seed']}"
    )
    for axis, resource, scale, unit in (
        (axes[0], "Cpu", 1.0, "CPU (cores)"),
        (axes[1], "Memory", gib, "memory (GiB)"),
    ):
        key = "Cores" if resource == "Cpu" else "Bytes"
        axis.plot(hours, column(f"demand{resource}{key}", scale), label="demand", color="black")
        axis.plot(
            hours,
            column(f"need{resource}{key}", scale),
            label="need (ready pods)",
            color="grey",
            linestyle=":",
        )
        axis.step(
            hours,
            column(f"allocated{resource}{key}", scale),
            where="post",
            label="allocated",
            color="tab:blue",
        )
        axis.step(
            hours,
            column(f"serving{resource}{key}", scale),
            where="post",
            label="requested by ready pods",
            color="tab:green",
            linestyle="--",
        )
        axis.set_ylabel(unit)
        axis.legend(loc="upper left", fontsize="small")
        axis.grid(alpha=0.3)
    axes[2].step(hours, column("replicas"), where="post", label="spec.replicas", color="tab:blue")
    axes[2].step(
        hours,
        column("readyPods"),
        where="post",
        label="ready pods",
        color="tab:green",
        linestyle="--",
    )
    axes[2].step(
        hours,
        column("pendingPods"),
        where="post",
        label="pending pods",
        color="tab:red",
        linestyle=":",
    )
    axes[2].set_ylabel("replicas")
    axes[2].legend(loc="upper left", fontsize="small")
    axes[2].grid(alpha=0.3)
    cpu_axis = axes[3]
    memory_axis = cpu_axis.twinx()
    container = report["summary"]["podRequests"]["container"]
    cpu_axis.step(
        hours,
        column("podRequestCpuCores"),
        where="post",
        label=f"{container} CPU request",
        color="tab:orange",
    )
    cpu_axis.step(
        hours,
        column("podLimitCpuCores"),
        where="post",
        label="CPU limit",
        color="tab:orange",
        linestyle=":",
    )
    memory_axis.step(
        hours,
        column("podRequestMemoryBytes", gib),
        where="post",
        label="memory request",
        color="tab:purple",
    )
    memory_axis.step(
        hours,
        column("podLimitMemoryBytes", gib),
        where="post",
        label="memory limit",
        color="tab:purple",
        linestyle=":",
    )
    cpu_axis.set_ylabel("per-pod CPU (cores)")
    memory_axis.set_ylabel("per-pod memory (GiB)")
    handles = cpu_axis.get_legend_handles_labels()
    more = memory_axis.get_legend_handles_labels()
    cpu_axis.legend(handles[0] + more[0], handles[1] + more[1], loc="upper left", fontsize="small")
    cpu_axis.grid(alpha=0.3)
    cpu_axis.set_xlabel("time (hours)")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
