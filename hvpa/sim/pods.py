"""The simulated pods: the model's record of each pod, and the only code that writes pods.

The workload controller, the scheduler and the kubelet of the model change
a SimPod and call `Pods.write`, which renders the pod's status as the
kubelet would report it (phase, conditions, containerStatuses with
restartCount and lastState) and writes it through the in-process API server
only when it changed, so every change is one watch event the controller sees
and nothing else is.

The record, not the API object, is what the model reads back: the model is
the only writer of pods but for pods/resize (a controller resizing in place),
which the API server reports to `on_resize` as a kubelet's watch would, and
reading its own dataclasses each tick is what keeps hours of simulated time
cheap. What can go wrong: someone else deletes a pod (kubectl, in
`--keep-running`); a write then answers NotFound and the record is dropped,
as a kubelet forgets a pod the API no longer has.

Each container has three sizes, as the kubelet tracks them (KEP 1287): the
desired one (the pod's spec, `spec`), the one the kubelet admitted
(`allocated`) and the one the container runs with (`size`, what limits and
throttles it). They differ only while a resize is pending or in progress;
the status reports the last two (`containerStatuses[].resources` and
`allocatedResources`) with the `PodResizePending` and `PodResizeInProgress`
conditions, and the scheduler holds the largest of the three on the node.

With `admission` (the API server's mutating admission: its webhooks run
over HTTPS, so a create must wait for them) a create that some webhook
matches is not made at once: it waits until `admit_pending`, which the
cluster awaits before its scheduler runs, sends it through admission and
creates what comes back. Meanwhile `pending(...)` counts it, and the
workload controller leaves that workload alone until its creates are done,
as the ReplicaSet controller waits for its expectations. A create the
admission refuses is dropped; the next tick asks again. A create no webhook
matches is made at once, as without admission.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Protocol

from hvpa.quantity import format_bytes, format_cpu, parse_bytes, parse_cpu_millis
from hvpa.records import format_time
from hvpa.sim.apiserver import ApiError, NotFound, Objects

__all__ = [
    "ContainerSize",
    "ContainerState",
    "Pods",
    "SimPod",
    "WorkloadKey",
    "container_sizes",
    "restart_policies",
]

# (kind, namespace, name) of the Deployment or StatefulSet that owns a pod.
WorkloadKey = tuple[str, str, str]

# The kubelet's crash-loop back-off: 10 s doubling up to 5 min, reset after 10 min running.
BACKOFF_INITIAL_SECONDS: Final = 10.0
BACKOFF_MAX_SECONDS: Final = 300.0
BACKOFF_RESET_SECONDS: Final = 600.0
PENDING: Final = "PodResizePending"
IN_PROGRESS: Final = "PodResizeInProgress"


@dataclass(frozen=True, slots=True)
class ContainerSize:
    """A container's requests and limits in the engine's units (millicores, bytes); None: not set."""

    name: str
    request_cpu: int | None = None
    request_memory: int | None = None
    limit_cpu: int | None = None
    limit_memory: int | None = None


def _amount(values: Mapping[str, Any], key: str, parse: Callable[[str], int]) -> int | None:
    value = values.get(key)
    return None if value is None else parse(str(value))


def container_sizes(pod_spec: Mapping[str, Any]) -> tuple[ContainerSize, ...]:
    """The containers of a pod spec or template spec, as the API server defaulted them."""
    sizes = []
    for container in pod_spec.get("containers") or ():
        resources = container.get("resources") or {}
        requests = resources.get("requests") or {}
        limits = resources.get("limits") or {}
        sizes.append(
            ContainerSize(
                name=str(container["name"]),
                request_cpu=_amount(requests, "cpu", parse_cpu_millis),
                request_memory=_amount(requests, "memory", parse_bytes),
                limit_cpu=_amount(limits, "cpu", parse_cpu_millis),
                limit_memory=_amount(limits, "memory", parse_bytes),
            )
        )
    return tuple(sizes)


def restart_policies(pod_spec: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    """Per container, the resources whose resize restarts it (`resizePolicy: RestartContainer`)."""
    restarting: dict[str, frozenset[str]] = {}
    for part in ("initContainers", "containers"):
        for container in pod_spec.get(part) or ():
            policies = container.get("resizePolicy") or ()
            restarting[str(container["name"])] = frozenset(
                str(p.get("resourceName"))
                for p in policies
                if p.get("restartPolicy") == "RestartContainer"
            )
    return restarting


def _total(sizes: tuple[ContainerSize, ...]) -> tuple[int, int]:
    return (
        sum(s.request_cpu or 0 for s in sizes),
        sum(s.request_memory or 0 for s in sizes),
    )


def changed_resources(before: ContainerSize, after: ContainerSize) -> set[str]:
    """`cpu` and/or `memory`, where a request or limit differs."""
    changed = set()
    if (before.request_cpu, before.limit_cpu) != (after.request_cpu, after.limit_cpu):
        changed.add("cpu")
    if (before.request_memory, before.limit_memory) != (after.request_memory, after.limit_memory):
        changed.add("memory")
    return changed


@dataclass(slots=True)
class ContainerState:
    """One container as the kubelet tracks it: running since `started_at`, or waiting to restart.

    `size` is what it runs with; `allocated` what its kubelet admitted and
    `spec` what the pod asks for (each the one before when not set).
    """

    size: ContainerSize
    started_at: float | None = None
    waiting_until: float | None = None
    restart_count: int = 0
    # Crashes since the container last ran BACKOFF_RESET_SECONDS without one.
    crash_streak: int = 0
    last_termination: dict[str, Any] | None = None
    allocated: ContainerSize | None = None
    spec: ContainerSize | None = None
    # Resources whose resize restarts this container (resizePolicy RestartContainer).
    restart_on_resize: frozenset[str] = frozenset()
    # The memory it used at the last tick (the kubelet's best-effort check before it lowers a
    # memory limit, Kubernetes 1.35).
    memory_usage_bytes: float = 0.0

    @property
    def running(self) -> bool:
        return self.started_at is not None

    @property
    def admitted(self) -> ContainerSize:
        return self.allocated or self.size

    @property
    def desired(self) -> ContainerSize:
        return self.spec or self.admitted

    def restart(self, now: float) -> None:
        """Stop and start again at once (a resize that needs it), with no crash back-off."""
        if self.started_at is not None:
            self.last_termination = {
                "terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": format_time(self.started_at),
                    "finishedAt": format_time(now),
                }
            }
        self.restart_count += 1
        self.started_at = now
        self.waiting_until = None

    def kill(self, now: float, *, reason: str, exit_code: int) -> None:
        """The container died: record why, and wait out the crash-loop back-off before restarting."""
        assert self.started_at is not None
        if now - self.started_at >= BACKOFF_RESET_SECONDS:
            self.crash_streak = 0
        self.last_termination = {
            "terminated": {
                "exitCode": exit_code,
                "reason": reason,
                "startedAt": format_time(self.started_at),
                "finishedAt": format_time(now),
            }
        }
        self.restart_count += 1
        self.crash_streak += 1
        backoff = BACKOFF_INITIAL_SECONDS * 2 ** (self.crash_streak - 1)
        self.waiting_until = now + min(backoff, BACKOFF_MAX_SECONDS)
        self.started_at = None


@dataclass(slots=True)
class SimPod:
    """A pod of the model. `revision` is its template's hash (Deployment) or revision (StatefulSet)."""

    namespace: str
    name: str
    uid: str
    workload: WorkloadKey
    revision: str
    created_at: float
    containers: list[ContainerState]
    ordinal: int | None = None
    node: str | None = None
    phase: str = "Pending"
    started_at: float | None = None
    ready_since: float | None = None
    deleting_since: float | None = None
    unschedulable: str = ""
    # A resize the kubelet has not admitted: (reason Deferred or Infeasible, message).
    resize_pending: tuple[str, str] | None = None
    # When the kubelet admitted the resize it is applying, and why it cannot finish (1.35's
    # memory check), if so.
    resize_started: float | None = None
    resize_error: str = ""
    # The kubelet reports the containers' resources (False: a kubelet older than the feature).
    reports_resources: bool = True
    # What was last written (conditions without their times), and each condition's (status, since).
    reported: dict[str, Any] = field(default_factory=dict)
    transitions: dict[str, tuple[str, str]] = field(default_factory=dict)
    # status_key() when `reported` was written (None: nothing written yet).
    reported_key: tuple[Any, ...] | None = None

    @property
    def ready(self) -> bool:
        return self.ready_since is not None

    @property
    def deleting(self) -> bool:
        return self.deleting_since is not None

    def requests(self) -> tuple[int, int]:
        """Total requested (millicores, bytes) over the containers, as they run. One loop,
        not _total's two passes over a tuple: the observer asks it of every pod at every tick."""
        cpu = memory = 0
        for container in self.containers:
            size = container.size
            cpu += size.request_cpu or 0
            memory += size.request_memory or 0
        return cpu, memory

    def held(self) -> tuple[int, int]:
        """What the pod holds on its node while a resize is pending or under way: the largest of
        the desired, admitted and actual requests, as the scheduler counts it. A pod no
        kubelet has started has only its desired size."""
        if self.started_at is None:
            return self.desired_requests()
        cpu = memory = 0
        for container in self.containers:
            size = container.size
            admitted = container.allocated or size
            desired = container.spec or admitted
            if admitted is size and desired is size:
                # Not resizing (the scheduler asks every pod at every tick; most are not).
                cpu += size.request_cpu or 0
                memory += size.request_memory or 0
                continue
            cpu += max(s.request_cpu or 0 for s in (size, admitted, desired))
            memory += max(s.request_memory or 0 for s in (size, admitted, desired))
        return cpu, memory

    def desired_requests(self) -> tuple[int, int]:
        return _total(tuple(c.desired for c in self.containers))

    @property
    def resizing(self) -> bool:
        """A resize is pending or being applied. The kubelet asks of every pod at every tick,
        and most run the size they ask for, often the very same ContainerSize: that is
        checked first, before comparing the sizes' fields."""
        for container in self.containers:
            desired = container.spec or container.allocated or container.size
            if desired is not container.size and desired != container.size:
                return True
        return False

    def status_key(self) -> tuple[Any, ...]:
        """Every field `status()` reads, as one comparable value: an equal key means an equal
        status, so the kubelet's pass over every pod at every tick compares this instead of
        building each pod's whole status (the status is built only when the key moved).
        A container's `last_termination` is a dict, but one never changed once set (a kill
        or a restart sets a new one), so holding it here is as good as a copy; it is
        compared by value all the same."""
        return (
            self.node,
            self.unschedulable,
            self.phase,
            self.resize_pending,
            self.resize_started is not None,
            self.resize_error,
            self.started_at,
            self.ready_since is not None,
            self.reports_resources,
            tuple(
                (
                    c.size,
                    c.admitted,
                    c.started_at,
                    c.restart_count,
                    c.last_termination,
                )
                for c in self.containers
            ),
        )

    def status(self) -> dict[str, Any]:
        """The status a kubelet would report for this pod now."""
        conditions: list[dict[str, Any]] = []
        if self.node is not None:
            conditions.append({"type": "PodScheduled", "status": "True"})
        elif self.unschedulable:
            conditions.append(
                {
                    "type": "PodScheduled",
                    "status": "False",
                    "reason": "Unschedulable",
                    "message": self.unschedulable,
                }
            )
        status: dict[str, Any] = {"phase": self.phase, "qosClass": self._qos_class()}
        if self.resize_pending is not None:
            reason, message = self.resize_pending
            conditions.append(
                {"type": PENDING, "status": "True", "reason": reason, "message": message}
            )
        elif self.resize_started is not None:
            progress: dict[str, Any] = {"type": IN_PROGRESS, "status": "True"}
            if self.resize_error:
                progress.update(reason="Error", message=self.resize_error)
            conditions.append(progress)
        if self.started_at is not None:
            ready = "True" if self.ready else "False"
            conditions.extend(
                [
                    {"type": "Initialized", "status": "True"},
                    {"type": "ContainersReady", "status": ready},
                    {"type": "Ready", "status": ready},
                ]
            )
            status["startTime"] = _time_text(self.started_at)
            status["hostIP"] = "10.0.0.1"
            status["containerStatuses"] = [self._container_status(c) for c in self.containers]
        status["conditions"] = conditions
        return status

    def _container_status(self, container: ContainerState) -> dict[str, Any]:
        state: dict[str, Any]
        if container.started_at is not None:
            state = {"running": {"startedAt": _time_text(container.started_at)}}
        else:
            state = {"waiting": {"reason": "CrashLoopBackOff"}}
        status: dict[str, Any] = {
            "name": container.size.name,
            "ready": self.ready and container.running,
            "started": container.running,
            "restartCount": container.restart_count,
            "image": "registry.k8s.io/pause:3.10",
            "imageID": "",
            "state": state,
        }
        if container.last_termination is not None:
            status["lastState"] = container.last_termination
        if self.reports_resources:
            status["allocatedResources"] = _amounts(container.admitted, "request")
            status["resources"] = {
                part: amounts
                for part, amounts in (
                    ("requests", _amounts(container.size, "request")),
                    ("limits", _amounts(container.size, "limit")),
                )
                if amounts
            }
        return status

    def _qos_class(self) -> str:
        """Of the sizes the pod was created with: a resize never changes it."""
        sizes = [c.size for c in self.containers]
        if all(
            s.request_cpu is not None
            and s.request_cpu == s.limit_cpu
            and s.request_memory is not None
            and s.request_memory == s.limit_memory
            for s in sizes
        ):
            return "Guaranteed"
        if any(
            v is not None
            for s in sizes
            for v in (s.request_cpu, s.request_memory, s.limit_cpu, s.limit_memory)
        ):
            return "Burstable"
        return "BestEffort"


