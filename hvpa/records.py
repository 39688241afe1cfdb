"""Slim typed records of the Kubernetes objects hvpa reads, and their decoders.

The store caches these, the engine decides on them, `hvpa recommend` builds
them from a scenario and the simulator from its own objects, so all four see
the same fields with the same meaning. A record keeps only what the engine,
the explanation and `/debug/state` need: a pod is a few hundred bytes, not the
15 KB of its full JSON.

Decoding goes from raw JSON bytes (or an already-parsed dict) through
msgspec "wire" structs that name only the fields read, so the rest of the
object (managedFields, env, volumes...) is skipped without being built.

Units: every resource amount is an integer in milli-units, as apimachinery's
`MilliValue()` gives it (CPU in millicores, memory in milli-bytes), so the
HPA arithmetic matches upstream exactly and no float ever holds a quantity.
Times are POSIX seconds (the API's timestamps have whole-second precision).

What can go wrong, and how it is reported:

- An object that does not fit its wire struct (a string where a list
  belongs) fails to decode: msgspec.DecodeError from bytes, RecordError from
  a dict (`decode_*`).
- A field the API server guarantees but that cannot be read (a timestamp, a
  selector, a metrics window) makes the conversion raise RecordError.
- A quantity the API server stores but hvpa cannot use (`cpu: 1e51`, from
  1e38 on: see hvpa.quantity) does not lose the object: the
  wire conversions (`*_from_wire`, used by informers and `hvpa explain`)
  leave that amount None and name the field in the record's `unreadable`,
  so the decision that reads the object can say what is wrong
  (`check_readable`); the dict decoders (`decode_*`, for scenarios and the
  simulator) raise RecordError naming it instead.

Nothing else is raised, whatever the object holds: an informer catches
`DECODING_ERRORS` and skips the object, a reader of a scenario reports it.
Beside DecodeError, msgspec raises UnicodeDecodeError for a string that is
not UTF-8, so that class is one of them too.
"""

from __future__ import annotations

import functools
import hashlib
import sys
import weakref
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

import msgspec

from hvpa.durations import DurationError, parse_duration
from hvpa.labels import LabelSelector, SelectorError
from hvpa.quantity import QuantityError, milli_value

__all__ = [
    "DECODING_ERRORS",
    "ConfigMapRecord",
    "ContainerMetrics",
    "ContainerSpec",
    "NodeRecord",
    "OomKill",
    "PodMetricsRecord",
    "PodRecord",
    "RecordError",
    "ResizeStatus",
    "Resources",
    "TargetRecord",
    "UnreadableInput",
    "VpaContainerPolicy",
    "VpaContainerRecommendation",
    "VpaRecord",
    "check_readable",
    "decode_configmap",
    "decode_node",
    "decode_pod",
    "decode_pod_metrics",
    "decode_target",
    "decode_vpa",
    "intern_labels",
    "parse_time",
    "pod_wire_digest",
    "pod_with_version",
    "quantity_milli",
]

CPU: Final = "cpu"
MEMORY: Final = "memory"


class RecordError(ValueError):
    """An object whose fields cannot be read (a bad quantity, timestamp or selector)."""


# Every error decoding an API object (bytes to wire struct to record) can raise, whatever the
# bytes; catch these and only these to skip an object and let a bug be a bug.
DECODING_ERRORS: Final = (msgspec.DecodeError, UnicodeDecodeError, RecordError)


