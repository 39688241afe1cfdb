"""The resource table: every kind the simulated cluster serves and how the real server treats it.

Each flag below is a per-resource choice the real registry makes in its
strategy (create-on-update for Leases and Events, unconditional updates
refused for Leases and custom resources, the deleted object returned only
for Pods and Namespaces, which kinds count generations, which carry /status
and /scale), so that a client meets the same answers here as on a cluster.
The built-in kinds are listed here; custom resources join the table when
their CRD is written (crds.py), with the CRD's schema and printer columns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from hvpa.sim.apiserver.structural import Schema

__all__ = ["RESOURCES", "PrinterColumn", "ResourceTable", "ResourceType", "ScalePaths"]

_ALL_VERBS: Final = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)
_READ_VERBS: Final = ("get", "list")


@dataclass(frozen=True, slots=True)
class ScalePaths:
    """Where /scale reads and writes. Built-ins keep a structured selector at
    spec.selector; a custom resource names a string-form selector field."""

    spec_replicas: tuple[str, ...] = ("spec", "replicas")
    status_replicas: tuple[str, ...] = ("status", "replicas")
    selector: tuple[str, ...] = ("spec", "selector")
    selector_is_string: bool = False


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """One of a CRD's additionalPrinterColumns."""

    name: str
    type: str
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0


@dataclass(frozen=True, slots=True, eq=False)
class ResourceType:
    """One served resource. Compared and hashed by identity: each is a singleton of the table,
    and stores are looked up by it on every request."""

    group: str
    version: str
    plural: str
    singular: str
    kind: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = _ALL_VERBS
    status: bool = False
    scale: ScalePaths | None = None
    # Served from a CustomResourceDefinition: no strategic merge patch, list items keep their kind.
    custom: bool = False
    generation: bool = False
    create_on_update: bool = False
    unconditional_update: bool = True
    return_deleted_object: bool = False
    # Field selector labels beyond metadata.name and metadata.namespace.
    field_labels: frozenset[str] = field(default_factory=frozenset)
    # Not stored: answered from the metrics the simulator sets.
    metrics: bool = False
    # Served from a CRD (crds.py): its list kind, compiled and raw schema, printer columns, name.
    list_kind_name: str = ""
    schema: Schema | None = field(default=None, repr=False)
    raw_schema: Mapping[str, Any] | None = field(default=None, repr=False)
    columns: tuple[PrinterColumn, ...] = ()
    crd_name: str = ""
    # field_labels split at dots, computed once: field values are read on every write.
    field_paths: tuple[tuple[str, tuple[str, ...]], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        paths = tuple((label, tuple(label.split("."))) for label in sorted(self.field_labels))
        object.__setattr__(self, "field_paths", paths)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """`pods`, `deployments.apps`: how error messages and kubectl name a resource."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return self.list_kind_name or f"{self.kind}List"

    @property
    def subresources(self) -> tuple[str, ...]:
        names = []
        if self.status:
            names.append("status")
        if self.scale is not None:
            names.append("scale")
        if self.group == "" and self.plural == "pods":
            names.append("binding")
        return tuple(names)

    def key(self, namespace: str | None, name: str) -> str:
        """The storage key; keys sort like etcd's, so a namespace is one contiguous range."""
        return f"{namespace}/{name}" if self.namespaced else name


_POD_FIELDS: Final = frozenset(
    {
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    }
)
_CORE_EVENT_FIELDS: Final = frozenset(
    {
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    }
)
_EVENTS_V1_FIELDS: Final = frozenset(
    {
        "regarding.kind",
        "regarding.namespace",
        "regarding.name",
        "regarding.uid",
        "regarding.apiVersion",
        "regarding.resourceVersion",
        "regarding.fieldPath",
        "reason",
        "reportingController",
        "type",
    }
)


def _workload(plural: str, kind: str, short_name: str) -> ResourceType:
    """apps/v1 workloads differ only in names: all have /status, /scale and generations."""
    return ResourceType(
        "apps",
        "v1",
        plural,
        kind.lower(),
        kind,
        short_names=(short_name,),
        categories=("all",),
        status=True,
        scale=ScalePaths(),
        generation=True,
    )


RESOURCES: Final[tuple[ResourceType, ...]] = (
    ResourceType(
        "",
        "v1",
        "pods",
        "pod",
        "Pod",
        short_names=("po",),
        categories=("all",),
        status=True,
        return_deleted_object=True,
        field_labels=_POD_FIELDS,
    ),
    ResourceType(
        "",
        "v1",
        "nodes",
        "node",
        "Node",
        namespaced=False,
        short_names=("no",),
        status=True,
        field_labels=frozenset({"spec.unschedulable"}),
    ),
    ResourceType(
        "",
        "v1",
        "namespaces",
        "namespace",
        "Namespace",
        namespaced=False,
        short_names=("ns",),
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
        status=True,
        return_deleted_object=True,
        field_labels=frozenset({"status.phase"}),
    ),
    ResourceType("", "v1", "configmaps", "configmap", "ConfigMap", short_names=("cm",)),
    ResourceType("", "v1", "secrets", "secret", "Secret"),
    ResourceType(
        "",
        "v1",
        "events",
        "event",
        "Event",
        short_names=("ev",),
        create_on_update=True,
        field_labels=_CORE_EVENT_FIELDS,
    ),
    _workload("deployments", "Deployment", "deploy"),
    _workload("statefulsets", "StatefulSet", "sts"),
    _workload("replicasets", "ReplicaSet", "rs"),
    ResourceType(
        "events.k8s.io",
        "v1",
        "events",
        "event",
        "Event",
        short_names=("ev",),
        create_on_update=True,
        field_labels=_EVENTS_V1_FIELDS,
    ),
    ResourceType(
        "coordination.k8s.io",
        "v1",
        "leases",
        "lease",
        "Lease",
        create_on_update=True,
        unconditional_update=False,
    ),
    # Stored and served only: what honours them is the VPA baseline's updater, which
    # evicts (hvpa/sim/baselines/disruption_budgets.py); no disruption controller writes status.
    ResourceType(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "poddisruptionbudget",
        "PodDisruptionBudget",
        short_names=("pdb",),
        status=True,
        generation=True,
    ),
    ResourceType(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "mutatingwebhookconfiguration",
        "MutatingWebhookConfiguration",
        namespaced=False,
        generation=True,
    ),
    ResourceType(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        "horizontalpodautoscaler",
        "HorizontalPodAutoscaler",
        short_names=("hpa",),
        categories=("all",),
        status=True,
        generation=True,
    ),
    ResourceType(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "customresourcedefinition",
        "CustomResourceDefinition",
        namespaced=False,
        short_names=("crd", "crds"),
        categories=("api-extensions",),
        status=True,
        generation=True,
    ),
    ResourceType(
        "metrics.k8s.io", "v1beta1", "pods", "", "PodMetrics", verbs=_READ_VERBS, metrics=True
    ),
    ResourceType(
        "metrics.k8s.io",
        "v1beta1",
        "nodes",
        "",
        "NodeMetrics",
        namespaced=False,
        verbs=_READ_VERBS,
        metrics=True,
    ),
)


_VERSION_RE: Final = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """A sort key putting the version a client should prefer first (apimachinery's
    CompareKubeAwareVersionStrings): GA, then beta, then alpha, higher numbers first;
    versions not of that form last, alphabetically."""
    match = _VERSION_RE.match(version)
    if match is None:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), "")


