"""A run's report: the summary (report.json's `summary`), and the tables the command prints.

Summary fields (all over the run; CPU in cores, memory in bytes; observer.py defines the terms):

    demand.{cpu,memory}.{average,peak}     the trace's total demand
    allocated.{cpu,memory}.average         requests of the pods holding node capacity
    utilization.{cpu,memory}               demand / allocated
    overProvisioning.{cpu,memory}          allocated / demand
    underProvisionedMinutes.{cpu,memory,total}
                                           minutes the ready pods needed more than they requested
    throttledPodMinutes                    pod-minutes with a container at its CPU limit
    unschedulablePodMinutes                pod-minutes Pending for want of room on the nodes
    oomKills, oomKillsAnswered             OOMKills, and how many a later template change
                                           answered by raising that container's memory limit
                                           (its request when it has no limit)
    replicaChanges, rollouts               spec.replicas changes; pod template changes
    inPlaceResizes, podRestarts            resizes the kubelets admitted in place; containers
                                           they restarted to apply one (apart from rollouts)
    evictions                              pods a VPA updater evicted to resize them (baselines)
    podsReplaced                           pods replaced to change their size: deleted at an
                                           older template revision in a rollout, or evicted
    oscillations.{horizontal,vertical,total}
                                           moves that reverse the axis' previous move within
                                           ten minutes (oscillations.py)
    replicas.{min,max,final}, podRequests.{min,max,final}.{cpu,memory}
                                           the target's spec over the run (main container)

Every number is rounded so that equal runs print equal reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hvpa.sim.observer import Observer
from hvpa.sim.oscillations import direction_changes, replica_moves, size_moves
from hvpa.sim.pods import container_sizes
from hvpa.sim.workloads import WorkloadChange

__all__ = [
    "COMPARE_COLUMNS",
    "Column",
    "compare_markdown",
    "compare_table",
    "summarize",
    "summary_table",
]


def _ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator > 0 else None


def _memory_of(size: Any) -> int | None:
    if size is None:
        return None
    value = size.limit_memory if size.limit_memory is not None else size.request_memory
    return int(value) if value is not None else None


def _answered(observer: Observer, changes: Sequence[WorkloadChange]) -> int:
    """OOMKills followed by a template change that raised that container's memory."""
    count = 0
    for kill, size in observer.totals.oom_kills:
        before = _memory_of(size)
        for change in changes:
            if change.template is None or change.time < kill.time:
                continue
            after = next(
                (
                    s
                    for s in container_sizes((change.template[1].get("spec")) or {})
                    if s.name == kill.container
                ),
                None,
            )
            grown = _memory_of(after)
            if before is not None and grown is not None and grown > before:
                count += 1
                break
    return count


def _oscillations(changes: Sequence[WorkloadChange], observer: Observer) -> dict[str, int]:
    """Direction changes within ten minutes: of spec.replicas, and of the workload's pod size
    over time (its main container's requests as they reached its pods: oscillations.py)."""
    horizontal = direction_changes(
        replica_moves([(c.time, *c.replicas) for c in changes if c.replicas is not None])
    )
    moves = size_moves(observer.pod_sizes.sizes)
    vertical = sum(direction_changes(resource_moves) for resource_moves in moves.values())
    return {"horizontal": horizontal, "vertical": vertical, "total": horizontal + vertical}


