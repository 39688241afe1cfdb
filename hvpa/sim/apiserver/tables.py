"""`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`: objects as the rows kubectl prints.

`kubectl get` asks for a Table and prints its cells as they come, so the
columns and their contents are the server's: a custom resource gets its
CRD's additionalPrinterColumns (each JSONPath's first value, cast to the
column's type; a `date` as an age), the built-in kinds the columns of the
real server's printers (pods NAME READY STATUS RESTARTS AGE, deployments
READY UP-TO-DATE AVAILABLE, events LAST SEEN TYPE REASON OBJECT MESSAGE,
nodes, ReplicaSets, StatefulSets, Leases, ConfigMaps, Namespaces, HPAs and
CRDs), everything else NAME and CREATED AT. Cells are the wide ones (`-o
wide` shows the columns of priority 1). Ages are counted with the server's
clock, as the real server counts them with its own: in the simulator that
is the simulated cluster's time.

A watch asked for as a Table streams one-row Tables, the column definitions
in the first only.

What is approximated: column descriptions are this server's own short
words, not the API reference's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from hvpa.durations import human_duration
from hvpa.records import parse_time
from hvpa.sim.apiserver.gotext import go_json, go_value
from hvpa.sim.apiserver.jsonpath import JsonPath, JsonPathError
from hvpa.sim.apiserver.resources import PrinterColumn, ResourceType
from hvpa.sim.apiserver.selectors import selector_string

__all__ = ["TablePrinter", "table_printer"]

_NAME_DOC: Final = "The object's name, unique within its namespace (or the cluster)."
_AGE_DOC: Final = "How long ago the object was created."
_CONTAINERS_DOC: Final = "The names of the template's containers."
_IMAGES_DOC: Final = "The images of the template's containers."
_UNKNOWN: Final = "<unknown>"
_NONE: Final = "<none>"
_ROLE_PREFIX: Final = "node-role.kubernetes.io/"
_ROLE_LABEL: Final = "kubernetes.io/role"


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str = "string"
    description: str = ""
    priority: int = 0
    format: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


Cells = Callable[[dict[str, Any], float], list[Any]]


@dataclass(frozen=True, slots=True)
class TablePrinter:
    """The columns of one resource and how an object becomes its row."""

    columns: tuple[Column, ...]
    cells: Cells
    conditions: Callable[[dict[str, Any]], list[dict[str, Any]]] | None = None

    def table(
        self,
        objects: list[dict[str, Any]],
        *,
        now: float,
        include: str | None,
        metadata: Mapping[str, Any],
        headers: bool = True,
    ) -> dict[str, Any]:
        """A meta.k8s.io/v1 Table; `include` is the includeObject parameter."""
        rows = []
        for obj in objects:
            row: dict[str, Any] = {"cells": self.cells(obj, now)}
            if self.conditions is not None:
                conditions = self.conditions(obj)
                if conditions:
                    row["conditions"] = conditions
            if include == "Object":
                row["object"] = obj
            elif include != "None":
                row["object"] = {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": obj.get("metadata") or {},
                }
            rows.append(row)
        return {
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": dict(metadata),
            "columnDefinitions": [c.definition() for c in self.columns] if headers else None,
            "rows": rows,
        }


def table_printer(rtype: ResourceType) -> TablePrinter:
    """The printer of a resource: its CRD's columns, a built-in printer, or the default."""
    if rtype.custom:
        return _custom_printer(rtype.columns)
    return _BUILTIN.get((rtype.group, rtype.plural), _DEFAULT)


# ====================================================================== ages


def _since(timestamp: Any, now: float) -> str:
    """translateTimestampSince: `<unknown>` for no time at all."""
    if not isinstance(timestamp, str) or not timestamp:
        return _UNKNOWN
    try:
        at = parse_time(timestamp)
    except ValueError:
        return "<invalid>"
    if at is None:
        return _UNKNOWN
    return human_duration(now - at)


def _age(obj: dict[str, Any], now: float) -> str:
    return _since((obj.get("metadata") or {}).get("creationTimestamp"), now)


