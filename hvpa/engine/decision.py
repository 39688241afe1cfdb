"""The engine's input (`Snapshot`) and output (`Decision`), and the Decision's JSON form.

One builder makes a Snapshot (`hvpa.controller.snapshot`), from the
controller's cache and metric reads: the live controller's, `hvpa explain`'s,
and `hvpa recommend`'s, whose cache holds a scenario file's objects; all pass
it to `decide` and get the same Decision. `decision_to_dict` is the stable
JSON `hvpa recommend` prints and `/debug/state` serves (docs/engine.md,
"Scenarios").
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hvpa.api.base import plain
from hvpa.api.status import HvpaStatus
from hvpa.engine.conditions import Condition
from hvpa.engine.guards import Writer
from hvpa.engine.horizontal.controller import MetricResult
from hvpa.engine.inplace import InPlacePlan, PodPlan
from hvpa.engine.metrics import MetricQuery, MetricReading
from hvpa.engine.strategies.plan import Blocked
from hvpa.engine.vertical import ContainerResources
from hvpa.quantity import format_bytes, format_human, format_human_resource, format_milli
from hvpa.records import (
    CPU,
    MEMORY,
    ConfigMapRecord,
    NodeRecord,
    PodRecord,
    Resources,
    TargetRecord,
    VpaRecord,
    format_time,
)

__all__ = [
    "Decision",
    "HorizontalDecision",
    "Snapshot",
    "VerticalContainer",
    "VerticalDecision",
    "decision_to_dict",
    "format_amount",
    "format_resources",
    "format_written",
    "in_place_to_dict",
    "written_resources",
]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything observed for one Hvpa at one instant.

    `pods` are the target's pods as the API would list them: the target's
    selector, in the Hvpa's namespace. `metrics` answers the reads that
    `hvpa.engine.metrics.metric_queries` asked for; a query without an answer
    counts as a failed read. `target` None: the target was not found.
    `writers` are the other autoscalers that may write the same target (HPAs,
    VPAs, other Hvpas in the namespace), for the conflict guard.
    `resize_served`: the API server serves pods/resize (False: the in-place
    modes roll sizes out instead); `resize_refused`: pod name -> (the size,
    as `inplace.size_key` writes it, and the server's message) of resizes
    the server refused. `vpa_name_taken` says, when `vpa.deploy` is set and no
    VPA is this Hvpa's, which VPA holds the name hvpa would create its own under
    (`<hvpa>-vpa`) and who controls it: hvpa never takes another's VPA over, so
    the condition must say what to do instead.
    """

    target: TargetRecord | None
    pods: tuple[PodRecord, ...] = ()
    nodes: tuple[NodeRecord, ...] = ()
    config_maps: tuple[ConfigMapRecord, ...] = ()
    metrics: Mapping[MetricQuery, MetricReading] = field(default_factory=dict)
    vpa: VpaRecord | None = None
    writers: tuple[Writer, ...] = ()
    resize_served: bool = True
    resize_refused: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    vpa_name_taken: str = ""


@dataclass(frozen=True, slots=True)
class HorizontalDecision:
    """The horizontal recommendation: `desired_replicas` after stabilization, rate limits, CPA and min/max."""

    enabled: bool
    desired_replicas: int
    metrics: tuple[MetricResult, ...] = ()
    cluster_proportional: int | None = None


@dataclass(frozen=True, slots=True)
class VerticalContainer:
    name: str
    target: Resources
    applied: bool