class ResourceTable:
    """Lookups by URL (group, version, plural) and by the names people type.

    Built-in resources are fixed; a CRD adds its resource (`add`) and takes
    it away again (`remove`). Built-ins come first, so their names win."""

    def __init__(self, resources: Iterable[ResourceType] = RESOURCES) -> None:
        self._all: list[ResourceType] = list(resources)
        # Counts changes (a CRD served or withdrawn): documents built from the table key on it.
        self.revision = 0
        self._by_url: dict[tuple[str, str, str], ResourceType] = {}
        self._by_name: dict[str, ResourceType] = {}
        self._index()

    def _index(self) -> None:
        self.revision += 1
        self._by_url = {(r.group, r.version, r.plural): r for r in self._all}
        self._by_name = {}
        for rtype in reversed(self._all):  # earlier entries win: `events` is core/v1
            for alias in (rtype.plural, rtype.singular, rtype.kind.lower(), *rtype.short_names):
                if alias and not rtype.metrics:
                    self._by_name[alias] = rtype
            self._by_name[rtype.group_resource] = rtype
            self._by_name[f"{rtype.plural}.{rtype.version}.{rtype.group}"] = rtype

    def add(self, rtype: ResourceType) -> ResourceType | None:
        """Serve `rtype`, in place of the one at its URL if any; returns that one."""
        key = (rtype.group, rtype.version, rtype.plural)
        replaced = self._by_url.get(key)
        if replaced is not None:
            self._all[self._all.index(replaced)] = rtype
        else:
            self._all.append(rtype)
        self._index()
        return replaced

    def remove(self, rtype: ResourceType) -> None:
        self._all.remove(rtype)
        self._index()

    def __iter__(self) -> Iterator[ResourceType]:
        return iter(tuple(self._all))

    def at(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_url.get((group, version, plural))

    def named(self, name: str) -> ResourceType | None:
        """`pods`, `po`, `deployments.apps`, `events.events.k8s.io`, `hvpa`."""
        return self._by_name.get(name)

    def of_crd(self, crd_name: str) -> ResourceType | None:
        """The resource a CRD of that name serves, if any."""
        return next((r for r in self._all if r.crd_name == crd_name), None)

    def groups(self) -> dict[str, list[str]]:
        """Group name to its versions, preferred first (Kubernetes' version priority:
        v2 before v1 before v1beta2 before v1alpha1), groups in serving order."""
        out: dict[str, list[str]] = {}
        for rtype in self._all:
            versions = out.setdefault(rtype.group, [])
            if rtype.version not in versions:
                versions.append(rtype.version)
        return {group: sorted(versions, key=version_priority) for group, versions in out.items()}

    def in_version(self, group: str, version: str) -> list[ResourceType]:
        return [r for r in self._all if r.group == group and r.version == version]