def _name(obj: dict[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


# ====================================================================== custom resources


@lru_cache(maxsize=64)
def _custom_printer(columns: tuple[PrinterColumn, ...]) -> TablePrinter:
    """The apiextensions table convertor: Name, then each column's first JSONPath value.

    Cached by the CRD's columns: compiling the JSONPaths per request cost more than the rows.
    """
    paths: list[JsonPath | None] = []
    for column in columns:
        try:
            paths.append(JsonPath(column.json_path))
        except JsonPathError:
            paths.append(None)
    definitions = (
        Column("Name", format="name", description=_NAME_DOC),
        *(
            Column(
                c.name,
                c.type,
                c.description
                or f"Custom resource definition column (in JSONPath format): {c.json_path}",
                c.priority,
                c.format,
            )
            for c in columns
        ),
    )

    def cells(obj: dict[str, Any], now: float) -> list[Any]:
        row: list[Any] = [_name(obj)]
        for column, path in zip(columns, paths, strict=True):
            found = path.values(obj) if path is not None else []
            row.append(_cell(column.type, found[0], now) if found else None)
        return row

    return TablePrinter(definitions, cells)


def _cell(kind: str, value: Any, now: float) -> Any:
    """cellForJSONValue: the value as the column's type says, None when it is not that type."""
    if value is None:
        return None
    if kind == "string":
        if isinstance(value, dict | list):
            return go_json(value)
        return go_value(value)
    if kind == "integer":
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return math.trunc(value)
        return None
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return _json_number(float(value))
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if kind == "date":
        if not isinstance(value, str):
            return None
        try:
            at = parse_time(value)
        except ValueError:
            return "<invalid>"
        return "<invalid>" if at is None else human_duration(now - at)
    return None


def _json_number(value: float) -> float | int:
    """A float64 cell: Go writes 3.0 as 3."""
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


# ====================================================================== built-in printers


def _containers(obj: dict[str, Any]) -> tuple[str, str]:
    containers = ((obj.get("spec") or {}).get("template") or {}).get("spec", {}).get(
        "containers"
    ) or []
    names = ",".join(str(c.get("name", "")) for c in containers)
    images = ",".join(str(c.get("image", "")) for c in containers)
    return names, images


def _workload_selector(obj: dict[str, Any]) -> str:
    selector = (obj.get("spec") or {}).get("selector")
    return selector_string(selector if isinstance(selector, Mapping) else None)


def _deployment_cells(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(obj)
    return [
        _name(obj),
        f"{int(status.get('readyReplicas', 0))}/{int(spec.get('replicas', 0))}",
        int(status.get("updatedReplicas", 0)),
        int(status.get("availableReplicas", 0)),
        _age(obj, now),
        names,
        images,
        _workload_selector(obj),
    ]


def _replicaset_cells(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(obj)
    return [
        _name(obj),
        int(spec.get("replicas", 0)),
        int(status.get("replicas", 0)),
        int(status.get("readyReplicas", 0)),
        _age(obj, now),
        names,
        images,
        _workload_selector(obj),
    ]


def _statefulset_cells(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    names, images = _containers(obj)
    ready = f"{int(status.get('readyReplicas', 0))}/{int(spec.get('replicas', 0))}"
    return [_name(obj), ready, _age(obj, now), names, images]


def _pod_cells(obj: dict[str, Any], now: float) -> list[Any]:
    """printPod: READY counts ready containers, STATUS the reason that explains the pod best."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    metadata = obj.get("metadata") or {}
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or phase)
    for condition in status.get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(spec.get("containers") or []) + sum(
        1 for c in init_specs.values() if c.get("restartPolicy") == "Always"
    )
    ready = 0
    restarts = 0
    last_restart: float | None = None
    sidecar_restarts = 0
    sidecar_last: float | None = None
    initializing = False
    init_statuses = status.get("initContainerStatuses") or []
    for index, container in enumerate(init_statuses):
        restarts += int(container.get("restartCount", 0))
        finished = _finished_at(container)
        last_restart = _later(last_restart, finished)
        sidecar = (init_specs.get(container.get("name")) or {}).get("restartPolicy") == "Always"
        if sidecar:
            sidecar_restarts += int(container.get("restartCount", 0))
            sidecar_last = _later(sidecar_last, finished)
        state = container.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting")
        if terminated is not None and int(terminated.get("exitCode", 0)) == 0:
            continue
        if sidecar and container.get("started"):
            ready += 1 if container.get("ready") else 0
            continue
        if terminated is not None:
            if terminated.get("reason"):
                reason = "Init:" + str(terminated["reason"])
            elif terminated.get("signal"):
                reason = f"Init:Signal:{terminated['signal']}"
            else:
                reason = f"Init:ExitCode:{terminated.get('exitCode', 0)}"
        elif (
            waiting is not None and waiting.get("reason") and waiting["reason"] != "PodInitializing"
        ):
            reason = "Init:" + str(waiting["reason"])
        else:
            reason = f"Init:{index}/{len(init_specs)}"
        initializing = True
        break
    initialized = any(
        c.get("type") == "Initialized" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    if not initializing or initialized:
        restarts, last_restart = sidecar_restarts, sidecar_last
        running = False
        error_reason = ""
        for container in reversed(status.get("containerStatuses") or []):
            restarts += int(container.get("restartCount", 0))
            last_restart = _later(last_restart, _finished_at(container))
            state = container.get("state") or {}
            waiting, terminated = state.get("waiting"), state.get("terminated")
            if waiting is not None and waiting.get("reason"):
                reason = str(waiting["reason"])
            elif terminated is not None:
                if terminated.get("reason"):
                    reason = str(terminated["reason"])
                elif terminated.get("signal"):
                    reason = f"Signal:{terminated['signal']}"
                else:
                    reason = f"ExitCode:{terminated.get('exitCode', 0)}"
                if int(terminated.get("exitCode", 0)) != 0:
                    error_reason = reason
            elif container.get("ready") and state.get("running") is not None:
                running = True
                ready += 1
        if reason == "Completed":
            pod_ready = any(
                c.get("type") == "Ready" and c.get("status") == "True"
                for c in status.get("conditions") or []
            )
            if running and pod_ready:
                reason = "Running"
            elif error_reason:
                reason = error_reason
            elif running:
                reason = "NotReady"
    if metadata.get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    shown_restarts = str(restarts)
    if restarts and last_restart is not None:
        shown_restarts = f"{restarts} ({human_duration(now - last_restart)} ago)"
    # The server fills podIPs from podIP; a pod written with podIP alone reads the same.
    pod_ips = status.get("podIPs") or []
    ip = str(pod_ips[0].get("ip", "")) if pod_ips else str(status.get("podIP") or "")
    gates = spec.get("readinessGates") or []
    gates_cell = _NONE
    if gates:
        by_type = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        passed = sum(1 for g in gates if by_type.get(g.get("conditionType")) == "True")
        gates_cell = f"{passed}/{len(gates)}"
    return [
        _name(obj),
        f"{ready}/{total}",
        reason,
        shown_restarts,
        _age(obj, now),
        ip or _NONE,
        spec.get("nodeName") or _NONE,
        status.get("nominatedNodeName") or _NONE,
        gates_cell,
    ]


def _finished_at(container: Mapping[str, Any]) -> float | None:
    terminated = (container.get("lastState") or {}).get("terminated")
    if not isinstance(terminated, Mapping):
        return None
    try:
        return parse_time(terminated.get("finishedAt"))
    except ValueError:
        return None


def _later(current: float | None, other: float | None) -> float | None:
    if other is None:
        return current
    return other if current is None or other > current else current


def _pod_conditions(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """Finished pods' rows say so (kubectl can hide them)."""
    phase = (obj.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Succeeded",
                "message": "The pod has completed successfully.",
            }
        ]
    if phase == "Failed":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Failed",
                "message": "The pod failed.",
            }
        ]
    return []


def _node_cells(obj: dict[str, Any], now: float) -> list[Any]:
    metadata, spec, status = (
        obj.get("metadata") or {},
        obj.get("spec") or {},
        obj.get("status") or {},
    )
    states = [
        ("Ready" if c.get("status") == "True" else "NotReady")
        for c in status.get("conditions") or []
        if c.get("type") == "Ready"
    ][:1] or ["Unknown"]
    if spec.get("unschedulable"):
        states.append("SchedulingDisabled")
    roles: set[str] = set()
    for key, value in (metadata.get("labels") or {}).items():
        if key.startswith(_ROLE_PREFIX) and key[len(_ROLE_PREFIX) :]:
            roles.add(key[len(_ROLE_PREFIX) :])
        elif key == _ROLE_LABEL and value:
            roles.add(str(value))
    info = status.get("nodeInfo") or {}
    kernel = info.get("kernelVersion") or _UNKNOWN
    if info.get("architecture"):
        kernel += f" ({info['architecture']})"
    return [
        _name(obj),
        ",".join(states),
        ",".join(sorted(roles)) or _NONE,
        _age(obj, now),
        info.get("kubeletVersion") or "",
        _address(status, "InternalIP"),
        _address(status, "ExternalIP"),
        info.get("osImage") or _UNKNOWN,
        kernel,
        info.get("containerRuntimeVersion") or _UNKNOWN,
    ]


def _address(status: Mapping[str, Any], kind: str) -> str:
    for address in status.get("addresses") or []:
        if address.get("type") == kind:
            return str(address.get("address", ""))
    return _NONE


def _event_cells(obj: dict[str, Any], now: float) -> list[Any]:
    """printEvent, for core/v1 Events and (mapped to their names) events.k8s.io/v1 ones."""
    if obj.get("apiVersion") == "events.k8s.io/v1":
        obj = _core_event(obj)
    first = _since(obj.get("firstTimestamp"), now)
    if not obj.get("firstTimestamp"):
        first = _since(obj.get("eventTime"), now)
    last = _since(obj.get("lastTimestamp"), now) if obj.get("lastTimestamp") else first
    count = int(obj.get("count") or 0)
    series = obj.get("series")
    if isinstance(series, Mapping):
        last = _since(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1
    involved = obj.get("involvedObject") or {}
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    host = source.get("host") or obj.get("reportingInstance") or ""
    return [
        last,
        obj.get("type") or "",
        obj.get("reason") or "",
        target,
        involved.get("fieldPath") or "",
        f"{component}, {host}" if host else component,
        str(obj.get("message") or "").strip(),
        first,
        count,
        _name(obj),
    ]


def _core_event(obj: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event under its core/v1 field names, as the server converts it."""
    source = obj.get("deprecatedSource") or {}
    return {
        "metadata": obj.get("metadata") or {},
        "involvedObject": obj.get("regarding") or {},
        "reason": obj.get("reason"),
        "message": obj.get("note"),
        "type": obj.get("type"),
        "firstTimestamp": obj.get("deprecatedFirstTimestamp"),
        "lastTimestamp": obj.get("deprecatedLastTimestamp"),
        "count": obj.get("deprecatedCount"),
        "eventTime": obj.get("eventTime"),
        "series": obj.get("series"),
        "source": source,
        "reportingComponent": obj.get("reportingController"),
        "reportingInstance": obj.get("reportingInstance"),
    }


def _hpa_cells(obj: dict[str, Any], now: float) -> list[Any]:
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    ref = spec.get("scaleTargetRef") or {}
    minimum = spec.get("minReplicas")
    return [
        _name(obj),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        _hpa_targets(spec.get("metrics") or [], status.get("currentMetrics") or []),
        str(minimum) if minimum is not None else "<unset>",
        int(spec.get("maxReplicas", 0)),
        int(status.get("currentReplicas", 0)),
        _age(obj, now),
    ]


def _hpa_targets(specs: list[dict[str, Any]], statuses: list[dict[str, Any]]) -> str:
    """formatHPAMetrics: `cpu: 75%/60%`, at most two metrics and `+ N more...`."""
    if not specs:
        return _NONE
    shown = []
    for index, metric in enumerate(specs):
        current_of = statuses[index] if index < len(statuses) else {}
        kind = metric.get("type")
        key = {
            "External": "external",
            "Pods": "pods",
            "Object": "object",
            "Resource": "resource",
            "ContainerResource": "containerResource",
        }.get(str(kind))
        if key is None:
            shown.append("<unknown type>")
            continue
        source = metric.get(key) or {}
        target = source.get("target") or {}
        current = (current_of.get(key) or {}).get("current") or {}
        if kind in ("Resource", "ContainerResource"):
            name = ((source.get("name")) or "").strip()
            if target.get("averageValue") is not None:
                now_value = current.get("averageValue") or _UNKNOWN
                shown.append(f"{name}: {now_value}/{target['averageValue']}")
            else:
                now_value = (
                    f"{current['averageUtilization']}%"
                    if current.get("averageUtilization") is not None
                    else _UNKNOWN
                )
                wanted = (
                    f"{target['averageUtilization']}%"
                    if target.get("averageUtilization") is not None
                    else "<auto>"
                )
                shown.append(f"{name}: {now_value}/{wanted}")
        elif kind == "Pods":
            shown.append(f"{current.get('averageValue') or _UNKNOWN}/{target.get('averageValue')}")
        elif target.get("averageValue") is not None:
            shown.append(
                f"{current.get('averageValue') or _UNKNOWN}/{target['averageValue']} (avg)"
            )
        else:
            shown.append(f"{current.get('value') or _UNKNOWN}/{target.get('value')}")
    text = ", ".join(shown[:2])
    return f"{text} + {len(shown) - 2} more..." if len(shown) > 2 else text


def _configmap_cells(obj: dict[str, Any], now: float) -> list[Any]:
    count = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
    return [_name(obj), count, _age(obj, now)]


def _namespace_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [_name(obj), (obj.get("status") or {}).get("phase") or "", _age(obj, now)]


def _lease_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [_name(obj), (obj.get("spec") or {}).get("holderIdentity") or "", _age(obj, now)]


def _crd_cells(obj: dict[str, Any], now: float) -> list[Any]:
    spec = obj.get("spec") or {}
    versions = [
        str(v.get("name")) + ("(storage)" if v.get("storage") else "")
        for v in spec.get("versions") or []
        if v.get("served")
    ]
    established = any(
        c.get("type") == "Established" and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or []
    )
    return [
        _name(obj),
        spec.get("scope") or "",
        ",".join(versions),
        (obj.get("metadata") or {}).get("creationTimestamp"),
        spec.get("group") or "",
        (spec.get("names") or {}).get("kind") or "",
        ",".join((spec.get("names") or {}).get("shortNames") or []),
        established,
    ]


def _default_cells(obj: dict[str, Any], now: float) -> list[Any]:
    return [_name(obj), (obj.get("metadata") or {}).get("creationTimestamp")]


_NAME: Final = Column("Name", format="name", description=_NAME_DOC)
_AGE: Final = Column("Age", description=_AGE_DOC)
_WORKLOAD_WIDE: Final = (
    Column("Containers", priority=1, description=_CONTAINERS_DOC),
    Column("Images", priority=1, description=_IMAGES_DOC),
)
_SELECTOR: Final = Column("Selector", priority=1, description="The label selector of its pods.")

_DEFAULT: Final = TablePrinter(
    (_NAME, Column("Created At", "date", "When the object was created.")), _default_cells
)
_BUILTIN: Final[dict[tuple[str, str], TablePrinter]] = {
    ("", "pods"): TablePrinter(
        (
            _NAME,
            Column("Ready", description="Ready containers of all containers."),
            Column("Status", description="What best explains the pod's state."),
            Column("Restarts", description="Container restarts, and how long ago the last was."),
            _AGE,
            Column("IP", priority=1, description="The pod's IP address."),
            Column("Node", priority=1, description="The node the pod runs on."),
            Column("Nominated Node", priority=1, description="The node preemption made room on."),
            Column("Readiness Gates", priority=1, description="Readiness gates passed of all."),
        ),
        _pod_cells,
        _pod_conditions,
    ),
    ("apps", "deployments"): TablePrinter(
        (
            _NAME,
            Column("Ready", description="Ready pods of those wanted."),
            Column("Up-to-date", description="Pods of the current template."),
            Column("Available", description="Pods available to serve."),
            _AGE,
            *_WORKLOAD_WIDE,
            _SELECTOR,
        ),
        _deployment_cells,
    ),
    ("apps", "replicasets"): TablePrinter(
        (
            _NAME,
            Column("Desired", "integer", "Pods wanted."),
            Column("Current", "integer", "Pods created."),
            Column("Ready", "integer", "Pods ready."),
            _AGE,
            *_WORKLOAD_WIDE,
            _SELECTOR,
        ),
        _replicaset_cells,
    ),
    ("apps", "statefulsets"): TablePrinter(
        (_NAME, Column("Ready", description="Ready pods of those wanted."), _AGE, *_WORKLOAD_WIDE),
        _statefulset_cells,
    ),
    ("", "nodes"): TablePrinter(
        (
            _NAME,
            Column("Status", description="Whether the node is ready, and schedulable."),
            Column("Roles", description="The node's roles, from its labels."),
            _AGE,
            Column("Version", description="The kubelet's version."),
            Column("Internal-IP", priority=1, description="The node's internal address."),
            Column("External-IP", priority=1, description="The node's external address."),
            Column("OS-Image", priority=1, description="The operating system."),
            Column("Kernel-Version", priority=1, description="The kernel and architecture."),
            Column("Container-Runtime", priority=1, description="The container runtime."),
        ),
        _node_cells,
    ),
    ("", "events"): TablePrinter(
        (
            Column("Last Seen", description="How long ago it last happened."),
            Column("Type", description="Normal or Warning."),
            Column("Reason", description="Why, in one word."),
            Column("Object", description="What it is about."),
            Column("Subobject", priority=1, description="The part of the object."),
            Column("Source", priority=1, description="Who reported it."),
            Column("Message", description="What happened."),
            Column("First Seen", priority=1, description="How long ago it first happened."),
            Column("Count", priority=1, description="How often it happened."),
            Column("Name", priority=1, format="name", description=_NAME_DOC),
        ),
        _event_cells,
    ),
    ("", "namespaces"): TablePrinter(
        (_NAME, Column("Status", description="Active or Terminating."), _AGE), _namespace_cells
    ),
    ("", "configmaps"): TablePrinter(
        (_NAME, Column("Data", description="How many keys it holds."), _AGE), _configmap_cells
    ),
    ("coordination.k8s.io", "leases"): TablePrinter(
        (_NAME, Column("Holder", description="Who holds the lease."), _AGE), _lease_cells
    ),
    ("autoscaling", "horizontalpodautoscalers"): TablePrinter(
        (
            _NAME,
            Column("Reference", description="The scaled workload."),
            Column("Targets", description="Each metric: now/target."),
            Column("MinPods", description="The fewest replicas."),
            Column("MaxPods", description="The most replicas."),
            Column("Replicas", description="Replicas now."),
            _AGE,
        ),
        _hpa_cells,
    ),
    ("apiextensions.k8s.io", "customresourcedefinitions"): TablePrinter(
        (
            _NAME,
            Column("Scope", description="Namespaced or Cluster."),
            Column("Versions", description="The served versions, the stored one marked."),
            Column("Created At", "date", "When the CRD was created."),
            Column("Group", priority=1, description="The API group."),
            Column("Kind", priority=1, description="The kind it defines."),
            Column("ShortNames", priority=1, description="Its short names."),
            Column("Established", "boolean", "Whether it is served.", 1),
        ),
        _crd_cells,
    ),
}
_BUILTIN[("events.k8s.io", "events")] = _BUILTIN[("", "events")]
