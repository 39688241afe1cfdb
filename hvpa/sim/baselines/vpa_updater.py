"""A VPA updater and admission controller in the model: the pods get the recommender's target.

The native VPA in an updating mode has two halves besides its recommender
(recommender.py):

- the **admission controller** sizes every pod of the VPA's target as it is
  created: each container's requests become the recommendation's target,
  capped by the container policy (vpa_updater_rules.capped_target); with
  `controlledValues: RequestsAndLimits` a limit keeps its ratio to the
  request, with `RequestsOnly` it stays. A pod created before there is a
  recommendation keeps its template's resources. Here it is a hook on the
  model's pod creation (Pods.admission), which is where a mutating webhook
  acts in a real cluster: the pod object is stored already sized.
- the **updater** evicts the pods whose requests the rules of
  vpa_updater_rules.py say to update, once a minute, paced by the eviction
  restriction. An evicted pod is deleted gracefully; its ReplicaSet makes a
  new one, which the admission controller sizes. Modes `Auto` and
  `Recreate` evict; `InPlaceOrRecreate` resizes the pod through
  `pods/resize` (the same sizes the admission controller would give it)
  and evicts only when vpa_updater_rules.in_place_decision falls back (the
  kubelet found the resize infeasible, failed, or kept it waiting too
  long), or when the API server refuses the resize; `Initial` only sizes
  new pods; `Off` does nothing.

Both read the model's own records (pods, as the recommender does) and the
API server's VPA and workload objects, and write only through the model's
pod writes, so the hvpa controller watching the same cluster sees the pods
come and go as it would from the real VPA. The replica group is the
workload: this baseline never changes the pod template, so a Deployment has
one ReplicaSet and its spec.replicas is the group's. An eviction honours the
PodDisruptionBudgets in the API server as the Eviction API does
(disruption_budgets.py): a refused one is recorded in `refusals`, costs the
rate limiter's token it took, and the updater goes on to its next pod, as
upstream's does.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hvpa.engine.vertical.recommendation import container_policy
from hvpa.quantity import (
    QuantityError,
    ceil_div,
    format_bytes,
    format_cpu,
    parse_bytes,
    parse_cpu_millis,
)
from hvpa.records import (
    RecordError,
    Resources,
    VpaContainerPolicy,
    decode_vpa,
    parse_time,
)
from hvpa.sim.apiserver import NotFound, Objects
from hvpa.sim.apiserver.errors import ApiError
from hvpa.sim.apiserver.patching import PatchType
from hvpa.sim.apiserver.resizing import PodResizes
from hvpa.sim.baselines.disruption_budgets import BudgetPod, eviction_refusal, parse_budget
from hvpa.sim.baselines.vpa_updater_rules import (
    APPROVED,
    CPU,
    EVICT,
    MEMORY,
    ContainerPolicy,
    ContainerRecommendation,
    ContainerResources,
    EvictionBudget,
    PodPriority,
    RateLimiter,
    ResizeConditions,
    UpdaterSettings,
    capped_target,
    eviction_budget,
    in_place_decision,
    quick_oom,
    update_order,
    update_priority,
    wants_update,
)
from hvpa.sim.kinds import RESOURCE_OF_KIND
from hvpa.sim.pods import Pods, SimPod, WorkloadKey

__all__ = ["Eviction", "EvictionRefused", "VpaUpdater"]

_EVICTING_MODES: Final = ("Auto", "Recreate", "InPlaceOrRecreate")
_SIZING_MODES: Final = (*_EVICTING_MODES, "Initial")


@dataclass(frozen=True, slots=True)
class Eviction:
    time: float
    workload: WorkloadKey
    pod: str


@dataclass(frozen=True, slots=True)
class EvictionRefused:
    """An eviction the API server refused for a PodDisruptionBudget, and its message."""

    time: float
    workload: WorkloadKey
    pod: str
    reason: str


@dataclass(frozen=True, slots=True)
class _Vpa:
    workload: WorkloadKey
    mode: str
    policies: tuple[VpaContainerPolicy, ...]
    recommendations: Mapping[str, ContainerRecommendation]

    def policy(self, container: str) -> ContainerPolicy:
        """The container's policy as the controller's VPA reader finds it (its own name wins
        over `*`); none found is the API's defaults."""
        found = container_policy(container, self.policies) or VpaContainerPolicy(container)
        return ContainerPolicy(
            mode=found.mode,
            min_allowed=_counted(found.min_allowed),
            max_allowed=_counted(found.max_allowed),
            controlled_resources=found.controlled_resources,
            controlled_values=found.controlled_values,
        )