@dataclass(frozen=True, slots=True)
class VerticalDecision:
    enabled: bool = False
    containers: tuple[VerticalContainer, ...] = ()


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with the target, why, and the status to write.

    `desired_replicas` equal to `current_replicas` leaves the count as is;
    `containers` hold every container's resulting requests and limits;
    `in_place` what the in-place modes do with them (None: they roll out).
    """

    current_replicas: int
    desired_replicas: int
    containers: tuple[ContainerResources, ...]
    horizontal: HorizontalDecision
    vertical: VerticalDecision
    blocked: tuple[Blocked, ...]
    conditions: tuple[Condition, ...]
    status: HvpaStatus
    explanation: tuple[str, ...]
    in_place: InPlacePlan | None = None

    @property
    def scales(self) -> bool:
        """Anything to write: replicas, resources, or pods to resize or roll out in place."""
        moves = self.desired_replicas != self.current_replicas or any(
            c.changed for c in self.containers
        )
        plan = self.in_place
        return moves or (plan is not None and bool(plan.resize or plan.rollout))


def format_amount(resource: str, milli: int) -> str:
    """A resource amount (milli-units) as a person reads it, exactly (`641Mi`, `1.5Gi`,
    `672.138M`, `250m`, `1.5`): the spelling of the Decision's JSON, the status, Events
    and /debug/state (hvpa.quantity's `format_human_resource`)."""
    return format_human_resource(resource, milli)


def format_resources(resources: Resources) -> dict[str, str]:
    """Requests or limits as a person reads them (`format_amount`), unset ones left out."""
    return _formatted(resources, format_amount)


def format_written(resource: str, milli: int) -> str:
    """A resource amount (milli-units) as the workload is patched with it: the canonical
    spelling the API server stores anyway, so what hvpa writes is what a reader of the
    object finds. Memory in whole bytes in the suffix family that spells it shorter
    (`1536Mi` rather than `1610612736`, `1600M` rather than `1562500Ki`; DecimalSI on a
    tie); the engine rounds the memory it computes to a whole MiB, so that is `642Mi`."""
    if resource == MEMORY and milli % 1000 == 0:
        count = milli // 1000
        decimal, binary = format_bytes(count), format_bytes(count, binary=True)
        return binary if len(binary) < len(decimal) else decimal
    return format_milli(milli)


def written_resources(resources: Resources) -> dict[str, str]:
    """Requests or limits as the workload is patched with them (`format_written`)."""
    return _formatted(resources, format_written)


def _formatted(resources: Resources, spell: Callable[[str, int], str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name in (CPU, MEMORY):
        milli = resources.get(name)
        if milli is not None:
            out[name] = spell(name, milli)
    return out


def _metric(result: MetricResult) -> dict[str, Any]:
    out: dict[str, Any] = {"type": result.type, "name": result.name}
    if result.container is not None:
        out["container"] = result.container
    out["desiredReplicas"] = result.desired_replicas
    if result.current_utilization is not None:
        out["currentUtilization"] = result.current_utilization
    # A Resource metric's values are amounts of that resource (memory in bytes); the other
    # types' are plain numbers.
    spell = (
        functools.partial(format_human_resource, result.name)
        if result.type in ("Resource", "ContainerResource")
        else format_human
    )
    if result.current_average_value is not None:
        out["currentAverageValue"] = spell(result.current_average_value)
    if result.current_value is not None:
        out["currentValue"] = spell(result.current_value)
    if result.error is not None:
        out["error"] = result.error
    return out


def _pod_plan(plan: PodPlan) -> dict[str, Any]:
    out: dict[str, Any] = {"name": plan.name, "state": plan.state}
    out["spec"] = [
        {
            "name": c.name,
            "requests": format_resources(c.requests),
            "limits": format_resources(c.limits),
        }
        for c in plan.spec
    ]
    if plan.actual is not None:
        out["actual"] = [
            {
                "name": c.name,
                "requests": format_resources(c.requests),
                "limits": format_resources(c.limits),
            }
            for c in plan.actual
        ]
    if plan.since is not None:
        out["since"] = format_time(plan.since)
    if plan.message:
        out["message"] = plan.message
    if plan.stuck:
        out["stuck"] = True
    if plan.restarts:
        out["restarts"] = list(plan.restarts)
    return out


def in_place_to_dict(plan: InPlacePlan) -> dict[str, Any]:
    """The in-place part of a Decision's JSON: the decided size, each pod against it, the actions."""
    return {
        "mode": plan.mode,
        "containers": [
            {
                "name": c.name,
                "requests": format_resources(c.requests),
                "limits": format_resources(c.limits),
            }
            for c in plan.containers
        ],
        "pods": [_pod_plan(p) for p in plan.pods],
        "resize": list(plan.resize),
        "rollout": plan.rollout,
        "held": plan.held,
    }


def decision_to_dict(decision: Decision) -> dict[str, Any]:
    """The Decision's JSON (stable field names; docs/engine.md, "Scenarios"); `inPlace` only in
    the in-place resize modes."""
    horizontal: dict[str, Any] = {
        "desiredReplicas": decision.horizontal.desired_replicas,
        "metrics": [_metric(m) for m in decision.horizontal.metrics],
    }
    if decision.horizontal.cluster_proportional is not None:
        horizontal["clusterProportional"] = decision.horizontal.cluster_proportional
    return {
        "replicas": {"current": decision.current_replicas, "desired": decision.desired_replicas},
        "containers": [
            {
                "name": c.name,
                "requests": format_resources(c.requests),
                "limits": format_resources(c.limits),
            }
            for c in decision.containers
        ],
        "horizontal": horizontal,
        "vertical": {
            "containers": [
                {"name": c.name, "target": format_resources(c.target), "applied": c.applied}
                for c in decision.vertical.containers
            ]
        },
        "blocked": [
            {"axis": b.axis, "direction": b.direction, "reason": b.reason, "message": b.message}
            for b in decision.blocked
        ],
        "conditions": [
            {"type": c.type, "status": c.status, "reason": c.reason, "message": c.message}
            for c in decision.conditions
        ],
        "status": plain(decision.status),
        "explanation": list(decision.explanation),
        **({"inPlace": in_place_to_dict(decision.in_place)} if decision.in_place else {}),
    }
