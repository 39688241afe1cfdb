"""Protobuf request bodies, as kubectl's typed clients send them, read into the JSON form.

`kubectl create configmap|deployment|namespace` go through client-go's typed
clients, which write built-in kinds as `application/vnd.kubernetes.protobuf`
and have no fallback to JSON. Such a body is the four bytes `k8s\\0` and a
runtime.Unknown message whose `raw` field is the object in the wire format
of the Kubernetes API's generated.proto files. This module reads the
messages those commands send (their field numbers are the API's) and gives
the object as JSON decodes it: Go writes every plain scalar, even a zero,
which JSON would leave out (`omitempty`), so a zero is dropped unless the
field is a pointer in the Go type (`replicas: 0` is kept); a field a
message here does not describe is refused (UnsupportedMediaType) if it
carries anything, rather than lost.

Kinds read: ConfigMap, Namespace, Deployment (with its pod template). Every
other kind answers 415, as before: this server writes and reads JSON.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from hvpa.sim.apiserver.errors import BadRequest, UnsupportedMediaType

__all__ = ["MAGIC", "decode"]

MAGIC: Final = b"k8s\x00"


@dataclass(frozen=True, slots=True)
class _Field:
    """One field: its JSON name and how its value reads.

    kind: string | bytes | int | bool | time | quantity | intorstring | message (of
    `message`) | map (values of `value_kind`); `repeated` for lists; `pointer` keeps a zero."""

    name: str
    kind: str
    message: str = ""
    repeated: bool = False
    pointer: bool = False
    value_kind: str = "string"


def _f(name: str, kind: str = "string", **options: Any) -> _Field:
    return _Field(name, kind, **options)


_MESSAGES: Final[dict[str, dict[int, _Field]]] = {
    "Unknown": {1: _f("typeMeta", "message", message="TypeMeta"), 2: _f("raw", "bytes")},
    "TypeMeta": {1: _f("apiVersion"), 2: _f("kind")},
    "ObjectMeta": {
        1: _f("name"),
        2: _f("generateName"),
        3: _f("namespace"),
        5: _f("uid"),
        6: _f("resourceVersion"),
        7: _f("generation", "int"),
        8: _f("creationTimestamp", "time"),
        9: _f("deletionTimestamp", "time"),
        10: _f("deletionGracePeriodSeconds", "int", pointer=True),
        11: _f("labels", "map"),
        12: _f("annotations", "map"),
        13: _f("ownerReferences", "message", message="OwnerReference", repeated=True),
        14: _f("finalizers", repeated=True),
    },
    "OwnerReference": {
        1: _f("kind"),
        3: _f("name"),
        4: _f("uid"),
        5: _f("apiVersion"),
        6: _f("controller", "bool", pointer=True),
        7: _f("blockOwnerDeletion", "bool", pointer=True),
    },
    "LabelSelector": {
        1: _f("matchLabels", "map"),
        2: _f("matchExpressions", "message", message="LabelSelectorRequirement", repeated=True),
    },
    "LabelSelectorRequirement": {1: _f("key"), 2: _f("operator"), 3: _f("values", repeated=True)},
    "ConfigMap": {
        1: _f("metadata", "message", message="ObjectMeta"),
        2: _f("data", "map"),
        3: _f("binaryData", "map", value_kind="bytes"),
        4: _f("immutable", "bool", pointer=True),
    },
    "Namespace": {
        1: _f("metadata", "message", message="ObjectMeta"),
        2: _f("spec", "message", message="NamespaceSpec"),
        3: _f("status", "message", message="NamespaceStatus"),
    },
    "NamespaceSpec": {1: _f("finalizers", repeated=True)},
    "NamespaceStatus": {1: _f("phase")},
    "Deployment": {
        1: _f("metadata", "message", message="ObjectMeta"),
        2: _f("spec", "message", message="DeploymentSpec"),
        3: _f("status", "message", message="DeploymentStatus"),
    },
    "DeploymentSpec": {
        1: _f("replicas", "int", pointer=True),
        2: _f("selector", "message", message="LabelSelector"),
        3: _f("template", "message", message="PodTemplateSpec"),
        4: _f("strategy", "message", message="DeploymentStrategy"),
        5: _f("minReadySeconds", "int"),
        6: _f("revisionHistoryLimit", "int", pointer=True),
        7: _f("paused", "bool"),
        9: _f("progressDeadlineSeconds", "int", pointer=True),
    },
    "DeploymentStrategy": {
        1: _f("type"),
        2: _f("rollingUpdate", "message", message="RollingUpdateDeployment"),
    },
    "RollingUpdateDeployment": {
        1: _f("maxUnavailable", "intorstring"),
        2: _f("maxSurge", "intorstring"),
    },
    "DeploymentStatus": {},
    "PodTemplateSpec": {
        1: _f("metadata", "message", message="ObjectMeta"),
        2: _f("spec", "message", message="PodSpec"),
    },
    "PodSpec": {
        2: _f("containers", "message", message="Container", repeated=True),
        3: _f("restartPolicy"),
        4: _f("terminationGracePeriodSeconds", "int", pointer=True),
        6: _f("dnsPolicy"),
        7: _f("nodeSelector", "map"),
        8: _f("serviceAccountName"),
        10: _f("nodeName"),
        16: _f("hostname"),
        19: _f("schedulerName"),
        20: _f("initContainers", "message", message="Container", repeated=True),
        24: _f("priorityClassName"),
    },
    "Container": {
        1: _f("name"),
        2: _f("image"),
        3: _f("command", repeated=True),
        4: _f("args", repeated=True),
        5: _f("workingDir"),
        6: _f("ports", "message", message="ContainerPort", repeated=True),
        7: _f("env", "message", message="EnvVar", repeated=True),
        8: _f("resources", "message", message="ResourceRequirements"),
        13: _f("terminationMessagePath"),
        14: _f("imagePullPolicy"),
        20: _f("terminationMessagePolicy"),
    },
    "ContainerPort": {
        1: _f("name"),
        2: _f("hostPort", "int"),
        3: _f("containerPort", "int"),
        4: _f("protocol"),
        5: _f("hostIP"),
    },
    "EnvVar": {1: _f("name"), 2: _f("value")},
    "ResourceRequirements": {
        1: _f("limits", "map", value_kind="quantity"),
        2: _f("requests", "map", value_kind="quantity"),
    },
}
_KINDS: Final = {"ConfigMap", "Namespace", "Deployment"}
_UNREADABLE: Final = (
    "the body of the request was in an unknown format - accepted media types include: "
    "application/json, application/json-patch+json, application/merge-patch+json, "
    "application/strategic-merge-patch+json"
)


def decode(body: bytes) -> dict[str, Any]:
    """The object a protobuf request body holds, as its JSON would decode."""
    if not body.startswith(MAGIC):
        raise BadRequest("the protobuf body does not start with the Kubernetes magic number")
    unknown = _message(body[len(MAGIC) :], "Unknown")
    type_meta = unknown.get("typeMeta") or {}
    kind = type_meta.get("kind")
    if kind not in _KINDS:
        raise UnsupportedMediaType(_UNREADABLE)
    obj = _message(unknown.get("raw", b""), str(kind))
    return {"apiVersion": type_meta.get("apiVersion", ""), "kind": kind, **obj}


# ====================================================================== the wire format


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data):
            raise BadRequest("the protobuf body ends inside a number")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift > 63:
            raise BadRequest("the protobuf body has a number of more than 64 bits")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) of every field: an int, or the bytes of a length-delimited."""
    found: list[tuple[int, int, Any]] = []
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == 0:
            value, position = _varint(data, position)
        elif wire == 2:
            length, position = _varint(data, position)
            if position + length > len(data):
                raise BadRequest("the protobuf body ends inside a field")
            value, position = data[position : position + length], position + length
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, position = (
                int.from_bytes(data[position : position + width], "little"),
                position + width,
            )
        else:
            raise BadRequest(f"the protobuf body has a field of wire type {wire}")
        found.append((number, wire, value))
    return found


