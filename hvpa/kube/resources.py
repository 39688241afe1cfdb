"""The resources hvpa lists and watches: where they live in the API, and their records.

A `Resource` ties a REST path to the wire struct its objects decode into and
the converter to a slim record; an informer needs nothing else. The
controller defines more (Hvpa) the same way, with its own wire type and
converter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final, Generic, TypeVar
from urllib.parse import quote

from hvpa.kube.wire import WireObject
from hvpa.records import (
    ConfigMapRecord,
    ConfigMapWire,
    NodeRecord,
    NodeWire,
    PodRecord,
    PodWire,
    TargetRecord,
    TargetWire,
    VpaRecord,
    VpaWire,
    configmap_from_wire,
    node_from_wire,
    pod_from_wire,
    pod_wire_digest,
    pod_with_version,
    target_from_wire,
    vpa_from_wire,
)

__all__ = [
    "CONFIGMAPS",
    "DEPLOYMENTS",
    "NODES",
    "PODS",
    "REPLICASETS",
    "STATEFULSETS",
    "TARGETS",
    "VPAS",
    "Renewal",
    "Resource",
    "api_path",
]

W = TypeVar("W", bound=WireObject)
R = TypeVar("R")


def api_path(
    *,
    group: str,
    version: str,
    plural: str,
    namespace: str | None = None,
    name: str | None = None,
    subresource: str | None = None,
) -> str:
    """The REST path of a collection or an object: /api/v1/... for the core group, else /apis/..."""
    parts = ["/api", version] if not group else ["/apis", group, version]
    if namespace is not None:
        parts += ["namespaces", quote(namespace, safe="")]
    parts.append(plural)
    if name is not None:
        parts.append(quote(name, safe=""))
        if subresource is not None:
            parts.append(subresource)
    return "/".join(parts)


@dataclass(frozen=True, slots=True)
class Renewal(Generic[W, R]):
    """How to tell an update that changes nothing a record keeps but its resourceVersion,
    and to renew the held record for it, without converting the object again.

    `digest(wire)` must be equal for two versions exactly when `convert` would make
    records that differ in nothing but their resourceVersion (or be unequal more
    often: that only costs a conversion); `renew(held, wire)` is then what `convert`
    would have made of `wire`. The reflector keeps the digest of each record it
    handed over, and renews instead of converting when a new version's matches.
    """

    digest: Callable[[W], bytes]
    renew: Callable[[R, W], R]


@dataclass(frozen=True, slots=True)
class Resource(Generic[W, R]):
    """A listable, watchable resource and how its objects become records.

    `convert` may raise (a RecordError for a bad quantity): the informer
    logs and skips that object, never the whole stream. `renewal`, for a
    resource whose updates often leave its record as it was (pods: a probe,
    a restart count, an annotation), spares the conversion of those.
    """

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    wire_type: type[W]
    convert: Callable[[W], R]
    renewal: Renewal[W, R] | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(
        self,
        *,
        namespace: str | None = None,
        name: str | None = None,
        subresource: str | None = None,
    ) -> str:
        """A collection (all namespaces when `namespace` is None) or one object's path."""
        if namespace is not None and not self.namespaced:
            raise ValueError(f"{self.kind} is cluster-scoped; it has no namespace")
        return api_path(
            group=self.group,
            version=self.version,
            plural=self.plural,
            namespace=namespace,
            name=name,
            subresource=subresource,
        )

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


def _target_converter(api_version: str, kind: str) -> Callable[[TargetWire], TargetRecord]:
    """Items of a list carry no apiVersion/kind (only watch events do): fill them in."""

    def convert(wire: TargetWire) -> TargetRecord:
        if not wire.kind:
            wire.api_version = api_version
            wire.kind = kind
        return target_from_wire(wire)

    return convert


PODS: Resource[PodWire, PodRecord] = Resource(
    "",
    "v1",
    "pods",
    "Pod",
    True,
    PodWire,
    pod_from_wire,
    Renewal(pod_wire_digest, pod_with_version),
)
NODES: Resource[NodeWire, NodeRecord] = Resource(
    "", "v1", "nodes", "Node", False, NodeWire, node_from_wire
)
CONFIGMAPS: Resource[ConfigMapWire, ConfigMapRecord] = Resource(
    "", "v1", "configmaps", "ConfigMap", True, ConfigMapWire, configmap_from_wire
)
DEPLOYMENTS: Resource[TargetWire, TargetRecord] = Resource(
    "apps",
    "v1",
    "deployments",
    "Deployment",
    True,
    TargetWire,
    _target_converter("apps/v1", "Deployment"),
)
STATEFULSETS: Resource[TargetWire, TargetRecord] = Resource(
    "apps",
    "v1",
    "statefulsets",
    "StatefulSet",
    True,
    TargetWire,
    _target_converter("apps/v1", "StatefulSet"),
)
REPLICASETS: Resource[TargetWire, TargetRecord] = Resource(
    "apps",
    "v1",
    "replicasets",
    "ReplicaSet",
    True,
    TargetWire,
    _target_converter("apps/v1", "ReplicaSet"),
)
# The kinds a scale target may be, and where each lives.
TARGETS: Final[Mapping[str, Resource[TargetWire, TargetRecord]]] = {
    resource.kind: resource for resource in (DEPLOYMENTS, STATEFULSETS, REPLICASETS)
}
VPAS: Resource[VpaWire, VpaRecord] = Resource(
    "autoscaling.k8s.io",
    "v1",
    "verticalpodautoscalers",
    "VerticalPodAutoscaler",
    True,
    VpaWire,
    vpa_from_wire,
)