def _counted(resources: Resources) -> dict[str, int]:
    """A record's amounts as the updater's rules count them: the records keep milli-units of
    both, the rules millicores and bytes, so memory is divided by 1000 here, once, rounded
    up as a quantity's bytes are (parse_bytes). An amount the record could not read (None)
    is left out, as a resource the VPA does not name."""
    result: dict[str, int] = {}
    if resources.cpu is not None:
        result[CPU] = resources.cpu
    if resources.memory is not None:
        result[MEMORY] = ceil_div(resources.memory, 1000)
    return result


def _resource_list(raw: Any) -> dict[str, int]:
    """A pod manifest's ResourceList as millicores and bytes; what cannot be read is left out
    (a resource this model does not know)."""
    result: dict[str, int] = {}
    for resource, parse in ((CPU, parse_cpu_millis), (MEMORY, parse_bytes)):
        value = (raw or {}).get(resource)
        if value is None:
            continue
        with contextlib.suppress(QuantityError, ValueError):
            result[resource] = parse(str(value))
    return result


def _vpa(obj: Mapping[str, Any]) -> _Vpa:
    """The VPA as the controller's informer decodes it (records.decode_vpa); a VPA the API
    server stored has passed its schema, so `strict=False` only keeps an amount too large
    to read as unread rather than failing the whole pass."""
    record = decode_vpa(obj, strict=False)
    recommendations = {
        item.container_name: ContainerRecommendation(
            target=_counted(item.target),
            lower_bound=_counted(item.lower_bound),
            upper_bound=_counted(item.upper_bound),
        )
        for item in record.recommendations or ()
    }
    workload: WorkloadKey = (record.target_kind, record.namespace, record.target_name)
    return _Vpa(workload, record.update_mode, record.container_policies, recommendations)


def _resources(pod: SimPod) -> list[ContainerResources]:
    result = []
    for container in pod.containers:
        size = container.size
        requests = {CPU: size.request_cpu, MEMORY: size.request_memory}
        limits = {CPU: size.limit_cpu, MEMORY: size.limit_memory}
        result.append(
            ContainerResources(
                name=size.name,
                requests={k: v for k, v in requests.items() if v is not None},
                limits={k: v for k, v in limits.items() if v is not None},
            )
        )
    return result


def _capped(
    vpa: _Vpa, containers: Sequence[ContainerResources]
) -> dict[str, ContainerRecommendation]:
    """The recommendation per container as the updater and the admission controller apply it:
    capped by the policy, nothing for `mode: Off` containers."""
    result = {}
    for container in containers:
        recommendation = vpa.recommendations.get(container.name)
        policy = vpa.policy(container.name)
        if recommendation is None or policy.mode == "Off":
            continue
        result[container.name] = ContainerRecommendation(
            target=capped_target(recommendation.target, policy, container.limits),
            lower_bound=recommendation.lower_bound,
            upper_bound=recommendation.upper_bound,
        )
    return result


def _sized(
    vpa: _Vpa, current: ContainerResources, resources: Mapping[str, Any]
) -> dict[str, Any] | None:
    """A container's `resources` with its VPA's capped target as requests (None: no target).

    With `controlledValues: RequestsAndLimits` a limit keeps its ratio to the
    request; with `RequestsOnly` it stays (the target is capped under it)."""
    recommendation = _capped(vpa, [current]).get(current.name)
    if recommendation is None or not recommendation.target:
        return None
    policy = vpa.policy(current.name)
    requests = dict(resources.get("requests") or {})
    limits = dict(resources.get("limits") or {})
    for resource, amount in recommendation.target.items():
        requests[resource] = _format(resource, amount)
        old_request, old_limit = current.requests.get(resource), current.limits.get(resource)
        if (
            policy.controlled_values == "RequestsAndLimits"
            and old_request
            and old_limit is not None
        ):
            limits[resource] = _format(resource, ceil_div(amount * old_limit, old_request))
    sized: dict[str, Any] = {"requests": requests}
    if limits:
        sized["limits"] = limits
    return sized


def _resize_conditions(pod: SimPod) -> ResizeConditions:
    """The pod's resize as its status conditions say (SimPod.status writes the same)."""
    pending = pod.resize_pending[0] if pod.resize_pending is not None else None
    in_progress = None
    if pending is None and pod.resize_started is not None:
        in_progress = "Error" if pod.resize_error else ""
    return ResizeConditions(pending=pending, in_progress=in_progress)