def _amounts(size: ContainerSize, part: str) -> dict[str, str]:
    return dict(_formatted_amounts(size, part))


@lru_cache(maxsize=4096)
def _formatted_amounts(size: ContainerSize, part: str) -> tuple[tuple[str, str], ...]:
    """A size's requests or limits as the API writes them, formatted once per size: a pod's
    status is built again whenever its status_key moves, mostly with the sizes it had."""
    cpu, memory = getattr(size, f"{part}_cpu"), getattr(size, f"{part}_memory")
    out = []
    if cpu is not None:
        out.append(("cpu", format_cpu(cpu)))
    if memory is not None:
        out.append(("memory", format_bytes(memory)))
    return tuple(out)


@lru_cache(maxsize=4096)
def _time_text(seconds: float) -> str:
    """format_time, once per start time: a pod's status, built again whenever its status_key
    moves, repeats its own."""
    return format_time(seconds)


class Admission(Protocol):
    """The API server's mutating admission, as the model's pod creates go through it."""

    def needed(self, namespace: str, manifest: Mapping[str, Any]) -> bool:
        """Whether any webhook would be called for this pod."""
        ...

    async def admit(self, namespace: str, manifest: dict[str, Any]) -> dict[str, Any]:
        """The pod as the webhooks patched it; raises ApiError to refuse it."""
        ...


