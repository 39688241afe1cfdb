"""In-place resizes: where each pod of the target stands against the decided size, and what to do now.

With `spec.vpa.resizeMode` InPlaceOrRollout or InPlace the decided size is
not written into the pod template (that would replace every pod): it is kept
in `status.podResources`, given to new pods by hvpa's admission webhook, and
brought to running pods through `pods/resize` (docs/in-place.md). This module
looks at each pod and says what it needs; the controller does it.

A pod's state, from what its spec asks for and what its kubelet reports
(KEP 1287's conditions, `status.containerStatuses[].resources`):

- AtSize: it asks for the decided size and runs with it;
- Resize: it asks for another size: resize it now;
- Paced: likewise, but the resize restarts a container (its `resizePolicy`
  says RestartContainer for a resource that changes): at most the workload's
  maxUnavailable pods are down at once, pods already unready counted first,
  as a rolling update would pace them;
- Resizing: it asks for the decided size; its kubelet is applying it (or has
  not reported on it yet);
- Deferred, Infeasible: its kubelet cannot apply it now, or ever (its node is
  too small);
- NotInPlace: the API server would refuse the resize (the QoS class would
  change, its kubelet predates in-place resize) or has refused it.

A pod Infeasible, Deferred or resizing for longer than its bound
(`InPlaceBounds`; the VPA's updater gives up on Deferred after 5 minutes and
on a resize in progress after an hour, and on Infeasible at once), or one
that cannot be resized in place at all, is stuck. InPlaceOrRollout then
rolls the size out through the template (every pod is replaced, the new ones
at the decided size); InPlace holds and says so (`ResizingInPlace=False`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Final

from hvpa.engine.vertical import ContainerResources, describe
from hvpa.records import NO_RESOURCES, ContainerSpec, PodRecord, Resources, TargetRecord

__all__ = [
    "IN_PLACE",
    "IN_PLACE_MODES",
    "IN_PLACE_OR_ROLLOUT",
    "RESIZING_IN_PLACE",
    "ROLLOUT",
    "InPlaceBounds",
    "InPlacePlan",
    "PodPlan",
    "describe_size",
    "plan_in_place",
    "size_key",
    "sized_containers",
]

ROLLOUT: Final = "Rollout"
IN_PLACE_OR_ROLLOUT: Final = "InPlaceOrRollout"
IN_PLACE: Final = "InPlace"
IN_PLACE_MODES: Final = frozenset({IN_PLACE_OR_ROLLOUT, IN_PLACE})
# The condition that says whether the pods are resized in place, and what holds them.
RESIZING_IN_PLACE: Final = "ResizingInPlace"

AT_SIZE: Final = "AtSize"
RESIZE: Final = "Resize"
PACED: Final = "Paced"
RESIZING: Final = "Resizing"
DEFERRED: Final = "Deferred"
INFEASIBLE: Final = "Infeasible"
NOT_IN_PLACE: Final = "NotInPlace"
_WAITING: Final = frozenset({RESIZE, PACED})
_RESOURCES: Final = ("cpu", "memory")
# Without a rollingUpdate.maxUnavailable (a StatefulSet's default, a ReplicaSet's none).
_DEFAULT_MAX_UNAVAILABLE: Final = 1


@dataclass(frozen=True, slots=True)
class InPlaceBounds:
    """How long a resize may stay in each kubelet state before it counts as stuck."""

    infeasible_seconds: float = 60.0
    deferred_seconds: float = 300.0
    in_progress_seconds: float = 3600.0

    def __post_init__(self) -> None:
        for name in ("infeasible_seconds", "deferred_seconds", "in_progress_seconds"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name}: must not be negative")


@dataclass(frozen=True, slots=True)
class PodPlan:
    """One pod: its state, since when its kubelet reports it, and what it asks for and runs with."""

    name: str
    state: str
    message: str = ""
    since: float | None = None
    stuck: bool = False
    spec: tuple[ContainerSpec, ...] = ()
    actual: tuple[ContainerSpec, ...] | None = None
    restarts: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class InPlacePlan:
    """What the in-place modes do for one decision.

    `resize`: the pods to resize now; `rollout`: why the template is patched
    after all (InPlaceOrRollout's way out, "" when it is not); `held`: what
    InPlace cannot bring to the size ("" when nothing).
    """

    mode: str
    containers: tuple[ContainerResources, ...]
    pods: tuple[PodPlan, ...] = ()
    rollout: str = ""
    held: str = ""

    @property
    def resize(self) -> tuple[str, ...]:
        return tuple(plan.name for plan in self.pods if plan.state == RESIZE)

    def count(self, *states: str) -> int:
        return sum(1 for plan in self.pods if plan.state in states)


def size_key(containers: Sequence[ContainerResources | ContainerSpec]) -> str:
    """A stable text of a size, to tell whether a refusal was for the size decided now."""
    return ";".join(
        f"{c.name}:{_amounts(c.requests)}/{_amounts(c.limits)}"
        for c in sorted(containers, key=lambda c: c.name)
    )


def _amounts(resources: Resources) -> str:
    return ",".join(
        f"{name}={resources.get(name)}" for name in _RESOURCES if resources.get(name) is not None
    )


def sized_containers(
    template: Sequence[ContainerSpec], sized: Mapping[str, tuple[Resources, Resources]]
) -> tuple[ContainerSpec, ...]:
    """The template's containers at the decided size (`sized`: name -> (requests, limits))."""
    out = []
    for container in template:
        size = sized.get(container.name)
        if size is None:
            out.append(container)
            continue
        out.append(
            ContainerSpec(
                name=container.name,
                requests=size[0],
                limits=size[1],
                sidecar=container.sidecar,
                other_requests=container.other_requests,
                restart_on_resize=container.restart_on_resize,
            )
        )
    return tuple(out)


def plan_in_place(
    mode: str,
    containers: Sequence[ContainerResources],
    pods: Sequence[PodRecord],
    target: TargetRecord,
    *,
    now: float,
    bounds: InPlaceBounds,
    refused: Mapping[str, tuple[str, str]] | None = None,
) -> InPlacePlan:
    """Each pod's state against `containers`, the resizes to make now, and the way out if stuck.

    `refused`: pod name -> (size_key, the API server's message) of resizes
    the server refused; a refusal counts only for the size decided now.
    """
    decided = tuple(containers)
    key = size_key(decided)
    wanted = {c.name: c for c in decided}
    refusals = {name: message for name, (size, message) in (refused or {}).items() if size == key}
    plans = [
        _pod_plan(pod, wanted, now, bounds, refusals.get(pod.name))
        for pod in sorted(pods, key=lambda p: p.name)
        if not pod.deleting and pod.phase not in ("Succeeded", "Failed")
    ]
    budget = _restart_budget(target, pods, plans)
    admitted = 0
    paced: list[PodPlan] = []
    for plan in plans:
        if plan.state != PACED:
            paced.append(plan)
        elif admitted < budget:
            admitted += 1
            paced.append(replace(plan, state=RESIZE))
        else:
            paced.append(plan)
    stuck = "; ".join(_stuck_message(plan, now) for plan in paced if plan.stuck)
    return InPlacePlan(
        mode=mode,
        containers=decided,
        pods=tuple(paced),
        rollout=stuck if stuck and mode == IN_PLACE_OR_ROLLOUT else "",
        held=stuck if stuck and mode == IN_PLACE else "",
    )


def _pod_plan(
    pod: PodRecord,
    wanted: Mapping[str, ContainerResources],
    now: float,
    bounds: InPlaceBounds,
    refusal: str | None,
) -> PodPlan:
    spec = tuple(c for c in pod.containers if c.name in wanted)
    actual = tuple(c for c in pod.actual if c.name in wanted) if pod.actual is not None else None
    asks = [c for c in spec if not _same(c, wanted[c.name])]
    if asks:
        why = refusal or _not_in_place(pod, wanted)
        if why:
            return PodPlan(pod.name, NOT_IN_PLACE, why, stuck=True, spec=spec, actual=actual)
        restarts = tuple(
            c.name for c in asks if set(c.restart_on_resize) & _changed(c, wanted[c.name])
        )
        state = PACED if restarts else RESIZE
        return PodPlan(pod.name, state, spec=spec, actual=actual, restarts=restarts)
    resize = pod.resize
    if resize is not None and resize.pending == INFEASIBLE:
        return _kubelet_state(
            pod, INFEASIBLE, resize.message, resize.pending_since, now, bounds.infeasible_seconds
        ).with_sizes(spec, actual, wanted)
    if resize is not None and resize.pending:
        return _kubelet_state(
            pod, DEFERRED, resize.message, resize.pending_since, now, bounds.deferred_seconds
        ).with_sizes(spec, actual, wanted)
    if resize is not None and resize.in_progress_since is not None:
        return _kubelet_state(
            pod,
            RESIZING,
            resize.message,
            resize.in_progress_since,
            now,
            bounds.in_progress_seconds,
        ).with_sizes(spec, actual, wanted)
    if actual is not None and any(not _same(c, wanted[c.name]) for c in actual):
        return PodPlan(
            pod.name,
            RESIZING,
            "not yet admitted by its kubelet",
            spec=spec,
            actual=actual,
            restarts=_restarting(spec, actual, wanted),
        )
    return PodPlan(pod.name, AT_SIZE, spec=spec, actual=actual)


@dataclass(frozen=True, slots=True)
class _KubeletState:
    name: str
    state: str
    message: str
    since: float | None
    stuck: bool

    def with_sizes(
        self,
        spec: tuple[ContainerSpec, ...],
        actual: tuple[ContainerSpec, ...] | None,
        wanted: Mapping[str, ContainerResources],
    ) -> PodPlan:
        restarts = _restarting(spec, actual, wanted)
        return PodPlan(
            self.name, self.state, self.message, self.since, self.stuck, spec, actual, restarts
        )


def _kubelet_state(
    pod: PodRecord, state: str, message: str, since: float | None, now: float, bound: float
) -> _KubeletState:
    stuck = since is not None and now - since >= bound
    return _KubeletState(pod.name, state, message, since, stuck)


def _restarting(
    spec: Sequence[ContainerSpec],
    actual: Sequence[ContainerSpec] | None,
    wanted: Mapping[str, ContainerResources],
) -> tuple[str, ...]:
    """The containers a resize under way will restart: running at another size for a
    resource their resizePolicy restarts them for."""
    if actual is None:
        return ()
    policies = {c.name: set(c.restart_on_resize) for c in spec}
    return tuple(
        c.name
        for c in actual
        if c.name in wanted and policies.get(c.name, set()) & _changed(c, wanted[c.name])
    )


def _same(container: ContainerSpec, decided: ContainerResources) -> bool:
    return container.requests == decided.requests and container.limits == decided.limits


def _changed(container: ContainerSpec, decided: ContainerResources) -> set[str]:
    return {
        name
        for name in _RESOURCES
        if (container.requests.get(name), container.limits.get(name))
        != (decided.requests.get(name), decided.limits.get(name))
    }


def _not_in_place(pod: PodRecord, wanted: Mapping[str, ContainerResources]) -> str:
    """Why the API server would refuse to resize this pod to the decided size, or ''."""
    if pod.requests != NO_RESOURCES:
        return "it sets pod-level resources, which are not resized in place"
    if pod.resize_unsupported:
        return (
            f"{pod.node_name or 'its node'} runs a kubelet without in-place resize "
            "(a running container reports no resources)"
        )
    if pod.qos_class:
        resized = [
            ContainerSpec(c.name, wanted[c.name].requests, wanted[c.name].limits)
            if c.name in wanted
            else c
            for c in pod.containers
        ]
        qos = _qos_class(resized)
        if qos != pod.qos_class:
            return f"its QoS class would change from {pod.qos_class} to {qos}"
    return ""


def _qos_class(containers: Sequence[ContainerSpec]) -> str:
    """Upstream's QoS class over the containers' cpu and memory (other resources are not sized)."""
    if not any(
        c.requests.get(r) is not None or c.limits.get(r) is not None
        for c in containers
        for r in _RESOURCES
    ):
        return "BestEffort"
    guaranteed = all(
        c.limits.get(r) is not None and c.requests.get(r) in (None, c.limits.get(r))
        for c in containers
        for r in _RESOURCES
    )
    return "Guaranteed" if guaranteed else "Burstable"


def _restart_budget(
    target: TargetRecord, pods: Sequence[PodRecord], plans: Sequence[PodPlan]
) -> int:
    """How many more pods may go down now: maxUnavailable less the pods already unavailable.

    Unavailable: not Ready, or asked for a resize that restarts a container and
    not yet done (its kubelet may restart it any moment; the cache may not show
    it unready yet)."""
    replicas = target.spec_replicas
    value = target.max_unavailable
    if value is None:
        allowed = _DEFAULT_MAX_UNAVAILABLE
    elif isinstance(value, str) and value.endswith("%"):
        try:
            allowed = math.floor(float(value[:-1]) * replicas / 100)
        except ValueError:
            allowed = _DEFAULT_MAX_UNAVAILABLE
    else:
        try:
            allowed = int(value)
        except ValueError:
            allowed = _DEFAULT_MAX_UNAVAILABLE
    # Both 0 would stall a rolling update, which the workload controllers make 1; so here.
    allowed = max(allowed, 1)
    down = {pod.name for pod in pods if not pod.deleting and pod.ready != "True"}
    down |= {plan.name for plan in plans if plan.state == RESIZING and plan.restarts}
    return max(allowed - len(down), 0)


def _stuck_message(plan: PodPlan, now: float) -> str:
    if plan.state == NOT_IN_PLACE:
        return f"pod {plan.name} cannot be resized in place: {plan.message}"
    held = f" for {now - plan.since:.0f}s" if plan.since is not None else ""
    what = {INFEASIBLE: "Infeasible", DEFERRED: "Deferred", RESIZING: "in progress"}[plan.state]
    detail = f": {plan.message}" if plan.message else ""
    return f"pod {plan.name}: resize {what}{held}{detail}"


def describe_size(containers: Sequence[ContainerResources | ContainerSpec]) -> str:
    """`app: requests cpu 500m, memory 256Mi; limits ...` for explanations and Events."""
    return "; ".join(
        f"{c.name}: requests {describe(c.requests)}, limits {describe(c.limits)}"
        for c in containers
    )
