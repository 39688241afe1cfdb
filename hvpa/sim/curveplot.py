"""The `--curve` picture: per-pod request against replicas, the Capacity curve and the path taken.

The Capacity strategy's claim is geometric: every decision is a point on
(or under) one curve of per-pod size against replica count, the same point
for the same demand. Two panels, CPU and memory: the curve of
`spec.capacity` (the largest per-pod request at each count, flat before
its first point and after its last), and the target's path through the run
(spec.replicas against the main container's request, a point a minute,
coloured from start to end). Any strategy's path can be drawn against the
same curve, which is how a Weighted run is seen to leave it. The main
container's request is the pod's size when it is the only container the
curve sizes; otherwise the path sits below the curve by the others' share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hvpa.quantity import parse_bytes, parse_cpu_millis

__all__ = ["curve_points", "path_points", "write_curve_plot"]

GIB = 2**30


def curve_points(
    capacity: Mapping[str, Any] | None, resource: str, low: int, high: int
) -> list[tuple[float, float]]:
    """The curve as (replicas, cores or GiB) corners from minReplicas to maxReplicas; [] without one."""
    points: list[tuple[float, float]] = []
    for point in (capacity or {}).get("curve") or ():
        amount = point.get(resource)
        if amount is None:
            continue
        value = parse_cpu_millis(amount) / 1000 if resource == "cpu" else parse_bytes(amount) / GIB
        points.append((float(point["replicas"]), value))
    if not points:
        return []
    points.sort(key=lambda p: p[0])
    if points[0][0] > low:
        points.insert(0, (float(low), points[0][1]))
    if points[-1][0] < high:
        points.append((float(high), points[-1][1]))
    return points


def path_points(
    series: Sequence[Mapping[str, Any]], column: str, scale: float
) -> list[tuple[float, float, float]]:
    """(replicas, request, hours) once per change of either, in time order."""
    path: list[tuple[float, float, float]] = []
    for row in series:
        value = row.get(column)
        if value is None:
            continue
        point = (float(row["replicas"]), value / scale, row["time"] / 3600)
        if not path or path[-1][:2] != point[:2]:
            path.append(point)
    return path


def write_curve_plot(
    report: Mapping[str, Any],
    capacity: Mapping[str, Any] | None,
    bounds: tuple[int, int],
    path: Path,
) -> None:
    """Draw the curve (when the Hvpa has one) and the run's path into a PNG at `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scenario = report["scenario"]
    series = report["series"]
    low, high = bounds
    figure, axes = plt.subplots(1, 2, figsize=(12, 5.5), layout="constrained")
    figure.suptitle(
        f"hvpa sim --curve: {scenario['name']} ({scenario['strategy']}), trace {scenario['trace']}"
    )
    container = report["summary"]["podRequests"]["container"]
    for axis, resource, column, scale, unit in (
        (axes[0], "cpu", "podRequestCpuCores", 1.0, "cores"),
        (axes[1], "memory", "podRequestMemoryBytes", float(GIB), "GiB"),
    ):
        corners = curve_points(capacity, resource, low, high)
        if corners:
            xs, ys = zip(*corners, strict=True)
            axis.plot(xs, ys, color="black", linewidth=2, label="spec.capacity.curve")
            axis.fill_between(xs, ys, color="grey", alpha=0.15)
        points = path_points(series, column, scale)
        if points:
            xs, ys, hours = zip(*points, strict=True)
            axis.plot(xs, ys, color="tab:blue", alpha=0.4, linewidth=1)
            dots = axis.scatter(xs, ys, c=hours, cmap="viridis", s=18, zorder=3, label="path")
            axis.annotate("start", (xs[0], ys[0]), textcoords="offset points", xytext=(6, 6))
            axis.annotate("end", (xs[-1], ys[-1]), textcoords="offset points", xytext=(6, -12))
            figure.colorbar(dots, ax=axis, label="time (hours)")
        axis.set_xlabel("replicas")
        axis.set_ylabel(f"{container} {resource} request ({unit})")
        axis.set_xlim(0, high + 1)
        axis.set_ylim(bottom=0)
        axis.grid(alpha=0.3)
        # under the panel, not in it: the curve starts at its top left corner
        axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=2, fontsize="small")
    figure.savefig(path, dpi=90)
    plt.close(figure)