def _message(data: bytes, name: str) -> dict[str, Any]:
    fields = _MESSAGES[name]
    out: dict[str, Any] = {}
    for number, wire, value in _fields(data):
        field = fields.get(number)
        if field is None:
            if value not in (0, b""):
                raise UnsupportedMediaType(_UNREADABLE)
            continue
        if field.kind == "map":
            key, item = _map_entry(value, field.value_kind)
            out.setdefault(field.name, {})[key] = item
            continue
        decoded = _value(field, wire, value)
        if field.repeated:
            out.setdefault(field.name, []).append(decoded)
        elif decoded is not None and (field.pointer or decoded not in ("", 0, False)):
            out[field.name] = decoded
    return out


def _value(field: _Field, wire: int, value: Any) -> Any:
    if field.kind == "string":
        return bytes(value).decode()
    if field.kind == "bytes":
        return bytes(value)
    if field.kind == "int":
        return value - (1 << 64) if value >= 1 << 63 else value
    if field.kind == "bool":
        return bool(value)
    if field.kind == "time":
        return _time(value)
    if field.kind == "intorstring":
        parts = {n: v for n, _, v in _fields(value)}
        if parts.get(1, 0) == 1:
            return bytes(parts.get(3, b"")).decode()
        raw = int(parts.get(2, 0))
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    return _message(value, field.message)


def _map_entry(data: bytes, value_kind: str) -> tuple[str, Any]:
    parts = {n: v for n, _, v in _fields(data)}
    key = bytes(parts.get(1, b"")).decode()
    raw = parts.get(2, b"")
    if value_kind == "bytes":
        return key, base64.b64encode(bytes(raw)).decode()
    if value_kind == "quantity":
        return key, bytes({n: v for n, _, v in _fields(raw)}.get(1, b"")).decode()
    return key, bytes(raw).decode()


def _time(data: bytes) -> str | None:
    parts = {n: v for n, _, v in _fields(data)}
    seconds = int(parts.get(1, 0))
    if not seconds:
        return None  # the zero time: JSON writes null, which decodes to nothing
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