@dataclass(frozen=True, slots=True)
class _Create:
    manifest: dict[str, Any]
    workload: WorkloadKey
    revision: str
    ordinal: int | None


class Pods:
    """Every pod of the model, by name, in creation order, and their writes to the API server.

    `reports_resources` False plays kubelets older than in-place resize: pods
    report no `containerStatuses[].resources`, so the API server refuses to
    resize them.
    """

    def __init__(
        self,
        objects: Objects,
        *,
        clock: Callable[[], float],
        reports_resources: bool = True,
        admission: Admission | None = None,
    ) -> None:
        """`admission`: the mutating admission a create goes through, if any."""
        self._objects = objects
        self._clock = clock
        self.reports_resources = reports_resources
        self._admission = admission
        self._creates: list[_Create] = []
        self._pods: dict[tuple[str, str], SimPod] = {}
        self._by_workload: dict[WorkloadKey, dict[str, SimPod]] = {}
        # In-model mutating admission: each may rewrite a new pod's manifest before it is
        # stored, as a webhook would (the VPA's admission controller, baselines/vpa_updater.py).
        self.mutators: list[Callable[[dict[str, Any], WorkloadKey], dict[str, Any]]] = []

    def __iter__(self) -> Iterator[SimPod]:
        return iter(list(self._pods.values()))

    def of(self, workload: WorkloadKey) -> list[SimPod]:
        """The workload's pods, oldest first (terminating ones included)."""
        return list(self._by_workload.get(workload, {}).values())

    def pending(self, workload: WorkloadKey) -> int:
        """Creates of this workload still waiting for admission."""
        return sum(1 for c in self._creates if c.workload == workload)

    def create(
        self,
        manifest: dict[str, Any],
        *,
        workload: WorkloadKey,
        revision: str,
        ordinal: int | None = None,
    ) -> SimPod | None:
        """Create the pod object, then its record from what the server stored (defaults
        applied); with admission, queue the create for `admit_pending` and return None."""
        if self._admission is not None and self._admission.needed(workload[1], manifest):
            self._creates.append(_Create(manifest, workload, revision, ordinal))
            return None
        return self._store(manifest, workload, revision, ordinal)

    async def admit_pending(self) -> None:
        """Send the queued creates through admission and create what it lets through."""
        creates, self._creates = self._creates, []
        assert self._admission is not None or not creates
        for create in creates:
            assert self._admission is not None
            try:
                manifest = await self._admission.admit(create.workload[1], create.manifest)
                self._store(manifest, create.workload, create.revision, create.ordinal)
            except ApiError:
                continue

    def _store(
        self, manifest: dict[str, Any], workload: WorkloadKey, revision: str, ordinal: int | None
    ) -> SimPod:
        for mutate in self.mutators:
            manifest = mutate(manifest, workload)
        created = self._objects.create("pods", manifest, namespace=workload[1])
        metadata = created["metadata"]
        restarting = restart_policies(created["spec"])
        pod = SimPod(
            namespace=str(metadata["namespace"]),
            name=str(metadata["name"]),
            uid=str(metadata["uid"]),
            workload=workload,
            revision=revision,
            created_at=self._clock(),
            containers=[
                ContainerState(size, restart_on_resize=restarting.get(size.name, frozenset()))
                for size in container_sizes(created["spec"])
            ],
            ordinal=ordinal,
            reports_resources=self.reports_resources,
        )
        self._pods[(pod.namespace, pod.name)] = pod
        self._by_workload.setdefault(workload, {})[pod.name] = pod
        self.write(pod)
        return pod

    def on_resize(self, obj: Mapping[str, Any]) -> None:
        """The API server stored a resize of this pod: its containers' desired sizes change."""
        metadata = obj.get("metadata") or {}
        pod = self._pods.get((str(metadata.get("namespace")), str(metadata.get("name"))))
        if pod is None or pod.uid != metadata.get("uid"):
            return
        desired = {size.name: size for size in container_sizes(obj.get("spec") or {})}
        for container in pod.containers:
            size = desired.get(container.size.name)
            if size is not None:
                container.spec = size

    def bind(self, pod: SimPod, node: str) -> None:
        """pods/binding, as the scheduler does; the kubelet starts the pod on its next pass."""
        try:
            self._objects.bind_pod(pod.name, node, namespace=pod.namespace)
        except NotFound:
            self._forget(pod)
            return
        pod.node = node
        pod.unschedulable = ""

    def delete(self, pod: SimPod) -> None:
        """Graceful delete: a scheduled pod terminates on its node; an unscheduled one is gone."""
        if pod.deleting:
            return
        try:
            self._objects.delete("pods", pod.name, namespace=pod.namespace)
        except NotFound:
            self._forget(pod)
            return
        if pod.node is None:
            self._forget(pod)
            return
        pod.deleting_since = self._clock()
        pod.ready_since = None

    def remove(self, pod: SimPod) -> None:
        """The kubelet's final delete (grace period 0) once the containers have stopped."""
        with contextlib.suppress(NotFound):
            self._objects.delete("pods", pod.name, namespace=pod.namespace, grace_period_seconds=0)
        self._forget(pod)

    def write(self, pod: SimPod) -> None:
        """Write the pod's status if it differs from what was last written.

        Conditions keep their lastTransitionTime until their status flips, as
        the kubelet keeps them; the HPA rules read Ready's transition time.
        """
        key = pod.status_key()
        if key == pod.reported_key:
            return
        status = pod.status()
        if status == pod.reported:
            pod.reported_key = key
            return
        now = format_time(self._clock())
        written = {**status, "conditions": []}
        # A condition that went away and comes back is a new transition (a second resize).
        present = {condition["type"] for condition in status["conditions"]}
        for kind in [kind for kind in pod.transitions if kind not in present]:
            del pod.transitions[kind]
        for condition in status["conditions"]:
            kind, value = condition["type"], condition["status"]
            since = pod.transitions.get(kind)
            if since is None or since[0] != value:
                since = pod.transitions[kind] = (value, now)
            written["conditions"].append({**condition, "lastTransitionTime": since[1]})
        try:
            self._objects.patch(
                "pods", pod.name, {"status": written}, namespace=pod.namespace, subresource="status"
            )
        except NotFound:
            self._forget(pod)
            return
        pod.reported = status
        pod.reported_key = key

    def _forget(self, pod: SimPod) -> None:
        self._pods.pop((pod.namespace, pod.name), None)
        owned = self._by_workload.get(pod.workload)
        if owned is not None:
            owned.pop(pod.name, None)
            if not owned:
                del self._by_workload[pod.workload]