def summarize(
    observer: Observer,
    changes: Sequence[WorkloadChange],
    *,
    evictions: int = 0,
) -> dict[str, Any]:
    """The summary of a run; `changes` are its target's, `evictions` the pods a VPA
    baseline's updater evicted."""
    totals = observer.totals
    seconds = totals.seconds or 1.0
    rows = observer.rows
    replicas = [r["replicas"] for r in rows] or [0]
    cpu_requests = [r["podRequestCpuCores"] for r in rows] or [0.0]
    memory_requests = [r["podRequestMemoryBytes"] for r in rows] or [0]
    return {
        "demand": {
            "cpu": {
                "average": round(totals.demand_cpu / seconds / 1000, 4),
                "peak": round(totals.peak_demand_cpu / 1000, 4),
            },
            "memory": {
                "average": round(totals.demand_memory / seconds),
                "peak": round(totals.peak_demand_memory),
            },
        },
        "allocated": {
            "cpu": {"average": round(totals.allocated_cpu / seconds / 1000, 4)},
            "memory": {"average": round(totals.allocated_memory / seconds)},
        },
        "utilization": {
            "cpu": _ratio(totals.demand_cpu, totals.allocated_cpu),
            "memory": _ratio(totals.demand_memory, totals.allocated_memory),
        },
        "overProvisioning": {
            "cpu": _ratio(totals.allocated_cpu, totals.demand_cpu),
            "memory": _ratio(totals.allocated_memory, totals.demand_memory),
        },
        "underProvisionedMinutes": {
            "cpu": round(totals.under_cpu_seconds / 60, 2),
            "memory": round(totals.under_memory_seconds / 60, 2),
            "total": round(totals.under_seconds / 60, 2),
        },
        "throttledPodMinutes": round(totals.throttled_pod_seconds / 60, 2),
        "unschedulablePodMinutes": round(totals.unschedulable_pod_seconds / 60, 2),
        "oomKills": len(totals.oom_kills),
        "oomKillsAnswered": _answered(observer, changes),
        "replicaChanges": sum(1 for c in changes if c.replicas is not None),
        "rollouts": sum(1 for c in changes if c.template is not None),
        "inPlaceResizes": totals.in_place_resizes,
        "podRestarts": totals.pod_restarts,
        "evictions": evictions,
        "podsReplaced": totals.replaced_pods + evictions,
        "oscillations": _oscillations(changes, observer),
        "replicas": {"min": min(replicas), "max": max(replicas), "final": replicas[-1]},
        "podRequests": {
            "container": observer.main_container,
            "min": {"cpu": min(cpu_requests), "memory": min(memory_requests)},
            "max": {"cpu": max(cpu_requests), "memory": max(memory_requests)},
            "final": {"cpu": cpu_requests[-1], "memory": memory_requests[-1]},
        },
    }


# ---------------------------------------------------------------- text


def _cores(value: float) -> str:
    return f"{value:.2f}"