def _last_terminations(pod: SimPod, vpa: _Vpa) -> list[tuple[str, float | None, float | None]]:
    """(reason, started, finished) of each VPA-scaled container's last termination."""
    result = []
    for container in pod.containers:
        terminated = (container.last_termination or {}).get("terminated") or {}
        if not terminated or vpa.policy(container.size.name).mode == "Off":
            continue
        try:
            started = parse_time(terminated.get("startedAt"))
            finished = parse_time(terminated.get("finishedAt"))
        except RecordError:
            continue
        result.append((str(terminated.get("reason")), started, finished))
    return result


class VpaUpdater:
    """The VPA's updater and admission controller for every VPA of the model's workloads."""

    def __init__(
        self,
        objects: Objects,
        pods: Pods,
        *,
        clock: Callable[[], float],
        settings: UpdaterSettings | None = None,
        resizes: PodResizes | None = None,
    ) -> None:
        """`resizes` is the API server's pods/resize (None: InPlaceOrRecreate evicts)."""
        self._objects = objects
        self._pods = pods
        self._resizes = resizes
        # When the updater asked for each pod's resize under way, or first saw it under way
        # (upstream's lastInPlaceAttemptTimeMap): the fallbacks' timeouts run from there.
        self._resize_seen: dict[str, float] = {}
        self._clock = clock
        self.settings = settings or UpdaterSettings()
        self._limiter = RateLimiter(
            self.settings.eviction_rate_limit, self.settings.eviction_rate_burst
        )
        self._next_pass = clock() + self.settings.interval_seconds
        self.evictions: list[Eviction] = []
        self.refusals: list[EvictionRefused] = []

    def _vpas(self, modes: Sequence[str]) -> list[_Vpa]:
        found = [_vpa(obj) for obj in self._objects.list("verticalpodautoscalers")]
        return [vpa for vpa in found if vpa.mode in modes]

    # ------------------------------------------------------------------ admission

    def admit(self, manifest: dict[str, Any], workload: WorkloadKey) -> dict[str, Any]:
        """The pod as the admission controller lets it in: sized by its VPA's recommendation."""
        vpa = next((v for v in self._vpas(_SIZING_MODES) if v.workload == workload), None)
        if vpa is None or not vpa.recommendations:
            return manifest
        sized = copy.deepcopy(manifest)
        for container in sized.get("spec", {}).get("containers") or ():
            resources = container.setdefault("resources", {})
            current = ContainerResources(
                name=str(container["name"]),
                requests=_resource_list(resources.get("requests")),
                limits=_resource_list(resources.get("limits")),
            )
            found = _sized(vpa, current, resources)
            if found is None:
                continue
            resources.update(found)
        return sized

    # ------------------------------------------------------------------ updater

    def step(self) -> None:
        """Run a pass when one is due (every `interval_seconds`)."""
        now = self._clock()
        if now < self._next_pass:
            return
        self._next_pass += self.settings.interval_seconds
        self.run_once()

    def run_once(self) -> None:
        """One pass of the updater over every evicting VPA (RunOnce)."""
        for vpa in self._vpas(_EVICTING_MODES):
            if vpa.recommendations:
                self._update(vpa)

    def _update(self, vpa: _Vpa) -> None:
        now = self._clock()
        settings = self.settings
        live = [
            p
            for p in self._pods.of(vpa.workload)
            if p.node is not None and not p.deleting and p.phase not in ("Succeeded", "Failed")
        ]
        budget = eviction_budget(
            configured=self._configured(vpa.workload, len(live)),
            live=len(live),
            pending=sum(1 for p in live if p.phase == "Pending"),
            settings=settings,
        )
        if budget is None:
            return
        candidates: list[tuple[SimPod, PodPriority]] = []
        for pod in live:
            if not budget.can_evict(pending=pod.phase == "Pending"):
                continue
            containers = _resources(pod)
            priority = update_priority(containers, _capped(vpa, containers))
            oomed = quick_oom(_last_terminations(pod, vpa), settings)
            if wants_update(
                priority, started_at=pod.started_at, quick_oom=oomed, now=now, settings=settings
            ):
                candidates.append((pod, priority))
        ordered = update_order(candidates)
        if vpa.mode == "InPlaceOrRecreate" and self._resizes is not None:
            ordered = self._in_place(vpa, ordered, budget, now)
        for pod in ordered:
            pending = pod.phase == "Pending"
            if not budget.can_evict(pending=pending):
                continue
            if not self._limiter.allow(now):
                return
            refusal = self._eviction_refusal(pod)
            if refusal is not None:
                self.refusals.append(EvictionRefused(now, vpa.workload, pod.name, refusal))
                continue
            self._pods.delete(pod)
            budget.record(pending=pending)
            self.evictions.append(Eviction(now, vpa.workload, pod.name))

    def _in_place(
        self, vpa: _Vpa, ordered: Sequence[SimPod], budget: EvictionBudget, now: float
    ) -> list[SimPod]:
        """Resize what InPlaceOrRecreate approves; the pods to evict instead, in order.

        The updater's in-place loop runs before its eviction loop, over the
        same ordered pods: each is resized, left for a later pass, or handed
        to the eviction loop (its fallback, or a resize the API server
        refused). Upstream has no rate limit on resizes by default."""
        evict: list[SimPod] = []
        for pod in ordered:
            conditions = _resize_conditions(pod)
            if conditions.resizing:
                self._resize_seen.setdefault(pod.name, now)
            else:
                self._resize_seen.pop(pod.name, None)
            decision = in_place_decision(
                vpa.mode,
                phase_pending=pod.phase == "Pending",
                resize=conditions,
                waited_seconds=now - self._resize_seen.get(pod.name, now),
                budget=budget,
            )
            if decision == EVICT:
                evict.append(pod)
            elif decision == APPROVED:
                if self._resize(vpa, pod):
                    self._resize_seen[pod.name] = now
                    budget.record_resize()
                else:
                    evict.append(pod)
        return evict

    def _resize(self, vpa: _Vpa, pod: SimPod) -> bool:
        """PATCH pods/resize with the pod's containers at their VPA's sizes; False if refused."""
        assert self._resizes is not None
        if not self._resizes.served:  # a server before 1.33: the PATCH would answer 404
            return False
        containers = []
        for container in _resources(pod):
            resources = {
                "requests": {r: _format(r, v) for r, v in container.requests.items()},
                "limits": {r: _format(r, v) for r, v in container.limits.items()},
            }
            sized = _sized(vpa, container, resources)
            if sized is not None:
                containers.append({"name": container.name, "resources": sized})
        if not containers:
            return False
        body = {"spec": {"containers": containers}}
        try:
            self._resizes.resize(pod.namespace, pod.name, body, PatchType.STRATEGIC)
        except ApiError:
            return False
        return True

    def _eviction_refusal(self, pod: SimPod) -> str | None:
        """What pods/eviction answers for `pod` under the namespace's PodDisruptionBudgets
        (None: the pod is evicted)."""
        budgets = [
            parse_budget(obj)
            for obj in self._objects.list("poddisruptionbudgets", namespace=pod.namespace)
        ]
        if not budgets:
            return None
        pods = [self._budget_pod(p) for p in self._pods if p.namespace == pod.namespace]
        return eviction_refusal(self._budget_pod(pod), budgets, pods)

    def _budget_pod(self, pod: SimPod) -> BudgetPod:
        """The pod as a budget reads it: its labels from the API server, the rest from the model."""
        try:
            metadata = self._objects.get("pods", pod.name, namespace=pod.namespace)["metadata"]
        except NotFound:
            metadata = {}
        kind, _, name = pod.workload
        scale = self._scale(pod.workload)
        return BudgetPod(
            namespace=pod.namespace,
            labels={str(k): str(v) for k, v in (metadata.get("labels") or {}).items()},
            phase=pod.phase,
            ready=pod.ready,
            deleting=pod.deleting,
            owner_scale=None if scale is None else (f"{kind}/{name}", scale),
        )

    def _scale(self, workload: WorkloadKey) -> int | None:
        """The workload's spec.replicas, None if it is not there."""
        kind, namespace, name = workload
        plural = RESOURCE_OF_KIND.get(kind)
        if plural is None:
            return None
        try:
            obj = self._objects.get(plural, name, namespace=namespace)
        except NotFound:
            return None
        return int((obj.get("spec") or {}).get("replicas", 1))

    def _configured(self, workload: WorkloadKey, live: int) -> int:
        """The group's spec.replicas (the workload's: one ReplicaSet, see the module doc)."""
        scale = self._scale(workload)
        return live if scale is None else scale


def _format(resource: str, amount: int) -> str:
    return format_cpu(amount) if resource == CPU else format_bytes(amount, binary=True)