class UnreadableInput(RecordError):
    """Objects a decision reads hold fields that cannot be read; `problems` names each."""

    def __init__(self, problems: tuple[str, ...]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def parse_time(text: str | None) -> float | None:
    """RFC 3339 (as metav1.Time writes it) to POSIX seconds; None stays None.

    A time without a zone is read as UTC, not as the machine's local time, so
    a scenario decides the same everywhere."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    except (ValueError, OverflowError) as error:
        raise RecordError(f"{_shown(text)} is not an RFC 3339 time") from error


def _shown(text: str) -> str:
    """A value quoted in a message, cut short when it is long."""
    return repr(text) if len(text) <= 64 else f"{text[:64]!r}... ({len(text)} characters)"


def format_time(seconds: float) -> str:
    """POSIX seconds to RFC 3339 in UTC, whole seconds, as metav1.Time writes it."""
    return datetime.fromtimestamp(int(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def quantity_milli(value: str | int | float, where: str) -> int:
    """A quantity from the API in milli-units; a bad one (or one of 1e38 or more, see
    hvpa.quantity) is a RecordError naming `where`."""
    try:
        return milli_value(value)
    except QuantityError as error:
        raise RecordError(f"{where}: {error}") from error


def _amount(value: str | int | float | None, where: str) -> tuple[int | None, tuple[str, ...]]:
    """An amount in milli-units, or None and the problem naming `where` when it cannot be read."""
    if value is None:
        return None, ()
    try:
        return milli_value(value), ()
    except QuantityError as error:
        return None, (f"{where}: {error}",)


# ---------------------------------------------------------------------------
# Records


class Resources(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """CPU and memory amounts in milli-units; None where the object sets none."""

    cpu: int | None = None
    memory: int | None = None

    def get(self, resource: str) -> int | None:
        if resource == CPU:
            return self.cpu
        if resource == MEMORY:
            return self.memory
        return None


NO_RESOURCES: Final = Resources()


class ContainerSpec(msgspec.Struct, frozen=True, gc=False):
    """A container's name and resources; `sidecar` marks a restartable init container."""

    name: str
    requests: Resources = NO_RESOURCES
    limits: Resources = NO_RESOURCES
    sidecar: bool = False
    # Resource names requested besides cpu and memory (ephemeral-storage,
    # GPUs...), kept so an HPA utilization metric on them can say so.
    other_requests: tuple[str, ...] = ()
    # The resources whose in-place resize restarts the container (its
    # resizePolicy says RestartContainer for them).
    restart_on_resize: tuple[str, ...] = ()


class OomKill(msgspec.Struct, frozen=True, gc=False):
    container: str
    finished_at: float | None


class ResizeStatus(msgspec.Struct, frozen=True, gc=False):
    """What the kubelet reports of an in-place resize (the PodResizePending and
    PodResizeInProgress conditions of KEP 1287), times in POSIX seconds."""

    # PodResizePending's reason: Deferred or Infeasible ("" when not pending).
    pending: str = ""
    pending_since: float | None = None
    in_progress_since: float | None = None
    # The pending condition's message, or the in-progress one's when its reason is Error.
    message: str = ""
    error: bool = False


class PodRecord(msgspec.Struct, frozen=True, gc=False):
    namespace: str
    name: str
    labels: Mapping[str, str]
    phase: str
    deleting: bool
    start_time: float | None
    # Ready condition: "True", "False", "Unknown", or None when the pod has none.
    ready: str | None
    ready_transition: float | None
    containers: tuple[ContainerSpec, ...]
    node_name: str | None = None
    oom_kills: tuple[OomKill, ...] = ()
    resource_version: str = ""
    owner_uid: str | None = None
    # Pod-level `spec.resources.requests` (the PodLevelResources feature), cpu and memory.
    requests: Resources = NO_RESOURCES
    # Fields that held a quantity hvpa cannot use (their amounts are None), each named.
    unreadable: tuple[str, ...] = ()
    # In-place resize: the kubelet's conditions (None: neither is set), the resources the
    # containers run with (status.containerStatuses[].resources; None: not reported yet),
    # whether a running container reports none (its kubelet cannot resize in place), and
    # the QoS class, which a resize must keep.
    resize: ResizeStatus | None = None
    actual: tuple[ContainerSpec, ...] | None = None
    resize_unsupported: bool = False
    qos_class: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class NodeRecord(msgspec.Struct, frozen=True, gc=False):
    name: str
    labels: Mapping[str, str]
    unschedulable: bool
    # Ready condition status; None when the node reports none.
    ready: str | None
    allocatable: Resources
    resource_version: str = ""
    unreadable: tuple[str, ...] = ()


# The fields hvpa writes, spelled as the API server names them in an apply conflict.
REPLICAS_FIELD: Final = ".spec.replicas"


def container_field(container: str, sidecar: bool, section: str, resource: str) -> str:
    """`.spec.template.spec.containers[name="app"].resources.requests.cpu` (initContainers
    for a sidecar): a container resource field as managedFields and conflicts name it."""
    where = "initContainers" if sidecar else "containers"
    quoted = msgspec.json.encode(container).decode()
    return f".spec.template.spec.{where}[name={quoted}].resources.{section}.{resource}"


class FieldOwner(msgspec.Struct, frozen=True, gc=False):
    """A field hvpa writes, and a field manager that owns it (managedFields of the target)."""

    field: str
    manager: str
    operation: str
    time: float | None = None


class TargetRecord(msgspec.Struct, frozen=True, gc=False):
    """A scale target (Deployment, StatefulSet, ReplicaSet) as the engine sees it."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    generation: int
    resource_version: str
    replicas: int | None
    selector: LabelSelector
    containers: tuple[ContainerSpec, ...]
    observed_generation: int = 0
    status_replicas: int = 0
    updated_replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    paused: bool = False
    current_revision: str = ""
    update_revision: str = ""
    unreadable: tuple[str, ...] = ()
    # Who owns spec.replicas and the containers' cpu and memory requests and limits, from
    # metadata.managedFields (empty where the server keeps none).
    field_owners: tuple[FieldOwner, ...] = ()
    # The rolling update's maxUnavailable as written (a count or a percentage), None when the
    # workload sets none: how many pods may be down at once for a resize that restarts them.
    max_unavailable: int | str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def spec_replicas(self) -> int:
        """The API defaults a missing spec.replicas to 1."""
        return 1 if self.replicas is None else self.replicas

    def rollout_in_progress(self) -> str | None:
        """Why a rollout is still going on, or None when the target has settled.

        Follows `kubectl rollout status`: the controller has not observed the
        latest spec, or not every replica runs the latest template yet, or
        old replicas are still terminating, or new ones are not available.
        """
        want = self.spec_replicas
        if self.observed_generation < self.generation:
            return f"generation {self.generation} not yet observed (observed {self.observed_generation})"
        if self.kind == "ReplicaSet":
            return None
        if (
            self.kind == "StatefulSet"
            and self.update_revision
            and self.current_revision != self.update_revision
        ):
            return f"{self.updated_replicas} of {want} replicas updated to revision {self.update_revision}"
        if self.updated_replicas < want:
            return f"{self.updated_replicas} of {want} replicas updated"
        if self.kind == "Deployment":
            if self.status_replicas > self.updated_replicas:
                old = self.status_replicas - self.updated_replicas
                return f"{old} old replicas pending termination"
            if self.available_replicas < self.updated_replicas:
                return f"{self.available_replicas} of {self.updated_replicas} updated replicas available"
        return None


class VpaContainerPolicy(msgspec.Struct, frozen=True, gc=False):
    container_name: str
    mode: str = "Auto"
    min_allowed: Resources = NO_RESOURCES
    max_allowed: Resources = NO_RESOURCES
    controlled_resources: tuple[str, ...] = (CPU, MEMORY)
    controlled_values: str = "RequestsAndLimits"


class VpaContainerRecommendation(msgspec.Struct, frozen=True, gc=False):
    container_name: str
    target: Resources = NO_RESOURCES
    lower_bound: Resources = NO_RESOURCES
    upper_bound: Resources = NO_RESOURCES
    uncapped_target: Resources = NO_RESOURCES


class VpaRecord(msgspec.Struct, frozen=True, gc=False):
    namespace: str
    name: str
    uid: str
    target_kind: str
    target_name: str
    update_mode: str
    container_policies: tuple[VpaContainerPolicy, ...]
    recommendations: tuple[VpaContainerRecommendation, ...] | None
    # condition type -> (status, reason, message)
    conditions: Mapping[str, tuple[str, str, str]]
    resource_version: str = ""
    owner_uids: tuple[str, ...] = ()
    creation_time: float | None = None
    unreadable: tuple[str, ...] = ()


class ContainerMetrics(msgspec.Struct, frozen=True, gc=False):
    name: str
    usage: Resources


class PodMetricsRecord(msgspec.Struct, frozen=True, gc=False):
    namespace: str
    name: str
    timestamp: float | None
    window_seconds: float
    containers: tuple[ContainerMetrics, ...]


class ConfigMapRecord(msgspec.Struct, frozen=True, gc=False):
    """`sizes`: each value's size in bytes as the server holds it, so that a message can
    name a value's size after its data has been dropped (hvpa.controller.configmaps)."""

    namespace: str
    name: str
    data: Mapping[str, str]
    resource_version: str = ""
    sizes: Mapping[str, int] = msgspec.field(default_factory=dict)


# ---------------------------------------------------------------------------
# Wire structs: the fields read, nothing else (unknown fields are skipped).


class _OwnerRef(msgspec.Struct):
    uid: str = ""
    controller: bool | None = None


class _Meta(msgspec.Struct, rename="camel"):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    labels: dict[str, str] | None = None
    deletion_timestamp: str | None = None
    creation_timestamp: str | None = None
    owner_references: list[_OwnerRef] | None = None


_Amounts = dict[str, str | int | float]


class _Requirements(msgspec.Struct):
    requests: _Amounts | None = None
    limits: _Amounts | None = None


class _ResizePolicy(msgspec.Struct, rename="camel"):
    resource_name: str | None = None
    restart_policy: str | None = None


class _Container(msgspec.Struct, rename="camel"):
    name: str = ""
    resources: _Requirements | None = None
    restart_policy: str | None = None
    resize_policy: list[_ResizePolicy] | None = None


class _PodSpec(msgspec.Struct, rename="camel"):
    containers: list[_Container] = []
    init_containers: list[_Container] = []
    node_name: str | None = None
    resources: _Requirements | None = None


class _Condition(msgspec.Struct, rename="camel"):
    type: str = ""
    status: str = ""
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


class _Terminated(msgspec.Struct, rename="camel"):
    reason: str = ""
    finished_at: str | None = None


class _Running(msgspec.Struct):
    """That a container runs, nothing of it (its `startedAt` moves at every restart, and
    the record reads only whether there is one: `pod_wire_digest` must not see it)."""


class _State(msgspec.Struct):
    terminated: _Terminated | None = None
    running: _Running | None = None


class _ContainerStatus(msgspec.Struct, rename="camel"):
    name: str = ""
    last_state: _State | None = None
    state: _State | None = None
    resources: _Requirements | None = None


class _PodStatus(msgspec.Struct, rename="camel"):
    phase: str = ""
    start_time: str | None = None
    conditions: list[_Condition] = []
    container_statuses: list[_ContainerStatus] = []
    init_container_statuses: list[_ContainerStatus] | None = None
    qos_class: str | None = None


class PodWire(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _PodSpec = msgspec.field(default_factory=_PodSpec)
    status: _PodStatus = msgspec.field(default_factory=_PodStatus)


class _NodeSpec(msgspec.Struct):
    unschedulable: bool = False


class _NodeStatus(msgspec.Struct):
    allocatable: _Amounts | None = None
    conditions: list[_Condition] = []


class NodeWire(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _NodeSpec = msgspec.field(default_factory=_NodeSpec)
    status: _NodeStatus = msgspec.field(default_factory=_NodeStatus)


class _Requirement(msgspec.Struct, rename="camel", omit_defaults=True):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class _Selector(msgspec.Struct, rename="camel", omit_defaults=True):
    match_labels: dict[str, str] | None = None
    match_expressions: list[_Requirement] | None = None


class _TemplateSpec(msgspec.Struct):
    spec: _PodSpec = msgspec.field(default_factory=_PodSpec)


class _RollingUpdate(msgspec.Struct, rename="camel"):
    max_unavailable: int | str | None = None


class _UpdateStrategy(msgspec.Struct, rename="camel"):
    rolling_update: _RollingUpdate | None = None


class _TargetSpec(msgspec.Struct, rename="camel"):
    replicas: int | None = None
    selector: _Selector | None = None
    template: _TemplateSpec = msgspec.field(default_factory=_TemplateSpec)
    paused: bool = False
    # Deployment's `strategy`, StatefulSet's `updateStrategy`.
    strategy: _UpdateStrategy | None = None
    update_strategy: _UpdateStrategy | None = None


class _TargetStatus(msgspec.Struct, rename="camel"):
    observed_generation: int = 0
    replicas: int = 0
    updated_replicas: int = 0
    ready_replicas: int = 0
    available_replicas: int = 0
    current_revision: str = ""
    update_revision: str = ""


class _ManagedFieldsEntry(msgspec.Struct, rename="camel"):
    manager: str = ""
    operation: str = ""
    time: str | None = None
    fields_v1: dict[str, Any] | None = msgspec.field(default=None, name="fieldsV1")


class _TargetMeta(_Meta):
    """A target's metadata, with its managedFields (pods' are never decoded)."""

    managed_fields: list[_ManagedFieldsEntry] | None = None


class TargetWire(msgspec.Struct, rename="camel"):
    api_version: str = ""
    kind: str = ""
    metadata: _TargetMeta = msgspec.field(default_factory=_TargetMeta)
    spec: _TargetSpec = msgspec.field(default_factory=_TargetSpec)
    status: _TargetStatus = msgspec.field(default_factory=_TargetStatus)


class _VpaPolicy(msgspec.Struct, rename="camel"):
    container_name: str = ""
    mode: str | None = None
    min_allowed: _Amounts | None = None
    max_allowed: _Amounts | None = None
    controlled_resources: list[str] | None = None
    controlled_values: str | None = None


class _VpaResourcePolicy(msgspec.Struct, rename="camel"):
    container_policies: list[_VpaPolicy] = []


class _VpaTargetRef(msgspec.Struct, rename="camel"):
    kind: str = ""
    name: str = ""
    api_version: str = ""


class _VpaUpdatePolicy(msgspec.Struct, rename="camel"):
    update_mode: str | None = None


class _VpaSpec(msgspec.Struct, rename="camel"):
    target_ref: _VpaTargetRef | None = None
    update_policy: _VpaUpdatePolicy | None = None
    resource_policy: _VpaResourcePolicy | None = None


class _VpaContainerRecommendation(msgspec.Struct, rename="camel"):
    container_name: str = ""
    target: _Amounts | None = None
    lower_bound: _Amounts | None = None
    upper_bound: _Amounts | None = None
    uncapped_target: _Amounts | None = None


class _VpaRecommendation(msgspec.Struct, rename="camel"):
    container_recommendations: list[_VpaContainerRecommendation] | None = None


class _VpaStatus(msgspec.Struct):
    recommendation: _VpaRecommendation | None = None
    conditions: list[_Condition] = []


class VpaWire(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    spec: _VpaSpec = msgspec.field(default_factory=_VpaSpec)
    status: _VpaStatus = msgspec.field(default_factory=_VpaStatus)


class _ContainerUsage(msgspec.Struct):
    name: str = ""
    usage: _Amounts | None = None


class PodMetricsWire(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    timestamp: str | None = None
    window: str | None = None
    containers: list[_ContainerUsage] = []


class ConfigMapWire(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)
    data: dict[str, str] | None = None


# ---------------------------------------------------------------------------
# Interning: pods of one template share labels and container specs, so the
# store holds one copy of each, not one per pod.


class _Labels(dict[str, str]):
    """A label map that can be weakly referenced, so the intern table below forgets
    it once no record holds it (a StatefulSet's or a Job's pods have labels of their
    own, and a table that kept them would keep every deleted pod's)."""

    __slots__ = ("__weakref__",)


_labels_seen: weakref.WeakValueDictionary[tuple[tuple[str, str], ...], _Labels] = (
    weakref.WeakValueDictionary()
)
_specs_by_raw: dict[tuple[object, ...], tuple[ContainerSpec, ...]] = {}
_EMPTY_LABELS: Final[Mapping[str, str]] = {}
_INTERN_LIMIT: Final = 200_000


def intern_labels(labels: dict[str, str] | None) -> Mapping[str, str]:
    """One shared copy of a label map: the pods of a template, and their PodMetrics (which
    carry the pod's labels), all hold the same one."""
    if not labels:
        return _EMPTY_LABELS
    key = tuple(labels.items())
    shared = _labels_seen.get(key)
    if shared is None:
        shared = _Labels((sys.intern(k), sys.intern(v)) for k, v in key)
        _labels_seen[key] = shared
    return shared


def _intern_optional(text: str | None) -> str | None:
    return None if text is None else sys.intern(text)


def _readable_resources(amounts: _Amounts) -> Resources | None:
    """CPU and memory of a non-empty resource list; None when either cannot be read.

    The common case, tried first: the messages naming an unreadable field are
    built (by `_resources`) only when there is one, not for every amount."""
    cpu, memory = amounts.get(CPU), amounts.get(MEMORY)
    try:
        return Resources(
            None if cpu is None else milli_value(cpu),
            None if memory is None else milli_value(memory),
        )
    except QuantityError:
        return None


def _resources(amounts: _Amounts | None, where: str) -> tuple[Resources, tuple[str, ...]]:
    """CPU and memory of a resource list, and the fields that cannot be read."""
    if not amounts:
        return NO_RESOURCES, ()
    readable = _readable_resources(amounts)
    if readable is not None:
        return readable, ()
    cpu, cpu_problems = _amount(amounts.get(CPU), f"{where}.cpu")
    memory, memory_problems = _amount(amounts.get(MEMORY), f"{where}.memory")
    return Resources(cpu, memory), cpu_problems + memory_problems


def _amounts_key(amounts: _Amounts | None) -> tuple[tuple[str, str | int | float], ...] | None:
    return tuple(amounts.items()) if amounts else None


def _container_key(container: _Container) -> tuple[object, ...]:
    resources = container.resources
    policies = (
        tuple((p.resource_name, p.restart_policy) for p in container.resize_policy)
        if container.resize_policy
        else None
    )
    if resources is None:
        return (container.name, container.restart_policy, policies)
    return (
        container.name,
        container.restart_policy,
        policies,
        _amounts_key(resources.requests),
        _amounts_key(resources.limits),
    )


def _container_specs(
    spec: _PodSpec, where: str
) -> tuple[tuple[ContainerSpec, ...], tuple[str, ...]]:
    """The specs of a pod's (or template's) containers, from a cache keyed by their raw fields,
    and the fields that cannot be read.

    Pods of one template repeat the same containers; parsing their quantities
    again for each (Decimal arithmetic) was half the cost of decoding a pod.
    Keys are the raw names, restart policies and amounts, so a cached spec is
    exactly what parsing would give; containers with an unreadable field are
    never cached (their problems name this object, not the first one seen).
    """
    key = (
        tuple(_container_key(c) for c in spec.containers),
        tuple(_container_key(c) for c in spec.init_containers),
    )
    cached = _specs_by_raw.get(key)
    if cached is not None:
        return cached, ()
    specs, problems = _parse_container_specs(spec, where)
    if problems:
        return specs, problems
    if len(_specs_by_raw) >= _INTERN_LIMIT:
        _specs_by_raw.clear()
    _specs_by_raw[key] = specs
    return specs, ()


def _parse_container_specs(
    spec: _PodSpec, where: str
) -> tuple[tuple[ContainerSpec, ...], tuple[str, ...]]:
    parsed = [_container_spec(c, f"{where}.containers[{c.name}]", False) for c in spec.containers]
    parsed += [
        _container_spec(c, f"{where}.initContainers[{c.name}]", True)
        for c in spec.init_containers
        if c.restart_policy == "Always"
    ]
    specs = tuple(container for container, _ in parsed)
    problems = tuple(problem for _, found in parsed for problem in found)
    return specs, problems


def _container_spec(
    container: _Container, where: str, sidecar: bool
) -> tuple[ContainerSpec, tuple[str, ...]]:
    resources = container.resources or _Requirements()
    requests, request_problems = _resources(resources.requests, f"{where}.resources.requests")
    limits, limit_problems = _resources(resources.limits, f"{where}.resources.limits")
    others = tuple(sorted(name for name in resources.requests or {} if name not in (CPU, MEMORY)))
    restarting = tuple(
        sorted(
            p.resource_name
            for p in container.resize_policy or ()
            if p.restart_policy == "RestartContainer" and p.resource_name
        )
    )
    spec = ContainerSpec(
        name=sys.intern(container.name),
        requests=requests,
        limits=limits,
        sidecar=sidecar,
        other_requests=others,
        restart_on_resize=restarting,
    )
    return spec, request_problems + limit_problems


def _condition(conditions: list[_Condition], kind: str) -> _Condition | None:
    for condition in conditions:
        if condition.type == kind:
            return condition
    return None


def _controller_uid(meta: _Meta) -> str | None:
    for ref in meta.owner_references or ():
        if ref.controller:
            return ref.uid
    return None


def _terminations(status: _ContainerStatus) -> list[_Terminated]:
    states = (status.last_state, status.state)
    return [
        state.terminated for state in states if state is not None and state.terminated is not None
    ]


def _resize_status(conditions: list[_Condition]) -> ResizeStatus | None:
    pending = _condition(conditions, "PodResizePending")
    progress = _condition(conditions, "PodResizeInProgress")
    pending = pending if pending is not None and pending.status == "True" else None
    progress = progress if progress is not None and progress.status == "True" else None
    if pending is None and progress is None:
        return None
    error = progress is not None and progress.reason == "Error"
    if pending is not None:
        message = pending.message
    else:
        message = progress.message if progress is not None and error else ""
    return ResizeStatus(
        pending=(pending.reason or "Deferred") if pending is not None else "",
        pending_since=parse_time(pending.last_transition_time) if pending else None,
        in_progress_since=parse_time(progress.last_transition_time) if progress else None,
        message=message,
        error=error,
    )


def _actual_resources(
    status: _PodStatus, spec: _PodSpec, where: str
) -> tuple[tuple[ContainerSpec, ...] | None, bool]:
    """The containers' status resources, and whether a running container reports none.

    None while a container has not reported any (not started, or its kubelet
    cannot resize) or reports an amount hvpa cannot read: the pod's spec is
    then all that is known of its size. Parsed through the same cache as
    specs (pods of one size share them).
    """
    sidecars = {c.name for c in spec.init_containers if c.restart_policy == "Always"}
    main = status.container_statuses
    side = [s for s in status.init_container_statuses or () if s.name in sidecars]
    reported = [*main, *side]
    unsupported = any(
        s.resources is None and s.state is not None and s.state.running is not None
        for s in reported
    )
    if not reported or any(s.resources is None for s in reported):
        return None, unsupported
    sizes = _PodSpec(
        containers=[_Container(name=s.name, resources=s.resources) for s in main],
        init_containers=[
            _Container(name=s.name, resources=s.resources, restart_policy="Always") for s in side
        ],
    )
    specs, problems = _container_specs(sizes, f"{where}.containerStatuses")
    return (None if problems else specs), unsupported


def pod_from_wire(wire: PodWire) -> PodRecord:
    meta, status = wire.metadata, wire.status
    ready = _condition(status.conditions, "Ready")
    ooms = tuple(
        OomKill(s.name, parse_time(term.finished_at))
        for s in status.container_statuses
        for term in _terminations(s)
        if term.reason == "OOMKilled"
    )
    where = f"Pod {meta.namespace}/{meta.name} spec"
    containers, container_problems = _container_specs(wire.spec, where)
    requests, request_problems = _pod_level_requests(wire.spec, where)
    actual, unsupported = _actual_resources(
        status, wire.spec, f"Pod {meta.namespace}/{meta.name} status"
    )
    return PodRecord(
        namespace=sys.intern(meta.namespace),
        name=meta.name,
        labels=intern_labels(meta.labels),
        phase=sys.intern(status.phase or "Pending"),
        deleting=meta.deletion_timestamp is not None,
        start_time=parse_time(status.start_time),
        ready=sys.intern(ready.status) if ready else None,
        ready_transition=parse_time(ready.last_transition_time) if ready else None,
        containers=containers,
        # Shared by the pods on a node and by the pods of a ReplicaSet: one copy each.
        node_name=_intern_optional(wire.spec.node_name),
        oom_kills=ooms,
        resource_version=meta.resource_version,
        owner_uid=_intern_optional(_controller_uid(meta)),
        requests=requests,
        unreadable=container_problems + request_problems,
        resize=_resize_status(status.conditions),
        actual=actual,
        resize_unsupported=unsupported,
        qos_class=sys.intern(status.qos_class or ""),
    )


_wire_encoder: Final = msgspec.json.Encoder()


def pod_wire_digest(wire: PodWire) -> bytes:
    """A digest of everything `pod_from_wire` reads of the pod but its resourceVersion.

    Two versions of a pod with the same digest make records that differ only
    in `resource_version`: the record is built from the wire struct alone,
    and the wire struct holds little the record does not read (a restart
    count, a probe time, an IP or when a container started is not in it). An
    update that changes none of it (a restart count, a probe, an annotation)
    renews the record the informer holds (`pod_with_version`) instead of
    building a new one, which costs about three times the digest (12 against
    2.8-4.8 us, docs/benchmarks.md). A restart
    itself is converted again: it writes the container's last termination,
    whose time and reason the wire struct keeps for the OOM kills the record
    reads.

    The digest is SHA-256's of the wire struct's JSON, its first 128 bits:
    nobody who writes a pod can make two different versions of it collide,
    and the chance that a changed version has its predecessor's digest is
    2^-128. (SHA-256, not BLAKE2b: OpenSSL computes it with the CPU's SHA
    instructions where there are some: 1.3 against 2.3 us for 1.8 KB on these
    machines, timeit, 2026-11-27.)
    """
    meta = wire.metadata
    version = meta.resource_version
    meta.resource_version = ""
    try:
        encoded = _wire_encoder.encode(wire)
    finally:
        meta.resource_version = version
    return hashlib.sha256(encoded).digest()[:16]


def pod_with_version(record: PodRecord, wire: PodWire) -> PodRecord:
    """`record` at `wire`'s resourceVersion: what `pod_from_wire(wire)` gives when the
    two have the same `pod_wire_digest`."""
    return msgspec.structs.replace(record, resource_version=wire.metadata.resource_version)


def _pod_level_requests(spec: _PodSpec, where: str) -> tuple[Resources, tuple[str, ...]]:
    requests = spec.resources.requests if spec.resources is not None else None
    return _resources(requests, f"{where}.resources.requests")


def node_from_wire(wire: NodeWire) -> NodeRecord:
    ready = _condition(wire.status.conditions, "Ready")
    allocatable, unreadable = _resources(
        wire.status.allocatable, f"Node {wire.metadata.name} status.allocatable"
    )
    return NodeRecord(
        name=wire.metadata.name,
        labels=intern_labels(wire.metadata.labels),
        unschedulable=wire.spec.unschedulable,
        ready=ready.status if ready else None,
        allocatable=allocatable,
        resource_version=wire.metadata.resource_version,
        unreadable=unreadable,
    )


def _target_selector(selector: _Selector | None, where: str) -> LabelSelector:
    if selector is None:
        return LabelSelector(nothing=True)
    try:
        return LabelSelector.from_dict(msgspec.to_builtins(selector))
    except SelectorError as error:
        raise RecordError(f"{where} spec.selector: {error}") from error


def target_from_wire(wire: TargetWire) -> TargetRecord:
    meta, spec, status = wire.metadata, wire.spec, wire.status
    where = f"{wire.kind or 'target'} {meta.namespace}/{meta.name}"
    containers, unreadable = _container_specs(spec.template.spec, f"{where} spec.template.spec")
    return TargetRecord(
        api_version=wire.api_version,
        kind=wire.kind,
        namespace=sys.intern(meta.namespace),
        name=meta.name,
        uid=meta.uid,
        generation=meta.generation,
        resource_version=meta.resource_version,
        replicas=spec.replicas,
        selector=_target_selector(spec.selector, where),
        containers=containers,
        observed_generation=status.observed_generation,
        status_replicas=status.replicas,
        updated_replicas=status.updated_replicas,
        ready_replicas=status.ready_replicas,
        available_replicas=status.available_replicas,
        paused=spec.paused,
        current_revision=status.current_revision,
        update_revision=status.update_revision,
        unreadable=unreadable,
        field_owners=_field_owners(meta.managed_fields or ()),
        max_unavailable=_max_unavailable(spec),
    )


def _max_unavailable(spec: _TargetSpec) -> int | str | None:
    strategy = spec.strategy or spec.update_strategy
    rolling = strategy.rolling_update if strategy is not None else None
    return rolling.max_unavailable if rolling is not None else None


def _child(node: Any, element: str) -> dict[str, Any]:
    """One step down a fieldsV1 tree; {} where the tree (any client may write it) has no map."""
    child = node.get(element) if isinstance(node, dict) else None
    return child if isinstance(child, dict) else {}


def _field_owners(entries: Iterable[_ManagedFieldsEntry]) -> tuple[FieldOwner, ...]:
    """The owners of the fields hvpa writes, read from managedFields; what cannot be read
    (an entry a client wrote by hand) owns nothing."""
    owners: list[FieldOwner] = []
    for entry in entries:
        spec = _child(entry.fields_v1, "f:spec")
        found = [REPLICAS_FIELD] if "f:replicas" in spec else []
        pod_spec = _child(_child(spec, "f:template"), "f:spec")
        for list_name, sidecar in (("f:containers", False), ("f:initContainers", True)):
            for key, node in _child(pod_spec, list_name).items():
                name = _item_name(key)
                if name is None:
                    continue
                resources = _child(node, "f:resources")
                for section in ("requests", "limits"):
                    owned = _child(resources, f"f:{section}")
                    found += [
                        container_field(name, sidecar, section, resource)
                        for resource in (CPU, MEMORY)
                        if f"f:{resource}" in owned
                    ]
        when = _time_or_none(entry.time)
        owners += [FieldOwner(field, entry.manager, entry.operation, when) for field in found]
    return tuple(owners)


def _item_name(element: str) -> str | None:
    if not element.startswith("k:"):
        return None
    try:
        keys = msgspec.json.decode(element[2:])
    except msgspec.DecodeError:
        return None
    name = keys.get("name") if isinstance(keys, dict) else None
    return name if isinstance(name, str) else None


def _time_or_none(text: str | None) -> float | None:
    try:
        return parse_time(text)
    except RecordError:
        return None


def _vpa_policy(policy: _VpaPolicy, where: str) -> tuple[VpaContainerPolicy, tuple[str, ...]]:
    where = f"{where} spec.resourcePolicy.containerPolicies[{policy.container_name}]"
    min_allowed, min_problems = _resources(policy.min_allowed, f"{where}.minAllowed")
    max_allowed, max_problems = _resources(policy.max_allowed, f"{where}.maxAllowed")
    record = VpaContainerPolicy(
        container_name=policy.container_name,
        mode=policy.mode or "Auto",
        min_allowed=min_allowed,
        max_allowed=max_allowed,
        controlled_resources=tuple(policy.controlled_resources)
        if policy.controlled_resources is not None
        else (CPU, MEMORY),
        controlled_values=policy.controlled_values or "RequestsAndLimits",
    )
    return record, min_problems + max_problems


def _vpa_recommendation(
    recommendation: _VpaContainerRecommendation, where: str
) -> tuple[VpaContainerRecommendation, tuple[str, ...]]:
    where = (
        f"{where} status.recommendation.containerRecommendations[{recommendation.container_name}]"
    )
    target, target_problems = _resources(recommendation.target, f"{where}.target")
    lower, lower_problems = _resources(recommendation.lower_bound, f"{where}.lowerBound")
    upper, upper_problems = _resources(recommendation.upper_bound, f"{where}.upperBound")
    uncapped, uncapped_problems = _resources(
        recommendation.uncapped_target, f"{where}.uncappedTarget"
    )
    record = VpaContainerRecommendation(
        container_name=recommendation.container_name,
        target=target,
        lower_bound=lower,
        upper_bound=upper,
        uncapped_target=uncapped,
    )
    return record, target_problems + lower_problems + upper_problems + uncapped_problems


def vpa_from_wire(wire: VpaWire) -> VpaRecord:
    meta, spec, status = wire.metadata, wire.spec, wire.status
    where = f"VerticalPodAutoscaler {meta.namespace}/{meta.name}"
    policies = [
        _vpa_policy(p, where)
        for p in (spec.resource_policy.container_policies if spec.resource_policy else [])
    ]
    wire_recommendations = (
        status.recommendation.container_recommendations if status.recommendation else None
    )
    recommendations = (
        None
        if wire_recommendations is None
        else [_vpa_recommendation(r, where) for r in wire_recommendations]
    )
    target_ref = spec.target_ref or _VpaTargetRef()
    return VpaRecord(
        namespace=meta.namespace,
        name=meta.name,
        uid=meta.uid,
        target_kind=target_ref.kind,
        target_name=target_ref.name,
        update_mode=(spec.update_policy.update_mode if spec.update_policy else None) or "Auto",
        container_policies=tuple(policy for policy, _ in policies),
        recommendations=None
        if recommendations is None
        else tuple(recommendation for recommendation, _ in recommendations),
        conditions={c.type: (c.status, c.reason, c.message) for c in status.conditions},
        resource_version=meta.resource_version,
        owner_uids=tuple(ref.uid for ref in meta.owner_references or ()),
        creation_time=parse_time(meta.creation_timestamp),
        unreadable=tuple(
            problem for _, found in [*policies, *(recommendations or ())] for problem in found
        ),
    )


def _scrape_time(text: str | None, parsed: dict[str | None, float | None] | None) -> float | None:
    """A PodMetrics `timestamp`, parsed once a spelling in `parsed` (None: parsed anew).
    metrics-server stamps a node's pods with one scrape's time, so a namespace's answer
    holds a spelling a node, not one a pod, and its pods share one float (24 bytes a pod
    kept for a period otherwise: 3.4 MiB at 150,000 pods). Kept per answer, not in a
    process-wide cache, whose spellings would all be stale a period later. A failure is
    not kept: it raises each time."""
    if parsed is None:
        return parse_time(text)
    if text not in parsed:
        parsed[text] = parse_time(text)
    return parsed[text]


@functools.lru_cache(maxsize=64)
def _duration_seconds(text: str | None) -> float:
    """A Go duration as metrics.k8s.io writes `window` (`30s`, `1m0s`, `500ms`); a reader
    sees a handful of spellings, once per pod of every read, so each is parsed once (a
    failure is not cached: it raises each time)."""
    if not text:
        return 0.0
    try:
        return parse_duration(text)
    except DurationError as error:
        raise RecordError(f"window: {error}") from error


def _container_usage(usage: _ContainerUsage, meta: _Meta) -> ContainerMetrics:
    """One container's usage; an unreadable amount fails the whole answer, as a metrics read.
    The message (naming the PodMetrics of `meta` and the container) is built only then: a
    shared read decodes every item of its namespace."""
    amounts = _readable_resources(usage.usage) if usage.usage else NO_RESOURCES
    if amounts is None:
        where = f"PodMetrics {meta.namespace}/{meta.name} containers[{usage.name}].usage"
        _, problems = _resources(usage.usage, where)
        raise RecordError("; ".join(problems))
    return ContainerMetrics(sys.intern(usage.name), amounts)


def pod_metrics_from_wire(
    wire: PodMetricsWire,
    name: str | None = None,
    scrape_times: dict[str | None, float | None] | None = None,
) -> PodMetricsRecord:
    """Raises RecordError for an unreadable field: a metrics read fails as a whole, and its
    reader turns that into a failed reading. `name`: the pod's name as the caller already
    holds it (equal to the wire's), kept instead of the wire's copy; `scrape_times`: the
    timestamps of the answer's items parsed so far (see `_scrape_time`)."""
    return PodMetricsRecord(
        # A namespace's answer is kept for a period (controller/shared_pod_metrics.py):
        # its pods share one namespace and one name per container, not a copy each.
        namespace=sys.intern(wire.metadata.namespace),
        name=wire.metadata.name if name is None else name,
        timestamp=_scrape_time(wire.timestamp, scrape_times),
        window_seconds=_duration_seconds(wire.window),
        containers=tuple(_container_usage(c, wire.metadata) for c in wire.containers),
    )


def configmap_from_wire(wire: ConfigMapWire) -> ConfigMapRecord:
    return ConfigMapRecord(
        namespace=wire.metadata.namespace,
        name=wire.metadata.name,
        data=dict(wire.data or {}),
        resource_version=wire.metadata.resource_version,
        sizes={key: len(value.encode()) for key, value in (wire.data or {}).items()},
    )


# ---------------------------------------------------------------------------
# Decoders from parsed JSON (scenarios, the simulator). The reflector decodes
# bytes straight into the wire structs with msgspec.json.Decoder instead.


def _convert(obj: Mapping[str, Any], wire_type: type[Any], what: str) -> Any:
    try:
        return msgspec.convert(obj, wire_type, strict=False)
    except msgspec.ValidationError as error:
        raise RecordError(f"{what}: {error}") from error


_Checked = PodRecord | NodeRecord | TargetRecord | VpaRecord
_C = TypeVar("_C", PodRecord, NodeRecord, TargetRecord, VpaRecord)


def _readable(record: _C, strict: bool) -> _C:
    if strict and record.unreadable:
        raise RecordError("; ".join(record.unreadable))
    return record


def check_readable(records: Iterable[_Checked | None]) -> None:
    """Raise UnreadableInput naming every unreadable field of `records` (None: absent, fine).

    A decision on an object with an amount it cannot read would decide on
    a guess; the caller holds instead and says why."""
    problems = tuple(
        problem for record in records if record is not None for problem in record.unreadable
    )
    if problems:
        raise UnreadableInput(problems)


def decode_pod(obj: Mapping[str, Any], *, strict: bool = True) -> PodRecord:
    """`strict` False: keep an unreadable quantity as an `unreadable` field, not a RecordError."""
    return _readable(pod_from_wire(_convert(obj, PodWire, "Pod")), strict)


def decode_node(obj: Mapping[str, Any], *, strict: bool = True) -> NodeRecord:
    return _readable(node_from_wire(_convert(obj, NodeWire, "Node")), strict)


def decode_target(obj: Mapping[str, Any], *, strict: bool = True) -> TargetRecord:
    return _readable(target_from_wire(_convert(obj, TargetWire, "target")), strict)


def decode_vpa(obj: Mapping[str, Any], *, strict: bool = True) -> VpaRecord:
    return _readable(vpa_from_wire(_convert(obj, VpaWire, "VerticalPodAutoscaler")), strict)


def decode_pod_metrics(obj: Mapping[str, Any]) -> PodMetricsRecord:
    return pod_metrics_from_wire(_convert(obj, PodMetricsWire, "PodMetrics"))


def decode_configmap(obj: Mapping[str, Any]) -> ConfigMapRecord:
    return configmap_from_wire(_convert(obj, ConfigMapWire, "ConfigMap"))
