"""Guards that make scaling safe where Gardener's was not (docs/gardener-compatibility.md).

- Starvation: a container using all the CPU it requests while its VPA target
  is higher, or OOMKilled since the last vertical scaling, is scaled up past
  MinChange and the scale-up stabilization window; after an OOMKill memory
  grows by at least 20% of the limit that was hit. Gardener's
  `status.overrideScaleUpStabilization: true` (set by its pod watch on an
  OOMKill or an eviction) counts as an OOMKill of every container.
- Missing data holds only the axis that lacks it, with a reason for the
  condition; it never lets a strategy fall to minReplicas or minAllowed.
- Another writer holds the axis it would fight over: an HPA on the same
  target (replicas), a VPA on it in any mode but Off (its updater evicts and
  rewrites pods), or an older Hvpa on the same target (both axes: the older
  one acts, the newer one waits).

No vertical change while a rollout is in progress is the Rollout gate
(gates.py), with one exception found here: when the OOMKilled pods run the
target's current template, the rollout in progress is rolling out pods
that die, so it never finishes; waiting for it would hold the memory
increase that could end it for ever (a workload that OOM-loops from its
first pod). The guard's memory increase then carries why, and the Rollout
gate lets it through.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from hvpa.api.resource import Hvpa
from hvpa.engine.strategies.plan import CONFLICTING_AUTOSCALER, WEIGHT, Axis, Hold, Plan
from hvpa.engine.vertical import (
    ContainerTarget,
    ResourceChange,
    VerticalRecommendation,
    round_request,
)
from hvpa.quantity import ceil_div, format_human, format_human_memory
from hvpa.records import (
    CPU,
    MEMORY,
    ContainerSpec,
    PodMetricsRecord,
    PodRecord,
    VpaRecord,
    parse_time,
)

__all__ = [
    "HORIZONTAL_POD_AUTOSCALER",
    "HVPA",
    "OOM_GROWTH_PERCENT",
    "TARGET_NOT_FOUND",
    "VERTICAL_POD_AUTOSCALER",
    "Starving",
    "Writer",
    "apply_starvation",
    "detect_starvation",
    "find_conflicts",
    "missing_data_holds",
    "writer_from_hvpa",
    "writer_from_vpa",
]

OOM_GROWTH_PERCENT: Final = 20
HORIZONTAL_POD_AUTOSCALER: Final = "HorizontalPodAutoscaler"
VERTICAL_POD_AUTOSCALER: Final = "VerticalPodAutoscaler"
HVPA: Final = "Hvpa"
TARGET_NOT_FOUND: Final = "TargetNotFound"
OVERRIDE_REASON: Final = (
    "status.overrideScaleUpStabilization is true (Gardener's mark of an OOMKill or eviction)"
)


# ---------------------------------------------------------------------------
# Missing data


def missing_data_holds(*, vertical: VerticalRecommendation | None = None) -> tuple[Hold, ...]:
    """The vertical axis held when its recommendation cannot be trusted, with read_recommendation's reason.

    The other missing data is held where it is found: a missing target by
    decide (FailedGetScale, TargetNotFound), missing metrics by the
    horizontal recommendation itself (no desired count, ScalingActive=False).
    """
    if vertical is not None and not vertical.usable:
        return (Hold("vertical", vertical.hold_reason, vertical.hold_message),)
    return ()


# ---------------------------------------------------------------------------
# Other writers


@dataclass(frozen=True, slots=True)
class Writer:
    """Something that may write a workload's replicas or pod resources."""

    kind: str
    namespace: str
    name: str
    target_kind: str
    target_name: str
    update_mode: str = ""
    created: float | None = None

    def targets(self, other: Writer) -> bool:
        return (
            self.namespace == other.namespace
            and self.target_kind == other.target_kind
            and self.target_name == other.target_name
        )

    def describe(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    def age_key(self) -> tuple[bool, float, str]:
        """Older first; an unknown creation time counts as newest, then names decide.

        The one order of writers of a target: the conflict guard lets the
        oldest Hvpa act, and the admission webhook sizes pods by the same one.
        """
        return self.created is None, self.created or 0.0, self.name


def writer_from_hvpa(hvpa: Hvpa) -> Writer:
    """An Hvpa as a writer of its target, aged by `metadata.creationTimestamp`."""
    created = hvpa.metadata.get("creationTimestamp")
    return Writer(
        HVPA,
        hvpa.namespace,
        hvpa.name,
        hvpa.spec.target_ref.kind,
        hvpa.spec.target_ref.name,
        created=parse_time(created) if isinstance(created, str) else None,
    )


def writer_from_vpa(vpa: VpaRecord) -> Writer:
    return Writer(
        VERTICAL_POD_AUTOSCALER,
        vpa.namespace,
        vpa.name,
        vpa.target_kind,
        vpa.target_name,
        vpa.update_mode,
        vpa.creation_time,
    )


def find_conflicts(
    me: Writer, others: Sequence[Writer], *, horizontal: bool = True, vertical: bool = True
) -> tuple[Hold, ...]:
    """Holds for the axes (those this Hvpa acts on) that another writer also drives."""
    holds: list[Hold] = []
    where = f"{me.target_kind} {me.target_name}"
    for other in others:
        if (other.kind, other.name) == (me.kind, me.name) or not other.targets(me):
            continue
        if other.kind == HORIZONTAL_POD_AUTOSCALER and horizontal:
            message = f"{other.describe()} also scales {where}; the replica count is left to it"
            holds.append(Hold("horizontal", CONFLICTING_AUTOSCALER, message))
        elif other.kind == VERTICAL_POD_AUTOSCALER and vertical and other.update_mode != "Off":
            message = (
                f"{other.describe()} in updateMode {other.update_mode} also resizes {where}'s pods; "
                "pod resources are left to it"
            )
            holds.append(Hold("vertical", CONFLICTING_AUTOSCALER, message))
        elif other.kind == HVPA and other.age_key() < me.age_key():
            message = f"the older {other.describe()} also scales {where}; it acts, this one waits"
            axes: tuple[tuple[Axis, bool], ...] = (
                ("horizontal", horizontal),
                ("vertical", vertical),
            )
            holds.extend(
                Hold(axis, CONFLICTING_AUTOSCALER, message) for axis, active in axes if active
            )
    return tuple(holds)


# ---------------------------------------------------------------------------
# Starvation


@dataclass(frozen=True, slots=True)
class Starving:
    """A container the starvation guard lets grow; an empty reason means that resource is fine.

    `memory_floor` is the least memory request (milli-units) after an
    OOMKill: current request + 20% of the limit hit, rounded up to 1000 bytes
    and kept within maxAllowed; None when there is nothing to grow by.
    `failing_rollout` is set when the OOMKilled pod runs the current
    template (its requests and limits for the container): a rollout in
    progress then rolls out pods that OOM, and cannot finish on its own.
    """

    container: str
    cpu: str = ""
    memory: str = ""
    memory_floor: int | None = None
    failing_rollout: str = ""


def _pod_container(pod: PodRecord | None, name: str) -> ContainerSpec | None:
    if pod is None:
        return None
    return next((c for c in pod.containers if c.name == name), None)


def _cpu_starvation(
    container: ContainerSpec,
    target: ContainerTarget,
    pods: dict[str, PodRecord],
    metrics: Sequence[PodMetricsRecord],
    source: str,
) -> str:
    """Why the container is starved of CPU, or ''.

    A pod being deleted is starving nobody: it is on its way out (a
    rollout or a scale-down replaces it), so its usage says nothing; nor is
    a pod of an older template whose request is below the template's: the
    rollout in progress already gives it more.
    """
    wanted, current = target.target.get(CPU), container.requests.get(CPU)
    if not target.controls(CPU) or wanted is None or not current or wanted <= current:
        return ""
    for sample in metrics:
        pod = pods.get(sample.name)
        if pod is not None and pod.deleting:
            continue
        usage = next((c.usage.cpu for c in sample.containers if c.name == container.name), None)
        own = _pod_container(pod, container.name)
        request = max((own.requests.cpu if own else None) or current, current)
        if usage is not None and usage >= request:
            return (
                f"CPU usage {format_human(usage)} in pod {sample.name} at or above its request "
                f"{format_human(request)} while {source} is {format_human(wanted)}"
            )
    return ""


def _oom(
    container: ContainerSpec, pods: Sequence[PodRecord], since: float | None
) -> tuple[str, int | None, str]:
    """Why the container counts as OOMKilled, the memory limit its pod had, and whether
    that pod runs the current template (`container` is the template's), so the
    rollout in progress fails from the OOM itself."""
    found: tuple[str, int | None, str] = ("", None, "")
    for pod in pods:
        for kill in pod.oom_kills:
            if kill.container != container.name:
                continue
            if since is None or kill.finished_at is None or kill.finished_at > since:
                own = _pod_container(pod, container.name)
                limit = own.limits.memory if own else None
                current = own is not None and (own.requests, own.limits) == (
                    container.requests,
                    container.limits,
                )
                if current:
                    return (
                        f"OOMKilled in pod {pod.name}",
                        limit,
                        f"pod {pod.name} runs the current template and was OOMKilled: "
                        "the rollout in progress rolls out pods that OOM and cannot finish",
                    )
                if not found[0]:
                    found = (f"OOMKilled in pod {pod.name}", limit, "")
    return found


def _memory_floor(
    container: ContainerSpec, target: ContainerTarget, limit_hit: int | None
) -> tuple[int | None, str]:
    current = container.requests.memory or 0
    base = limit_hit or container.limits.memory or container.requests.memory
    if not base:
        return None, "no memory limit or request to grow from"
    floor = target.clamp(
        MEMORY, round_request(MEMORY, current + ceil_div(base * OOM_GROWTH_PERCENT, 100))
    )
    if floor <= current:
        return None, f"already at maxAllowed {format_human_memory(current)}"
    return floor, (
        f"memory at least {format_human_memory(current)} + {OOM_GROWTH_PERCENT}% of "
        f"{format_human_memory(base)} = {format_human_memory(floor)}"
    )


def detect_starvation(
    containers: Sequence[ContainerSpec],
    targets: Sequence[ContainerTarget],
    pods: Sequence[PodRecord],
    metrics: Sequence[PodMetricsRecord],
    *,
    since: float | None,
    override_oom: bool = False,
    source: str = "the VPA target",
) -> tuple[tuple[Starving, ...], tuple[str, ...]]:
    """The target's containers that are starved of CPU or were OOMKilled.

    `pods` and `metrics` are the target's; `since` is the last vertical
    scaling (an OOMKill before it was answered already), None when unknown.
    Only containers with a target controlling the resource are guarded;
    `source` names what the targets are, for the explanation (the VPA's,
    or the Capacity curve's size).
    """
    by_name = {pod.name: pod for pod in pods}
    by_target = {t.name: t for t in targets}
    found: list[Starving] = []
    lines: list[str] = []
    for container in containers:
        target = by_target.get(container.name)
        if target is None:
            continue
        cpu = _cpu_starvation(container, target, by_name, metrics, source)
        memory, limit_hit, failing = ("", None, "")
        floor: int | None = None
        if target.controls(MEMORY):
            memory, limit_hit, failing = _oom(container, pods, since)
            if override_oom and not memory:
                memory = OVERRIDE_REASON
            if memory:
                floor, how = _memory_floor(container, target, limit_hit)
                memory = f"{memory}: {how}"
        if cpu:
            lines.append(f"guard: starvation: {container.name} cpu: {cpu}")
        if memory:
            lines.append(f"guard: starvation: {container.name} memory: {memory}")
        if cpu or memory:
            found.append(Starving(container.name, cpu, memory, floor, failing))
    return tuple(found), tuple(lines)


def _grown(
    change: ResourceChange | None,
    container: ContainerSpec,
    target: ContainerTarget,
    guard: Starving,
) -> ResourceChange | None:
    """The memory change after an OOMKill: up to the floor at least, and never down."""
    why, floor, failing = guard.memory, guard.memory_floor, guard.failing_rollout
    if (
        change is not None
        and change.direction == "up"
        and (floor is None or change.proposed >= floor)
    ):
        return replace(change, starving=why, failing_rollout=failing)
    if floor is None:
        return None
    current = container.requests.memory or 0
    wanted = max(target.target.memory or floor, floor)
    return ResourceChange(
        container.name,
        MEMORY,
        current,
        wanted,
        floor,
        floor - current,
        100,
        starving=why,
        failing_rollout=failing,
    )


def apply_starvation(
    plan: Plan,
    starving: Sequence[Starving],
    containers: Sequence[ContainerSpec],
    targets: Sequence[ContainerTarget],
) -> Plan:
    """The plan with starving containers let through, and memory raised to its OOM floor.

    A CPU scale-up the strategy already proposes is marked, so MinChange and
    the scale-up window pass it; the strategy's weight still decides its
    size (with weight 0 the horizontal axis answers CPU starvation). After
    an OOMKill memory grows to its floor whatever the strategy proposed,
    since more replicas do not help a container that runs out of memory.
    """
    if not starving:
        return plan
    by_container = {s.container: s for s in starving}
    specs = {c.name: c for c in containers}
    by_target = {t.name: t for t in targets}
    changes: list[ResourceChange] = []
    seen: set[str] = set()
    for change in plan.changes:
        guard = by_container.get(change.container)
        if guard is None:
            changes.append(change)
        elif change.resource == CPU:
            marked = guard.cpu and change.direction == "up"
            changes.append(replace(change, starving=guard.cpu) if marked else change)
        elif not guard.memory:
            # Starving of CPU only: its memory change is the strategy's business.
            changes.append(change)
        else:
            seen.add(change.container)
            target = by_target[change.container]
            grown = _grown(change, specs[change.container], target, guard)
            if grown is not None:
                changes.append(grown)
    lines = list(plan.explanation)
    raised: set[str] = set()
    for guard in starving:
        if not guard.memory or guard.container in seen or guard.memory_floor is None:
            continue
        grown = _grown(None, specs[guard.container], by_target[guard.container], guard)
        if grown is not None:
            changes.append(grown)
            raised.add(guard.container)
            lines.append(f"guard: {grown.describe()} after an OOMKill")
    blocked = tuple(
        b
        for b in plan.blocked
        if not (b.reason == WEIGHT and b.resource == MEMORY and b.container in raised)
    )
    return replace(plan, changes=tuple(changes), blocked=blocked, explanation=tuple(lines))
