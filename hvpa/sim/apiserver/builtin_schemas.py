"""Schemas of the built-in kinds this server serves, written from what the API documents.

The real server publishes complete schemas generated from its Go types;
these are this project's own, smaller: every kind with its top-level fields,
ObjectMeta, label selectors, owner references, container resources and the
workloads' specs in full, and of the pod spec, containers and statuses the
fields a controller or a person reads. A part not described field by field is open
(`x-kubernetes-preserve-unknown-fields`), so nothing a client sends there is
called unknown; the closed parts are where every field is listed. Lists
that strategic merge patches merge by a key carry that key
(`x-kubernetes-patch-merge-key`), as in the real documents.

They serve three readers: `kubectl explain` (the descriptions), the OpenAPI
documents' `x-kubernetes-group-version-kind` (kubectl finds a kind's schema
and operations by it), and `fieldValidation` (a field the schema does not
know is reported, or refused with Strict, where the schema is closed).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Final

from hvpa.sim.apiserver.resources import ResourceType
from hvpa.sim.apiserver.structural import Schema, compile_schema

__all__ = ["COMPONENTS", "builtin_schema", "compiled_builtin", "component_ref", "schema_name"]

_REF: Final = "#/components/schemas/"
META: Final = "io.k8s.apimachinery.pkg.apis.meta.v1"


def component_ref(name: str) -> dict[str, Any]:
    return {"$ref": _REF + name}


def _ref(name: str, description: str = "") -> dict[str, Any]:
    """A reference with its own description, as the real documents wrap one (allOf)."""
    out: dict[str, Any] = {"allOf": [component_ref(name)]}
    if description:
        out["description"] = description
    return out


def _obj(
    description: str,
    properties: dict[str, Any] | None = None,
    *,
    required: tuple[str, ...] = (),
    open_: bool = False,
) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "type": "object"}
    if properties:
        out["properties"] = properties
    if required:
        out["required"] = list(required)
    if open_:
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out


def _str(description: str, *, fmt: str = "", enum: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "type": "string"}
    if fmt:
        out["format"] = fmt
    if enum:
        out["enum"] = list(enum)
    return out


def _int(description: str, fmt: str = "int32") -> dict[str, Any]:
    return {"description": description, "type": "integer", "format": fmt}


def _bool(description: str) -> dict[str, Any]:
    return {"description": description, "type": "boolean"}


def _map(description: str, values: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "description": description,
        "type": "object",
        "additionalProperties": values or {"type": "string"},
    }


def _list(
    description: str, items: dict[str, Any], *, merge_key: str = "", atomic: bool = False
) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "type": "array", "items": items}
    if merge_key:
        out["x-kubernetes-patch-merge-key"] = merge_key
        out["x-kubernetes-patch-strategy"] = "merge"
        out["x-kubernetes-list-type"] = "map"
        out["x-kubernetes-list-map-keys"] = [merge_key]
    elif atomic:
        out["x-kubernetes-list-type"] = "atomic"
    return out


def _time(description: str) -> dict[str, Any]:
    return _ref(f"{META}.Time", description)


def _open_list(description: str, merge_key: str = "") -> dict[str, Any]:
    return _list(
        description,
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        merge_key=merge_key,
    )


_QUANTITY: Final = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING: Final = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_CORE: Final = "io.k8s.api.core.v1"
_APPS: Final = "io.k8s.api.apps.v1"
_API_VERSION: Final = _str(
    "The versioned schema of this object: GROUP/VERSION, or v1 for the core group."
)
_KIND: Final = _str("The kind of object, in CamelCase (Pod, Deployment, ...).")
_OBJECT_META: Final = _ref(
    f"{META}.ObjectMeta", "The object's name, namespace, labels and other metadata."
)
_LIST_META: Final = _ref(f"{META}.ListMeta", "The list's resourceVersion and continue token.")
_CONDITIONS: Final = _open_list("The latest observations of the object's state.", "type")

COMPONENTS: Final[dict[str, dict[str, Any]]] = {
    f"{META}.Time": {
        "description": "A time, RFC 3339 in UTC, to the second.",
        "type": "string",
        "format": "date-time",
    },
    f"{META}.MicroTime": {
        "description": "A time, RFC 3339 in UTC, to the microsecond.",
        "type": "string",
        "format": "date-time",
    },
    _QUANTITY: {
        "description": "A resource quantity: 500m, 2, 1.5Gi, 128974848 (a number or a string).",
        "x-kubernetes-int-or-string": True,
        "anyOf": [{"type": "integer"}, {"type": "string"}],
    },
    _INT_OR_STRING: {
        "description": "A whole number or a string (25%).",
        "x-kubernetes-int-or-string": True,
        "anyOf": [{"type": "integer"}, {"type": "string"}],
    },
    f"{META}.ObjectMeta": _obj(
        "What every persisted object carries: name, namespace, labels, annotations, owners, and "
        "the server's bookkeeping (uid, resourceVersion, generation, timestamps).",
        {
            "name": _str("The object's name, unique within its namespace (or the cluster)."),
            "generateName": _str("A prefix from which the server makes a unique name."),
            "namespace": _str("The namespace the object lives in; empty for cluster-scoped ones."),
            "selfLink": _str("Deprecated: always empty."),
            "uid": _str("The server's unique id of this object (one per creation)."),
            "resourceVersion": _str("The version of this object, for optimistic concurrency."),
            "generation": _int("Bumped by the server when the desired state changes.", "int64"),
            "creationTimestamp": _time("When the server created the object."),
            "deletionTimestamp": _time("When the object goes away; set when deletion began."),
            "deletionGracePeriodSeconds": _int("Seconds allowed for a graceful deletion.", "int64"),
            "labels": _map("Key-value pairs selectors match on."),
            "annotations": _map("Key-value pairs tools keep on the object; not for selection."),
            "ownerReferences": _list(
                "The objects this one depends on; it goes when its controller owner goes.",
                component_ref(f"{META}.OwnerReference"),
                merge_key="uid",
            ),
            "finalizers": _list(
                "What must happen before the object is deleted.", {"type": "string"}
            ),
            "managedFields": _open_list("Which manager set which fields (server-side apply)."),
        },
    ),
    f"{META}.ListMeta": _obj(
        "What a list carries: its resourceVersion, and where the next page starts.",
        {
            "resourceVersion": _str("The version of the state the list shows."),
            "continue": _str("The token for the next page, if there is one."),
            "remainingItemCount": _int(
                "Items left after this page, when the server counts.", "int64"
            ),
            "selfLink": _str("Deprecated: always empty."),
        },
    ),
    f"{META}.OwnerReference": _obj(
        "An object this one belongs to.",
        {
            "apiVersion": _str("The owner's API version."),
            "kind": _str("The owner's kind."),
            "name": _str("The owner's name."),
            "uid": _str("The owner's uid."),
            "controller": _bool("Whether the owner is the managing controller."),
            "blockOwnerDeletion": _bool("Whether the owner's foreground deletion waits for this."),
        },
        required=("apiVersion", "kind", "name", "uid"),
    ),
    f"{META}.LabelSelector": _obj(
        "Which labels match: every matchLabels pair and every matchExpressions requirement.",
        {
            "matchLabels": _map("Labels that must be present with these values."),
            "matchExpressions": _list(
                "Requirements on labels.",
                _obj(
                    "One requirement: key, operator (In, NotIn, Exists, DoesNotExist), values.",
                    {
                        "key": _str("The label key."),
                        "operator": _str("In, NotIn, Exists or DoesNotExist."),
                        "values": _list("The values, for In and NotIn.", {"type": "string"}),
                    },
                    required=("key", "operator"),
                ),
            ),
        },
    ),
    f"{META}.Status": _obj(
        "The outcome of a request that returns no object, or of a failed one.",
        {
            "apiVersion": _API_VERSION,
            "kind": _KIND,
            "metadata": _LIST_META,
            "status": _str("Success or Failure."),
            "message": _str("What happened, for a person."),
            "reason": _str("Why, in one CamelCase word (NotFound, Conflict, Invalid, ...)."),
            "details": _obj("The object concerned, and the causes of an Invalid.", open_=True),
            "code": _int("The HTTP status code."),
        },
    ),
    f"{META}.DeleteOptions": _obj(
        "How to delete: grace period, preconditions, propagation, dry run.",
        {
            "apiVersion": _API_VERSION,
            "kind": _KIND,
            "gracePeriodSeconds": _int("Seconds before the object is deleted.", "int64"),
            "preconditions": _obj(
                "Delete only if these still hold.",
                {
                    "uid": _str("The uid expected."),
                    "resourceVersion": _str("The version expected."),
                },
            ),
            "propagationPolicy": _str("Orphan, Background or Foreground."),
            "dryRun": _list("All: check without deleting.", {"type": "string"}),
        },
    ),
    f"{META}.Patch": _obj("A patch: JSON patch, JSON merge patch or strategic merge patch."),
    f"{_CORE}.ResourceRequirements": _obj(
        "Compute resources a container asks for (requests) and may not exceed (limits).",
        {
            "requests": _map(
                "The least the container needs, per resource.", component_ref(_QUANTITY)
            ),
            "limits": _map(
                "The most the container may use, per resource.", component_ref(_QUANTITY)
            ),
            "claims": _open_list("Dynamically allocated resources the container uses.", "name"),
        },
    ),
    f"{_CORE}.Container": _obj(
        "One container of a pod.",
        {
            "name": _str("The container's name, unique within the pod."),
            "image": _str("The container image."),
            "command": _list(
                "The entrypoint, replacing the image's.", {"type": "string"}, atomic=True
            ),
            "args": _list("The arguments, replacing the image's.", {"type": "string"}, atomic=True),
            "workingDir": _str("The working directory."),
            "ports": _open_list("Ports the container exposes.", "containerPort"),
            "env": _open_list("Environment variables.", "name"),
            "envFrom": _open_list("Sources of environment variables."),
            "resources": _ref(
                f"{_CORE}.ResourceRequirements", "Compute resources: requests and limits."
            ),
            "resizePolicy": _open_list("How each resource is resized in place.", "resourceName"),
            "restartPolicy": _str("Always, for a sidecar among the init containers."),
            "volumeMounts": _open_list("Volumes mounted into the container.", "mountPath"),
            "volumeDevices": _open_list("Block devices the container uses.", "devicePath"),
            "livenessProbe": _obj("When the container is restarted.", open_=True),
            "readinessProbe": _obj("When the container takes traffic.", open_=True),
            "startupProbe": _obj("When the container has started.", open_=True),
            "lifecycle": _obj("Hooks after start and before stop.", open_=True),
            "terminationMessagePath": _str("Where the container writes its termination message."),
            "terminationMessagePolicy": _str("File, or FallbackToLogsOnError."),
            "imagePullPolicy": _str("Always, IfNotPresent or Never."),
            "securityContext": _obj("The container's security settings.", open_=True),
        },
        required=("name",),
        open_=True,
    ),
    f"{_CORE}.PodSpec": _obj(
        "What a pod runs and where.",
        {
            "containers": _list(
                "The containers.", component_ref(f"{_CORE}.Container"), merge_key="name"
            ),
            "initContainers": _list(
                "Containers run in order before the others (sidecars keep running).",
                component_ref(f"{_CORE}.Container"),
                merge_key="name",
            ),
            "volumes": _open_list("Volumes the containers may mount.", "name"),
            "nodeName": _str("The node the pod runs on (set by scheduling)."),
            "nodeSelector": _map("Labels a node must have."),
            "serviceAccountName": _str("The service account the pod runs as."),
            "restartPolicy": _str("Always, OnFailure or Never."),
            "terminationGracePeriodSeconds": _int("Seconds the pod has to stop.", "int64"),
            "schedulerName": _str("The scheduler that places the pod."),
            "priorityClassName": _str("The pod's priority class."),
            "affinity": _obj("Node and pod (anti-)affinity.", open_=True),
            "tolerations": _open_list("Taints the pod tolerates."),
            "hostname": _str("The pod's host name."),
            "readinessGates": _open_list("Conditions that must hold for the pod to be ready."),
            "schedulingGates": _open_list("Gates that hold the pod unscheduled.", "name"),
        },
        required=("containers",),
        open_=True,
    ),
    f"{_CORE}.PodTemplateSpec": _obj(
        "The pods a workload makes: their metadata and spec.",
        {"metadata": _OBJECT_META, "spec": _ref(f"{_CORE}.PodSpec", "What the pods run.")},
    ),
    f"{_CORE}.ObjectReference": _obj(
        "A reference to an object, or to part of one (fieldPath).",
        {
            "apiVersion": _str("The object's API version."),
            "kind": _str("The object's kind."),
            "namespace": _str("The object's namespace."),
            "name": _str("The object's name."),
            "uid": _str("The object's uid."),
            "resourceVersion": _str("The version of the object referred to."),
            "fieldPath": _str("The part of the object, e.g. spec.containers{app}."),
        },
    ),
    "io.k8s.api.autoscaling.v1.Scale": _obj(
        "A scalable object's replicas and pod selector: what /scale reads and writes.",
        {
            "apiVersion": _API_VERSION,
            "kind": _KIND,
            "metadata": _OBJECT_META,
            "spec": _obj("What is wanted.", {"replicas": _int("The replicas wanted.")}),
            "status": _obj(
                "What is.",
                {
                    "replicas": _int("The replicas there are."),
                    "selector": _str("The label selector of the pods, as a string."),
                },
                required=("replicas",),
            ),
        },
    ),
}


def _workload_spec(description: str, extra: dict[str, Any]) -> dict[str, Any]:
    return _obj(
        description,
        {
            "replicas": _int("The pods wanted (default 1)."),
            "selector": _ref(
                f"{META}.LabelSelector", "Which pods belong to it; must match the template."
            ),
            "template": _ref(f"{_CORE}.PodTemplateSpec", "The pods it makes."),
            "minReadySeconds": _int("Seconds a ready pod must stay ready to count as available."),
            **extra,
        },
        required=("selector", "template"),
    )


def _workload_status(description: str, extra: dict[str, Any]) -> dict[str, Any]:
    return _obj(
        description,
        {
            "observedGeneration": _int("The generation the controller last acted on.", "int64"),
            "replicas": _int("Pods created (not terminating)."),
            "readyReplicas": _int("Pods ready."),
            "availableReplicas": _int("Pods ready for at least minReadySeconds."),
            "conditions": _CONDITIONS,
            **extra,
        },
        open_=True,
    )


# The kinds served: (group, plural) -> (component name, description, top-level properties).
_KINDS: Final[dict[tuple[str, str], tuple[str, str, dict[str, Any]]]] = {
    ("", "pods"): (
        f"{_CORE}.Pod",
        "A group of containers scheduled together on one node.",
        {
            "spec": _ref(f"{_CORE}.PodSpec", "What the pod runs and where."),
            "status": _obj(
                "What the kubelet last reported.",
                {
                    "phase": _str("Pending, Running, Succeeded, Failed or Unknown."),
                    "conditions": _CONDITIONS,
                    "containerStatuses": _open_list("Each container's state."),
                    "initContainerStatuses": _open_list("Each init container's state."),
                    "podIP": _str("The pod's IP address."),
                    "podIPs": _open_list("The pod's IP addresses.", "ip"),
                    "hostIP": _str("The node's IP address."),
                    "startTime": _time("When the kubelet took the pod on."),
                    "qosClass": _str("Guaranteed, Burstable or BestEffort."),
                    "reason": _str("Why the pod is in this state, in one word."),
                    "message": _str("Why the pod is in this state."),
                    "nominatedNodeName": _str("The node preemption made room on."),
                    "resize": _str("The state of an in-place resize."),
                },
                open_=True,
            ),
        },
    ),
    ("", "nodes"): (
        f"{_CORE}.Node",
        "A machine pods run on.",
        {
            "spec": _obj(
                "How the node is configured.",
                {
                    "unschedulable": _bool("Whether new pods are kept off the node."),
                    "taints": _open_list("Taints pods must tolerate."),
                    "podCIDR": _str("The pod IP range of the node."),
                    "providerID": _str("The cloud provider's id of the node."),
                },
                open_=True,
            ),
            "status": _obj(
                "What the kubelet last reported.",
                {
                    "capacity": _map("The node's resources.", component_ref(_QUANTITY)),
                    "allocatable": _map("The resources pods may have.", component_ref(_QUANTITY)),
                    "conditions": _CONDITIONS,
                    "addresses": _open_list("The node's addresses.", "type"),
                    "nodeInfo": _obj("Versions and ids of the node's software.", open_=True),
                },
                open_=True,
            ),
        },
    ),
    ("", "namespaces"): (
        f"{_CORE}.Namespace",
        "A scope for names, and a unit of access control.",
        {
            "spec": _obj(
                "What must happen before the namespace goes.",
                {"finalizers": _list("Finalizers of the namespace.", {"type": "string"})},
            ),
            "status": _obj(
                "Active or Terminating.", {"phase": _str("Active or Terminating.")}, open_=True
            ),
        },
    ),
    ("", "configmaps"): (
        f"{_CORE}.ConfigMap",
        "Configuration as key-value pairs.",
        {
            "data": _map("UTF-8 values by key."),
            "binaryData": _map(
                "Binary values (base64) by key.", {"type": "string", "format": "byte"}
            ),
            "immutable": _bool("Whether the data may no longer change."),
        },
    ),
    ("", "events"): (
        f"{_CORE}.Event",
        "Something that happened to an object, for a person to notice.",
        {
            "involvedObject": _ref(f"{_CORE}.ObjectReference", "The object it is about."),
            "reason": _str("Why, in one CamelCase word."),
            "message": _str("What happened."),
            "source": _obj(
                "Who reported it.",
                {"component": _str("The component."), "host": _str("The node, if any.")},
            ),
            "firstTimestamp": _time("When it first happened."),
            "lastTimestamp": _time("When it last happened."),
            "count": _int("How often it happened."),
            "type": _str("Normal or Warning."),
            "eventTime": _ref(f"{META}.MicroTime", "When it first happened (microseconds)."),
            "series": _obj("A series of repeats.", open_=True),
            "action": _str("What was done, or failed."),
            "related": _ref(f"{_CORE}.ObjectReference", "A second object concerned."),
            "reportingComponent": _str("The controller that reported it."),
            "reportingInstance": _str("The instance of that controller."),
        },
    ),
    ("events.k8s.io", "events"): (
        "io.k8s.api.events.v1.Event",
        "Something that happened to an object, for a person to notice.",
        {
            "eventTime": _ref(f"{META}.MicroTime", "When it first happened."),
            "series": _obj("A series of repeats.", open_=True),
            "reportingController": _str("The controller that reported it."),
            "reportingInstance": _str("The instance of that controller."),
            "action": _str("What was done, or failed."),
            "reason": _str("Why, in one CamelCase word."),
            "regarding": _ref(f"{_CORE}.ObjectReference", "The object it is about."),
            "related": _ref(f"{_CORE}.ObjectReference", "A second object concerned."),
            "note": _str("What happened."),
            "type": _str("Normal or Warning."),
            "deprecatedSource": _obj("core/v1's source.", open_=True),
            "deprecatedFirstTimestamp": _time("core/v1's firstTimestamp."),
            "deprecatedLastTimestamp": _time("core/v1's lastTimestamp."),
            "deprecatedCount": _int("core/v1's count."),
        },
    ),
    ("apps", "deployments"): (
        f"{_APPS}.Deployment",
        "Identical pods, replaced by rolling updates when the template changes.",
        {
            "spec": _workload_spec(
                "The pods wanted and how changes roll out.",
                {
                    "strategy": _obj(
                        "How pods are replaced: RollingUpdate (default) or Recreate.",
                        {
                            "type": _str("RollingUpdate or Recreate."),
                            "rollingUpdate": _obj(
                                "How fast a rolling update goes.",
                                {
                                    "maxSurge": _ref(
                                        _INT_OR_STRING, "Pods above replicas allowed (25%)."
                                    ),
                                    "maxUnavailable": _ref(
                                        _INT_OR_STRING, "Pods unavailable allowed (25%)."
                                    ),
                                },
                            ),
                        },
                    ),
                    "revisionHistoryLimit": _int("Old ReplicaSets kept (default 10)."),
                    "progressDeadlineSeconds": _int("Seconds before a stuck rollout is reported."),
                    "paused": _bool("Whether rollouts are paused."),
                },
            ),
            "status": _workload_status(
                "What the deployment controller last observed.",
                {
                    "updatedReplicas": _int("Pods of the current template."),
                    "unavailableReplicas": _int("Pods still needed to be available."),
                    "collisionCount": _int("Hash collisions met naming ReplicaSets."),
                },
            ),
        },
    ),
    ("apps", "statefulsets"): (
        f"{_APPS}.StatefulSet",
        "Pods with stable names and storage, created and replaced in order.",
        {
            "spec": _workload_spec(
                "The pods wanted, their identity and how changes roll out.",
                {
                    "serviceName": _str("The headless service that names the pods."),
                    "podManagementPolicy": _str("OrderedReady (default) or Parallel."),
                    "updateStrategy": _obj(
                        "RollingUpdate (with a partition) or OnDelete.", open_=True
                    ),
                    "revisionHistoryLimit": _int("Old revisions kept (default 10)."),
                    "volumeClaimTemplates": _open_list("Claims each pod gets."),
                    "persistentVolumeClaimRetentionPolicy": _obj(
                        "Whether claims go with the set or its scale-down.", open_=True
                    ),
                    "ordinals": _obj("The first ordinal of the pods' names.", open_=True),
                },
            ),
            "status": _workload_status(
                "What the StatefulSet controller last observed.",
                {
                    "currentReplicas": _int("Pods of currentRevision."),
                    "updatedReplicas": _int("Pods of updateRevision."),
                    "currentRevision": _str("The revision the pods ran before this update."),
                    "updateRevision": _str("The revision being rolled out."),
                    "collisionCount": _int("Hash collisions met naming revisions."),
                },
            ),
        },
    ),
    ("apps", "replicasets"): (
        f"{_APPS}.ReplicaSet",
        "A number of identical pods; Deployments manage one per template.",
        {
            "spec": _workload_spec("The pods wanted.", {}),
            "status": _workload_status(
                "What the ReplicaSet controller last observed.",
                {"fullyLabeledReplicas": _int("Pods whose labels match the template's.")},
            ),
        },
    ),
    ("coordination.k8s.io", "leases"): (
        "io.k8s.api.coordination.v1.Lease",
        "A lease held by one holder at a time: leader election and heartbeats.",
        {
            "spec": _obj(
                "Who holds the lease, and since when.",
                {
                    "holderIdentity": _str("The holder."),
                    "leaseDurationSeconds": _int("Seconds others wait before taking it over."),
                    "acquireTime": _ref(f"{META}.MicroTime", "When the holder took it."),
                    "renewTime": _ref(f"{META}.MicroTime", "When the holder last renewed it."),
                    "leaseTransitions": _int("How often it changed hands."),
                    "strategy": _str("The strategy for picking a leader (coordinated election)."),
                    "preferredHolder": _str("The holder the strategy prefers."),
                },
            ),
        },
    ),
    ("autoscaling", "horizontalpodautoscalers"): (
        "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler",
        "Scales a workload's replicas from metrics.",
        {
            "spec": _obj(
                "What to scale, between which bounds, on which metrics.",
                {
                    "scaleTargetRef": _obj(
                        "The workload scaled, through its /scale.",
                        {
                            "apiVersion": _str("Its API version."),
                            "kind": _str("Its kind."),
                            "name": _str("Its name."),
                        },
                        required=("kind", "name"),
                    ),
                    "minReplicas": _int("The fewest replicas (default 1)."),
                    "maxReplicas": _int("The most replicas."),
                    "metrics": _open_list("The metrics and their targets."),
                    "behavior": _obj("How fast it scales up and down.", open_=True),
                },
                required=("scaleTargetRef", "maxReplicas"),
            ),
            "status": _obj("What it last observed and decided.", open_=True),
        },
    ),
    ("apiextensions.k8s.io", "customresourcedefinitions"): (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
        "A resource the cluster serves beyond the built-in ones.",
        {
            "spec": _obj(
                "The resource's group, names, scope and versions (with their schemas).",
                {
                    "group": _str("The API group."),
                    "names": _obj(
                        "How the resource is called.",
                        {
                            "plural": _str("The name in URLs."),
                            "singular": _str("The singular name."),
                            "kind": _str("The kind."),
                            "listKind": _str("The kind of its lists."),
                            "shortNames": _list("Short names for kubectl.", {"type": "string"}),
                            "categories": _list(
                                "Groups of resources it belongs to.", {"type": "string"}
                            ),
                        },
                        required=("plural", "kind"),
                    ),
                    "scope": _str("Namespaced or Cluster."),
                    "versions": _open_list(
                        "The versions, their schemas, subresources and columns."
                    ),
                    "conversion": _obj("How versions convert.", open_=True),
                    "preserveUnknownFields": _bool("Deprecated: false."),
                },
                required=("group", "names", "scope", "versions"),
            ),
            "status": _obj("Accepted names, conditions and stored versions.", open_=True),
        },
    ),
}


def schema_name(rtype: ResourceType) -> str:
    """The component name of a kind: the built-ins' package names, a CRD's reversed group."""
    known = _KINDS.get((rtype.group, rtype.plural))
    if known is not None and not rtype.custom:
        return known[0]
    group = ".".join(reversed(rtype.group.split("."))) if rtype.group else "core"
    return f"{group}.{rtype.version}.{rtype.kind}"


def builtin_schema(rtype: ResourceType) -> dict[str, Any] | None:
    """The schema of a built-in kind (None for one without a schema here)."""
    if rtype.custom:
        return None
    return _kind_schema(rtype.group, rtype.plural)


def compiled_builtin(rtype: ResourceType) -> Schema | None:
    """The built-in kind's schema compiled, for fieldValidation (once per kind)."""
    if rtype.custom:
        return None
    return _compiled(rtype.group, rtype.plural)


def _kind_schema(group: str, plural: str) -> dict[str, Any] | None:
    known = _KINDS.get((group, plural))
    if known is None:
        return None
    _, description, properties = known
    return _obj(
        description,
        {"apiVersion": _API_VERSION, "kind": _KIND, "metadata": _OBJECT_META, **properties},
    )


@lru_cache(maxsize=64)
def _compiled(group: str, plural: str) -> Schema | None:
    raw = _kind_schema(group, plural)
    return None if raw is None else compile_schema(raw, COMPONENTS)