def _bytes(value: float) -> str:
    gib = value / 2**30
    return f"{gib:.2f}Gi" if gib >= 1 else f"{value / 2**20:.0f}Mi"


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def summary_table(summary: dict[str, Any]) -> str:
    """The summary of one run as aligned text."""
    demand, allocated = summary["demand"], summary["allocated"]
    under = summary["underProvisionedMinutes"]
    requests = summary["podRequests"]
    rows = [
        ("", "CPU", "memory"),
        ("demand, average", _cores(demand["cpu"]["average"]), _bytes(demand["memory"]["average"])),
        ("demand, peak", _cores(demand["cpu"]["peak"]), _bytes(demand["memory"]["peak"])),
        (
            "allocated, average",
            _cores(allocated["cpu"]["average"]),
            _bytes(allocated["memory"]["average"]),
        ),
        (
            "utilization (demand/allocated)",
            _percent(summary["utilization"]["cpu"]),
            _percent(summary["utilization"]["memory"]),
        ),
        (
            "over-provisioning (allocated/demand)",
            _times(summary["overProvisioning"]["cpu"]),
            _times(summary["overProvisioning"]["memory"]),
        ),
        ("under-provisioned minutes", f"{under['cpu']:g}", f"{under['memory']:g}"),
        (
            f"{requests['container']} request, min..max",
            f"{_cores(requests['min']['cpu'])}..{_cores(requests['max']['cpu'])}",
            f"{_bytes(requests['min']['memory'])}..{_bytes(requests['max']['memory'])}",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    lines = [f"{a:<{width}}  {b:>12}  {c:>14}" for a, b, c in rows]
    replicas = summary["replicas"]
    lines += [
        "",
        f"{'under-provisioned minutes, total':<{width}}  {under['total']:g}",
        f"{'throttled pod-minutes':<{width}}  {summary['throttledPodMinutes']:g}",
        f"{'unschedulable pod-minutes':<{width}}  {summary['unschedulablePodMinutes']:g}",
        f"{'OOMKills (answered by more memory)':<{width}}  "
        f"{summary['oomKills']} ({summary['oomKillsAnswered']})",
        f"{'replica changes':<{width}}  {summary['replicaChanges']}",
        f"{'rollouts':<{width}}  {summary['rollouts']}",
        f"{'in-place resizes, pod restarts':<{width}}  "
        f"{summary.get('inPlaceResizes', 0)}, {summary.get('podRestarts', 0)}",
        f"{'evictions, pods replaced':<{width}}  {summary['evictions']}, {summary['podsReplaced']}",
        f"{'oscillations (horizontal, vertical)':<{width}}  "
        f"{summary['oscillations']['horizontal']}, {summary['oscillations']['vertical']}",
        f"{'replicas min..max, final':<{width}}  "
        f"{replicas['min']}..{replicas['max']}, {replicas['final']}",
    ]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class Column:
    """One measure of a comparison: its title and how a run's summary shows it.

    The comparison is a list of these, so another measure (in-place resizes
    and the pod restarts they cost are two) is one more entry, and
    another baseline is one more strategy in `--compare`.
    """

    title: str
    cell: Callable[[dict[str, Any]], str]


# The like-for-like measures first (docs/strategies.md): utilization, under-provisioning,
# rollouts; then what they cost.
COMPARE_COLUMNS: Final = (
    Column("util CPU", lambda s: _percent(s["utilization"]["cpu"])),
    Column("util mem", lambda s: _percent(s["utilization"]["memory"])),
    Column("alloc CPU", lambda s: _cores(s["allocated"]["cpu"]["average"])),
    Column("alloc mem", lambda s: _bytes(s["allocated"]["memory"]["average"])),
    Column("under-prov min", lambda s: f"{s['underProvisionedMinutes']['total']:g}"),
    Column("throttled pod-min", lambda s: f"{s['throttledPodMinutes']:g}"),
    Column("OOMKills (answered)", lambda s: f"{s['oomKills']} ({s['oomKillsAnswered']})"),
    Column("replica changes", lambda s: str(s["replicaChanges"])),
    Column("rollouts", lambda s: str(s["rollouts"])),
    Column("in-place resizes", lambda s: str(s.get("inPlaceResizes", 0))),
    Column("pod restarts", lambda s: str(s.get("podRestarts", 0))),
    Column("evictions", lambda s: str(s.get("evictions", 0))),
    Column("pods replaced", lambda s: str(s.get("podsReplaced", 0))),
    Column("oscillations", lambda s: str((s.get("oscillations") or {}).get("total", 0))),
)


def compare_table(
    runs: Sequence[tuple[str, dict[str, Any]]], columns: Sequence[Column] = COMPARE_COLUMNS
) -> str:
    """One row per strategy, same trace, aligned as text."""
    rows = [("strategy", *(c.title for c in columns))]
    rows += [(strategy, *(c.cell(summary) for c in columns)) for strategy, summary in runs]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        )
        for row in rows
    ]
    return "\n".join(lines) + "\n"


def compare_markdown(
    runs: Sequence[tuple[str, str, dict[str, Any]]], columns: Sequence[Column] = COMPARE_COLUMNS
) -> str:
    """One row per trace and strategy, as a Markdown table (docs/strategies.md's)."""
    header = ["trace", "strategy", *(c.title for c in columns)]
    lines = [
        "| " + " | ".join(header) + " |",
        "| --- | --- | " + " | ".join("---:" for _ in columns) + " |",
    ]
    lines += [
        "| " + " | ".join([trace, strategy, *(c.cell(summary) for c in columns)]) + " |"
        for trace, strategy, summary in runs
    ]
    return "\n".join(lines) + "\n"
